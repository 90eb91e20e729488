/*
 * prom — see prom.h.
 */
#include "prom.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/jget.h"
#include "load/loadcells.h"
#include "keys.h"
#include "run/record.h"

/* The labels every sample of the run carries, text ready to print: as long
 * as the values are (a model id is the server's to choose). */
struct prom_out {
	struct buf *b;
	struct buf run;
	enum err e;
};

/* Appends `s` as a label value: backslash, quote and line feed escaped. */
static void label_value(struct buf *b, const char *s, enum err *e)
{
	for (; !*e && s && *s; s++)
		*e = *s == '\\' ? buf_puts(b, "\\\\") : *s == '"' ? buf_puts(b, "\\\"")
			: *s == '\n' ? buf_puts(b, "\\n") : buf_putc(b, *s);
}

/* The family's header: HELP and TYPE. */
static void family(struct prom_out *o, const char *name, const char *help)
{
	if (!o->e)
		o->e = buf_printf(o->b, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

/* One sample: NAME{run labels[,k="v"...]} VALUE; `kv` holds pairs, NULL
 * ended; a pair whose value is NULL is left out. */
static void sample(struct prom_out *o, const char *name, double v, const char *const *kv)
{
	if (o->e || !isfinite(v))
		return;
	o->e = buf_printf(o->b, "%s{%s", name, o->run.data);
	for (; !o->e && kv && kv[0]; kv += 2) {
		if (!kv[1])
			continue;
		o->e = buf_printf(o->b, ",%s=\"", kv[0]);
		label_value(o->b, kv[1], &o->e);
		if (!o->e)
			o->e = buf_putc(o->b, '"');
	}
	if (!o->e)
		o->e = buf_printf(o->b, "} %.15g\n", v);
}

/* The folder's name of run folder `dir` into out: its last component, the
 * same for R, R/, R/. and R/./ (one run, one label); the current folder's
 * own name for "." and the like. */
static void folder_name(const char *dir, char *out, size_t cap)
{
	char real[PATH_MAX];
	size_t n = strlen(dir);
	const char *slash;

	for (;;) {
		if (n > 1 && dir[n - 1] == '/')
			n--;
		else if (n > 2 && dir[n - 1] == '.' && dir[n - 2] == '/')
			n -= 2;
		else
			break;
	}
	snprintf(out, cap, "%.*s", (int)n, dir);
	if ((!strcmp(out, ".") || !strcmp(out, "..") || (n > 2 && !strcmp(out + n - 3, "/.."))) &&
	    realpath(dir, real))
		snprintf(out, cap, "%s", real);
	if ((slash = strrchr(out, '/')) && slash[1])
		memmove(out, slash + 1, strlen(slash + 1) + 1);
}

/* The run labels from the summary's facts into o->run. */
static void run_labels(struct prom_out *o, const cJSON *run)
{
	static const char *const keys[][2] = {
		{"run", SK_DIR}, {"run_id", SK_RUN_ID}, {"suite", SK_SUITE}, {"model", SK_MODEL}};
	char name[PATH_MAX];
	size_t i;

	for (i = 0; !o->e && i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *v = cJSON_GetStringValue(jget(run, keys[i][1]));
		if (v && i == 0) {
			folder_name(v, name, sizeof(name));
			v = name;
		}
		o->e = buf_printf(&o->run, "%s%s=\"", i ? "," : "", keys[i][0]);
		label_value(&o->run, v ? v : "", &o->e);
		if (!o->e)
			o->e = buf_putc(&o->run, '"');
	}
}

/* "YYYY-MM-DDTHH:MM:SSZ" as seconds since the epoch; NAN otherwise. */
static double utc_seconds(const cJSON *v)
{
	const char *s = cJSON_GetStringValue(v);
	struct tm tm;
	char z = 0;

	memset(&tm, 0, sizeof(tm));
	if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%c", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
			 &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &z) != 7 || z != 'Z')
		return NAN;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (double)timegm(&tm);
}

