/*
 * gate — gates on a comparison; see gate.h.
 */
#include "gate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jget.h"
#include "base/json.h"
#include "casetab.h"
#include "fungate.h"
#include "keys.h"
#include "load/loadcells.h"
#include "load/loadclient.h"
#include "base/mem.h"
#include "net/metrics.h"
#include "probesum.h"
#include "base/stats.h"

/* ---- gates ---- */

static const char *const timings[] = {"first_byte", "ttft", "ttfc", "e2e", "tpot"};

/* Whether `name` is a timing gate "T_pP" or "T_pP_ratio". */
static int timing_gate(const char *name, char *timing, size_t cap, int *pct,
		       int *ratio)
{
	size_t i, n;

	for (i = 0; i < sizeof(timings) / sizeof(timings[0]); i++) {
		n = strlen(timings[i]);
		if (strncmp(name, timings[i], n) || strncmp(name + n, "_p", 2))
			continue;
		name += n + 2;
		if (!strncmp(name, "50", 2) || !strncmp(name, "90", 2) || !strncmp(name, "99", 2)) {
			*pct = (name[0] - '0') * 10 + (name[1] - '0');
			*ratio = !strcmp(name + 2, "_ratio");
			if (name[2] && !*ratio)
				return 0;
			snprintf(timing, cap, "%s_ms", timings[i]);
			return 1;
		}
		return 0;
	}
	return 0;
}

/* 0: no @ARG allowed; 1: required; 2: optional. -1: unknown metric. */
static int arg_rule(const char *name)
{
	static const char *const plain[] = {"pass_rate_delta", "flips", "max_abs_usage_delta"};
	char t[32];
	int p, r;
	size_t i;

	for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		if (!strcmp(name, plain[i]))
			return 0;
	if (!strcmp(name, "pass_rate") || !strcmp(name, "recall") || !strcmp(name, "recall_delta"))
		return 2;
	if (!strcmp(name, "recall_residue"))
		return 1;
	if (gate_is_load(name))
		return 2;
	return timing_gate(name, t, sizeof(t), &p, &r) ? 0 : -1;
}

static enum err parse_op(const char *s, enum gate_op *op, size_t *len)
{
	static const struct { const char *t; enum gate_op op; } ops[] = {
		{">=", GATE_GE}, {"<=", GATE_LE}, {"==", GATE_EQ}, {">", GATE_GT}, {"<", GATE_LT}};
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strncmp(s, ops[i].t, strlen(ops[i].t))) {
			*op = ops[i].op;
			*len = strlen(ops[i].t);
			return ERR_OK;
		}
	return ERR_USAGE;
}

/* Whether s[0..n) is blank (spaces and tabs only). */
static int blank(const char *s, size_t n)
{
	return strspn(s, " \t") >= n;
}

enum err gate_parse(const char *spec, struct gate *g, struct diag *d)
{
	const char *m = spec + strspn(spec, " \t"); /* the metric, leading blanks skipped */
	size_t mlen = strcspn(m, "<>="), mend = mlen, oplen = 0, nlen;
	const char *at, *numtxt;
	char *end;
	int rule;

	memset(g, 0, sizeof(*g));
	g->spec = spec;
	while (mend > 0 && (m[mend - 1] == ' ' || m[mend - 1] == '\t'))
		mend--;
	if (!m[mlen] && mend == strlen("no_new_failures") && !strncmp(m, "no_new_failures", mend)) {
		snprintf(g->name, sizeof(g->name), "no_new_failures");
		return ERR_OK;
	}
	if (!m[mlen] || parse_op(m + mlen, &g->op, &oplen))
		return diag_fail(d, ERR_USAGE,
				 "gate '%s' wants METRIC OP NUMBER with OP one of >= <= > < == (or 'no_new_failures')",
				 spec);
	at = memchr(m, '@', mend);
	nlen = at ? (size_t)(at - m) : mend;
	if (nlen == 0 || nlen >= sizeof(g->name))
		return diag_fail(d, ERR_USAGE, "gate '%s' has no metric name", spec);
	memcpy(g->name, m, nlen);
	if (at) {
		size_t alen = mend - nlen - 1;
		if (alen == 0 || alen >= sizeof(g->arg))
			return diag_fail(d, ERR_USAGE, "gate '%s': the text after '@' is empty or too long", spec);
		memcpy(g->arg, at + 1, alen);
	}
	rule = arg_rule(g->name);
	if (rule < 0)
		return diag_fail(d, ERR_USAGE,
				 "gate '%s': unknown metric '%s' (see 'needle diff --help')", spec, g->name);
	if (rule == 0 && at)
		return diag_fail(d, ERR_USAGE, "gate '%s': metric '%s' takes no '@'", spec, g->name);
	if (rule == 1 && !at)
		return diag_fail(d, ERR_USAGE, "gate '%s': metric '%s' wants '@DEPTH'", spec, g->name);
	if (at && !strcmp(g->name, "recall_residue")) {
		int mod, res;
		if (!probesum_residue_arg(g->arg, &mod, &res))
			return diag_fail(d, ERR_USAGE,
					 "gate '%s': residue '%s' is not M:R with M 2, 4 or 8 and 0 <= R < M",
					 spec, g->arg);
	} else if (at && strncmp(g->name, "pass_rate", 10) && !gate_is_load(g->name)) {
		long v = strtol(g->arg, &end, 10);
		if (*end || v < 0 || v > 100)
			return diag_fail(d, ERR_USAGE, "gate '%s': depth '%s' is not a whole percent 0..100",
					 spec, g->arg);
	}
	numtxt = m + mlen + oplen;
	numtxt += strspn(numtxt, " \t");
	g->value = strtod(numtxt, &end);
	if (!*numtxt || end == numtxt || !blank(end, strlen(end)) || !isfinite(g->value))
		return diag_fail(d, ERR_USAGE, "gate '%s': '%s' is not a number", spec, numtxt);
	return ERR_OK;
}

