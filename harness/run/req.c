/*
 * req — see req.h.
 */
#include <string.h>

#include "base/json.h"
#include "base/mem.h"
#include "req.h"

/* Case fields copied into the body unchanged when present (docs/protocol.md "Request fields passed through":
 * vLLM and SGLang both accept these on chat and completions). */
static const char *const passthrough[] = {
	"temperature", "top_p", "max_tokens", "seed", "ignore_eos", "min_tokens",
	NULL};
/* Chat-only extras (docs/protocol.md "Thinking switches"). */
static const char *const chat_only[] = {"chat_template_kwargs",
					"reasoning_effort", "tools",
					"tool_choice", NULL};

void req_init(struct req *r)
{
	r->endpoint = REQ_CHAT;
	r->path = "/v1/chat/completions";
	buf_init(&r->body, BUF_MAX_DEFAULT);
	r->sha256[0] = '\0';
	r->whole = 0;
}

void req_release(struct req *r)
{
	if (r)
		buf_release(&r->body);
}

static const char *mime_of(const char *path)
{
	const char *dot = strrchr(path, '.');

	if (dot && (!strcmp(dot, ".jpg") || !strcmp(dot, ".jpeg")))
		return "image/jpeg";
	if (dot && !strcmp(dot, ".webp"))
		return "image/webp";
	if (dot && !strcmp(dot, ".gif"))
		return "image/gif";
	return "image/png";
}

/* Reads image file `url` (relative to `base_dir`) into a data URL. */
static enum err data_url(const char *url, const char *base_dir, struct buf *out,
			 struct diag *d)
{
	struct buf path, raw;
	enum err e;

	buf_init(&path, 1 << 16);
	buf_init(&raw, REQ_IMAGE_MAX);
	if (url[0] == '/' || !base_dir || !*base_dir)
		e = buf_puts(&path, url);
	else
		e = buf_printf(&path, "%s/%s", base_dir, url);
	if (!e)
		e = io_read_file(path.data, &raw, d);
	if (e == ERR_LIMIT)
		diag_fail(d, e, "image '%s' is larger than %zu bytes", path.data,
			  REQ_IMAGE_MAX);
	if (!e)
		e = buf_printf(out, "data:%s;base64,", mime_of(url));
	if (!e)
		e = buf_base64(out, raw.data, raw.len);
	if (e == ERR_NOMEM || e == ERR_LIMIT)
		diag_fail(d, e, "out of memory encoding image '%s'", path.data);
	buf_release(&path);
	buf_release(&raw);
	return e;
}

static int is_inline(const char *url)
{
	return !strncmp(url, "data:", 5) || !strncmp(url, "http://", 7) ||
	       !strncmp(url, "https://", 8);
}

/* Copies `messages` with every file image inlined as a data URL. The caller
 * owns the result (cJSON_Delete). */
static enum err req_inline_images(const cJSON *messages, const char *base_dir,
				  cJSON **out, struct diag *d)
{
	cJSON *copy = cJSON_Duplicate(messages, 1), *m, *part, *inl;
	struct buf url;
	enum err e = ERR_OK;

	*out = NULL;
	if (!copy)
		return diag_fail(d, ERR_NOMEM, "out of memory copying messages");
	buf_init(&url, BUF_MAX_DEFAULT);
	cJSON_ArrayForEach(m, copy) {
		cJSON *content = cJSON_GetObjectItemCaseSensitive(m, "content");
		if (!cJSON_IsArray(content))
			continue;
		cJSON_ArrayForEach(part, content) {
			cJSON *img = cJSON_GetObjectItemCaseSensitive(part, "image_url");
			cJSON *u = cJSON_GetObjectItemCaseSensitive(img, "url");
			if (!cJSON_IsString(u) || is_inline(u->valuestring))
				continue;
			buf_reset(&url);
			e = data_url(u->valuestring, base_dir, &url, d);
			if (!e && !(inl = cJSON_CreateString(url.data)))
				e = diag_fail(d, ERR_NOMEM, "out of memory inlining an image");
			/* in place, so the body keeps its key order; a failed
			 * replace leaves `inl` unattached */
			if (!e && !cJSON_ReplaceItemInObjectCaseSensitive(img, "url", inl)) {
				cJSON_Delete(inl);
				e = diag_fail(d, ERR_NOMEM, "out of memory inlining an image");
			}
			if (e)
				goto out;
		}
	}
out:
	buf_release(&url);
	if (e)
		cJSON_Delete(copy);
	else
		*out = copy;
	return e;
}

