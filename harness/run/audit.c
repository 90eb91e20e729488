/* audit — see audit.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "base/io.h"
#include "base/json.h"
#include "base/mem.h"
#include "tpl/tpl_model.h"

/* Template kwargs as the server sees them: the request's
 * chat_template_kwargs plus reasoning_effort (docs/protocol.md "Thinking switches"). The caller
 * owns the result (NULL when there are none, or out of memory). */
static cJSON *server_kwargs(const cJSON *kwargs, const cJSON *effort, int *nomem)
{
	struct json_build jb;
	cJSON *kw;

	*nomem = 0;
	if (!effort || cJSON_GetObjectItemCaseSensitive(kwargs, "reasoning_effort"))
		return NULL; /* kwargs as given */
	json_build_init(&jb);
	kw = kwargs ? cJSON_Duplicate(kwargs, 1) : json_new_obj(&jb);
	json_add_dup(&jb, kw, "reasoning_effort", effort); /* a NULL kw fails here */
	*nomem = json_build_end(&jb, &kw, "the template kwargs", NULL) != ERR_OK;
	return kw;
}

enum err audit_render(const struct tpl *t, enum tpl_server server,
		      const cJSON *messages, const cJSON *tools,
		      const cJSON *kwargs, const cJSON *reasoning_effort,
		      struct buf *out, struct diag *d)
{
	struct tpl_render_opts ro = {0};
	int nomem;
	cJSON *kw = server_kwargs(kwargs, reasoning_effort, &nomem);
	enum err e;

	if (nomem)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	ro.server = server;
	ro.reasoning_effort = reasoning_effort;
	e = tpl_render_ex(t, messages, tools, kw ? kw : kwargs, 1, &ro, out, d);
	cJSON_Delete(kw);
	return e;
}

static int has_images(const cJSON *messages)
{
	char *txt = cJSON_PrintUnformatted(messages);
	int yes = txt && strstr(txt, "\"image_url\"") != NULL;

	cJSON_free(txt);
	return yes;
}

/* Whether a message's content is a list with two or more text parts. */
static int has_parts(const cJSON *messages)
{
	const cJSON *m, *p;

	cJSON_ArrayForEach(m, messages) {
		int texts = 0;

		cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(m, "content"))
			texts += cJSON_IsString(cJSON_GetObjectItemCaseSensitive(p, "text"));
		if (texts >= 2)
			return 1;
	}
	return 0;
}

/* A raw /v1/completions prompt: add_special_tokens=true (docs/protocol.md "Prompt token accounting"). */
static enum err count_raw(const struct audit_ctx *a, const char *prompt,
			  struct audit_count *out, struct diag *d)
{
	uint32_t *ids = NULL;
	size_t n = 0, cap = 0;
	enum err e = tok_encode(a->tok, prompt, strlen(prompt), 1, &ids, &n, &cap, d);

	if (!e && a->bos_id >= 0 && (!n || ids[0] != (uint32_t)a->bos_id))
		n++;
	mem_free(ids);
	if (!e)
		out->local_tokens = (long long)n;
	return e;
}

enum err audit_count_case(const struct audit_ctx *a, const struct suite_case *c,
			  const cJSON *messages, struct audit_count *out,
			  struct diag *d)
{
	const cJSON *eff = cJSON_GetObjectItemCaseSensitive(c->json, "reasoning_effort");
	struct buf prompt;
	size_t n = 0;
	enum err e;

	memset(out, 0, sizeof *out);
	out->local_tokens = -1;
	if (!a->tok || !a->tpl)
		return ERR_OK;
	out->notes = tpl_notes(a->tpl);
	out->tools = cJSON_GetArraySize(c->tools) > 0;
	out->parts = has_parts(messages);
	if (c->prompt)
		return count_raw(a, c->prompt, out, d);
	out->skipped = has_images(messages);
	buf_init(&prompt, BUF_MAX_DEFAULT);
	e = audit_render(a->tpl, a->server, messages, c->tools, c->kwargs, eff, &prompt, d);
	if (!e)
		e = tok_count(a->tok, prompt.data, prompt.len, &n, d);
	if (!e)
		out->local_tokens = (long long)n;
	if (e && out->skipped) { /* the text count is informative only */
		diag_init(d);
		e = ERR_OK;
	}
	buf_release(&prompt);
	return e;
}