/* ---- gate evaluation ---- */

/* Whether `v` OP `want` holds. */
static int gate_holds(double v, enum gate_op op, double want)
{
	switch (op) {
	case GATE_GE: return v >= want;
	case GATE_LE: return v <= want;
	case GATE_GT: return v > want;
	case GATE_LT: return v < want;
	case GATE_EQ: return v == want;
	}
	return 0;
}

static const cJSON *recall_b(const cJSON *diff, const char *arg, const cJSON **row_a)
{
	const cJSON *it;
	double dep = strtod(arg, NULL);

	*row_a = NULL;
	cJSON_ArrayForEach(it, jget(diff, DK_RECALL_BY_DEPTH))
		if (jget_num(it, SK_DEPTH) == dep) {
			*row_a = jget(it, DK_A);
			return jget(it, DK_B);
		}
	return NULL;
}

/* Overall recall of run `which` ("summary_a", "summary_b"): found/total
 * over every needle. */
static const cJSON *recall_all(const cJSON *diff, const char *which, double *v)
{
	const cJSON *it, *cells = jget2(jget(diff, which), SK_RECALL, SK_BY_DEPTH);
	double f = 0, t = 0;

	cJSON_ArrayForEach(it, cells) {
		f += jget_num(it, SK_FOUND);
		t += jget_num(it, SK_TOTAL);
	}
	*v = t > 0 ? f / t : 0;
	return t > 0 ? cells : NULL;
}

/* The metric's value into *v; returns 0 with `why` filled when there is no
 * data for it. */
static int metric(const struct diff_result *res, const struct gate *g, double *v,
		  char *why, size_t cap)
{
	const cJSON *diff = res->diff;
	const cJSON *x, *y;
	char t[32];
	int pct, ratio;

	if (!strcmp(g->name, "pass_rate") && g->arg[0]) {
		const struct casetab_case *c = casetab_find(&res->b.cases, g->arg);
		if (c && stats_rate((double)c->pass, (double)c->total, v))
			return 1;
		x = NULL;
	} else if (!strcmp(g->name, "pass_rate")) {
		x = jget(jget2(diff, DK_SUMMARY_B, SK_ATTEMPTS), SK_RATE);
	} else if (!strcmp(g->name, "pass_rate_delta")) {
		x = jget2(diff, DK_OVERALL, DK_MATCHED_DELTA);
	} else if (!strcmp(g->name, "flips")) {
		*v = cJSON_GetArraySize(jget2(diff, DK_FLIPS, DK_PASS_TO_FAIL));
		return 1;
	} else if (!strcmp(g->name, "max_abs_usage_delta")) {
		x = jget2(diff, DK_USAGE, DK_B_MAX_ABS_DELTA);
	} else if (!strcmp(g->name, "recall") && !g->arg[0]) {
		if (recall_all(diff, DK_SUMMARY_B, v))
			return 1;
		x = NULL;
	} else if (!strcmp(g->name, "recall_delta") && !g->arg[0]) {
		double ra;
		if (recall_all(diff, DK_SUMMARY_B, v) && recall_all(diff, DK_SUMMARY_A, &ra)) {
			*v -= ra;
			return 1;
		}
		x = NULL;
	} else if (!strcmp(g->name, "recall")) {
		x = jget(recall_b(diff, g->arg, &y), SK_RATE);
	} else if (!strcmp(g->name, "recall_delta")) {
		x = jget(recall_b(diff, g->arg, &y), SK_RATE);
		y = jget(y, SK_RATE);
		if (cJSON_IsNumber(x) && cJSON_IsNumber(y)) {
			*v = x->valuedouble - y->valuedouble;
			return 1;
		}
		x = NULL;
	} else if (!strcmp(g->name, "recall_residue")) {
		if (probesum_residue(jget(diff, DK_SUMMARY_B), g->arg, v))
			return 1;
		x = NULL;
	} else if (timing_gate(g->name, t, sizeof(t), &pct, &ratio)) {
		char p[8];
		snprintf(p, sizeof(p), "p%d", pct);
		x = jget(jget2(jget(diff, DK_LATENCY), t, ratio ? DK_RATIO : DK_B), p);
	} else {
		x = NULL;
	}
	if (cJSON_IsNumber(x)) {
		*v = x->valuedouble;
		return 1;
	}
	snprintf(why, cap, "no data for '%s%s%s' in these runs", g->name,
		 g->arg[0] ? "@" : "", g->arg);
	return 0;
}

