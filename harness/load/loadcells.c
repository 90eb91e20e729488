/*
 * loadcells — load cells of a run summary; see loadcells.h.
 */
#include "loadcells.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jget.h"
#include "base/json.h"
#include "loadstat.h"
#include "base/md.h"
#include "base/mem.h"

struct loadcells_kept {
	const char *id;         /* one of the set's ids */
	long level, round;
	int open_loop, has_slo;
	double level_value;
	struct loadstat_slo slo;
	struct loadstat_req q;
	size_t itl_at, nitl;    /* its gaps: the set's itl[itl_at .. itl_at + nitl) */
};

enum err loadcells_reqs_add(struct loadcells_reqs *s, const struct loadcells_req *q,
			    struct diag *d)
{
	struct loadcells_kept *k;
	const cJSON *g;
	char **ids;
	double *itl;
	size_t i;

	if (s->n == s->cap) {
		if (!(k = mem_grow(s->r, &s->cap, sizeof(*k), 256)))
			goto oom;
		s->r = k;
	}
	for (i = s->nids; i > 0 && strcmp(s->ids[i - 1], q->case_id); i--)
		;
	if (!i) {
		if (s->nids == s->cids) {
			if (!(ids = mem_grow(s->ids, &s->cids, sizeof(*ids), 8)))
				goto oom;
			s->ids = ids;
		}
		if (!(s->ids[s->nids] = mem_strndup(q->case_id, strlen(q->case_id))))
			goto oom;
		i = ++s->nids;
	}
	k = &s->r[s->n];
	k->id = s->ids[i - 1];
	k->level = q->level;
	k->round = q->round;
	k->open_loop = q->open_loop;
	k->has_slo = q->has_slo;
	k->level_value = q->level_value;
	k->slo = q->slo;
	k->q = q->q;
	k->itl_at = s->nitl;
	k->nitl = 0;
	if (q->q.ok) /* a failure's gaps are not counted */
		cJSON_ArrayForEach(g, q->itl_ms) {
			if (!cJSON_IsNumber(g))
				continue;
			if (s->nitl == s->citl) {
				if (!(itl = mem_grow(s->itl, &s->citl, sizeof(*itl), 1024)))
					goto oom;
				s->itl = itl;
			}
			s->itl[s->nitl++] = g->valuedouble;
			k->nitl++;
		}
	s->n++;
	return ERR_OK;
oom:
	return diag_fail(d, ERR_NOMEM, "out of memory reading load requests");
}

void loadcells_reqs_free(struct loadcells_reqs *s)
{
	size_t i;

	for (i = 0; i < s->nids; i++)
		mem_free(s->ids[i]);
	mem_free(s->ids);
	mem_free(s->r);
	mem_free(s->itl);
	memset(s, 0, sizeof(*s));
}

struct rnd {
	long round;
	struct loadstat_req *q; /* owned */
	size_t n, cap;
	double *itl;            /* owned: its successful requests' gaps, pooled */
	size_t nitl, citl;
};

struct cell {
	const struct loadcells_kept *first; /* its first request: case, level, value, SLO */
	struct rnd *r;          /* owned */
	size_t nr, capr;
};

struct acc {
	struct cell *c;         /* owned */
	size_t n, cap;
};

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	size_t c = *cap ? 2 * *cap : 8;
	void *q;

	if (n < *cap)
		return p;
	q = mem_realloc(p, c * size);
	if (q)
		*cap = c;
	return q;
}

static struct cell *find_cell(struct acc *a, const struct loadcells_kept *k)
{
	struct cell *c;
	size_t i;

	for (i = 0; i < a->n; i++)
		if (a->c[i].first->level == k->level && a->c[i].first->id == k->id)
			return &a->c[i];
	if (!(c = grow(a->c, &a->cap, a->n, sizeof(*c))))
		return NULL;
	a->c = c;
	c = &a->c[a->n++];
	memset(c, 0, sizeof(*c));
	c->first = k;
	return c;
}