static double num_or_nan(const cJSON *v)
{
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static void run_metrics(struct prom_out *o, const cJSON *s)
{
	const cJSON *run = jget(s, SK_RUN), *a = jget(s, SK_ATTEMPTS);
	const char *info[] = {"needle_commit", cJSON_GetStringValue(jget(run, SK_HARNESS_COMMIT)),
			      "server_version", cJSON_GetStringValue(jget(run, SK_SERVER_VERSION)),
			      "server_kind", cJSON_GetStringValue(jget(run, SK_SERVER_KIND)), NULL};
	static const char *const pass[] = {"verdict", "pass", NULL}, *const fail[] = {"verdict", "fail", NULL};
	static const char *const stages[] = {RK_TRANSPORT, RK_AUDIT, RK_GRADE};
	size_t i;

	family(o, "needle_info", "The run's build and server; always 1.");
	sample(o, "needle_info", 1, info);
	family(o, "needle_run_start_timestamp_seconds", "When the run started (Unix time).");
	sample(o, "needle_run_start_timestamp_seconds", utc_seconds(jget(run, SK_STARTED_AT)), NULL);
	family(o, "needle_run_end_timestamp_seconds", "When the run ended (Unix time).");
	sample(o, "needle_run_end_timestamp_seconds", utc_seconds(jget(run, SK_ENDED_AT)), NULL);
	family(o, "needle_attempts", "Attempts recorded, by verdict.");
	sample(o, "needle_attempts", jget_num(a, SK_PASS), pass);
	sample(o, "needle_attempts", jget_num(a, SK_FAIL), fail);
	family(o, "needle_pass_ratio", "Passed attempts over all recorded attempts.");
	sample(o, "needle_pass_ratio", num_or_nan(jget(a, SK_RATE)), NULL);
	family(o, "needle_pass_ratio_lower", "Lower bound of the pass ratio's 95% Wilson interval.");
	sample(o, "needle_pass_ratio_lower", num_or_nan(cJSON_GetArrayItem(jget(a, SK_WILSON95), 0)), NULL);
	family(o, "needle_pass_ratio_upper", "Upper bound of the pass ratio's 95% Wilson interval.");
	sample(o, "needle_pass_ratio_upper", num_or_nan(cJSON_GetArrayItem(jget(a, SK_WILSON95), 1)), NULL);
	family(o, "needle_failed_attempts", "Failed attempts by the stage of their first reason.");
	for (i = 0; i < 3; i++) {
		const char *kv[] = {"stage", stages[i], NULL};
		sample(o, "needle_failed_attempts", jget_num(jget(s, SK_FAIL_STAGES), stages[i]), kv);
	}
}

static void case_metrics(struct prom_out *o, const struct casetab *t)
{
	size_t i;

	family(o, "needle_case_attempts", "Attempts recorded of one case.");
	for (i = 0; i < t->n; i++) {
		const char *kv[] = {"case", t->c[i].id, "kind", t->c[i].kind, NULL};
		sample(o, "needle_case_attempts", (double)t->c[i].total, kv);
	}
	family(o, "needle_case_pass_ratio", "Passed attempts over recorded attempts of one case.");
	for (i = 0; i < t->n; i++) {
		const char *kv[] = {"case", t->c[i].id, "kind", t->c[i].kind, NULL};
		if (t->c[i].total)
			sample(o, "needle_case_pass_ratio", (double)t->c[i].pass / (double)t->c[i].total, kv);
	}
}

static void latency_metrics(struct prom_out *o, const cJSON *lat)
{
	static const char *const figs[][2] = {{"ttft", RK_TTFT_MS}, {"ttfc", RK_TTFC_MS},
		{"e2e", RK_E2E_MS}, {"tpot", RK_TPOT_MS}, {"first_byte", RK_FIRST_BYTE_MS}};
	static const char *const q[][2] = {{"50", SK_P50}, {"90", SK_P90}, {"99", SK_P99}};
	size_t i, j;

	family(o, "needle_latency_seconds",
	       "Latency percentiles (nearest rank) of the attempts that are not load requests.");
	for (i = 0; i < sizeof(figs) / sizeof(figs[0]); i++)
		for (j = 0; j < 3; j++) {
			const char *kv[] = {"figure", figs[i][0], "percentile", q[j][0], NULL};
			sample(o, "needle_latency_seconds",
			       num_or_nan(jget(jget(lat, figs[i][1]), q[j][1])) / 1000, kv);
		}
}

/* A load family: the cell's requests, success ratio or figure, scaled (ms
 * to s), at a percentile (the label's value) or NULL. */
enum load_of { REQUESTS, SUCCESS, FIGURE };
struct load_fig {
	const char *name, *help;
	enum load_of of;
	enum loadcells_fig fig;
	const char *percentile;
	double scale;
};

static const struct load_fig load_figs[] = {
	{"needle_load_requests", "Requests of the level's counted rounds.", REQUESTS, 0, NULL, 1},
	{"needle_load_success_ratio", "Requests that passed every check over the level's requests.",
	 SUCCESS, 0, NULL, 1},
	{"needle_load_output_throughput_tokens_per_second",
	 "Completion tokens of successful requests over the round's wall time (median over valid rounds).",
	 FIGURE, LCF_OUTPUT_TPS, NULL, 1},
	{"needle_load_ttft_seconds", "Time to first token (median over valid rounds of the per-round percentile).",
	 FIGURE, LCF_TTFT_P50_MS, "50", 1e-3},
	{"needle_load_ttft_seconds", NULL, FIGURE, LCF_TTFT_P95_MS, "95", 1e-3},
	{"needle_load_ttft_seconds", NULL, FIGURE, LCF_TTFT_P99_MS, "99", 1e-3},
	{"needle_load_tpot_seconds", "Time per output token after the first (median over valid rounds of the per-round percentile).",
	 FIGURE, LCF_TPOT_P50_MS, "50", 1e-3},
	{"needle_load_tpot_seconds", NULL, FIGURE, LCF_TPOT_P95_MS, "95", 1e-3},
	{"needle_load_e2e_seconds", "Request latency, sent to done (median over valid rounds of the per-round percentile).",
	 FIGURE, LCF_E2E_P50_MS, "50", 1e-3},
	{"needle_load_e2e_seconds", NULL, FIGURE, LCF_E2E_P95_MS, "95", 1e-3}};

/* What family `f` says of cell `c` (NAN: nothing). */
static double load_value(const struct load_fig *f, const struct loadcells_cell *c)
{
	double v;

	if (f->of == REQUESTS)
		return (double)c->s.requests;
	if (f->of == SUCCESS)
		return c->s.success_rate;
	return loadcells_median(c, f->fig, &v) ? v : NAN;
}

/* A family's samples, one per level (cell). */
static void load_family(struct prom_out *o, const struct load_fig *f, const struct loadcells *lc)
{
	const struct loadcells_cell *c;
	char level[32];
	size_t i;

	if (f->help)
		family(o, f->name, f->help);
	for (i = 0; i < lc->n; i++) {
		c = &lc->c[i];
		const char *kv[] = {"case", c->case_id, c->open_loop ? "rate" : "concurrency", level,
				    "percentile", f->percentile, NULL};
		snprintf(level, sizeof(level), "%.15g", c->level_value);
		sample(o, f->name, load_value(f, c) * f->scale, kv);
	}
}

enum err prom_write(const struct report_sum *m, struct buf *out, struct diag *d)
{
	struct prom_out o;
	size_t i;

	memset(&o, 0, sizeof(o));
	o.b = out;
	buf_init(&o.run, out->max);
	run_labels(&o, jget(m->s, SK_RUN));
	run_metrics(&o, m->s);
	case_metrics(&o, &m->cases);
	latency_metrics(&o, jget(m->s, SK_LATENCY));
	for (i = 0; m->load.n > 0 && i < sizeof(load_figs) / sizeof(load_figs[0]); i++)
		load_family(&o, &load_figs[i], &m->load);
	buf_release(&o.run);
	if (o.e)
		return diag_fail(d, o.e, "cannot write the Prometheus metrics: %s", err_name(o.e));
	return ERR_OK;
}
