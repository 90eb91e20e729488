/* toolturn — see toolturn.h. */
#include "grade.h"
#include "toolturn.h"

/* The tool result for made call `t`: the one expected call's tool_result, or
 * that of the first unused entry of tool_calls `t` matches. */
static cJSON *result_for(const struct expect *x, const struct stream_tool_call *t,
			 int *used)
{
	const cJSON *res = NULL;
	size_t i;

	if (x->one_call)
		res = x->calls[0].result;
	for (i = 0; !x->one_call && i < x->ncalls && i < 64; i++) {
		struct grade scratch;
		int ok;
		grade_init(&scratch);
		ok = !used[i] && grade_call_matches(t, &x->calls[i], &scratch);
		grade_release(&scratch);
		if (ok) {
			used[i] = 1;
			res = x->calls[i].result;
			break;
		}
	}
	if (cJSON_IsString(res))
		return cJSON_CreateString(res->valuestring);
	if (res) {
		char *txt = cJSON_PrintUnformatted(res);
		cJSON *v = txt ? cJSON_CreateString(txt) : NULL;
		cJSON_free(txt);
		return v;
	}
	return cJSON_CreateString("");
}

static int add_str(cJSON *o, const char *k, const char *v)
{
	return cJSON_AddStringToObject(o, k, v) != NULL;
}

static int add_tool_messages(cJSON *m, const struct suite_case *c,
			     const struct stream *st)
{
	int used[64] = {0};
	size_t i;

	for (i = 0; i < st->ntools; i++) {
		cJSON *tm = cJSON_CreateObject();
		if (!tm || !cJSON_AddItemToArray(m, tm) || !add_str(tm, "role", "tool") ||
		    !add_str(tm, "tool_call_id", st->tools[i].id.data) ||
		    !cJSON_AddItemToObject(tm, "content", result_for(&c->expect, &st->tools[i], used)))
			return 0;
	}
	return 1;
}

cJSON *toolturn_messages(const struct suite_case *c, const struct stream *st,
			 const cJSON *calls)
{
	cJSON *m = cJSON_Duplicate(c->messages, 1), *asst = cJSON_CreateObject();
	int ok = m && asst && cJSON_AddItemToArray(m, asst);

	if (!ok)
		cJSON_Delete(asst);
	ok = ok && add_str(asst, "role", "assistant") &&
	     cJSON_AddItemToObject(asst, "content", st->content.len
				   ? cJSON_CreateString(st->content.data) : cJSON_CreateNull()) &&
	     cJSON_AddItemToObject(asst, "tool_calls", cJSON_Duplicate(calls, 1)) &&
	     add_tool_messages(m, c, st);
	if (ok)
		return m;
	cJSON_Delete(m);
	return NULL;
}