static struct rnd *find_round(struct cell *c, long round)
{
	struct rnd *r;
	size_t i;

	for (i = 0; i < c->nr; i++)
		if (c->r[i].round == round)
			return &c->r[i];
	if (!(r = grow(c->r, &c->capr, c->nr, sizeof(*r))))
		return NULL;
	c->r = r;
	r = &c->r[c->nr++];
	memset(r, 0, sizeof(*r));
	r->round = round;
	return r;
}

/* Request `k` of set `s` onto its cell's round: its figures, and its gaps
 * onto the round's. */
static int add(struct acc *a, const struct loadcells_reqs *s, const struct loadcells_kept *k)
{
	struct loadstat_req *q;
	struct cell *c;
	struct rnd *r;
	double *p;

	if (!(c = find_cell(a, k)) || !(r = find_round(c, k->round)) ||
	    !(q = grow(r->q, &r->cap, r->n, sizeof(*q))))
		return 0;
	r->q = q;
	r->q[r->n++] = k->q;
	while (r->nitl + k->nitl > r->citl) {
		if (!(p = mem_grow(r->itl, &r->citl, sizeof(*p), 256)))
			return 0;
		r->itl = p;
	}
	if (k->nitl)
		memcpy(r->itl + r->nitl, s->itl + k->itl_at, k->nitl * sizeof(*r->itl));
	r->nitl += k->nitl;
	return 1;
}

static void acc_free(struct acc *a)
{
	size_t i, j;

	for (i = 0; i < a->n; i++) {
		for (j = 0; j < a->c[i].nr; j++) {
			mem_free(a->c[i].r[j].q);
			mem_free(a->c[i].r[j].itl);
		}
		mem_free(a->c[i].r);
	}
	mem_free(a->c);
}

static int by_round(const void *x, const void *y)
{
	long a = ((const struct rnd *)x)->round, b = ((const struct rnd *)y)->round;

	return (a > b) - (a < b);
}

/* Each figure: its key, where the cell and a round hold it (NO_ROUND: not
 * in the rounds) and when a cell's summary has it. */
#define NO_ROUND ((size_t)-1)
enum when { ALWAYS, RATES, RATES_OR_SLO };
static const struct {
	const char *key;
	size_t cell, round;
	enum when when;
} figs[LCF_COUNT] = {
#define FIG(k, m, r, w) {k, offsetof(struct loadstat_cell, m), r, w}
#define IN_ROUND(m) offsetof(struct loadstat_round, m)
	[LCF_OUTPUT_TPS] = FIG(LC_OUTPUT_TPS, output_tps, IN_ROUND(output_tps), ALWAYS),
	[LCF_TTFT_P50_MS] = FIG(LC_TTFT_P50_MS, ttft_p50_ms, IN_ROUND(ttft_p50_ms), ALWAYS),
	[LCF_TTFT_P95_MS] = FIG(LC_TTFT_P95_MS, ttft_p95_ms, IN_ROUND(ttft_p95_ms), ALWAYS),
	[LCF_TTFT_P99_MS] = FIG(LC_TTFT_P99_MS, ttft_p99_ms, NO_ROUND, ALWAYS),
	[LCF_TTFC_P50_MS] = FIG(LC_TTFC_P50_MS, ttfc_p50_ms, IN_ROUND(ttfc_p50_ms), ALWAYS),
	[LCF_TTFC_P95_MS] = FIG(LC_TTFC_P95_MS, ttfc_p95_ms, NO_ROUND, ALWAYS),
	[LCF_TPOT_P50_MS] = FIG(LC_TPOT_P50_MS, tpot_p50_ms, NO_ROUND, ALWAYS),
	[LCF_TPOT_P95_MS] = FIG(LC_TPOT_P95_MS, tpot_p95_ms, IN_ROUND(tpot_p95_ms), ALWAYS),
	[LCF_E2E_P50_MS] = FIG(LC_E2E_P50_MS, e2e_p50_ms, IN_ROUND(e2e_p50_ms), ALWAYS),
	[LCF_E2E_P95_MS] = FIG(LC_E2E_P95_MS, e2e_p95_ms, NO_ROUND, ALWAYS),
	[LCF_ITL_P50_MS] = FIG(LC_ITL_P50_MS, itl_p50_ms, NO_ROUND, ALWAYS),
	[LCF_ITL_P95_MS] = FIG(LC_ITL_P95_MS, itl_p95_ms, NO_ROUND, ALWAYS),
	[LCF_ITL_P99_MS] = FIG(LC_ITL_P99_MS, itl_p99_ms, NO_ROUND, ALWAYS),
	[LCF_ACHIEVED_RATE] = FIG(LC_ACHIEVED_RATE, achieved_rate, IN_ROUND(achieved_rate), RATES),
	[LCF_SLO_ATTAINMENT] = FIG(LC_SLO_ATTAINMENT, slo_attainment, IN_ROUND(slo_attainment), RATES_OR_SLO),
	[LCF_GOODPUT_RPS] = FIG(LC_GOODPUT_RPS, goodput_rps, IN_ROUND(goodput_rps), RATES_OR_SLO),
	[LCF_LAG_P99_MS] = FIG(LC_LAG_P99_MS, lag_p99_ms, IN_ROUND(lag_p99_ms), ALWAYS),
#undef IN_ROUND
#undef FIG
};