enum err gate_check(const struct diff_result *res, const struct gate *g,
			 struct diag *d)
{
	if (strcmp(g->name, "pass_rate") || !g->arg[0] || casetab_find(&res->b.cases, g->arg) ||
	    casetab_find(&res->a.cases, g->arg))
		return ERR_OK;
	return diag_fail(d, ERR_USAGE, "gate '%s': case '%s' is in neither run", g->spec, g->arg);
}

/* ---- load cells ---- */

/* A ratio gate: the figure it reads, the request figure behind it (a
 * percentile of per-request samples) or none (one value per round, from the
 * cell's "rounds": valid ones, or all for the SLO figures, as loadstat.h),
 * and its absolute floor. TPOT's floor is finer than TTFT's: it is a
 * per-token time of 5-50 ms where 1 ms is already 2-20%. */
static const struct ratio_rule {
	const char *gate;
	enum loadcells_fig fig;
	int per_request;
	enum loadstat_kind kind;
	double pct, floor;
	const char *unit;
	int all_rounds;
} ratios[] = {
	{"output_tps_ratio", LCF_OUTPUT_TPS, 0, LOADSTAT_TTFT, 0, 1.0, "tok/s", 0},
	{"goodput_ratio", LCF_GOODPUT_RPS, 0, LOADSTAT_TTFT, 0, 0.01, "req/s", 1},
	{"ttft_p50_ratio", LCF_TTFT_P50_MS, 1, LOADSTAT_TTFT, 50, 1.0, "ms", 0},
	{"ttft_p95_ratio", LCF_TTFT_P95_MS, 1, LOADSTAT_TTFT, 95, 1.0, "ms", 0},
	{"tpot_p95_ratio", LCF_TPOT_P95_MS, 1, LOADSTAT_TPOT, 95, 0.1, "ms", 0},
	{"e2e_p50_ratio", LCF_E2E_P50_MS, 1, LOADSTAT_E2E, 50, 1.0, "ms", 0},
};
static const char *const absolutes[] = {LC_SUCCESS_RATE, LC_SLO_ATTAINMENT, LC_GOODPUT_RPS,
					LC_ACHIEVED_RATE, LC_OUTPUT_TPS, LC_TTFT_P50_MS,
					LC_TTFT_P95_MS, LC_TPOT_P95_MS, LC_E2E_P50_MS, LC_LAG_P99_MS};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const struct { const char *spec; int slo_only; } cutover[GATE_CUTOVER_N] = {
	{"output_tps_ratio>=0.9", 0}, {"ttft_p50_ratio<=1.1", 0}, {"ttft_p95_ratio<=1.15", 0},
	{"success_rate>=1", 0}, {"goodput_ratio>=0.9", 1}, {"slo_attainment>0", 1},
	{"no_new_failures", 0}, {"recall_delta>=0", 0},
};

/* The ratio rule of gate `name`, or NULL. */
static const struct ratio_rule *ratio_of(const char *name)
{
	size_t i;

	for (i = 0; i < COUNT(ratios); i++)
		if (!strcmp(name, ratios[i].gate))
			return &ratios[i];
	return NULL;
}

/* B's over A's acceptance rate of speculative decoding (the servers' own
 * counters, --metrics), a point per cell: the counters total every draft of
 * the counted rounds. */
#define GATE_SPEC "spec_acceptance_ratio"

int gate_is_load(const char *name)
{
	size_t i;

	if (!strcmp(name, GATE_SPEC))
		return 1;
	for (i = 0; i < COUNT(absolutes); i++)
		if (!strcmp(name, absolutes[i]))
			return 1;
	return ratio_of(name) != NULL;
}

enum err gate_expand(const char *spec, struct gate *out, size_t cap, size_t *n,
		     struct diag *d)
{
	size_t i;
	enum err e;

	*n = 0;
	if (strcmp(spec, "cutover"))
		return cap < 1 ? diag_fail(d, ERR_LIMIT, "too many gates") : (*n = 1, gate_parse(spec, out, d));
	if (cap < GATE_CUTOVER_N)
		return diag_fail(d, ERR_LIMIT, "too many gates");
	for (i = 0; i < GATE_CUTOVER_N; i++) {
		if ((e = gate_parse(cutover[i].spec, &out[i], d)))
			return e;
		out[i].slo_only = cutover[i].slo_only;
		out[i].cutover = 1;
	}
	*n = GATE_CUTOVER_N;
	return ERR_OK;
}

