/*
 * tpl_turns — style "turns" (see tpl_turns.h and tpl_desc.h).
 */
#include <string.h>

#include "tpl_py.h"
#include "tpl_turns.h"

/* Appends `s` with each "{{key}}" replaced by its value. */
static enum err put_sub(struct buf *out, const char *s, const char *const *kv, size_t nkv)
{
	while (*s) {
		const char *p = strstr(s, "{{");
		size_t i;

		if (!p)
			return buf_puts(out, s);
		if (buf_append(out, s, (size_t)(p - s)))
			return ERR_NOMEM;
		for (i = 0; i + 1 < nkv; i += 2) {
			size_t kl = strlen(kv[i]);

			if (!strncmp(p, kv[i], kl)) {
				if (buf_puts(out, kv[i + 1]))
					return ERR_NOMEM;
				s = p + kl;
				break;
			}
		}
		if (i + 1 >= nkv) { /* validated at load: cannot happen */
			if (buf_puts(out, "{{"))
				return ERR_NOMEM;
			s = p + 2;
		}
	}
	return ERR_OK;
}

/* Length of `s` without trailing/leading '\n' (Python rstrip/lstrip('\n')). */
static const char *lstrip_nl(const char *s)
{
	while (*s == '\n')
		s++;
	return s;
}

static size_t rstrip_nl_len(const char *s, size_t len)
{
	while (len && s[len - 1] == '\n')
		len--;
	return len;
}

static const char *find_last(const char *hay, size_t len, const char *needle)
{
	size_t nl = strlen(needle);
	const char *last = NULL, *p = hay;

	while (nl && (size_t)(p - hay) + nl <= len && (p = strstr(p, needle)) &&
	       (size_t)(p - hay) + nl <= len) {
		last = p;
		p++;
	}
	return last;
}

static int starts_with(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

static int ends_with(const char *s, const char *p)
{
	size_t ls = strlen(s), lp = strlen(p);

	return ls >= lp && !memcmp(s + ls - lp, p, lp);
}

static int role_rendered(const struct tpl_desc *t, const char *role)
{
	const cJSON *roles = cJSON_GetObjectItemCaseSensitive(t->root, "roles");
	const cJSON *r;

	if (!roles)
		return 1;
	cJSON_ArrayForEach(r, roles)
		if (!strcmp(r->valuestring, role))
			return 1;
	return 0;
}

static enum err put_turn_edge(const struct tpl_desc *t, const char *key, const char *role,
			      struct buf *out)
{
	const char *kv[] = {"{{role}}", role};

	return put_sub(out, tpl_desc_str(t->root, key), kv, 2);
}

/* The tools block; sets *skip_first when it consumed a leading system turn. */
static enum err turns_tools(const struct tpl_desc *t, const struct tpl_conv *c, const cJSON *tools,
			    enum tpl_server server, int *skip_first, struct buf *out, struct diag *d)
{
	const cJSON *tb = cJSON_GetObjectItemCaseSensitive(t->root, "tools");
	const cJSON *tool;
	size_t i = 0;
	enum err e;

	*skip_first = 0;
	if (!tb || !cJSON_IsArray(tools) || !cJSON_GetArraySize(tools))
		return ERR_OK;
	e = buf_puts(out, tpl_desc_str(tb, "prefix"));
	if (!e && tpl_msg_is(&c->m[0], "system")) {
		*skip_first = 1;
		e = buf_puts(out, c->m[0].content);
		if (!e)
			e = buf_puts(out, tpl_desc_str(tb, "system_separator"));
	}
	if (!e)
		e = buf_puts(out, tpl_desc_str(tb, "header"));
	cJSON_ArrayForEach(tool, tools) {
		if (!e)
			e = buf_puts(out, tpl_desc_str(tb, "item_prefix"));
		if (!e)
			e = tpl_msg_dump_tool(tool, i++, server, out, d);
	}
	return e ? e : buf_puts(out, tpl_desc_str(tb, "footer"));
}

/* Qwen3's last_query_index: the last user message that is not a wrapped
 * tool response; the last index when there is none. */
static size_t last_query(const struct tpl_desc *t, const struct tpl_conv *c)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(t->root, "reasoning");
	size_t i = c->n;

	while (i-- > 0)
		if (tpl_msg_is(&c->m[i], "user") &&
		    !(starts_with(c->m[i].content, tpl_desc_str(r, "query_skip_open")) &&
		      ends_with(c->m[i].content, tpl_desc_str(r, "query_skip_close"))))
			return i;
	return c->n - 1;
}

static enum err turns_tool_calls(const struct tpl_desc *t, const struct tpl_msg *m,
				 const char *content, struct buf *out, struct diag *d)
{
	const cJSON *tc = cJSON_GetObjectItemCaseSensitive(t->root, "tool_calls");
	const cJSON *call, *args = m->args ? m->args->child : NULL;
	struct buf a;
	size_t i = 0;
	enum err e = ERR_OK;

	if (!tc || !m->tool_calls)
		return ERR_OK;
	buf_init(&a, BUF_MAX_DEFAULT);
	cJSON_ArrayForEach(call, m->tool_calls) {
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(call, "function");
		const char *kv[4];

		buf_reset(&a);
		if (i == 0 && *content)
			e = buf_puts(out, tpl_desc_str(tc, "lead"));
		else if (i > 0)
			e = buf_puts(out, tpl_desc_str(tc, "separator"));
		if (!e)
			e = tpl_pyjson(args, &a);
		kv[0] = "{{name}}";
		kv[1] = cJSON_GetObjectItemCaseSensitive(f, "name")->valuestring;
		kv[2] = "{{arguments}}";
		kv[3] = a.data;
		if (!e)
			e = put_sub(out, tpl_desc_str(tc, "call"), kv, 4);
		args = args ? args->next : NULL;
		i++;
		if (e)
			break;
	}
	buf_release(&a);
	return e ? diag_fail(d, e, "out of memory") : ERR_OK;
}

