/*
 * render — the test driver of the jinja interpreter (harness/jinja/jinja.h), the C
 * side of the oracle comparison (tests/jinja/compare.py).
 *
 * Usage: render JOBS.json OUT.json
 * JOBS.json is the file render_py.py reads: {"date", "templates": {NAME:
 * TEXT}, "contexts": {NAME: JSON-TEXT}, "jobs": [[TEMPLATE, CONTEXT], ...]};
 * each context is an object whose members become the template's variables
 * (read from its text, so numbers and key order are Python's). OUT.json gets
 * one entry per job: {"ok": TEXT}, {"reject": MESSAGE} (ERR_INPUT: Python
 * would raise) or {"refuse": MESSAGE} (anything else, chiefly ERR_UNSUPPORTED),
 * plus "openai": jinja_tpl_openai_content when the template parsed.
 * Exit 0 unless the jobs file itself is unusable (2).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "base/io.h"
#include "jinja/jinja.h"

static int parse_date(const char *s, struct tm *tm)
{
	memset(tm, 0, sizeof(*tm));
	if (sscanf(s, "%d-%d-%dT%d:%d:%d", &tm->tm_year, &tm->tm_mon, &tm->tm_mday, &tm->tm_hour,
		   &tm->tm_min, &tm->tm_sec) != 6)
		return -1;
	tm->tm_year -= 1900;
	tm->tm_mon -= 1;
	{
		time_t t = timegm(tm);

		gmtime_r(&t, tm);
	}
	return 0;
}

static cJSON *render_one(const cJSON *tpl, const cJSON *ctxtext, const struct tm *clock)
{
	struct jinja_ctx *c = jinja_ctx_new();
	struct jinja_tpl *t = NULL;
	struct diag d;
	struct buf out;
	cJSON *res = cJSON_CreateObject();
	enum err e;

	diag_init(&d);
	buf_init(&out, BUF_MAX_DEFAULT);
	if (!c) {
		e = diag_fail(&d, ERR_NOMEM, "out of memory");
	} else {
		jinja_ctx_clock(c, clock);
		e = jinja_ctx_merge_json(c, ctxtext->valuestring, strlen(ctxtext->valuestring), &d);
		if (!e)
			e = jinja_tpl_new(tpl->valuestring, strlen(tpl->valuestring), &t, &d);
		if (!e)
			e = jinja_tpl_render(t, c, &out, &d);
	}
	if (!e)
		cJSON_AddStringToObject(res, "ok", out.data);
	else
		cJSON_AddStringToObject(res, e == ERR_INPUT ? "reject" : "refuse", d.msg);
	if (t)
		cJSON_AddNumberToObject(res, "openai", jinja_tpl_openai_content(t));
	buf_release(&out);
	jinja_tpl_free(t);
	jinja_ctx_free(c);
	return res;
}

int main(int argc, char **argv)
{
	cJSON *spec, *templates, *contexts, *jobs, *job, *results;
	const cJSON *date;
	struct tm clock;
	char *printed;
	struct buf text;
	struct diag d;
	FILE *f;

	diag_init(&d);
	buf_init(&text, BUF_MAX_DEFAULT);
	if (argc != 3 || io_read_file(argv[1], &text, &d)) {
		fprintf(stderr, "usage: render JOBS.json OUT.json (%s)\n", d.msg);
		return 2;
	}
	spec = cJSON_ParseWithLength(text.data, text.len);
	buf_release(&text);
	templates = cJSON_GetObjectItem(spec, "templates");
	contexts = cJSON_GetObjectItem(spec, "contexts");
	jobs = cJSON_GetObjectItem(spec, "jobs");
	date = cJSON_GetObjectItem(spec, "date");
	if (!spec || !templates || !contexts || !cJSON_IsArray(jobs) ||
	    parse_date(cJSON_IsString(date) ? date->valuestring : "2024-07-26T12:00:00", &clock)) {
		fprintf(stderr, "render: bad jobs file '%s'\n", argv[1]);
		return 2;
	}
	results = cJSON_CreateArray();
	cJSON_ArrayForEach(job, jobs) {
		const cJSON *t = cJSON_GetObjectItem(templates, cJSON_GetArrayItem(job, 0)->valuestring);
		const cJSON *c = cJSON_GetObjectItem(contexts, cJSON_GetArrayItem(job, 1)->valuestring);

		cJSON_AddItemToArray(results, render_one(t, c, &clock));
	}
	printed = cJSON_PrintUnformatted(results);
	f = fopen(argv[2], "w");
	if (!f || !printed || fputs(printed, f) < 0 || fclose(f)) {
		fprintf(stderr, "render: cannot write '%s'\n", argv[2]);
		return 2;
	}
	free(printed);
	cJSON_Delete(results);
	cJSON_Delete(spec);
	return 0;
}
