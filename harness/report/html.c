/*
 * html — see html.h.
 */
#include "html.h"

#include <stdio.h>
#include <string.h>

#include "base/jget.h"
#include "base/md.h"
#include "base/xml.h"

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

/* A cell with number `v` printed by `fmt` ("-" when absent). */
static enum err num_cell(struct buf *b, const cJSON *v, const char *fmt)
{
	char tmp[64];
	enum err e = buf_puts(b, "<td class=\"n\">");

	e = e ? e : text(b, md_number(v, fmt, tmp, sizeof(tmp)));
	return e ? e : buf_puts(b, "</td>");
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
		{"model", "model"}, {"server", "server_version"}, {"server kind", "server_kind"},
		{"endpoint", "base_url"}, {"suite", "suite"}, {"tokenizer", "tokenizer_kind"},
		{"template", "template"}, {"needle", "harness_version"}, {"needle commit", "harness_commit"},
		{"run id", "run_id"}, {"started", "started_at"}, {"ended", "ended_at"}};
	static const char *const names[] = {"fact", "value"};
	const cJSON *run = jget(s, "run");
	enum err e = buf_puts(b, "<h1>needle report: ");
	size_t i;

	e = e ? e : text(b, cJSON_GetStringValue(jget(run, "dir")));
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
	const cJSON *a = jget(s, "attempts"), *w = jget(a, "wilson95");
	const cJSON *lo = cJSON_GetArrayItem(w, 0), *hi = cJSON_GetArrayItem(w, 1);
	enum err e;

	e = buf_printf(b, "<h2>Attempts</h2>\n<p class=\"%s\">%.0f of %.0f passed",
		       jget_num(a, "fail") > 0 ? "bad" : "good", jget_num(a, "pass"), jget_num(a, "total"));
	if (!e && cJSON_IsNumber(jget(a, "rate")) && cJSON_IsNumber(lo) && cJSON_IsNumber(hi))
		e = buf_printf(b, " (%.1f%%, 95%% interval %.1f%% to %.1f%%)", 100 * jget_num(a, "rate"),
			       100 * lo->valuedouble, 100 * hi->valuedouble);
	if (!e && cJSON_IsFalse(jget(a, "complete")))
		e = buf_printf(b, "; <strong>INCOMPLETE: %.0f/%.0f planned attempts recorded</strong>",
			       jget_num(a, "planned_done"), jget_num(a, "planned"));
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

	cJSON_ArrayForEach(advice, jget(s, "advice"))
		if (!e && !(e = buf_puts(b, "<p class=\"bad\">What to do: ")) &&
		    !(e = text(b, cJSON_GetStringValue(advice))))
			e = buf_puts(b, "</p>\n");
	if (!e && !cJSON_GetArraySize(jget(s, "failures")))
		return buf_puts(b, "<p class=\"good\">No attempt failed.</p>\n");
	e = e ? e : head_row(b, names, 5);
	cJSON_ArrayForEach(f, jget(s, "failures")) {
		int first = 1;
		e = e ? e : buf_puts(b, "<tr>");
		e = e ? e : cell(b, jget(f, "stage"));
		e = e ? e : cell(b, jget2(f, "example", "reason"));
		e = e ? e : num_cell(b, jget(f, "count"), "%.0f");
		e = e ? e : buf_puts(b, "<td>");
		cJSON_ArrayForEach(c, jget(f, "cases")) {
			e = e ? e : buf_puts(b, first ? "" : ", ");
			e = e ? e : text(b, cJSON_GetStringValue(c));
			first = 0;
		}
		e = e ? e : buf_puts(b, "</td>");
		e = e ? e : cell(b, jget2(f, "example", "answer"));
		e = e ? e : buf_puts(b, "</tr>\n");
	}
	return e ? e : buf_puts(b, "</table>\n");
}

/* One row per load level: the figures with their min-max over rounds. */
static enum err sec_load(struct buf *b, const cJSON *s)
{
	static const char *const names[] = {"case", "level", "requests", "success", "output tok/s",
					    "min-max", "TTFT P50 ms", "TTFT P95 ms", "TPOT P95 ms",
					    "E2E P50 ms", "valid rounds"};
	const cJSON *cells = jget(jget(s, "load"), "cells"), *c;
	enum err e;

