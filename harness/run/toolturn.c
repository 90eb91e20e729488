/* toolturn — see toolturn.h. */
#include "grade.h"
#include "base/json.h"
#include "toolturn.h"

/* The tool result for made call `t`: the one expected call's tool_result, or
 * that of the first unused entry of tool_calls `t` matches. */
static const cJSON *result_for(const struct expect *x, const struct stream_tool_call *t,
			       int *used)
{
	size_t i;

	if (x->one_call)
		return x->calls[0].result;
	for (i = 0; i < x->ncalls && i < 64; i++) {
		struct grade scratch;
		int ok;
		grade_init(&scratch);
		ok = !used[i] && grade_call_matches(t, &x->calls[i], &scratch);
		grade_release(&scratch);
		if (ok) {
			used[i] = 1;
			return x->calls[i].result;
		}
	}
	return NULL;
}

/* A tool result as message content: a string as is, an object as compact
 * JSON text, "" when none. */
static void add_result(struct json_build *jb, cJSON *msg, const cJSON *res)
{
	char *txt;

	if (cJSON_IsString(res)) {
		json_add_str(jb, msg, "content", res->valuestring);
	} else if (res) {
		txt = cJSON_PrintUnformatted(res);
		if (txt)
			json_add_str(jb, msg, "content", txt);
		else
			json_add_item(jb, msg, "content", NULL); /* out of memory */
		cJSON_free(txt);
	} else {
		json_add_str(jb, msg, "content", "");
	}
}

cJSON *toolturn_messages(const struct suite_case *c, const struct stream *st,
			 const cJSON *calls)
{
	struct json_build jb;
	cJSON *m, *asst;
	int used[64] = {0};
	size_t i;

	json_build_init(&jb);
	m = cJSON_Duplicate(c->messages, 1); /* NULL fails the first add */
	asst = json_add_obj(&jb, m, NULL);
	json_add_str(&jb, asst, "role", "assistant");
	if (st->content.len) /* by length: a NUL the model wrote stays (json_add_strn) */
		json_add_strn(&jb, asst, "content", st->content.data, st->content.len);
	else
		json_add_null(&jb, asst, "content");
	json_add_dup(&jb, asst, "tool_calls", calls);
	for (i = 0; i < st->ntools; i++) {
		cJSON *tm = json_add_obj(&jb, m, NULL);
		json_add_str(&jb, tm, "role", "tool");
		json_add_strn(&jb, tm, "tool_call_id", st->tools[i].id.data, st->tools[i].id.len);
		add_result(&jb, tm, result_for(&c->expect, &st->tools[i], used));
	}
	json_build_end(&jb, &m, "a tool result", NULL);
	return m;
}
