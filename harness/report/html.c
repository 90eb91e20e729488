/*
 * html — see html.h.
 */
#include "html.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/jget.h"
#include "base/md.h"
#include "base/xml.h"
#include "load/loadcells.h"
#include "diffplot.h"
#include "keys.h"
#include "run/record.h"

/* Appends `s` as escaped text; "-" when NULL. */
static enum err text(struct buf *b, const char *s)
{
	return xml_text(b, s ? s : "-");
}

/* A table cell holding value `v` as md_value prints it. */
static enum err cell(struct buf *b, const cJSON *v)
{
	char tmp[64];
	enum err e = buf_puts(b, "<td>");

	e = e ? e : text(b, md_value(v, tmp, sizeof(tmp)));
	return e ? e : buf_puts(b, "</td>");
}

/* A cell with number `v` printed by `fmt` when `has`, else "-". */
static enum err num_td(struct buf *b, int has, double v, const char *fmt)
{
	char tmp[64];
	enum err e = buf_puts(b, "<td class=\"n\">");

	e = e ? e : text(b, md_num(has, v, fmt, tmp, sizeof(tmp)));
	return e ? e : buf_puts(b, "</td>");
}

/* A cell with number `v` printed by `fmt` ("-" when absent). */
static enum err num_cell(struct buf *b, const cJSON *v, const char *fmt)
{
	return num_td(b, cJSON_IsNumber(v), cJSON_IsNumber(v) ? v->valuedouble : 0, fmt);
}

static enum err head_row(struct buf *b, const char *const *names, size_t n)
{
	enum err e = buf_puts(b, "<table>\n<tr>");
	size_t i;

	for (i = 0; !e && i < n; i++)
		if (!(e = buf_puts(b, "<th>")) && !(e = text(b, names[i])))
			e = buf_puts(b, "</th>");
	return e ? e : buf_puts(b, "</tr>\n");
}

static enum err sec_facts(struct buf *b, const cJSON *s)
{
	static const char *const keys[][2] = {
		{"model", SK_MODEL}, {"server", SK_SERVER_VERSION}, {"server kind", SK_SERVER_KIND},
		{"endpoint", SK_BASE_URL}, {"suite", SK_SUITE}, {"tokenizer", SK_TOKENIZER_KIND},
		{"template", SK_TEMPLATE}, {"needle", SK_HARNESS_VERSION}, {"needle commit", SK_HARNESS_COMMIT},
		{"run id", SK_RUN_ID}, {"started", SK_STARTED_AT}, {"ended", SK_ENDED_AT}};
	static const char *const names[] = {"fact", "value"};
	const cJSON *run = jget(s, SK_RUN);
	enum err e = buf_puts(b, "<h1>needle report: ");
	size_t i;

	e = e ? e : text(b, cJSON_GetStringValue(jget(run, SK_DIR)));
	e = e ? e : buf_puts(b, "</h1>\n");
	e = e ? e : head_row(b, names, 2);
	for (i = 0; !e && i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!(e = buf_puts(b, "<tr><th>")) && !(e = text(b, keys[i][0])) &&
		    !(e = buf_puts(b, "</th>")) && !(e = cell(b, jget(run, keys[i][1]))))
			e = buf_puts(b, "</tr>\n");
	return e ? e : buf_puts(b, "</table>\n");
}

static enum err sec_attempts(struct buf *b, const cJSON *s)
{
	const cJSON *a = jget(s, SK_ATTEMPTS), *w = jget(a, SK_WILSON95);
	const cJSON *lo = cJSON_GetArrayItem(w, 0), *hi = cJSON_GetArrayItem(w, 1);
	enum err e;

	e = buf_printf(b, "<h2>Attempts</h2>\n<p class=\"%s\">%.0f of %.0f passed",
		       jget_num(a, SK_FAIL) > 0 ? "bad" : "good", jget_num(a, SK_PASS), jget_num(a, SK_TOTAL));
	if (!e && cJSON_IsNumber(jget(a, SK_RATE)) && cJSON_IsNumber(lo) && cJSON_IsNumber(hi))
		e = buf_printf(b, " (%.1f%%, 95%% interval %.1f%% to %.1f%%)", 100 * jget_num(a, SK_RATE),
			       100 * lo->valuedouble, 100 * hi->valuedouble);
	if (!e && cJSON_IsFalse(jget(a, SK_COMPLETE)))
		e = buf_printf(b, "; <strong>INCOMPLETE: %.0f/%.0f planned attempts recorded</strong>",
			       jget_num(a, SK_PLANNED_DONE), jget_num(a, SK_PLANNED));
	return e ? e : buf_puts(b, ".</p>\n");
}

