/* Unit tests of the load-prompt generator with the real DeepSeek V3 and Qwen3
 * tokenizers: exact counts for completions (with and without the BOS the
 * server adds) and chat (template included), prompts that differ per request
 * with no shared prefix, identical prompts for identical seeds, and the time
 * a 24K-token prompt takes. Run from the repository root. */
#include <stdlib.h>

#include "base/buf.h"
#include "base/io.h"
#include "generators/loadgen.h"
#include "base/mem.h"
#include "t.h"
#include "tok/tok.h"
#include "tpl/tpl.h"

static struct tok *ds, *qw;
static struct tpl *tp;

static size_t count(const struct tok *t, const char *s, size_t n)
{
	size_t c = 0;
	struct diag d;

	diag_init(&d);
	CHECK(tok_count(t, s, n, &c, &d) == ERR_OK);
	return c;
}

static void build(const struct loadgen_opts *o, uint64_t seed, struct loadgen_prompt *p)
{
	struct diag d;

	diag_init(&d);
	CHECK(loadgen_build(o, seed, p, &d) == ERR_OK);
	if (d.code)
		fprintf(stderr, "%s\n", d.msg);
}

/* Tokens two texts share at their start. */
static size_t common_tokens(const struct tok *t, const char *a, const char *b)
{
	size_t n = 0;

	while (a[n] && a[n] == b[n])
		n++;
	return n ? count(t, a, n) : 0;
}

static void test_completions(void)
{
	struct loadgen_opts o = {0};
	struct loadgen_prompt a, b, c;
	long sizes[] = {16, 100, 1024, 8192};
	size_t i;

	o.endpoint = LOADGEN_COMPLETIONS;
	o.tok = ds;
	o.bos_tokens = 1;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		o.input_tokens = sizes[i];
		build(&o, loadgen_seed(7, 0, 1, (unsigned)i), &a);
		CHECK(a.prompt && !a.messages);
		/* the server counts the BOS it adds: one less in the text */
		CHECK_EQ_LONG(count(ds, a.prompt, a.prompt_len) + 1, sizes[i]);
		CHECK_EQ_LONG(a.tokens, sizes[i]);
		loadgen_release(&a);
	}
	o.bos_tokens = 0;
	o.input_tokens = 1024;
	build(&o, loadgen_seed(7, 0, 1, 0), &a);
	build(&o, loadgen_seed(7, 0, 1, 0), &b);
	build(&o, loadgen_seed(7, 0, 1, 1), &c);
	CHECK_EQ_LONG(count(ds, a.prompt, a.prompt_len), 1024);
	CHECK(a.prompt_len == b.prompt_len && !memcmp(a.prompt, b.prompt, a.prompt_len));
	CHECK(!strcmp(a.sha256, b.sha256) && strcmp(a.sha256, c.sha256));
	/* a cold cache: at most a first sentence's opening words in common */
	CHECK(common_tokens(ds, a.prompt, c.prompt) < 8);
	loadgen_release(&a);
	loadgen_release(&b);
	loadgen_release(&c);
}

static void test_chat(void)
{
	struct loadgen_opts o = {0};
	struct loadgen_prompt a, b;
	struct buf ra, rb;
	struct diag d;

	o.endpoint = LOADGEN_CHAT;
	o.tok = qw;
	o.tpl = tp;
	o.input_tokens = 2048;
	build(&o, loadgen_seed(1, 2, 3, 4), &a);
	build(&o, loadgen_seed(1, 2, 4, 4), &b); /* the next round */
	CHECK(a.messages && !a.prompt);
	diag_init(&d);
	buf_init(&ra, BUF_MAX_DEFAULT);
	buf_init(&rb, BUF_MAX_DEFAULT);
	CHECK(tpl_render(tp, a.messages, NULL, NULL, 1, &ra, &d) == ERR_OK);
	CHECK(tpl_render(tp, b.messages, NULL, NULL, 1, &rb, &d) == ERR_OK);
	CHECK_EQ_LONG(count(qw, ra.data, ra.len), 2048);
	CHECK_EQ_LONG(count(qw, rb.data, rb.len), 2048);
	/* the template's "<|im_start|>user\n" (3 tokens) and a few words at most */
	CHECK(common_tokens(qw, ra.data, rb.data) < 3 + 8);
	buf_release(&ra);
	buf_release(&rb);
	loadgen_release(&a);
	loadgen_release(&b);
}

static void test_seeds(void)
{
	uint64_t s[6] = {loadgen_seed(1, 0, 1, 0), loadgen_seed(1, 0, 1, 1),
			 loadgen_seed(1, 0, 2, 0), loadgen_seed(1, 1, 1, 0),
			 loadgen_seed(2, 0, 1, 0), loadgen_seed(1, 0, 0, 0)};
	int i, j, distinct = 1;

	for (i = 0; i < 6; i++)
		for (j = 0; j < i; j++)
			distinct &= s[i] != s[j];
	CHECK(distinct);
	CHECK(loadgen_seed(1, 0, 1, 0) == s[0]);
	/* two cases of one seed: different streams; the same case: the same */
	CHECK(loadgen_case_seed(1, "load-1k-128") != loadgen_case_seed(1, "load-1k-512"));
	CHECK(loadgen_case_seed(1, "a") != loadgen_case_seed(2, "a"));
	CHECK(loadgen_case_seed(1, "a") == loadgen_case_seed(1, "a"));
}

static void test_bad(void)
{
	struct loadgen_opts o = {0};
	struct loadgen_prompt p;
	struct diag d;

	o.endpoint = LOADGEN_CHAT;
	o.tok = qw;
	o.tpl = tp;
	o.input_tokens = 3;
	diag_init(&d);
	CHECK(loadgen_build(&o, 1, &p, &d) == ERR_INPUT);
	CHECK(strstr(d.msg, "too small") != NULL);
	loadgen_release(&p);
	o.tpl = NULL;
	diag_init(&d);
	CHECK(loadgen_build(&o, 1, &p, &d) == ERR_INPUT);
	loadgen_release(&p);
}

/* Hundreds of 24K-token prompts must not hold up a load run: one takes well
 * under a second (its time is printed; a generous bound is checked). */
static void test_speed(void)
{
	struct loadgen_opts o = {0};
	struct loadgen_prompt p;
	double t0 = io_now_ms(), ms;
	int i;

	o.endpoint = LOADGEN_COMPLETIONS;
	o.tok = ds;
	o.bos_tokens = 1;
	o.input_tokens = 24576;
	for (i = 0; i < 4; i++) {
		build(&o, loadgen_seed(3, 0, 1, (unsigned)i), &p);
		CHECK_EQ_LONG(p.tokens, 24576);
		loadgen_release(&p);
	}
	ms = (io_now_ms() - t0) / 4;
	printf("24576-token prompt: %.1f ms each\n", ms);
	CHECK(ms < 1500);
}

int main(void)
{
	struct diag d;

	diag_init(&d);
	if (tok_load(t_fixture("hf/deepseek_v3/tokenizer.json"), &ds, &d) ||
	    tok_load(t_fixture("hf/qwen3/tokenizer.json"), &qw, &d) || tpl_load("qwen3", &tp, &d)) {
		fprintf(stderr, "%s\n", d.msg);
		return 1;
	}
	T_RUN(test_completions);
	T_RUN(test_chat);
	T_RUN(test_seeds);
	T_RUN(test_bad);
	T_RUN(test_speed);
	tok_free(ds);
	tok_free(qw);
	tpl_free(tp);
	return T_DONE();
}
