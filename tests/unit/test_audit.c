/* Unit tests of the token audit: the judgement (tolerance, images, missing
 * usage) and its hint, the local count of a chat case (the rendered prompt, counted) and of
 * a raw prompt (with the BOS a tokenizer_config.json asks for). Run from the
 * repository root (fixtures/). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run/audit.h"
#include "base/io.h"
#include "t.h"

#define TOKJSON t_fixture("tokenizers/bytelevel_gpt2.json")

static void judge(long long local, int skipped, int present, long long server,
		  long tol, struct audit_result *v)
{
	struct audit_count c = {local, skipped};
	struct stream_usage u;

	memset(&u, 0, sizeof(u));
	u.present = present;
	u.prompt_tokens = server;
	audit_judge(&c, 1, &u, tol, v);
}

static void test_judge(void)
{
	struct audit_result v;
	struct audit_count c = {10, 0};
	struct stream_usage u;

	judge(10, 0, 1, 12, 2, &v);
	CHECK(v.enabled && v.ok && v.have_delta);
	CHECK_EQ_LONG(v.delta, 2);
	judge(10, 0, 1, 7, 2, &v);
	CHECK(v.enabled && !v.ok);
	CHECK_EQ_LONG(v.delta, -3);
	judge(10, 0, 0, -1, 0, &v); /* no usage: the audit fails */
	CHECK(v.enabled && !v.ok && !v.have_delta);
	CHECK_EQ_LONG(v.server_tokens, -1);
	judge(10, 1, 1, 600, 0, &v); /* images: recorded, never judged */
	CHECK(!v.enabled && v.ok && v.skipped && v.have_delta);
	CHECK_EQ_LONG(v.delta, 590);
	judge(-1, 0, 1, 5, 0, &v); /* not counted */
	CHECK(!v.enabled && v.ok && !v.have_delta);
	CHECK_EQ_LONG(v.server_tokens, 5);
	memset(&u, 0, sizeof(u));
	u.present = 1;
	u.prompt_tokens = 99;
	audit_judge(&c, 0, &u, 0, &v); /* no tokenizer or template */
	CHECK(!v.enabled && v.ok && !v.have_delta);
}

/* A failed delta names its likely cause, the most specific first; a pass
 * or an unjudged count has none. */
static void test_hint(void)
{
	struct audit_result v;
	struct audit_count c;
	struct stream_usage u;

	memset(&u, 0, sizeof(u));
	u.present = 1;
	u.prompt_tokens = 11;
	memset(&c, 0, sizeof c);
	c.local_tokens = 10;
	audit_judge(&c, 1, &u, 0, &v);
	CHECK(!v.ok && v.hint && strstr(v.hint, "off by one") && strstr(v.hint, "BOS"));
	c.tools = 1;
	u.prompt_tokens = 30;
	audit_judge(&c, 1, &u, 0, &v);
	CHECK(v.hint && strstr(v.hint, "tools"));
	c.parts = 1;
	audit_judge(&c, 1, &u, 0, &v);
	CHECK(v.hint && strstr(v.hint, "content parts"));
	c.notes = TPL_NOTE_SHA_DIFFERS;
	audit_judge(&c, 1, &u, 0, &v);
	CHECK(v.hint && strstr(v.hint, "checked"));
	c.notes |= TPL_NOTE_SPECIALS;
	audit_judge(&c, 1, &u, 0, &v);
	CHECK(v.hint && strstr(v.hint, "special tokens"));
	memset(&c, 0, sizeof c);
	c.local_tokens = 10;
	audit_judge(&c, 1, &u, 0, &v);
	CHECK(v.hint && strstr(v.hint, "--server"));
	audit_judge(&c, 1, &u, 25, &v); /* within the tolerance */
	CHECK(v.ok && !v.hint);
	c.skipped = 1;                  /* images: never judged */
	audit_judge(&c, 1, &u, 0, &v);
	CHECK(v.ok && !v.hint);
}

static struct suite *load(const char *text)
{
	struct suite *s = NULL;
	struct diag d;

	diag_init(&d);
	CHECK(suite_parse("t.json", text, strlen(text), &s, &d) == ERR_OK);
	return s;
}