static enum err sec_cases(struct buf *b, const struct casetab *t)
{
	static const char *const names[] = {"case", "kind", "attempts", "passed", "pass rate", "first reason"};
	enum err e = buf_puts(b, "<h2>Cases</h2>\n");
	size_t i;

	e = e ? e : head_row(b, names, 6);
	for (i = 0; !e && i < t->n; i++) {
		const struct casetab_case *c = &t->c[i];
		e = buf_printf(b, "<tr class=\"%s\"><td>", c->pass == c->total ? "good" : "bad");
		e = e ? e : text(b, c->id);
		e = e ? e : buf_puts(b, "</td><td>");
		e = e ? e : text(b, c->kind);
		e = e ? e : buf_printf(b, "</td><td class=\"n\">%zu</td><td class=\"n\">%zu</td>"
				       "<td class=\"n\">%.1f%%</td><td>", c->total, c->pass,
				       c->total ? 100.0 * (double)c->pass / (double)c->total : 0.0);
		e = e ? e : text(b, c->first_reason ? c->first_reason : "");
		e = e ? e : buf_puts(b, "</td></tr>\n");
	}
	return e ? e : buf_puts(b, "</table>\n");
}

static enum err sec_failures(struct buf *b, const cJSON *s)
{
	static const char *const names[] = {"stage", "reason", "attempts", "cases", "example answer"};
	const cJSON *f, *c, *advice;
	enum err e = buf_puts(b, "<h2>Failures</h2>\n");

	cJSON_ArrayForEach(advice, jget(s, SK_ADVICE))
		if (!e && !(e = buf_puts(b, "<p class=\"bad\">What to do: ")) &&
		    !(e = text(b, cJSON_GetStringValue(advice))))
			e = buf_puts(b, "</p>\n");
	if (!e && !cJSON_GetArraySize(jget(s, SK_FAILURES)))
		return buf_puts(b, "<p class=\"good\">No attempt failed.</p>\n");
	e = e ? e : head_row(b, names, 5);
	cJSON_ArrayForEach(f, jget(s, SK_FAILURES)) {
		int first = 1;
		e = e ? e : buf_puts(b, "<tr>");
		e = e ? e : cell(b, jget(f, SK_STAGE));
		e = e ? e : cell(b, jget2(f, SK_EXAMPLE, SK_REASON));
		e = e ? e : num_cell(b, jget(f, SK_COUNT), "%.0f");
		e = e ? e : buf_puts(b, "<td>");
		cJSON_ArrayForEach(c, jget(f, SK_CASES)) {
			e = e ? e : buf_puts(b, first ? "" : ", ");
			e = e ? e : text(b, cJSON_GetStringValue(c));
			first = 0;
		}
		e = e ? e : buf_puts(b, "</td>");
		e = e ? e : cell(b, jget2(f, SK_EXAMPLE, SK_ANSWER));
		e = e ? e : buf_puts(b, "</tr>\n");
	}
	return e ? e : buf_puts(b, "</table>\n");
}

/* A cell with load cell c's figure `f` printed by `fmt` ("-" when it has
 * none or `c` is NULL). */
static enum err fig_cell(struct buf *b, const struct loadcells_cell *c, enum loadcells_fig f,
			 const char *fmt)
{
	double v = 0;
	int has = loadcells_median(c, f, &v);

	return num_td(b, has, v, fmt);
}

/* One row per load level: the figures with their min-max over rounds. */
static enum err sec_load(struct buf *b, const struct loadcells *lc)
{
	static const char *const names[] = {"case", "level", "requests", "success", "output tok/s",
					    "min-max", "TTFT P50 ms", "TTFT P95 ms", "TPOT P95 ms",
					    "E2E P50 ms", "valid rounds"};
	const struct loadcells_cell *c;
	const struct loadstat_fig *tps;
	size_t i;
	enum err e;