const char *loadcells_fig_key(enum loadcells_fig f)
{
	return figs[f].key;
}

int loadcells_fig_named(const char *key)
{
	int f;

	for (f = 0; f < LCF_COUNT; f++)
		if (!strcmp(key, figs[f].key))
			return f;
	return -1;
}

/* Whether cell `c`'s summary holds figure `f`. */
static int holds(const struct loadcells_cell *c, enum loadcells_fig f)
{
	return figs[f].when == ALWAYS || c->open_loop || (figs[f].when == RATES_OR_SLO && c->has_slo);
}

const struct loadstat_fig *loadcells_fig(const struct loadcells_cell *c, enum loadcells_fig f)
{
	return holds(c, f) ? (const struct loadstat_fig *)(const void *)((const char *)&c->s + figs[f].cell)
			   : NULL;
}

int loadcells_median(const struct loadcells_cell *c, enum loadcells_fig f, double *v)
{
	const struct loadstat_fig *g = c ? loadcells_fig(c, f) : NULL;

	if (!g || !g->n)
		return 0;
	*v = g->median;
	return 1;
}

int loadcells_machine_ratio(const struct loadcells_cell *a, const struct loadcells_cell *b, double *m)
{
	if (!a || !b || !a->has_probe || !b->has_probe || !(a->client_probe_ms > 0))
		return 0;
	*m = b->client_probe_ms / a->client_probe_ms;
	return 1;
}

int loadcells_round_fig(const struct loadcells_cell *c, const struct loadcells_round *r,
			enum loadcells_fig f, double *v)
{
	if (!holds(c, f) || figs[f].round == NO_ROUND)
		return 0;
	*v = *(const double *)(const void *)((const char *)&r->s + figs[f].round);
	return 1;
}

/* Cell `c` of the requests into `out` (zeroed): its level as its first
 * request gives it, its rounds' figures and its own. */
static enum err fill_cell(struct cell *c, struct loadcells_cell *out, struct diag *d)
{
	struct loadstat_round *rs = mem_calloc(c->nr ? c->nr : 1, sizeof(*rs));
	double *scratch;
	size_t i, most = c->nr;