	if (!cJSON_GetArraySize(cells))
		return ERR_OK;
	e = buf_puts(b, "<h2>Load</h2>\n");
	e = e ? e : head_row(b, names, sizeof(names) / sizeof(names[0]));
	cJSON_ArrayForEach(c, cells) {
		char level[48];
		const cJSON *rate = jget(c, "rate");
		snprintf(level, sizeof(level), rate ? "rate %.15g/s" : "concurrency %.0f",
			 rate ? rate->valuedouble : jget_num(c, "concurrency"));
		e = e ? e : buf_puts(b, "<tr>");
		e = e ? e : cell(b, jget(c, "case"));
		e = e ? e : buf_printf(b, "<td>%s</td>", level);
		e = e ? e : num_cell(b, jget(c, "requests"), "%.0f");
		e = e ? e : num_cell(b, jget(c, "success_rate"), "%.3f");
		e = e ? e : num_cell(b, jget(c, "output_tps"), "%.1f");
		e = e ? e : buf_printf(b, "<td class=\"n\">%.1f&#8211;%.1f</td>", jget_num(c, "output_tps_min"),
				       jget_num(c, "output_tps_max"));
		e = e ? e : num_cell(b, jget(c, "ttft_p50_ms"), "%.1f");
		e = e ? e : num_cell(b, jget(c, "ttft_p95_ms"), "%.1f");
		e = e ? e : num_cell(b, jget(c, "tpot_p95_ms"), "%.2f");
		e = e ? e : num_cell(b, jget(c, "e2e_p50_ms"), "%.1f");
		e = e ? e : buf_printf(b, "<td class=\"n\">%.0f/%.0f</td></tr>\n", jget_num(c, "rounds_valid"),
				       jget_num(c, "rounds_total"));
	}
	return e ? e : buf_puts(b, "</table>\n");
}

static enum err sec_latency(struct buf *b, const cJSON *s)
{
	static const char *const names[] = {"figure", "n", "P50 ms", "P90 ms", "P99 ms"};
	static const char *const figs[] = {"first_byte_ms", "ttft_ms", "ttfc_ms", "e2e_ms", "tpot_ms"};
	const cJSON *lat = jget(s, "latency");
	enum err e = buf_puts(b, "<h2>Latency</h2>\n<p>Attempts that are not load requests; "
			      "nearest-rank percentiles.</p>\n");
	size_t i;

	e = e ? e : head_row(b, names, 5);
	for (i = 0; !e && i < sizeof(figs) / sizeof(figs[0]); i++) {
		const cJSON *f = jget(lat, figs[i]);
		e = buf_printf(b, "<tr><td>%s</td>", figs[i]);
		e = e ? e : num_cell(b, jget(f, "n"), "%.0f");
		e = e ? e : num_cell(b, jget(f, "p50"), "%.1f");
		e = e ? e : num_cell(b, jget(f, "p90"), "%.1f");
		e = e ? e : num_cell(b, jget(f, "p99"), "%.1f");
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
	"th{background:#f3f3f3}td.n{text-align:right;font-variant-numeric:tabular-nums}"
	".good{color:#176a1b}.bad{color:#a4161a}tr.bad td:first-child{font-weight:bold}"
	"img{max-width:100%;border:1px solid #ddd}";

enum err html_write(const struct report_files *f, struct buf *out, struct diag *d)
{
	const cJSON *s = f->summary.s;
	enum err e;

	e = buf_printf(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		       /* nothing but inline pictures and style may load: an escaping slip stays inert */
		       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'\">\n"
		       "<title>needle report</title>\n<style>%s</style>\n</head>\n<body>\n", style);
	e = e ? e : sec_facts(out, s);
	e = e ? e : sec_attempts(out, s);
	e = e ? e : sec_cases(out, &f->summary.cases);
	e = e ? e : sec_failures(out, s);
	e = e ? e : sec_load(out, s);
	e = e ? e : picture(out, "Load: throughput and latency against concurrency (load.png)", &f->load_png);
	e = e ? e : picture(out, "Recall by depth and length (recall.png)", &f->png);
	e = e ? e : sec_latency(out, s);
	e = e ? e : buf_puts(out, "</body>\n</html>\n");
	if (e)
		return diag_fail(d, e, "cannot write the HTML report: %s", err_name(e));
	return ERR_OK;
}