/* Whether cell `c` is one that ARG ("", "CASE", "CASE/c32", "CASE/r0.3")
 * picks; levels compare as numbers. */
static int picked(const struct loadcells_cell *c, const char *arg)
{
	const char *slash = strrchr(arg, '/');
	size_t n = slash ? (size_t)(slash - arg) : strlen(arg);
	double want;
	char *end;

	if (!*arg)
		return 1;
	if (strlen(c->case_id) != n || strncmp(c->case_id, arg, n))
		return 0;
	if (!slash)
		return 1;
	want = strtod(slash + 2, &end);
	if (end == slash + 2 || *end)
		return 0;
	if (slash[1] == 'c')
		return !c->open_loop && c->level_value == want;
	return slash[1] == 'r' && c->open_loop && c->level_value == want;
}

/* What judging one gate on the load cells needs. */
struct load_ctx {
	const struct loadcells *load_a; /* A's load cells, borrowed */
	const struct loadcells_reqs *reqs_a, *reqs_b; /* runs' load requests, borrowed */
	struct diff_result *res;       /* its cells' verdicts are written */
	const struct gate *g;
	struct loadci_set sa, sb;      /* owned scratch */
};

/* A per-round figure of cell `c` into `s`: one value per round. */
static int round_values(const struct loadcells_cell *c, const struct ratio_rule *r, struct loadci_set *s)
{
	double v;
	size_t i;

	loadci_set_reset(s);
	for (i = 0; i < c->nrounds; i++) {
		if (!loadcells_round_fig(c, &c->rounds[i], r->fig, &v) || (!r->all_rounds && !c->rounds[i].s.valid))
			continue;
		if (!loadci_set_add(s, v) || !loadci_set_end_round(s))
			return 0;
	}
	return 1;
}

/* Both runs' samples of rule `r` for cells a and b into x->sa, x->sb. */
static enum err samples_of(struct load_ctx *x, const struct loadcells_cell *a,
			   const struct loadcells_cell *b, const struct ratio_rule *r, struct diag *d)
{
	enum err e;

	if (r->per_request) {
		if ((e = loadcells_samples(x->reqs_a, a, r->kind, &x->sa, d)))
			return e;
		return loadcells_samples(x->reqs_b, b, r->kind, &x->sb, d);
	}
	if (!round_values(a, r, &x->sa) || !round_values(b, r, &x->sb))
		return diag_fail(d, ERR_NOMEM, "out of memory judging load cells");
	return ERR_OK;
}

/* One cell's judgement under one gate. */
struct cell_out {
	enum gate_verdict v;
	int have;                  /* value is set */
	double value, lo, hi, mde; /* lo, hi, mde: NAN for a point judgement */
	char advice[640];
};

#define SETTLE_ROUNDS_MAX 30 /* rounds a run beyond which advice says "cannot" */

/* The mean wall seconds of the rounds of cells a and b (0 when unknown). */
static double round_seconds(const struct loadcells_cell *a, const struct loadcells_cell *b)
{
	const struct loadcells_cell *cells[2] = {a, b};
	double sum = 0;
	size_t k;
	int i, n = 0;

	for (i = 0; i < 2; i++)
		for (k = 0; k < cells[i]->nrounds; k++)
			if (cells[i]->rounds[k].s.wall_ms > 0) {
				sum += cells[i]->rounds[k].s.wall_ms / 1000;
				n++;
			}
	return n ? sum / n : 0;
}

/* "about 3 min" for `s` seconds. */
static void minutes(double s, char *out, size_t cap)
{
	if (s < 90)
		snprintf(out, cap, "about %.0f s", ceil(s));
	else
		snprintf(out, cap, "about %.0f min", ceil(s / 60));
}

/* What would settle an underpowered cell, in rounds or requests and in
 * minutes at the measured pace, and what dominates its noise; or that it
 * cannot be judged within SETTLE_ROUNDS_MAX rounds, and why. */