	for (i = 0; i < c->nr; i++)
		most = c->r[i].n > most ? c->r[i].n : most;
	scratch = mem_calloc(most ? most : 1, sizeof(*scratch));
	out->rounds = mem_calloc(c->nr ? c->nr : 1, sizeof(*out->rounds));
	out->case_id = mem_strndup(c->first->id, strlen(c->first->id));
	if (!rs || !scratch || !out->rounds || !out->case_id) {
		mem_free(rs);
		mem_free(scratch);
		return diag_fail(d, ERR_NOMEM, "out of memory summarising load cells");
	}
	out->open_loop = c->first->open_loop;
	/* a concurrency is a whole number: the summary writes it as one */
	out->level_value = out->open_loop ? c->first->level_value : (double)(long long)c->first->level_value;
	out->has_slo = c->first->has_slo;
	qsort(c->r, c->nr, sizeof(*c->r), by_round);
	for (i = 0; i < c->nr; i++) {
		loadstat_round(c->r[i].q, c->r[i].n, out->has_slo ? &c->first->slo : NULL, scratch, &rs[i]);
		loadstat_round_itl(&rs[i], c->r[i].itl, c->r[i].nitl);
		out->rounds[i].round = c->r[i].round;
	}
	loadstat_cell(rs, c->nr, scratch, &out->s);
	for (i = 0; i < c->nr; i++)
		out->rounds[i].s = rs[i];
	out->nrounds = c->nr;
	mem_free(rs);
	mem_free(scratch);
	return ERR_OK;
}

enum err loadcells_build(const struct loadcells_reqs *reqs, struct loadcells *out, struct diag *d)
{
	struct acc a = {0};
	size_t i;
	enum err e = ERR_OK;

	memset(out, 0, sizeof(*out));
	for (i = 0; reqs && i < reqs->n; i++)
		if (!add(&a, reqs, &reqs->r[i])) {
			acc_free(&a);
			return diag_fail(d, ERR_NOMEM, "out of memory summarising load cells");
		}
	if (a.n && !(out->c = mem_calloc(a.n, sizeof(*out->c))))
		e = diag_fail(d, ERR_NOMEM, "out of memory summarising load cells");
	for (i = 0; i < a.n && !e; i++) {
		out->n++;
		e = fill_cell(&a.c[i], &out->c[i], d);
	}
	acc_free(&a);
	if (e)
		loadcells_free(out);
	return e;
}

void loadcells_free(struct loadcells *lc)
{
	size_t i;

	for (i = 0; i < lc->n; i++) {
		mem_free(lc->c[i].case_id);
		mem_free(lc->c[i].rounds);
		cJSON_Delete(lc->c[i].server);
		mem_free(lc->c[i].stopped);
	}
	mem_free(lc->c);
	cJSON_Delete(lc->client);
	for (i = 0; i < lc->nwarnings; i++)
		mem_free(lc->warnings[i]);
	mem_free(lc->warnings);
	memset(lc, 0, sizeof(*lc));
}

/* ---- the summary's "load" ---- */

static void add_fig(struct json_build *jb, cJSON *o, const char *name,
		    const struct loadstat_fig *f)
{
	char k[64];

	if (!f->n) {
		json_add_null(jb, o, name);
		return;
	}
	json_add_num(jb, o, name, f->median);
	snprintf(k, sizeof(k), "%s_min", name);
	json_add_num(jb, o, k, f->min);
	snprintf(k, sizeof(k), "%s_max", name);
	json_add_num(jb, o, k, f->max);
}

static void add_round(struct json_build *jb, cJSON *arr, const struct loadcells_cell *c,
		      const struct loadcells_round *r)
{
	cJSON *o = json_add_obj(jb, arr, NULL);
	double v;
	int f;

	json_add_int(jb, o, LC_ROUND, r->round);
	json_add_bool(jb, o, LC_VALID, r->s.valid);
	json_add_int(jb, o, LC_REQUESTS, (long long)r->s.requests);
	json_add_int(jb, o, LC_SUCCEEDED, (long long)r->s.succeeded);
	json_add_num(jb, o, LC_WALL_MS, r->s.wall_ms);
	for (f = 0; f < LCF_COUNT; f++)
		if (loadcells_round_fig(c, r, (enum loadcells_fig)f, &v))
			json_add_num(jb, o, figs[f].key, v);
}