/* An assistant turn under the "reasoning" rule (Qwen3 Jinja, verbatim logic). */
static enum err turns_assistant(const struct tpl_desc *t, const struct tpl_conv *c, size_t i,
				size_t lq, struct buf *out, struct diag *d)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(t->root, "reasoning");
	const struct tpl_msg *m = &c->m[i];
	const char *content = m->content, *rc = "", *endt = tpl_desc_str(r, "end_tag");
	size_t rclen = 0;
	enum err e;

	if (r && m->reasoning) {
		rc = m->reasoning;
		rclen = strlen(rc);
	} else if (r && *endt && strstr(m->content, endt)) {
		const char *first = strstr(m->content, endt);
		size_t head = rstrip_nl_len(m->content, (size_t)(first - m->content));
		const char *st = find_last(m->content, head, tpl_desc_str(r, "start_tag"));

		content = lstrip_nl(find_last(m->content, strlen(m->content), endt) + strlen(endt));
		rc = st ? st + strlen(tpl_desc_str(r, "start_tag")) : m->content;
		rclen = head - (size_t)(rc - m->content);
		while (rclen && *rc == '\n')
			rc++, rclen--;
	}
	e = put_turn_edge(t, "turn_prefix", m->role, out);
	if (!e && r && i > lq && (i + 1 == c->n || rclen)) {
		const char *a = rc;
		size_t n = rclen;

		while (n && *a == '\n')
			a++, n--;
		n = rstrip_nl_len(a, n);
		e = buf_puts(out, tpl_desc_str(r, "open"));
		if (!e)
			e = buf_append(out, a, n);
		if (!e)
			e = buf_puts(out, tpl_desc_str(r, "close"));
		if (!e)
			e = buf_puts(out, lstrip_nl(content));
	} else if (!e) {
		e = buf_puts(out, content);
	}
	if (!e)
		e = turns_tool_calls(t, m, content, out, d);
	if (!e)
		e = put_turn_edge(t, "turn_suffix", m->role, out);
	return e;
}

static enum err turns_tool_result(const struct tpl_desc *t, const struct tpl_conv *c, size_t i,
				  struct buf *out)
{
	const cJSON *tr = cJSON_GetObjectItemCaseSensitive(t->root, "tool_results");
	enum err e = ERR_OK;

	if (i == 0 || !tpl_msg_is(&c->m[i - 1], "tool"))
		e = buf_puts(out, tpl_desc_str(tr, "open"));
	if (!e)
		e = buf_puts(out, tpl_desc_str(tr, "item_prefix"));
	if (!e)
		e = buf_puts(out, c->m[i].content);
	if (!e)
		e = buf_puts(out, tpl_desc_str(tr, "item_suffix"));
	if (!e && (i + 1 == c->n || !tpl_msg_is(&c->m[i + 1], "tool")))
		e = buf_puts(out, tpl_desc_str(tr, "close"));
	return e;
}

enum err tpl_turns_render(const struct tpl_desc *t, const struct tpl_conv *c,
			  const cJSON *tools, enum tpl_server server, int gen, int thinking,
			  struct buf *out, struct diag *d)
{
	const cJSON *root = t->root;
	int skip_first = 0;
	size_t i, lq = last_query(t, c);
	enum err e = buf_puts(out, tpl_desc_str(root, "bos"));

	if (!e)
		e = turns_tools(t, c, tools, server, &skip_first, out, d);
	for (i = skip_first ? 1 : 0; !e && i < c->n; i++) {
		const struct tpl_msg *m = &c->m[i];

		if (!role_rendered(t, m->role))
			continue;
		if (tpl_msg_is(m, "tool") && cJSON_GetObjectItemCaseSensitive(root, "tool_results")) {
			e = turns_tool_result(t, c, i, out);
		} else if (tpl_msg_is(m, "assistant") &&
			   (cJSON_GetObjectItemCaseSensitive(root, "reasoning") ||
			    cJSON_GetObjectItemCaseSensitive(root, "tool_calls"))) {
			e = turns_assistant(t, c, i, lq, out, d);
		} else {
			e = put_turn_edge(t, "turn_prefix", m->role, out);
			if (!e)
				e = tpl_desc_true(root, "trim_content") ? tpl_py_strip(m->content, out)
							     : buf_puts(out, m->content);
			if (!e)
				e = put_turn_edge(t, "turn_suffix", m->role, out);
		}
	}
	if (!e && (gen || tpl_desc_true(root, "generation_prompt_always"))) {
		const cJSON *th = cJSON_GetObjectItemCaseSensitive(root, "thinking");

		e = buf_puts(out, tpl_desc_str(root, "generation_prompt"));
		if (!e && th)
			e = buf_puts(out, tpl_desc_str(th, thinking ? "on" : "off"));
	}
	return e;
}
