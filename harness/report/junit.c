/*
 * junit — see junit.h.
 */
#include "junit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/jget.h"
#include "base/mem.h"
#include "base/md.h"
#include "base/utf8.h"
#include "base/xml.h"
#include "load/loadcells.h"
#include "run/record.h"
#include "report.h"
#include "keys.h"
#include "why.h"

/* What the walk of the journal gathers: the testcases, then the totals the
 * enclosing elements carry. */
struct junit_walk {
	const char *suite;
	struct buf cases;
	size_t tests, failures;
	double seconds;
};

/* The testcase name of `rec`: the attempt key in words (junit.h). */
static void case_name(const cJSON *rec, char *out, size_t cap)
{
	const cJSON *seed = jget(rec, RK_SEED), *load = jget(rec, RK_LOAD);
	int n;

	n = snprintf(out, cap, "%s repeat %.0f", cJSON_GetStringValue(jget(rec, RK_CASE)),
		     jget_num(rec, RK_REPEAT));
	out[utf8_whole(out, strlen(out))] = '\0'; /* a long case id cut: whole characters */
	if (n >= 0 && (size_t)n < cap && cJSON_IsNumber(seed))
		n += snprintf(out + n, cap - (size_t)n, " seed %.0f", seed->valuedouble);
	if (n < 0 || (size_t)n >= cap || !load)
		return;
	if (cJSON_IsTrue(jget(load, RK_PRECHECK)))
		snprintf(out + n, cap - (size_t)n, " level %.0f pre-check", jget_num(load, RK_LEVEL));
	else if (cJSON_IsTrue(jget(load, RK_WARMUP)))
		snprintf(out + n, cap - (size_t)n, " level %.0f warm-up request %.0f",
			 jget_num(load, RK_LEVEL), jget_num(load, RK_INDEX));
	else
		snprintf(out + n, cap - (size_t)n, " level %.0f round %.0f request %.0f",
			 jget_num(load, RK_LEVEL), jget_num(load, RK_ROUND), jget_num(load, RK_INDEX));
}

static enum err failure(struct buf *b, const struct record_view *v)
{
	struct why_reason r[WHY_REASONS_MAX];
	size_t n = why_reasons(v, r, WHY_REASONS_MAX), i;
	const char *raw = cJSON_GetStringValue(v->f[RF_RAW]);
	enum err e;

	if ((e = buf_puts(b, "\n      <failure message=\"")) || (e = xml_attr(b, r[0].text)) ||
	    (e = buf_puts(b, "\" type=\"")) || (e = xml_attr(b, r[0].stage)) ||
	    (e = buf_puts(b, "\">")))
		return e;
	for (i = 0; !e && i < n; i++)
		if (!(e = buf_printf(b, "%s: ", r[i].stage)) && !(e = xml_text(b, r[i].text)))
			e = buf_putc(b, '\n');
	if (!e && raw && !(e = buf_puts(b, "raw stream: ")) && !(e = xml_text(b, raw)))
		e = buf_putc(b, '\n');
	return e ? e : buf_puts(b, "</failure>\n    ");
}

static enum err testcase(void *ctx, const struct record_view *v, struct diag *d)
{
	const cJSON *rec = v->rec;
	struct junit_walk *w = ctx;
	struct buf *b = &w->cases;
	char name[WHY_TEXT_MAX];
	double s = jget_num(jget(rec, RK_TIMING), RK_E2E_MS) / 1000;
	int pass = record_passed(rec);
	enum err e;

	(void)d;
	s = s > 0 ? s : 0;
	case_name(rec, name, sizeof(name));
	w->tests++;
	w->failures += !pass;
	w->seconds += s;
	if ((e = buf_puts(b, "    <testcase classname=\"")) || (e = xml_attr(b, w->suite)) ||
	    (e = buf_putc(b, '.')) || (e = xml_attr(b, cJSON_GetStringValue(jget(rec, RK_CASE)))) ||
	    (e = buf_puts(b, "\" name=\"")) || (e = xml_attr(b, name)) ||
	    (e = buf_printf(b, "\" time=\"%.3f\">", s)))
		return e;
	if (!pass && (e = failure(b, v)))
		return e;
	return buf_puts(b, "</testcase>\n");
}

static enum err property(struct buf *b, const char *name, const char *value)
{
	enum err e;

	if (!value)
		return ERR_OK;
	if ((e = buf_printf(b, "      <property name=\"%s\" value=\"", name)) || (e = xml_attr(b, value)))
		return e;
	return buf_puts(b, "\"/>\n");
}

/* The document around the testcases the walk gathered. */
static enum err document(const struct junit_walk *w, const cJSON *m, const char *dir,
			 struct buf *out)
{
	char when[32];
	const char *started = cJSON_GetStringValue(jget(m, MK_STARTED_AT));
	enum err e;