static void add_cell(struct json_build *jb, cJSON *cells, const struct loadcells_cell *c)
{
	cJSON *o = json_add_obj(jb, cells, NULL), *arr, *z;
	const struct loadstat_fig *fg;
	size_t i;
	int f;

	json_add_str(jb, o, LC_CASE, c->case_id);
	if (c->open_loop)
		json_add_num(jb, o, LC_RATE, c->level_value);
	else
		json_add_int(jb, o, LC_CONCURRENCY, (long long)c->level_value);
	json_add_int(jb, o, LC_ROUNDS_TOTAL, (long long)c->s.rounds_total);
	json_add_int(jb, o, LC_ROUNDS_VALID, (long long)c->s.rounds_valid);
	json_add_int(jb, o, LC_REQUESTS, (long long)c->s.requests);
	json_add_int(jb, o, LC_SUCCEEDED, (long long)c->s.succeeded);
	json_add_num(jb, o, LC_SUCCESS_RATE, c->s.success_rate);
	for (f = 0; f < LCF_COUNT; f++)
		if ((fg = loadcells_fig(c, (enum loadcells_fig)f)))
			add_fig(jb, o, figs[f].key, fg);
	json_add_num(jb, o, LC_LAG_MAX_MS, c->s.lag_max_ms);
	arr = json_add_arr(jb, o, LC_ROUNDS);
	for (i = 0; i < c->nrounds; i++)
		add_round(jb, arr, c, &c->rounds[i]);
	if (c->has_client) {
		json_add_num(jb, o, LC_CLIENT_CPU_SHARE, c->client_cpu_share);
		json_add_num(jb, o, LC_CLIENT_CPU_SHARE_MAX, c->client_cpu_share_max);
	}
	if (c->has_probe)
		json_add_num(jb, o, LC_CLIENT_PROBE_MS, c->client_probe_ms);
	if (c->server)
		json_add_dup(jb, o, LC_SERVER, c->server);
	if (c->has_sizing) {
		z = json_add_obj(jb, o, LC_SIZING);
		json_add_int(jb, z, LC_MIN_ROUNDS, c->min_rounds);
		json_add_int(jb, z, LC_MAX_ROUNDS, c->max_rounds);
		json_add_int(jb, z, LC_ROUNDS, c->sized_rounds);
		json_add_str(jb, z, LC_STOPPED, c->stopped);
	}
}

enum err loadcells_json(const struct loadcells *lc, cJSON **out, struct diag *d)
{
	struct json_build jb;
	cJSON *cells, *warn;
	size_t i;

	json_build_init(&jb);
	*out = json_new_obj(&jb);
	cells = json_add_arr(&jb, *out, LC_CELLS);
	for (i = 0; i < lc->n; i++)
		add_cell(&jb, cells, &lc->c[i]);
	if (lc->client)
		json_add_dup(&jb, *out, LC_CLIENT, lc->client);
	warn = json_add_arr(&jb, *out, LC_WARNINGS);
	for (i = 0; i < lc->nwarnings; i++)
		json_add_str(&jb, warn, NULL, lc->warnings[i]);
	return json_build_end(&jb, out, "the load cells", d);
}

/* One request of a cell: its round, whether it succeeded, its sample. */
struct tagged {
	long round;
	int ok, has;
	double v;
};

static int by_tag_round(const void *x, const void *y)
{
	long a = ((const struct tagged *)x)->round, b = ((const struct tagged *)y)->round;

	return (a > b) - (a < b);
}