	if (!lc->n)
		return ERR_OK;
	e = buf_puts(b, "<h2>Load</h2>\n");
	e = e ? e : head_row(b, names, sizeof(names) / sizeof(names[0]));
	for (i = 0; i < lc->n; i++) {
		char level[48];
		c = &lc->c[i];
		tps = loadcells_fig(c, LCF_OUTPUT_TPS);
		snprintf(level, sizeof(level), c->open_loop ? "rate %.15g/s" : "concurrency %.0f", c->level_value);
		e = e ? e : buf_puts(b, "<tr><td>");
		e = e ? e : text(b, c->case_id);
		e = e ? e : buf_printf(b, "</td><td>%s</td><td class=\"n\">%zu</td><td class=\"n\">%.3f</td>", level,
				       c->s.requests, c->s.success_rate);
		e = e ? e : fig_cell(b, c, LCF_OUTPUT_TPS, "%.1f");
		e = e ? e : buf_printf(b, "<td class=\"n\">%.1f&#8211;%.1f</td>", tps->n ? tps->min : 0,
				       tps->n ? tps->max : 0);
		e = e ? e : fig_cell(b, c, LCF_TTFT_P50_MS, "%.1f");
		e = e ? e : fig_cell(b, c, LCF_TTFT_P95_MS, "%.1f");
		e = e ? e : fig_cell(b, c, LCF_TPOT_P95_MS, "%.2f");
		e = e ? e : fig_cell(b, c, LCF_E2E_P50_MS, "%.1f");
		e = e ? e : buf_printf(b, "<td class=\"n\">%zu/%zu</td></tr>\n", c->s.rounds_valid, c->s.rounds_total);
	}
	return e ? e : buf_puts(b, "</table>\n");
}

static enum err sec_latency(struct buf *b, const cJSON *s)
{
	static const char *const names[] = {"figure", "n", "P50 ms", "P90 ms", "P99 ms"};
	static const char *const figs[] = {RK_FIRST_BYTE_MS, RK_TTFT_MS, RK_TTFC_MS, RK_E2E_MS, RK_TPOT_MS};
	const cJSON *lat = jget(s, SK_LATENCY);
	enum err e;
	size_t i;

	if (!report_timed(lat))
		return buf_puts(b, "<h2>Latency</h2>\n<p>" REPORT_UNTIMED "</p>\n");
	e = buf_puts(b, "<h2>Latency</h2>\n<p>Attempts that are not load requests; "
		     "nearest-rank percentiles.</p>\n");
	e = e ? e : head_row(b, names, 5);
	for (i = 0; !e && i < sizeof(figs) / sizeof(figs[0]); i++) {
		const cJSON *f = jget(lat, figs[i]);
		e = buf_printf(b, "<tr><td>%s</td>", figs[i]);
		e = e ? e : num_cell(b, jget(f, SK_N), "%.0f");
		e = e ? e : num_cell(b, jget(f, SK_P50), "%.1f");
		e = e ? e : num_cell(b, jget(f, SK_P90), "%.1f");
		e = e ? e : num_cell(b, jget(f, SK_P99), "%.1f");
		e = e ? e : buf_puts(b, "</tr>\n");
	}
	return e ? e : buf_puts(b, "</table>\n");
}

/* A picture inline: <img src="data:image/png;base64,..."> */
static enum err picture(struct buf *b, const char *title, const struct buf *png)
{
	enum err e;

	if (!png->len)
		return ERR_OK;
	e = buf_printf(b, "<h2>%s</h2>\n<img alt=\"%s\" src=\"data:image/png;base64,", title, title);
	e = e ? e : buf_base64(b, png->data, png->len);
	return e ? e : buf_puts(b, "\">\n");
}