static void settle(const struct loadci_result *q, const struct ratio_rule *r, const struct gate *g,
		   const struct loadcells_cell *a, const struct loadcells_cell *b, char *out, size_t cap)
{
	double rounds = fmin((double)a->s.rounds_valid, (double)b->s.rounds_valid);
	double total = fmin((double)a->s.rounds_total, (double)b->s.rounds_total);
	double reqs = fmin((double)a->s.requests, (double)b->s.requests) / (total > 0 ? total : 1);
	double sec = round_seconds(a, b), need = fmax(rounds + 1, ceil(rounds * q->more));
	const char *why = q->noise == LOADCI_NOISE_MODE ? "the percentile sits on a rare slow mode"
			  : q->noise == LOADCI_NOISE_REQUESTS ? "each round has too few requests for this percentile"
							      : "the rounds disagree (drift or slow phases)";
	char head[160], t[40], runs[160], phases[280];

	if (q->noise == LOADCI_NOISE_PHASES) {
		snprintf(phases, sizeof(phases), "the rounds move together in slow phases that span several "
			 "rounds (%zu and %zu rounds count as about %zu and %zu independent ones; a case's "
			 "\"rounds\" of 15 to 20 spreads every run over more of the phases)", q->rounds_a,
			 q->rounds_b, q->worth_a, q->worth_b);
		why = phases;
	}

	/* each run precise to within half the threshold: what is left is the
	 * runs' own difference, about the threshold's size */
	if (isfinite(q->lo) && isfinite(q->hi) && q->lo > 0 &&
	    log(q->hi / q->lo) / 2 < fabs(log(g->value)) / 2) {
		snprintf(runs, sizeof(runs), "the runs disagree by %+.0f%%, about the threshold's size (each is "
			 "precise to about %.0f%%)", (q->ratio - 1) * 100, (sqrt(q->hi / q->lo) - 1) * 100);
		why = runs;
	}

	snprintf(head, sizeof(head), "B/A %.3f, 90%% interval %.3f-%.3f holds the threshold %g", q->ratio, q->lo,
		 q->hi, g->value);
	if (q->one_round) {
		minutes(2 * sec, t, sizeof(t));
		snprintf(out, cap, "B/A %.3f on one valid round in a run, no spread to judge by: 3 rounds or more in "
			 "each run (%s more at %.2g s a round)", q->ratio, t, sec);
	} else if (!isfinite(q->mde)) {
		minutes((3 - rounds) * sec, t, sizeof(t));
		snprintf(out, cap, "B/A %.3f on %.0f valid rounds in a run, too few to bound an interval: 3 rounds or "
			 "more in each run (%s more at %.2g s a round)", q->ratio, rounds, t, sec);
	} else if (!isfinite(need) || need > SETTLE_ROUNDS_MAX) {
		snprintf(out, cap, "%s: cannot be settled within %d rounds a run on this server: %s", head,
			 SETTLE_ROUNDS_MAX, why);
	} else if (q->noise == LOADCI_NOISE_REQUESTS && r->per_request) {
		minutes((need - rounds) * sec, t, sizeof(t));
		snprintf(out, cap, "%s: %s: about %.0f requests a round in each run would settle it (now %.0f; "
			 "or %.0f rounds, %s more a run)", head, why, fmax(reqs + 1, ceil(reqs * q->more)), reqs, need, t);
	} else {
		minutes((need - rounds) * sec, t, sizeof(t));
		snprintf(out, cap, "%s: %s: about %.0f valid rounds in each run would settle it (now %.0f; %s "
			 "more a run at %.2g s a round)", head, why, need, rounds, t, sec);
	}
}

/* A verdict the measuring machine's change between the runs could have
 * made (loadclient.h). Where B's machine ran slower than A's by more than
 * LOADCLIENT_PROBE_TOL (m = B/A of the probes above it), a fail stands only
 * if the interval stays wholly beyond the threshold with B's figure
 * corrected by m^2 (a server slowed with its machine by m can look up to
 * about m^2 slower under load, where queues amplify it); where B's ran
 * faster by as much, a pass stands only if it stays wholly within. Else the
 * cell is underpowered, said so in o->advice. Returns whether it was. */
static int machine_blurs(const struct loadcells_cell *a, const struct loadcells_cell *b,
			 struct cell_out *o, const struct gate *g)
{
	int up_is_bad = g->op == GATE_LE || g->op == GATE_LT, slower;
	double m, c, lo, hi;

	if (!loadcells_machine_ratio(a, b, &m))
		return 0;
	slower = m > LOADCLIENT_PROBE_TOL;
	if (!(o->v == GATE_FAIL && slower) && !(o->v == GATE_PASS && m < 1 / LOADCLIENT_PROBE_TOL))
		return 0;
	c = up_is_bad ? 1 / (m * m) : m * m; /* B's figure as on A's machine */
	lo = o->lo * c, hi = o->hi * c;
	if (o->v == GATE_FAIL ? (up_is_bad ? lo > g->value : hi < g->value)
			      : (up_is_bad ? hi < g->value : lo > g->value))
		return 0;
	snprintf(o->advice, sizeof(o->advice), "B/A %.3f, 90%% interval %.3f-%.3f %s the threshold %g, but the "
		 "measuring machine ran %.0f%% %s in B (a fixed piece of work took %.3g ms a round, %.3g ms in A), "
		 "and with B's figure corrected for it (%.3f-%.3f) the interval holds the threshold: %s; run the "
		 "baseline again right before the candidate, with the machine otherwise idle", o->value, o->lo, o->hi,
		 o->v == GATE_FAIL ? "wholly beyond" : "wholly within", g->value,
		 fabs(m - 1) * 100, slower ? "slower" : "faster", b->client_probe_ms, a->client_probe_ms, lo, hi,
		 slower ? "a machine that slow can make the same server look this slow"
			: "a machine that fast can make a slower server look this fast");
	o->v = GATE_UNDERPOWERED;
	return 1;
}