long long audit_bos_id(const struct tok *t, const char *tokenizer_path)
{
	const char *slash = strrchr(tokenizer_path, '/');
	const cJSON *add, *bos;
	char path[4096];
	struct buf b;
	struct diag d;
	cJSON *cfg = NULL;
	uint32_t *ids = NULL;
	size_t n = 0, cap = 0;
	long long id = -1;

	if (tpl_model_is_dir(tokenizer_path)) /* a model folder (tpl_model.h) */
		snprintf(path, sizeof(path), "%s/tokenizer_config.json", tokenizer_path);
	else
		snprintf(path, sizeof(path), "%.*s%stokenizer_config.json",
			 slash ? (int)(slash - tokenizer_path) : 0, tokenizer_path, slash ? "/" : "");
	buf_init(&b, (size_t)16 << 20);
	diag_init(&d);
	if (!io_read_file(path, &b, &d))
		cfg = cJSON_ParseWithLength(b.data, b.len);
	add = cJSON_GetObjectItemCaseSensitive(cfg, "add_bos_token");
	bos = cJSON_GetObjectItemCaseSensitive(cfg, "bos_token");
	if (cJSON_IsObject(bos))
		bos = cJSON_GetObjectItemCaseSensitive(bos, "content");
	if (cJSON_IsTrue(add) && cJSON_IsString(bos) &&
	    !tok_encode(t, bos->valuestring, strlen(bos->valuestring), 0, &ids, &n, &cap, &d) &&
	    n == 1)
		id = ids[0];
	mem_free(ids);
	cJSON_Delete(cfg);
	buf_release(&b);
	return id;
}

static const char *hint(const struct audit_count *c, long long delta)
{
	if (c->notes & TPL_NOTE_SPECIALS)
		return "the tokenizer lacks special tokens the template writes (warned at start): "
		       "--tokenizer and the template are not the same model's";
	if (c->notes & TPL_NOTE_SHA_DIFFERS)
		return "the deployment's template is not the text the built-in template was checked "
		       "against (warned at start): drop --template to render the model folder's own";
	if (c->parts)
		return "content parts: vLLM joins text parts with \"\\n\", SGLang with \" \"; check "
		       "that --server names the deployment's server";
	if (delta == 1 || delta == -1)
		return "off by one: a BOS token the template writes and the server's tokenizer adds "
		       "again (or the reverse)";
	if (c->tools)
		return "the request has tools: the server's tool dump or the template's tools block "
		       "differs from the local render";
	return "the tokenizer, the chat template or the server's message preparation differs "
	       "from the local one: check --tokenizer, --template and --server";
}

void audit_judge(const struct audit_count *count, int counted,
		 const struct stream_usage *u, long tolerance,
		 struct audit_result *out)
{
	int have_server = u->present && u->prompt_tokens >= 0;

	counted = counted && count->local_tokens >= 0;
	memset(out, 0, sizeof(*out));
	out->skipped = count->skipped;
	out->enabled = counted && !count->skipped;
	out->local_tokens = count->local_tokens;
	out->server_tokens = have_server ? u->prompt_tokens : -1;
	out->have_delta = counted && have_server;
	out->delta = out->have_delta ? u->prompt_tokens - count->local_tokens : 0;
	out->tolerance = tolerance;
	/* docs/runs.md "Verdicts and the usage audit": image cases record the delta (text tokens counted,
	 * image tokens not) but cannot fail the audit */
	out->ok = !out->enabled || (out->have_delta && llabs(out->delta) <= tolerance);
	out->hint = out->enabled && out->have_delta && !out->ok ? hint(count, out->delta) : NULL;
}