static const char style[] =
	"body{font-family:sans-serif;margin:2em;color:#222;max-width:1200px}"
	"table{border-collapse:collapse;margin:0.5em 0 1.5em}"
	"th,td{border:1px solid #ccc;padding:0.25em 0.6em;text-align:left;vertical-align:top}"
	"th{background:#f3f3f3}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
	".good{color:#176a1b}.bad{color:#a4161a}.weak{color:#8a6d00}tr.bad td:first-child{font-weight:bold}"
	"p.verdict{font-size:1.3em;font-weight:bold}"
	"img{max-width:100%;border:1px solid #ddd}";

/* The page's head, its title `title` (escaped): the policy that keeps it
 * self-contained, the style. */
static enum err page_open(struct buf *b, const char *title)
{
	enum err e = buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
			      "<meta http-equiv=\"Content-Security-Policy\" content=\"" HTML_CSP "\">\n<title>");

	e = e ? e : text(b, title);
	return e ? e : buf_printf(b, "</title>\n<style>%s</style>\n</head>\n<body>\n", style);
}

enum err html_write(const struct report_files *f, struct buf *out, struct diag *d)
{
	const cJSON *s = f->summary.s;
	enum err e;

	e = page_open(out, "needle report");
	e = e ? e : sec_facts(out, s);
	e = e ? e : sec_attempts(out, s);
	e = e ? e : sec_cases(out, &f->summary.cases);
	e = e ? e : sec_failures(out, s);
	e = e ? e : sec_load(out, &f->summary.load);
	e = e ? e : picture(out, "Load: throughput and latency against concurrency (load.png)", &f->load_png);
	e = e ? e : picture(out, "Recall by depth and length (recall.png)", &f->png);
	e = e ? e : sec_latency(out, s);
	e = e ? e : buf_puts(out, "</body>\n</html>\n");
	if (e)
		return diag_fail(d, e, "cannot write the HTML report: %s", err_name(e));
	return ERR_OK;
}

/* ---- the comparison's page ---- */

/* The class of a verdict string: good, weak or bad ("" for none). */
static const char *verdict_class(const char *s)
{
	return !s ? "" : !strcmp(s, "fail") ? "bad" : !strcmp(s, "underpowered") ? "weak"
	       : !strcmp(s, "pass") ? "good" : "";
}

/* A cell with verdict `v` in capitals, in its colour; a verdict of another
 * name as it is. */
static enum err verdict_cell(struct buf *b, const char *s)
{
	enum err e = buf_printf(b, "<td class=\"%s\">", verdict_class(s));

	if (!e && s && (!strcmp(s, "fail") || !strcmp(s, "underpowered") || !strcmp(s, "pass")))
		e = buf_puts(b, !strcmp(s, "fail") ? "FAIL" : !strcmp(s, "pass") ? "PASS" : "UNDERPOWERED");
	else if (!e)
		e = text(b, s);
	return e ? e : buf_puts(b, "</td>");
}

/* diff[key], when a string: why every gate fails unless allowed. */
static enum err like_for_like(struct buf *b, const cJSON *diff, const char *key, const char *label)
{
	const char *s = cJSON_GetStringValue(jget(diff, key));
	enum err e;

	if (!s)
		return ERR_OK;
	e = buf_printf(b, "<p class=\"bad\">%s: ", label);
	e = e ? e : text(b, s);
	return e ? e : buf_puts(b, "</p>\n");
}

/* The verdict first: the worst gate's, and how many of each. */
static enum err diff_verdict(struct buf *b, const cJSON *diff)
{
	const cJSON *g, *v;
	int n = 0, fail = 0, weak = 0;
	enum err e;

	cJSON_ArrayForEach(g, jget(diff, DK_GATES)) {
		v = jget(g, DK_VERDICT);
		n++;
		fail += cJSON_IsString(v) && !strcmp(v->valuestring, "fail");
		weak += cJSON_IsString(v) && !strcmp(v->valuestring, "underpowered");
	}
	e = buf_printf(b, "<h1>needle diff: %s</h1>\n", !n ? "NO GATE" : fail ? "FAIL" : weak ? "UNDERPOWERED" : "PASS");
	if (!e && !n)
		e = buf_puts(b, "<p class=\"verdict\">No gate was given: a comparison without a decision "
			     "(<code>--gate</code> makes one).</p>\n");
	else if (!e)
		e = buf_printf(b, "<p class=\"verdict %s\">%s: %d of %d gates passed, %d failed, %d underpowered%s.</p>\n",
			       fail ? "bad" : weak ? "weak" : "good", fail ? "FAIL" : weak ? "UNDERPOWERED" : "PASS",
			       n - fail - weak, n, fail, weak,
			       fail ? "" : weak ? ": nothing failed, but the runs cannot vouch for every threshold" : "");
	e = e ? e : like_for_like(b, diff, DK_INCOMPLETE, "INCOMPLETE");
	return e ? e : like_for_like(b, diff, DK_MISSING, "MISSING");
}