static int has_file_image(const cJSON *messages)
{
	const cJSON *m, *part;

	cJSON_ArrayForEach(m, messages) {
		const cJSON *content = cJSON_GetObjectItemCaseSensitive(m, "content");
		if (!cJSON_IsArray(content))
			continue;
		cJSON_ArrayForEach(part, content) {
			const cJSON *u = cJSON_GetObjectItemCaseSensitive(
				cJSON_GetObjectItemCaseSensitive(part, "image_url"), "url");
			if (cJSON_IsString(u) && !is_inline(u->valuestring))
				return 1;
		}
	}
	return 0;
}

static void copy_fields(struct json_build *jb, cJSON *body, const cJSON *kase,
			const char *const *keys)
{
	for (; *keys; keys++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(kase, *keys);
		if (v)
			json_add_dup(jb, body, *keys, v);
	}
}

/* Everything of the body but the messages; NULL when out of memory. */
static cJSON *body_head(const struct suite_case *c, const char *model, int whole)
{
	struct json_build jb;
	const cJSON *extra;
	cJSON *head;

	json_build_init(&jb);
	head = json_new_obj(&jb);
	json_add_str(&jb, head, "model", model);
	json_add_bool(&jb, head, "stream", !whole);
	if (!whole)
		json_add_bool(&jb, json_add_obj(&jb, head, "stream_options"), "include_usage", 1);
	copy_fields(&jb, head, c->json, passthrough);
	cJSON_ArrayForEach(extra, cJSON_GetObjectItemCaseSensitive(c->json, "request"))
		json_add_dup(&jb, head, extra->string, extra); /* suite.h: none of needle's own */
	if (c->prompt)
		json_add_str(&jb, head, "prompt", c->prompt);
	else
		copy_fields(&jb, head, c->json, chat_only);
	json_build_end(&jb, &head, "the request", NULL);
	return head;
}

/*
 * The body is printed around the messages rather than through cJSON: a 1M-token
 * haystack is ~5 MB of text, and printing it once (not building a second tree
 * holding it) keeps the peak at about two copies of the prompt.
 */
enum err req_build(struct req *r, const struct suite_case *c,
		   const cJSON *messages, const char *model,
		   const char *base_dir, struct diag *d)
{
	cJSON *head = body_head(c, model, r->whole), *inlined = NULL;
	char *head_txt = NULL, *msgs_txt = NULL;
	enum err e = ERR_OK;
	int ok;

	buf_reset(&r->body);
	r->endpoint = c->prompt ? REQ_COMPLETIONS : REQ_CHAT;
	r->path = c->prompt ? "/v1/completions" : "/v1/chat/completions";
	ok = head != NULL;
	if (ok && !c->prompt && messages && has_file_image(messages)) {
		e = req_inline_images(messages, base_dir, &inlined, d);
		if (e)
			goto out;
		messages = inlined;
	}
	if (ok)
		head_txt = cJSON_PrintUnformatted(head);
	if (ok && head_txt && !c->prompt && messages)
		msgs_txt = cJSON_PrintUnformatted(messages);
	if (!ok || !head_txt || (!c->prompt && messages && !msgs_txt)) {
		e = diag_fail(d, ERR_NOMEM, "out of memory building the request for '%s'",
			      c->id);
		goto out;
	}
	if (msgs_txt) { /* head_txt ends in '}': splice ,"messages":[...] before it */
		e = buf_append(&r->body, head_txt, strlen(head_txt) - 1);
		if (!e)
			e = buf_puts(&r->body, ",\"messages\":");
		if (!e)
			e = buf_puts(&r->body, msgs_txt);
		if (!e)
			e = buf_putc(&r->body, '}');
	} else {
		e = buf_puts(&r->body, head_txt);
	}
	if (e)
		diag_fail(d, e, "out of memory building the request for '%s'", c->id);
	else
		e = io_sha256_hex(r->body.data, r->body.len, r->sha256, d);
out:
	cJSON_free(head_txt);
	cJSON_free(msgs_txt);
	cJSON_Delete(inlined);
	cJSON_Delete(head);
	return e;
}