/* Judges ratio rule `r` on cells a and b into *o. */
static enum err judge_ratio(struct load_ctx *x, const struct loadcells_cell *a,
			    const struct loadcells_cell *b, const struct ratio_rule *r, struct cell_out *o,
			    struct diag *d)
{
	struct loadci_rule rule = {r->pct, x->g->value, x->g->op == GATE_LE || x->g->op == GATE_LT,
				   r->floor};
	struct loadci_result q;
	enum err e;

	if ((e = samples_of(x, a, b, r, d)))
		return e;
	if (!loadci_judge(&x->sa, &x->sb, &rule, &q)) {
		snprintf(o->advice, sizeof(o->advice), "no %s", loadcells_fig_key(r->fig));
		return ERR_OK;
	}
	o->have = 1;
	o->value = q.ratio;
	o->lo = q.lo, o->hi = q.hi, o->mde = q.mde;
	o->v = q.verdict == LOADCI_FAIL ? GATE_FAIL : q.verdict == LOADCI_UNDERPOWERED ? GATE_UNDERPOWERED : GATE_PASS;
	if (x->g->op == GATE_EQ)
		o->v = gate_holds(q.ratio, x->g->op, x->g->value) ? GATE_PASS : GATE_FAIL;
	if (o->v == GATE_UNDERPOWERED)
		settle(&q, r, x->g, a, b, o->advice, sizeof(o->advice));
	else if (!q.floored && x->g->op != GATE_EQ && machine_blurs(a, b, o, x->g))
		;
	else if (q.floored)
		snprintf(o->advice, sizeof(o->advice), "%.4g -> %.4g %s: a change of the threshold's size is within "
			 "the %g %s floor, never a regression", q.a, q.b, r->unit, r->floor, r->unit);
	else
		snprintf(o->advice, sizeof(o->advice), "B/A %.3f, 90%% interval %.3f-%.3f%s", q.ratio, q.lo, q.hi,
			 o->v == GATE_FAIL ? ": wholly beyond the threshold" : ": wholly within the threshold");
	return ERR_OK;
}

/* spec_acceptance_ratio on cells `a` and `b`: a cell whose server view
 * lacks the counters is not measured, which fails, named. */
static enum err judge_spec(struct load_ctx *x, const struct loadcells_cell *a,
			   const struct loadcells_cell *b, struct cell_out *o)
{
	const cJSON *ra = jget(a->server, MV_SPEC_ACCEPT_RATE), *rb = jget(b->server, MV_SPEC_ACCEPT_RATE);

	if (!cJSON_IsNumber(ra) || !cJSON_IsNumber(rb) || ra->valuedouble <= 0) {
		snprintf(o->advice, sizeof(o->advice), "not measured: %s no speculative decoding acceptance "
			 "(--metrics against a server with a draft model)",
			 !cJSON_IsNumber(ra) || ra->valuedouble <= 0 ? "A has" : "B has");
		return ERR_OK;
	}
	o->have = 1;
	o->value = rb->valuedouble / ra->valuedouble;
	o->v = gate_holds(o->value, x->g->op, x->g->value) ? GATE_PASS : GATE_FAIL;
	snprintf(o->advice, sizeof(o->advice), "acceptance %.3f -> %.3f (B/A %.3f)", ra->valuedouble,
		 rb->valuedouble, o->value);
	return ERR_OK;
}

/* Cell `c`'s figure that absolute gate `name` reads into *v: 0 when it
 * has none. */
static int absolute_value(const struct loadcells_cell *c, const char *name, double *v)
{
	int k;

	if (!strcmp(name, LC_SUCCESS_RATE)) {
		*v = c->s.success_rate;
		return 1;
	}
	return (k = loadcells_fig_named(name)) >= 0 && loadcells_median(c, (enum loadcells_fig)k, v);
}

/* Judges gate x->g on B's cell `b` into *o. */
static enum err judge_cell(struct load_ctx *x, const struct loadcells_cell *b, struct cell_out *o,
			   struct diag *d)
{
	const struct ratio_rule *r = ratio_of(x->g->name);
	const struct loadcells_cell *a;
	char name[320];

	memset(o, 0, sizeof(*o));
	o->v = GATE_FAIL;
	o->lo = o->hi = o->mde = NAN;
	loadcells_name(b, name, sizeof(name));
	a = loadcells_find(x->load_a, name);
	if (b->s.rounds_valid < 1 || (a && a->s.rounds_valid < 1)) {
		snprintf(o->advice, sizeof(o->advice), "invalid in %s (no valid round)",
			 b->s.rounds_valid < 1 ? "B" : "A");
		return ERR_OK;
	}
	if ((r || !strcmp(x->g->name, GATE_SPEC)) && !a) {
		snprintf(o->advice, sizeof(o->advice), "not in A");
		return ERR_OK;
	}
	if (r)
		return judge_ratio(x, a, b, r, o, d);
	if (!strcmp(x->g->name, GATE_SPEC))
		return judge_spec(x, a, b, o);
	if (!absolute_value(b, x->g->name, &o->value)) {
		snprintf(o->advice, sizeof(o->advice), "no %s", x->g->name);
		return ERR_OK;
	}
	o->have = 1;
	o->v = gate_holds(o->value, x->g->op, x->g->value) ? GATE_PASS : GATE_FAIL;
	snprintf(o->advice, sizeof(o->advice), "B's %s %.6g", x->g->name, o->value);
	return ERR_OK;
}