/* The two runs side by side. */
static enum err diff_runs_table(struct buf *b, const cJSON *diff)
{
	static const char *const keys[][2] = {
		{"folder", SK_DIR}, {"model", SK_MODEL}, {"server", SK_SERVER_VERSION}, {"endpoint", SK_BASE_URL},
		{"suite", SK_SUITE}, {"tokenizer", SK_TOKENIZER_KIND}, {"template", SK_TEMPLATE},
		{"run id", SK_RUN_ID}, {"started", SK_STARTED_AT}};
	static const char *const names[] = {"", "A (baseline)", "B (candidate)"};
	enum err e = head_row(b, names, 3);
	size_t i;

	for (i = 0; !e && i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!(e = buf_puts(b, "<tr><th>")) && !(e = text(b, keys[i][0])) && !(e = buf_puts(b, "</th>")) &&
		    !(e = cell(b, jget2(diff, DK_A, keys[i][1]))) && !(e = cell(b, jget2(diff, DK_B, keys[i][1]))))
			e = buf_puts(b, "</tr>\n");
	return e ? e : buf_puts(b, "</table>\n");
}

static enum err diff_gates(struct buf *b, const cJSON *diff)
{
	static const char *const names[] = {"verdict", "gate", "value", "detail"};
	const cJSON *g;
	enum err e;

	if (!cJSON_GetArraySize(jget(diff, DK_GATES)))
		return ERR_OK;
	e = buf_puts(b, "<h2>Gates</h2>\n");
	e = e ? e : head_row(b, names, 4);
	cJSON_ArrayForEach(g, jget(diff, DK_GATES)) {
		e = e ? e : buf_puts(b, "<tr>");
		e = e ? e : verdict_cell(b, cJSON_GetStringValue(jget(g, DK_VERDICT)));
		e = e ? e : cell(b, jget(g, DK_GATE));
		e = e ? e : num_cell(b, jget(g, DK_VALUE), "%.4g");
		e = e ? e : cell(b, jget(g, DK_DETAIL));
		e = e ? e : buf_puts(b, "</tr>\n");
	}
	return e ? e : buf_puts(b, "</table>\n");
}

/* Figure `i` (diff_figs) of load cell `c`: A, B and B/A cells. */
static enum err diff_fig(struct buf *b, const struct diff_cell *c, size_t i, const char *fmt)
{
	enum err e = fig_cell(b, c->a, diff_figs[i], fmt);

	e = e ? e : fig_cell(b, c->b, diff_figs[i], fmt);
	return e ? e : num_td(b, c->has_ratio[i], c->ratio[i], "%.3f");
}

/* The verdict name of load cell `c`, NULL when no gate judged it. */
static const char *cell_verdict(const struct diff_cell *c)
{
	return c->judged ? gate_verdict_name(c->verdict) : NULL;
}

/* Every load cell of either run with both runs' figures. */
static enum err diff_cells(struct buf *b, const struct diff_result *res)
{
	static const char *const names[] = {
		"case", "level", "valid rounds A/B", "output tok/s A", "B", "B/A", "TTFT P50 ms A", "B", "B/A",
		"TTFT P95 ms A", "B", "B/A", "TPOT P95 ms A", "B", "B/A", "success A", "B", "verdict"};
	const struct diff_cell *c;
	char level[64];
	size_t i;
	enum err e;