	/* the schema's timestamp is a local date-time without a zone: UTC's */
	snprintf(when, sizeof(when), "%.19s", started ? started : "");
	when[utf8_whole(when, strlen(when))] = '\0'; /* the manifest's text: escaped too */
	if ((e = buf_printf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			    "<testsuites name=\"needle\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" time=\"%.3f\">\n"
			    "  <testsuite name=\"", w->tests, w->failures, w->seconds)) ||
	    (e = xml_attr(out, w->suite)) ||
	    (e = buf_printf(out, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"0\"%s",
			    w->tests, w->failures, started ? " timestamp=\"" : "")) ||
	    (started && ((e = xml_attr(out, when)) || (e = buf_putc(out, '"')))) ||
	    (e = buf_printf(out, " time=\"%.3f\">\n    <properties>\n", w->seconds)) ||
	    (e = property(out, "run_id", cJSON_GetStringValue(jget(m, MK_RUN_ID)))) ||
	    (e = property(out, "model", cJSON_GetStringValue(jget2(m, MK_ENDPOINT, EP_SERVED_MODEL)))) ||
	    (e = property(out, "base_url", cJSON_GetStringValue(jget2(m, MK_ENDPOINT, EP_BASE_URL)))) ||
	    (e = property(out, "harness_commit", cJSON_GetStringValue(jget2(m, MK_HARNESS, MK_COMMIT)))) ||
	    (e = property(out, "run_dir", dir)) || (e = buf_puts(out, "    </properties>\n")) ||
	    (e = buf_append(out, w->cases.data, w->cases.len)))
		return e;
	return buf_puts(out, "  </testsuite>\n</testsuites>\n");
}

static enum err walk_start(void *ctx, const struct report_run *r, struct diag *d)
{
	struct junit_walk *w = ctx;

	(void)d;
	w->suite = cJSON_GetStringValue(jget2(r->manifest, MK_SUITE, MK_NAME));
	w->suite = w->suite ? w->suite : "needle";
	return ERR_OK;
}

static void walk_drop(void *ctx)
{
	struct junit_walk *w = ctx;

	buf_release(&w->cases);
	mem_free(w);
}

enum err junit_fold(const struct buf *out, struct report_also *also, struct diag *d)
{
	struct junit_walk *w = mem_calloc(1, sizeof(*w));

	if (!w)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	buf_init(&w->cases, out->max);
	also->start = walk_start;
	also->take = testcase;
	also->ctx = w;
	also->drop = walk_drop;
	return ERR_OK;
}

enum err junit_write(const struct report_run *r, struct buf *out, struct diag *d)
{
	enum err e = document(r->also.ctx, r->manifest, r->dir, out);

	if (e && (!d || !d->code))
		diag_fail(d, e, "cannot write the JUnit report of '%s': %s", r->dir, err_name(e));
	return e;
}

/* ---- a comparison's verdicts ---- */

/* What the walk of the gates gathers. */
struct junit_gates {
	struct buf cases;
	size_t tests, failures, skipped;
};

/* 0 pass, 1 underpowered, 2 fail (a verdict not read as such is a fail). */
static int rank(const char *v)
{
	return v && !strcmp(v, "pass") ? 0 : v && !strcmp(v, "underpowered") ? 1 : 2;
}

/* One testcase: classname `cls`, name `name`, and by verdict nothing, a
 * <skipped> or a <failure> with `message` and the text `body`. */
static enum err verdict_case(struct junit_gates *w, const char *cls, const char *name,
			     const char *verdict, const char *message, const char *body)
{
	struct buf *b = &w->cases;
	int r = rank(verdict);
	enum err e;

	w->tests++;
	w->failures += r == 2;
	w->skipped += r == 1;
	if ((e = buf_puts(b, "    <testcase classname=\"")) || (e = xml_attr(b, cls)) ||
	    (e = buf_puts(b, "\" name=\"")) || (e = xml_attr(b, name)) || (e = buf_puts(b, "\" time=\"0\">")))
		return e;
	if (r && ((e = buf_puts(b, r == 2 ? "\n      <failure message=\"" : "\n      <skipped message=\"")) ||
		  (e = xml_attr(b, message ? message : "")) ||
		  (e = buf_puts(b, r == 2 ? "\" type=\"fail\">" : "\">")) || (e = xml_text(b, body)) ||
		  (e = buf_puts(b, r == 2 ? "</failure>\n    " : "</skipped>\n    "))))
		return e;
	return buf_puts(b, "</testcase>\n");
}

/* The testcase of judgement `j` of load cell `c`; its verdict rank into
 * *worst when worse. */