static void test_count_chat(void)
{
	struct suite *s = load("{\"suite\":\"t\",\"cases\":[{\"id\":\"a\",\"messages\":"
			       "[{\"role\":\"user\",\"content\":\"hello there\"}],"
			       "\"reasoning_effort\":\"low\",\"expect\":{\"contains\":[\"x\"]}}]}");
	struct tok *t = NULL;
	struct tpl *p = NULL;
	struct audit_ctx a = {0};
	struct audit_count n;
	struct buf b;
	struct diag d;
	size_t want = 0;

	diag_init(&d);
	buf_init(&b, BUF_MAX_DEFAULT);
	CHECK(s && tok_load(TOKJSON, &t, &d) == ERR_OK && tpl_load("chatml", &p, &d) == ERR_OK);
	if (!s || !t || !p)
		goto out;
	CHECK(audit_count_case(&a, &s->cases[0], s->cases[0].messages, &n, &d) == ERR_OK);
	CHECK_EQ_LONG(n.local_tokens, -1); /* no tokenizer or template: no count */
	a.tok = t;
	a.tpl = p;
	a.bos_id = -1;
	CHECK(audit_count_case(&a, &s->cases[0], s->cases[0].messages, &n, &d) == ERR_OK);
	CHECK(audit_render(p, TPL_SERVER_VLLM, s->cases[0].messages, NULL, NULL,
			   cJSON_GetObjectItem(s->cases[0].json, "reasoning_effort"), &b, &d) == ERR_OK);
	CHECK(strstr(b.data, "hello there") != NULL);
	CHECK(tok_count(t, b.data, b.len, &want, &d) == ERR_OK);
	CHECK_EQ_LONG(n.local_tokens, (long long)want);
	CHECK(want > 2 && !n.skipped);
out:
	buf_release(&b);
	tok_free(t);
	tpl_free(p);
	suite_free(s);
}

static void test_count_raw_bos(void)
{
	char dir[] = "/tmp/needle-audit-XXXXXX", path[256], cfg[256];
	struct suite *s = load("{\"suite\":\"t\",\"cases\":[{\"id\":\"a\",\"prompt\":\"hi\","
			       "\"expect\":{\"contains\":[\"x\"]}}]}");
	struct tok *t = NULL;
	struct tpl *p = NULL;
	struct audit_ctx a = {0};
	struct audit_count n1, n2;
	struct buf b;
	struct diag d;
	FILE *f;

	diag_init(&d);
	buf_init(&b, BUF_MAX_DEFAULT);
	CHECK(s && mkdtemp(dir) && io_read_file(TOKJSON, &b, &d) == ERR_OK);
	snprintf(path, sizeof(path), "%s/tokenizer.json", dir);
	snprintf(cfg, sizeof(cfg), "%s/tokenizer_config.json", dir);
	CHECK(io_write_file(path, b.data, b.len, &d) == ERR_OK);
	CHECK(tok_load(path, &t, &d) == ERR_OK && tpl_load("chatml", &p, &d) == ERR_OK);
	if (!s || !t || !p)
		goto out;
	CHECK_EQ_LONG(audit_bos_id(t, path), -1); /* no config */
	a.tok = t, a.tpl = p, a.bos_id = -1;
	CHECK(audit_count_case(&a, &s->cases[0], NULL, &n1, &d) == ERR_OK);
	f = fopen(cfg, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("{\"add_bos_token\":true,\"bos_token\":{\"content\":\"<s>\"}}", f);
		fclose(f);
	}
	a.bos_id = audit_bos_id(t, path);
	CHECK_EQ_LONG(a.bos_id, 267); /* the added token <s>, after the 267 of the vocab */
	CHECK(audit_count_case(&a, &s->cases[0], NULL, &n2, &d) == ERR_OK);
	CHECK(n1.local_tokens > 0);
	CHECK_EQ_LONG(n2.local_tokens, n1.local_tokens + 1);
	unlink(cfg);
out:
	unlink(path);
	rmdir(dir);
	buf_release(&b);
	tok_free(t);
	tpl_free(p);
	suite_free(s);
}

int main(void)
{
	T_RUN(test_judge);
	T_RUN(test_hint);
	T_RUN(test_count_chat);
	T_RUN(test_count_raw_bos);
	return T_DONE();
}