	e = buf_puts(b, "<h2>Load cells</h2>\n<p>Medians over valid rounds; B/A the ratio of the medians.</p>\n");
	e = e ? e : head_row(b, names, sizeof(names) / sizeof(names[0]));
	for (c = res->cells; !e && c < res->cells + res->ncells; c++) {
		loadcells_level(c->named, level, sizeof(level));
		e = buf_puts(b, "<tr><td>");
		e = e ? e : text(b, c->named->case_id);
		e = e ? e : buf_puts(b, "</td><td>");
		e = e ? e : text(b, level);
		e = e ? e : buf_printf(b, "</td><td class=\"n\">%zu/%zu</td>", c->a ? c->a->s.rounds_valid : 0,
				       c->b ? c->b->s.rounds_valid : 0);
		for (i = 0; i < DIFF_FIGS; i++)
			e = e ? e : diff_fig(b, c, i, diff_figs[i] == LCF_TPOT_P95_MS ? "%.2f" : "%.1f");
		e = e ? e : num_td(b, c->a != NULL, c->a ? c->a->s.success_rate : 0, "%.3f");
		e = e ? e : num_td(b, c->b != NULL, c->b ? c->b->s.success_rate : 0, "%.3f");
		e = e ? e : verdict_cell(b, cell_verdict(c));
		e = e ? e : buf_puts(b, "</tr>\n");
	}
	return e ? e : buf_puts(b, "</table>\n");
}

/* One row of the per-cell verdicts: judgement `j` of cell `c`. */
static enum err item_row(struct buf *b, const struct diff_cell *c, const struct diff_judgement *j)
{
	char level[64];
	enum err e = buf_puts(b, "<tr><td>");

	loadcells_level(c->named, level, sizeof(level));
	e = e ? e : text(b, c->named->case_id);
	e = e ? e : buf_putc(b, '/');
	e = e ? e : text(b, level);
	e = e ? e : buf_puts(b, "</td><td>");
	e = e ? e : text(b, j->gate);
	e = e ? e : buf_puts(b, "</td>");
	e = e ? e : verdict_cell(b, gate_verdict_name(j->v));
	e = e ? e : num_td(b, j->have && isfinite(j->value), j->value, "%.3f");
	if (!e && isfinite(j->lo) && isfinite(j->hi))
		e = buf_printf(b, "<td class=\"n\">%.3f&#8211;%.3f</td>", j->lo, j->hi);
	else if (!e)
		e = buf_puts(b, "<td class=\"n\">-</td>");
	e = e ? e : num_td(b, 1, j->threshold, "%g");
	if (!e && isfinite(j->mde))
		e = buf_printf(b, "<td class=\"n\">%.1f%%</td>", 100 * j->mde);
	else if (!e)
		e = buf_puts(b, "<td class=\"n\">-</td>");
	e = e ? e : buf_puts(b, "<td>");
	e = e ? e : text(b, j->advice);
	return e ? e : buf_puts(b, "</td></tr>\n");
}

/* Per cell and gate: the value with its interval against the threshold. */
static enum err diff_items(struct buf *b, const struct diff_result *res)
{
	static const char *const names[] = {"cell", "gate", "verdict", "B/A or B", "90% interval", "threshold",
					    "smallest detectable change", "advice"};
	const struct diff_cell *c;
	size_t n = 0, k;
	enum err e = ERR_OK;

	for (c = res->cells; c < res->cells + res->ncells; c++)
		n += c->ngates;
	if (!n)
		return ERR_OK;
	e = buf_puts(b, "<h2>Verdicts by cell and gate</h2>\n<p>A ratio gate's value is B/A with its 90% "
		     "interval; another gate's is B's figure. A cell passes when the whole interval is within "
		     "the threshold, fails when the whole interval is beyond it, and is underpowered when the "
		     "interval holds the threshold.</p>\n");
	e = e ? e : head_row(b, names, sizeof(names) / sizeof(names[0]));
	for (c = res->cells; c < res->cells + res->ncells; c++)
		for (k = 0; k < c->ngates; k++)
			e = e ? e : item_row(b, c, &c->gates[k]);
	return e ? e : buf_puts(b, "</table>\n");
}

/* The attempts: pass rates, and the attempts that newly failed. */
static enum err diff_attempts(struct buf *b, const cJSON *diff)
{
	const cJSON *o = jget(diff, DK_OVERALL), *it;
	enum err e;