static enum err cell_case(struct junit_gates *w, const char *spec, const struct diff_cell *c,
			  const struct diff_judgement *j, int *worst)
{
	char name[320], body[640], iv[80], t[2][32], level[64];
	const char *v = gate_verdict_name(j->v);

	loadcells_level(c->named, level, sizeof(level));
	snprintf(name, sizeof(name), "%.200s/%.100s", c->named->case_id, level);
	if (isfinite(j->lo) && isfinite(j->hi))
		snprintf(iv, sizeof(iv), "90%% interval %.4g-%.4g", j->lo, j->hi);
	else
		snprintf(iv, sizeof(iv), "no interval");
	snprintf(body, sizeof(body), "value %s, %s, threshold %s: %.500s",
		 md_num(j->have && isfinite(j->value), j->value, "%.4g", t[0], sizeof(t[0])), iv,
		 md_num(1, j->threshold, "%g", t[1], sizeof(t[1])), j->advice);
	*worst = rank(v) > *worst ? rank(v) : *worst;
	return verdict_case(w, spec, name, v, j->advice, body);
}

/* Gate `g`'s testcases: one per load cell it judged, and one for the gate
 * itself when it judged none or its verdict is worse than its cells'. */
static enum err gate_cases(struct junit_gates *w, const struct diff_result *res, const cJSON *g)
{
	const char *spec = cJSON_GetStringValue(jget(g, DK_GATE)), *detail;
	const char *verdict = cJSON_GetStringValue(jget(g, DK_VERDICT));
	const struct diff_cell *c;
	int worst = 0, cells = 0;
	size_t k;
	enum err e = ERR_OK;

	spec = spec ? spec : "-";
	for (c = res->cells; c < res->cells + res->ncells; c++)
		for (k = 0; k < c->ngates; k++)
			if (!e && !strcmp(c->gates[k].gate, spec)) {
				cells++;
				e = cell_case(w, spec, c, &c->gates[k], &worst);
			}
	if (e || (cells && rank(verdict) <= worst))
		return e;
	detail = cJSON_GetStringValue(jget(g, DK_DETAIL));
	return verdict_case(w, "diff", spec, verdict, detail, detail ? detail : "");
}

/* Whether a gate before `g` in `gates` has the same spec (a gate given
 * twice wrote its items twice: one set of testcases). */
static int seen(const cJSON *gates, const cJSON *g)
{
	const cJSON *p;
	const char *spec = cJSON_GetStringValue(jget(g, DK_GATE));

	for (p = gates ? gates->child : NULL; p && p != g; p = p->next)
		if (spec && cJSON_GetStringValue(jget(p, DK_GATE)) && !strcmp(spec, jget(p, DK_GATE)->valuestring))
			return 1;
	return 0;
}

/* The document around the gates' testcases. */
static enum err gates_document(const struct junit_gates *w, const cJSON *diff, struct buf *out)
{
	enum err e;

	if ((e = buf_printf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			    "<testsuites name=\"needle diff\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" time=\"0\">\n"
			    "  <testsuite name=\"needle diff\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" "
			    "time=\"0\">\n    <properties>\n", w->tests, w->failures, w->tests, w->failures, w->skipped)) ||
	    (e = property(out, "a_dir", cJSON_GetStringValue(jget2(diff, DK_A, SK_DIR)))) ||
	    (e = property(out, "b_dir", cJSON_GetStringValue(jget2(diff, DK_B, SK_DIR)))) ||
	    (e = property(out, "a_model", cJSON_GetStringValue(jget2(diff, DK_A, SK_MODEL)))) ||
	    (e = property(out, "b_model", cJSON_GetStringValue(jget2(diff, DK_B, SK_MODEL)))) ||
	    (e = property(out, "a_run_id", cJSON_GetStringValue(jget2(diff, DK_A, SK_RUN_ID)))) ||
	    (e = property(out, "b_run_id", cJSON_GetStringValue(jget2(diff, DK_B, SK_RUN_ID)))) ||
	    (e = buf_puts(out, "    </properties>\n")) || (e = buf_append(out, w->cases.data, w->cases.len)))
		return e;
	return buf_puts(out, "  </testsuite>\n</testsuites>\n");
}

enum err junit_diff_write(const struct diff_result *res, struct buf *out, struct diag *d)
{
	const cJSON *diff = res->diff, *g;
	struct junit_gates w;
	enum err e = ERR_OK;

	memset(&w, 0, sizeof(w));
	buf_init(&w.cases, out->max);
	cJSON_ArrayForEach(g, jget(diff, DK_GATES))
		if (!e && !seen(jget(diff, DK_GATES), g))
			e = gate_cases(&w, res, g);
	if (!e)
		e = gates_document(&w, diff, out);
	buf_release(&w.cases);
	if (e)
		return diag_fail(d, e, "cannot write the JUnit report of the comparison: %s", err_name(e));
	return ERR_OK;
}