/* Whether request `k` is one of cell `cell`'s. */
static int in_cell(const struct loadcells_kept *k, const struct loadcells_cell *cell)
{
	return !strcmp(k->id, cell->case_id) && k->open_loop == cell->open_loop &&
	       k->level_value == cell->level_value;
}

/* The valid rounds of t[0..n) (sorted by round) into `out`. */
static int fill_rounds(const struct tagged *t, size_t n, struct loadci_set *out)
{
	size_t i = 0, j, k;
	int valid;

	while (i < n) {
		for (j = i, valid = 1; j < n && t[j].round == t[i].round; j++)
			valid &= t[j].ok;
		for (k = i; valid && k < j; k++)
			if (t[k].has && !loadci_set_add(out, t[k].v))
				return 0;
		if (!loadci_set_end_round(out))
			return 0;
		i = j;
	}
	return 1;
}

enum err loadcells_samples(const struct loadcells_reqs *reqs, const struct loadcells_cell *cell,
			   enum loadstat_kind k, struct loadci_set *out, struct diag *d)
{
	struct tagged *t = NULL, *nt;
	const struct loadcells_kept *q;
	size_t i, n = 0, cap = 0;
	int ok = 1;

	loadci_set_reset(out);
	for (i = 0; reqs && i < reqs->n; i++) {
		q = &reqs->r[i];
		if (!in_cell(q, cell))
			continue;
		if (!(nt = grow(t, &cap, n, sizeof(*t)))) {
			ok = 0;
			break;
		}
		t = nt;
		t[n].round = q->round;
		t[n].ok = q->q.ok;
		t[n].has = loadstat_sample(&q->q, k, &t[n].v);
		n++;
	}
	if (ok && n)
		qsort(t, n, sizeof(*t), by_tag_round);
	ok = ok && fill_rounds(t, n, out);
	mem_free(t);
	return ok ? ERR_OK : diag_fail(d, ERR_NOMEM, "out of memory reading load samples");
}

enum err loadcells_sizing(struct loadcells *lc, const cJSON *manifest, struct diag *d)
{
	const cJSON *e, *rate, *id, *stop;
	struct loadcells_cell *c;
	size_t i;

	for (i = 0; i < lc->n; i++) {
		c = &lc->c[i];
		cJSON_ArrayForEach(e, jget(manifest, LC_LOAD_SIZING)) {
			rate = jget(e, LC_RATE);
			id = jget(e, LC_CASE);
			stop = jget(e, LC_STOPPED);
			if (!cJSON_IsString(id) || !cJSON_IsString(stop) || strcmp(id->valuestring, c->case_id) ||
			    (cJSON_IsNumber(rate) ? !c->open_loop || c->level_value != rate->valuedouble
						  : c->open_loop || c->level_value != jget_num(e, LC_CONCURRENCY)))
				continue;
			if (!(c->stopped = mem_strndup(stop->valuestring, strlen(stop->valuestring))))
				return diag_fail(d, ERR_NOMEM, "out of memory summarising load cells");
			c->has_sizing = 1;
			c->min_rounds = (long)jget_num(e, LC_MIN_ROUNDS);
			c->max_rounds = (long)jget_num(e, LC_MAX_ROUNDS);
			c->sized_rounds = (long)jget_num(e, LC_ROUNDS);
			break;
		}
	}
	return ERR_OK;
}

void loadcells_level(const struct loadcells_cell *c, char *out, size_t cap)
{
	if (c->open_loop)
		snprintf(out, cap, "r%g", c->level_value);
	else
		snprintf(out, cap, "c%.0f", c->level_value);
}

void loadcells_name(const struct loadcells_cell *c, char *out, size_t cap)
{
	char level[64];

	loadcells_level(c, level, sizeof(level));
	snprintf(out, cap, "%s/%s", c->case_id, level);
}