	e = buf_printf(b, "<h2>Attempts</h2>\n<p>A passed %.0f of %.0f, B %.0f of %.0f; %.0f matched "
		       "(same case, repeat, seed), %.0f only in A, %.0f only in B (%.0f of them failed); "
		       "%d pass&#8594;fail, %d fail&#8594;pass.</p>\n",
		       jget_num(jget(o, DK_A), SK_PASS), jget_num(jget(o, DK_A), SK_TOTAL), jget_num(jget(o, DK_B), SK_PASS),
		       jget_num(jget(o, DK_B), SK_TOTAL), jget_num(o, DK_MATCHED), jget_num(o, DK_ONLY_A),
		       jget_num(o, DK_ONLY_B), jget_num(o, DK_ONLY_B_FAILED),
		       cJSON_GetArraySize(jget2(diff, DK_FLIPS, DK_PASS_TO_FAIL)),
		       cJSON_GetArraySize(jget2(diff, DK_FLIPS, DK_FAIL_TO_PASS)));
	cJSON_ArrayForEach(it, jget2(diff, DK_FLIPS, DK_PASS_TO_FAIL)) {
		e = e ? e : buf_puts(b, "<p class=\"bad\">pass&#8594;fail: ");
		e = e ? e : text(b, cJSON_GetStringValue(jget(it, RK_CASE)));
		e = e ? e : buf_printf(b, " repeat %.0f: ", jget_num(it, RK_REPEAT));
		e = e ? e : text(b, cJSON_GetStringValue(jget(it, SK_REASON)));
		e = e ? e : buf_puts(b, "</p>\n");
	}
	return e;
}

/* The warnings and what to do. */
static enum err diff_notes(struct buf *b, const cJSON *diff)
{
	const cJSON *w;
	enum err e = ERR_OK;

	cJSON_ArrayForEach(w, jget(diff, DK_WARNINGS))
		if (!e && !(e = buf_puts(b, "<p class=\"weak\">Warning: ")) && !(e = text(b, cJSON_GetStringValue(w))))
			e = buf_puts(b, "</p>\n");
	cJSON_ArrayForEach(w, jget(diff, DK_ADVICE))
		if (!e && !(e = buf_puts(b, "<p class=\"bad\">What to do: ")) && !(e = text(b, cJSON_GetStringValue(w))))
			e = buf_puts(b, "</p>\n");
	return e;
}

/* "DIR (model M)" of one side. */
static const char *side_name(const cJSON *diff, const char *side, char *out, size_t cap)
{
	const char *dir = cJSON_GetStringValue(jget2(diff, side, SK_DIR));
	const char *model = cJSON_GetStringValue(jget2(diff, side, SK_MODEL));

	snprintf(out, cap, "%s%s%s%s", dir ? dir : "-", model ? " (model " : "", model ? model : "",
		 model ? ")" : "");
	return out;
}

enum err html_diff_write(const struct diff_result *res, struct buf *out, struct diag *d)
{
	const cJSON *diff = res->diff;
	char na[512], nb[512];
	struct buf png;
	enum err e;

	buf_init(&png, out->max);
	e = diffplot_decision_png(res->cells, res->ncells, side_name(diff, DK_A, na, sizeof(na)),
				  side_name(diff, DK_B, nb, sizeof(nb)), &png, d);
	if (e) {
		buf_release(&png);
		return e;
	}
	e = page_open(out, "needle diff");
	e = e ? e : diff_verdict(out, diff);
	e = e ? e : diff_runs_table(out, diff);
	e = e ? e : diff_notes(out, diff);
	e = e ? e : diff_gates(out, diff);
	e = e || !res->ncells ? e : diff_cells(out, res);
	e = e ? e : diff_items(out, res);
	e = e ? e : picture(out, "The decision: each cell's value and interval against the gate's threshold", &png);
	e = e ? e : diff_attempts(out, diff);
	e = e ? e : buf_puts(out, "</body>\n</html>\n");
	buf_release(&png);
	if (e)
		return diag_fail(d, e, "cannot write the HTML page of the comparison: %s", err_name(e));
	return ERR_OK;
}
