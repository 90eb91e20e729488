/*
 * parity — see parity.h.
 */
#include "parity.h"

#include <string.h>

#include <cjson/cJSON.h>

/* The first byte at which two texts differ (the shorter's length when one
 * is the other's start). */
static size_t first_difference(const struct buf *a, const struct buf *b)
{
	size_t i, n = a->len < b->len ? a->len : b->len;

	for (i = 0; i < n && a->data[i] == b->data[i]; i++)
		;
	return i;
}

/* 1 when `t` is empty or only spaces, tabs and line ends. */
static int blank(const struct buf *t)
{
	size_t i;

	for (i = 0; i < t->len; i++)
		if (!strchr(" \t\r\n", t->data[i]))
			return 0;
	return 1;
}

static void texts(const char *what, const struct buf *a, const struct buf *b, struct grade *g)
{
	if (a->len == b->len && (!a->len || !memcmp(a->data, b->data, a->len)))
		return;
	grade_fail(g, "parity: the %s differs (streamed %zu bytes, non-streamed %zu; first difference at byte %zu)",
		   what, a->len, b->len, first_difference(a, b));
}

/* Arguments equal as JSON (cJSON_Compare: keys in any order), or byte for
 * byte when either does not parse. */
static int same_arguments(const struct buf *a, const struct buf *b)
{
	cJSON *ja = cJSON_ParseWithLength(a->data ? a->data : "", a->len);
	cJSON *jb = cJSON_ParseWithLength(b->data ? b->data : "", b->len);
	int same = ja && jb ? cJSON_Compare(ja, jb, 1)
		   : a->len == b->len && (!a->len || !memcmp(a->data, b->data, a->len));

	cJSON_Delete(ja);
	cJSON_Delete(jb);
	return same;
}

static void calls(const struct stream *s, const struct stream *w, struct grade *g)
{
	size_t i;

	if (s->ntools != w->ntools) {
		grade_fail(g, "parity: %zu tool call%s streamed, %zu non-streamed", s->ntools,
			   s->ntools == 1 ? "" : "s", w->ntools);
		return;
	}
	for (i = 0; i < s->ntools; i++) {
		const struct stream_tool_call *a = &s->tools[i], *b = &w->tools[i];

		if (a->name.len != b->name.len || (a->name.len && memcmp(a->name.data, b->name.data, a->name.len)))
			grade_fail(g, "parity: tool call %zu is '%.*s' streamed, '%.*s' non-streamed", i,
				   (int)a->name.len, a->name.data ? a->name.data : "", (int)b->name.len,
				   b->name.data ? b->name.data : "");
		else if (!same_arguments(&a->arguments, &b->arguments))
			grade_fail(g, "parity: the arguments of tool call %zu ('%.*s') differ: %.*s streamed, %.*s non-streamed",
				   i, (int)a->name.len, a->name.data, (int)(a->arguments.len > 120 ? 120 : a->arguments.len),
				   a->arguments.data ? a->arguments.data : "",
				   (int)(b->arguments.len > 120 ? 120 : b->arguments.len),
				   b->arguments.data ? b->arguments.data : "");
	}
}

void parity_judge(const struct stream *streamed, const struct stream *whole,
		  const struct stream_checks *ck, struct grade *g)
{
	const struct stream_usage *a = &streamed->usage, *b = &whole->usage;
	size_t i;

	if (ck->n) {
		for (i = 0; i < ck->n; i++)
			grade_fail(g, "parity: the non-streamed answer failed %s: %s",
				   stream_fail_name(ck->f[i].code), ck->f[i].msg);
		return;
	}
	/* With tool calls on both sides, blank content is no content: vLLM's
	 * reasoning and tool parsers stream the blank line between the reasoning
	 * and the first call, and its non-streamed message has content null. */
	if (!(streamed->ntools && whole->ntools && blank(&streamed->content) && blank(&whole->content)))
		texts("content", &streamed->content, &whole->content, g);
	texts("reasoning", &streamed->reasoning, &whole->reasoning, g);
	calls(streamed, whole, g);
	if (strcmp(streamed->finish_reason.data ? streamed->finish_reason.data : "",
		   whole->finish_reason.data ? whole->finish_reason.data : ""))
		grade_fail(g, "parity: finish_reason '%s' streamed, '%s' non-streamed",
			   streamed->finish_reason.data ? streamed->finish_reason.data : "",
			   whole->finish_reason.data ? whole->finish_reason.data : "");
	if (a->prompt_tokens != b->prompt_tokens || a->completion_tokens != b->completion_tokens)
		grade_fail(g, "parity: usage differs: prompt_tokens %lld and completion_tokens %lld streamed, "
			   "%lld and %lld non-streamed", a->prompt_tokens, a->completion_tokens,
			   b->prompt_tokens, b->completion_tokens);
}