/* Appends the judgement to the comparison's cell `name`, whose verdict
 * becomes the worst so far. ERR_NOMEM only. */
static enum err to_cell(struct load_ctx *x, const char *name, const struct cell_out *o, struct diag *d)
{
	struct diff_cell *c = x->res->cells, *end = c + x->res->ncells;
	struct diff_judgement *j;
	char n[320];

	for (; c < end; c++) {
		loadcells_name(c->named, n, sizeof(n));
		if (!strcmp(n, name))
			break;
	}
	if (c == end)
		return ERR_OK;
	if (c->ngates == c->capgates) {
		if (!(j = mem_grow(c->gates, &c->capgates, sizeof(*j), 4)))
			return diag_fail(d, ERR_NOMEM, "out of memory judging load cells");
		c->gates = j;
	}
	j = &c->gates[c->ngates++];
	j->gate = x->g->spec;
	j->v = o->v;
	j->have = o->have;
	j->value = o->value;
	j->threshold = x->g->value;
	j->lo = o->lo, j->hi = o->hi, j->mde = o->mde;
	snprintf(j->advice, sizeof(j->advice), "%s", o->advice);
	c->verdict = c->judged && c->verdict > o->v ? c->verdict : o->v;
	c->judged = 1;
	return ERR_OK;
}

/* Whether `v` is worse than `w` for this operator. */
static int worse(double v, double w, enum gate_op op)
{
	return op == GATE_GE || op == GATE_GT ? v < w : op == GATE_EQ ? v != w : v > w;
}

static void note(char *why, size_t cap, const char *cell, const char *what)
{
	size_t n = strlen(why);

	if (n + 4 < cap && snprintf(why + n, cap - n, "%s%s %s", n ? "; " : "", cell, what) < 0)
		why[n] = '\0';
}

/* Tallies of one gate over its cells. */
struct tally {
	int cells, bad, weak, floored, have;
	char fails[2400], weaks[2400];
};

static void tally_cell(struct tally *t, const struct gate *g, const char *name,
		       const struct cell_out *o, double *value)
{
	char r[700];

	t->cells++;
	if (o->have && (!t->have || worse(o->value, *value, g->op)))
		*value = o->value;
	t->have |= o->have;
	t->floored += !!strstr(o->advice, "floor");
	if (o->v == GATE_FAIL) {
		t->bad++;
		if (!o->have)
			snprintf(r, sizeof(r), "%s", o->advice);
		else if (isfinite(o->lo))
			snprintf(r, sizeof(r), "%.6g [%.3g-%.3g]", o->value, o->lo, o->hi);
		else
			snprintf(r, sizeof(r), "%.6g", o->value);
		note(t->fails, sizeof(t->fails), name, r);
	} else if (o->v == GATE_UNDERPOWERED) {
		t->weak++;
		snprintf(r, sizeof(r), "underpowered: %s", o->advice);
		note(t->weaks, sizeof(t->weaks), name, r);
	}
}

/* Judges load gate `g` on every cell it picks: *v, *value (the worst cell's,
 * when any had one), *have and the detail in `why`. */
static enum err load_gate(struct diff_result *res, const struct gate *g,
			  enum gate_verdict *v, double *value, int *have, char *why, size_t cap,
			  struct diag *d)
{
	struct load_ctx x = {&res->a.load, res->reqs_a, res->reqs_b, res, g, {0}, {0}};
	const struct loadcells_cell *b;
	const struct loadstat_fig *slo;
	struct cell_out o;
	struct tally t;
	char name[320];
	size_t i;
	enum err e = ERR_OK;

	memset(&t, 0, sizeof(t));
	for (i = 0; i < res->b.load.n; i++) {
		b = &res->b.load.c[i];
		slo = loadcells_fig(b, LCF_SLO_ATTAINMENT);
		if (!picked(b, g->arg) || (g->slo_only && !(slo && slo->n)))
			continue;
		if ((e = judge_cell(&x, b, &o, d)))
			break;
		loadcells_name(b, name, sizeof(name));
		if ((e = to_cell(&x, name, &o, d)))
			break;
		tally_cell(&t, g, name, &o, value);
	}
	loadci_set_release(&x.sa);
	loadci_set_release(&x.sb);
	*have = t.have;
	*v = t.bad || (!t.cells && !g->slo_only) ? GATE_FAIL : t.weak ? GATE_UNDERPOWERED : GATE_PASS;
	if (!t.cells)
		snprintf(why, cap, g->slo_only ? "no load cell has an SLO attainment figure" : "no load cell matches '%s'",
			 g->arg[0] ? g->arg : "(any)");
	else if (t.bad)
		snprintf(why, cap, "%s", t.fails);
	else if (t.weak)
		snprintf(why, cap, "%s", t.weaks);
	else
		snprintf(why, cap, "%d cell%s, worst %.6g%s", t.cells, t.cells == 1 ? "" : "s", *value,
			 t.floored ? " (differences within the absolute floor never count)" : "");
	return e;
}