const struct loadcells_cell *loadcells_find(const struct loadcells *lc, const char *name)
{
	char n[320];
	size_t i;

	for (i = 0; lc && i < lc->n; i++) {
		loadcells_name(&lc->c[i], n, sizeof(n));
		if (!strcmp(n, name))
			return &lc->c[i];
	}
	return NULL;
}

/* A figure with its range over rounds when that is not a point ("-" when
 * there is no figure). */
static enum err put_fig(struct buf *b, const struct loadcells_cell *c, enum loadcells_fig f,
			const char *fmt)
{
	const struct loadstat_fig *v = loadcells_fig(c, f);

	if (!v || !v->n)
		return buf_puts(b, " - |");
	if (buf_putc(b, ' ') || buf_printf(b, fmt, v->median))
		return ERR_NOMEM;
	if (v->min != v->max && (buf_puts(b, " (") || buf_printf(b, fmt, v->min) || buf_putc(b, '-') ||
				 buf_printf(b, fmt, v->max) || buf_putc(b, ')')))
		return ERR_NOMEM;
	return buf_puts(b, " |");
}

static enum err md_row(struct buf *b, const struct loadcells_cell *c)
{
	char level[64];
	enum err e;

	loadcells_level(c, level, sizeof(level));
	e = buf_puts(b, "| ");
	if (!e)
		e = md_cell(b, c->case_id);
	if (!e)
		e = buf_printf(b, " | %s |", level);
	if (!e)
		e = buf_printf(b, " %zu/%zu | %zu/%zu |", c->s.rounds_valid, c->s.rounds_total, c->s.succeeded,
			       c->s.requests);
	if (!e)
		e = put_fig(b, c, LCF_OUTPUT_TPS, "%.1f");
	if (!e)
		e = put_fig(b, c, LCF_TTFT_P50_MS, "%.0f");
	if (!e)
		e = put_fig(b, c, LCF_TTFT_P95_MS, "%.0f");
	if (!e)
		e = put_fig(b, c, LCF_TPOT_P95_MS, "%.1f");
	if (!e)
		e = put_fig(b, c, LCF_ITL_P95_MS, "%.1f");
	if (!e)
		e = put_fig(b, c, LCF_E2E_P50_MS, "%.0f");
	if (!e)
		e = put_fig(b, c, LCF_TTFC_P50_MS, "%.0f");
	if (!e)
		e = put_fig(b, c, LCF_ACHIEVED_RATE, "%.3f");
	if (!e)
		e = put_fig(b, c, LCF_SLO_ATTAINMENT, "%.3f");
	if (!e)
		e = put_fig(b, c, LCF_LAG_P99_MS, "%.1f");
	return e ? e : buf_puts(b, "\n");
}

enum err loadcells_markdown(const struct loadcells *lc, struct buf *out)
{
	enum err e;
	size_t i;

	if (!lc->n)
		return ERR_OK;
	e = buf_puts(out, "\n## Load\n\nMedians over valid rounds (min-max over them); a round is valid only "
		     "when every request passed. TTFT to the first non-empty generated fragment, reasoning "
		     "included; TPOT per request (last - first fragment) / (tokens - 1); ITL the gaps between "
		     "token chunks, pooled over a round's requests; TTFC to the first content or tool call.\n\n"
		     "| case | level | valid rounds | succeeded | output tok/s | TTFT P50 ms | TTFT P95 ms "
		     "| TPOT P95 ms | ITL P95 ms | E2E P50 ms | TTFC P50 ms | achieved req/s | SLO attainment "
		     "| lag P99 ms |\n"
		     "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (i = 0; !e && i < lc->n; i++)
		e = md_row(out, &lc->c[i]);
	for (i = 0; i < lc->n && lc->c[i].open_loop; i++)
		;
	if (!e && i < lc->n)
		e = buf_puts(out, "\n[load.png](load.png): output throughput and TTFT P95 against concurrency, "
			     "each case as multiples of its lowest level (C1).\n");
	return e;
}