/* A load gate; ttft_p50_ratio and e2e_p50_ratio are also latency gates, and
 * mean the load cells when @ARG names one or a run has any. */
static int is_load_gate(const struct diff_result *res, const struct gate *g)
{
	char t[32];
	int p, r;

	if (!gate_is_load(g->name))
		return 0;
	if (!timing_gate(g->name, t, sizeof(t), &p, &r) || g->arg[0])
		return 1;
	return res->a.load.n || res->b.load.n;
}

/* Whether a gate of `cutover` has anything to judge: load gates when a run
 * has load cells, recall_delta when a run has recall; the rest always. */
static int applies(const struct diff_result *res, const struct gate *g)
{
	if (gate_is_load(g->name))
		return res->a.load.n || res->b.load.n;
	if (!strcmp(g->name, "recall_delta"))
		return cJSON_GetArraySize(jget(res->diff, DK_RECALL_BY_DEPTH)) > 0;
	return 1;
}

/* Appends why every gate fails: an incomplete run, or B lacking what A has. */
static void like_for_like(const cJSON *diff, unsigned flags, enum gate_verdict *v, char *why, size_t cap)
{
	static const struct { const char *key, *flag; unsigned bit; } checks[] = {
		{DK_INCOMPLETE, "--allow-incomplete", GATE_ALLOW_INCOMPLETE},
		{DK_MISSING, "--case or --allow-missing", GATE_ALLOW_MISSING},
	};
	const cJSON *s;
	size_t i, n;

	for (i = 0; i < COUNT(checks); i++) {
		s = jget(diff, checks[i].key);
		if (!cJSON_IsString(s) || (flags & checks[i].bit))
			continue;
		if (i == 1 && (flags & GATE_ALLOW_INCOMPLETE) && cJSON_IsString(jget(diff, DK_INCOMPLETE)))
			continue; /* an incomplete run, allowed: what it lacks is why */
		*v = GATE_FAIL;
		n = strlen(why);
		snprintf(why + n, cap - n, "%s%s (%s to gate anyway)", why[0] ? "; fails: " : "",
			 s->valuestring, checks[i].flag);
	}
}

enum err gate_eval(struct diff_result *res, const struct gate *g, unsigned flags,
		   enum gate_verdict *v, struct diag *d)
{
	cJSON *diff = res->diff;
	struct json_build jb;
	struct fungate_out fo;
	cJSON *o, *cases = NULL;
	char why[2600] = "";
	double val = 0;
	int have, ok;
	enum err e = ERR_OK;

	json_build_init(&jb);
	if (g->cutover && !applies(res, g)) {
		*v = GATE_PASS, have = 0;
		snprintf(why, sizeof(why), "%s", is_load_gate(res, g) || gate_is_load(g->name)
							 ? "no load case in either run" : "no recall case in either run");
	} else if (fungate_judges(res, g)) {
		e = fungate_eval(res, g, &fo, d);
		*v = fo.v, val = fo.value, have = 1, cases = fo.cases;
		snprintf(why, sizeof(why), "%s", fo.why);
	} else if (is_load_gate(res, g)) {
		e = load_gate(res, g, v, &val, &have, why, sizeof(why), d);
	} else {
		have = metric(res, g, &val, why, sizeof(why));
		*v = have && gate_holds(val, g->op, g->value) ? GATE_PASS : GATE_FAIL;
		if (have)
			snprintf(why, sizeof(why), "value %.6g", val);
	}
	like_for_like(diff, flags, v, why, sizeof(why));
	ok = *v == GATE_PASS;
	o = json_new_obj(&jb);
	json_add_str(&jb, o, DK_GATE, g->spec);
	json_add_bool(&jb, o, DK_OK, ok);
	json_add_str(&jb, o, DK_VERDICT, gate_verdict_name(*v));
	json_add_item(&jb, o, DK_VALUE, have ? cJSON_CreateNumber(val) : cJSON_CreateNull());
	json_add_str(&jb, o, DK_DETAIL, why);
	if (cases)
		json_add_item(&jb, o, DK_CASES, cases);
	json_add_item(&jb, cJSON_GetObjectItemCaseSensitive(diff, DK_GATES), NULL, o);
	if (e) {
		json_build_end(&jb, NULL, "a gate's result", NULL);
		return e;
	}
	return json_build_end(&jb, NULL, "a gate's result", d);
}
