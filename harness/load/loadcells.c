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

static void add_round(struct json_build *jb, cJSON *arr, long round,
		      const struct loadstat_round *r, int open, int has_slo)
{
	cJSON *o = json_add_obj(jb, arr, NULL);

	json_add_int(jb, o, LC_ROUND, round);
	json_add_bool(jb, o, LC_VALID, r->valid);
	json_add_int(jb, o, LC_REQUESTS, (long long)r->requests);
	json_add_int(jb, o, LC_SUCCEEDED, (long long)r->succeeded);
	json_add_num(jb, o, LC_WALL_MS, r->wall_ms);
	json_add_num(jb, o, LC_OUTPUT_TPS, r->output_tps);
	json_add_num(jb, o, LC_TTFT_P50_MS, r->ttft_p50_ms);
	json_add_num(jb, o, LC_TTFT_P95_MS, r->ttft_p95_ms);
	json_add_num(jb, o, LC_TTFC_P50_MS, r->ttfc_p50_ms);
	json_add_num(jb, o, LC_TPOT_P95_MS, r->tpot_p95_ms);
	json_add_num(jb, o, LC_E2E_P50_MS, r->e2e_p50_ms);
	if (open)
		json_add_num(jb, o, LC_ACHIEVED_RATE, r->achieved_rate);
	if (open || has_slo) {
		json_add_num(jb, o, LC_SLO_ATTAINMENT, r->slo_attainment);
		json_add_num(jb, o, LC_GOODPUT_RPS, r->goodput_rps);
	}
	json_add_num(jb, o, LC_LAG_P99_MS, r->lag_p99_ms);
}

/* The level's value as its first request gives it: "concurrency" or
 * "rate". */
static void add_level(struct json_build *jb, cJSON *o, const struct cell *c, int *open)
{
	json_add_str(jb, o, LC_CASE, c->first->id);
	*open = c->first->open_loop;
	if (*open)
		json_add_num(jb, o, LC_RATE, c->first->level_value);
	else
		json_add_int(jb, o, LC_CONCURRENCY, (long long)c->first->level_value);
}

static void add_figures(struct json_build *jb, cJSON *o, const struct loadstat_cell *s,
			int open, int has_slo)
{
	json_add_int(jb, o, LC_ROUNDS_TOTAL, (long long)s->rounds_total);
	json_add_int(jb, o, LC_ROUNDS_VALID, (long long)s->rounds_valid);
	json_add_int(jb, o, LC_REQUESTS, (long long)s->requests);
	json_add_int(jb, o, LC_SUCCEEDED, (long long)s->succeeded);
	json_add_num(jb, o, LC_SUCCESS_RATE, s->success_rate);
	add_fig(jb, o, LC_OUTPUT_TPS, &s->output_tps);
	add_fig(jb, o, LC_TTFT_P50_MS, &s->ttft_p50_ms);
	add_fig(jb, o, LC_TTFT_P95_MS, &s->ttft_p95_ms);
	add_fig(jb, o, LC_TTFT_P99_MS, &s->ttft_p99_ms);
	add_fig(jb, o, LC_TTFC_P50_MS, &s->ttfc_p50_ms);
	add_fig(jb, o, LC_TTFC_P95_MS, &s->ttfc_p95_ms);
	add_fig(jb, o, LC_TPOT_P50_MS, &s->tpot_p50_ms);
	add_fig(jb, o, LC_TPOT_P95_MS, &s->tpot_p95_ms);
	add_fig(jb, o, LC_E2E_P50_MS, &s->e2e_p50_ms);
	add_fig(jb, o, LC_E2E_P95_MS, &s->e2e_p95_ms);
	add_fig(jb, o, LC_ITL_P50_MS, &s->itl_p50_ms);
	add_fig(jb, o, LC_ITL_P95_MS, &s->itl_p95_ms);
	add_fig(jb, o, LC_ITL_P99_MS, &s->itl_p99_ms);
	if (open)
		add_fig(jb, o, LC_ACHIEVED_RATE, &s->achieved_rate);
	if (open || has_slo) {
		add_fig(jb, o, LC_SLO_ATTAINMENT, &s->slo_attainment);
		add_fig(jb, o, LC_GOODPUT_RPS, &s->goodput_rps);
	}
	add_fig(jb, o, LC_LAG_P99_MS, &s->lag_p99_ms);
	json_add_num(jb, o, LC_LAG_MAX_MS, s->lag_max_ms);
}

static enum err add_cell(struct json_build *jb, cJSON *cells, struct cell *c, struct diag *d)
{
	struct loadstat_round *rs = mem_calloc(c->nr ? c->nr : 1, sizeof(*rs));
	double *scratch = NULL;
	struct loadstat_cell s;
	size_t i, most = c->nr;
	cJSON *o, *arr;
	int open;

	for (i = 0; i < c->nr; i++)
		most = c->r[i].n > most ? c->r[i].n : most;
	scratch = mem_calloc(most ? most : 1, sizeof(*scratch));
	if (!rs || !scratch) {
		mem_free(rs);
		mem_free(scratch);
		return diag_fail(d, ERR_NOMEM, "out of memory summarising load cells");
	}
	qsort(c->r, c->nr, sizeof(*c->r), by_round);
	o = json_add_obj(jb, cells, NULL);
	add_level(jb, o, c, &open);
	for (i = 0; i < c->nr; i++) {
		loadstat_round(c->r[i].q, c->r[i].n, c->first->has_slo ? &c->first->slo : NULL, scratch, &rs[i]);
		loadstat_round_itl(&rs[i], c->r[i].itl, c->r[i].nitl);
	}
	loadstat_cell(rs, c->nr, scratch, &s);
	add_figures(jb, o, &s, open, c->first->has_slo);
	arr = json_add_arr(jb, o, LC_ROUNDS);
	for (i = 0; i < c->nr; i++)
		add_round(jb, arr, c->r[i].round, &rs[i], open, c->first->has_slo);
	mem_free(rs);
	mem_free(scratch);
	return ERR_OK;
}

enum err loadcells_build(const struct loadcells_reqs *reqs, cJSON **out, struct diag *d)
{
	struct acc a = {0};
	struct json_build jb;
	cJSON *cells;
	size_t i;
	enum err e = ERR_OK;

	*out = NULL;
	for (i = 0; reqs && i < reqs->n; i++)
		if (!add(&a, reqs, &reqs->r[i])) {
			acc_free(&a);
			return diag_fail(d, ERR_NOMEM, "out of memory summarising load cells");
		}
	if (!a.n) {
		acc_free(&a);
		return ERR_OK;
	}
	json_build_init(&jb);
	*out = json_new_obj(&jb);
	cells = json_add_arr(&jb, *out, LC_CELLS);
	for (i = 0; i < a.n && !e; i++)
		e = add_cell(&jb, cells, &a.c[i], d);
	acc_free(&a);
	if (e) {
		cJSON_Delete(*out);
		*out = NULL;
		return e;
	}
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
static int in_cell(const struct loadcells_kept *k, const cJSON *cell)
{
	const cJSON *want = jget(cell, LC_RATE);

	if (strcmp(k->id, jget(cell, LC_CASE)->valuestring))
		return 0;
	if (cJSON_IsNumber(want))
		return k->open_loop && k->level_value == want->valuedouble;
	return !k->open_loop && k->level_value == jget_num(cell, LC_CONCURRENCY);
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

enum err loadcells_samples(const struct loadcells_reqs *reqs, const cJSON *cell,
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

enum err loadcells_sizing(cJSON *load, const cJSON *manifest, struct diag *d)
{
	const cJSON *e, *rate, *id, *stop;
	cJSON *c, *o;
	struct json_build jb;

	json_build_init(&jb);
	cJSON_ArrayForEach(c, jget(load, LC_CELLS)) {
		cJSON_ArrayForEach(e, jget(manifest, LC_LOAD_SIZING)) {
			rate = jget(e, LC_RATE);
			id = jget(e, LC_CASE);
			stop = jget(e, LC_STOPPED);
			if (!cJSON_IsString(id) || !cJSON_IsString(stop) || !cJSON_IsString(jget(c, LC_CASE)) ||
			    strcmp(id->valuestring, jget(c, LC_CASE)->valuestring) ||
			    (cJSON_IsNumber(rate) ? jget_num(c, LC_RATE) != rate->valuedouble
						  : jget_num(c, LC_CONCURRENCY) != jget_num(e, LC_CONCURRENCY)))
				continue;
			o = json_add_obj(&jb, c, LC_SIZING);
			json_add_int(&jb, o, LC_MIN_ROUNDS, (long long)jget_num(e, LC_MIN_ROUNDS));
			json_add_int(&jb, o, LC_MAX_ROUNDS, (long long)jget_num(e, LC_MAX_ROUNDS));
			json_add_int(&jb, o, LC_ROUNDS, (long long)jget_num(e, LC_ROUNDS));
			json_add_str(&jb, o, LC_STOPPED, stop->valuestring);
			break;
		}
	}
	return json_build_end(&jb, NULL, "the load cells", d);
}

void loadcells_name(const cJSON *c, char *out, size_t cap)
{
	const cJSON *rate = jget(c, LC_RATE), *id = jget(c, LC_CASE);
	const char *s = cJSON_IsString(id) ? id->valuestring : "?";

	if (cJSON_IsNumber(rate))
		snprintf(out, cap, "%s/r%g", s, rate->valuedouble);
	else
		snprintf(out, cap, "%s/c%.0f", s, jget_num(c, LC_CONCURRENCY));
}

cJSON *loadcells_find(const cJSON *cells, const char *name)
{
	char n[320];
	cJSON *c;

	cJSON_ArrayForEach(c, cells) {
		loadcells_name(c, n, sizeof(n));
		if (!strcmp(n, name))
			return c;
	}
	return NULL;
}

/* A figure with its range over rounds when that is not a point ("-" when
 * there is no figure). */
static enum err put_fig(struct buf *b, const cJSON *cell, const char *name, const char *fmt)
{
	char kmin[64], kmax[64];
	const cJSON *v = jget(cell, name);
	double lo, hi;

	if (!cJSON_IsNumber(v))
		return buf_puts(b, " - |");
	snprintf(kmin, sizeof(kmin), "%s_min", name);
	snprintf(kmax, sizeof(kmax), "%s_max", name);
	lo = jget_num(cell, kmin);
	hi = jget_num(cell, kmax);
	if (buf_putc(b, ' ') || buf_printf(b, fmt, v->valuedouble))
		return ERR_NOMEM;
	if (lo != hi && (buf_puts(b, " (") || buf_printf(b, fmt, lo) || buf_putc(b, '-') ||
			 buf_printf(b, fmt, hi) || buf_putc(b, ')')))
		return ERR_NOMEM;
	return buf_puts(b, " |");
}

static enum err md_row(struct buf *b, const cJSON *c)
{
	const cJSON *rate = jget(c, LC_RATE);
	enum err e;

	e = buf_puts(b, "| ");
	if (!e)
		e = md_cell(b, cJSON_IsString(jget(c, LC_CASE)) ? jget(c, LC_CASE)->valuestring : "?");
	if (!e && cJSON_IsNumber(rate))
		e = buf_printf(b, " | r%g |", rate->valuedouble);
	else if (!e)
		e = buf_printf(b, " | c%.0f |", jget_num(c, LC_CONCURRENCY));
	if (!e)
		e = buf_printf(b, " %.0f/%.0f | %.0f/%.0f |", jget_num(c, LC_ROUNDS_VALID),
			       jget_num(c, LC_ROUNDS_TOTAL), jget_num(c, LC_SUCCEEDED), jget_num(c, LC_REQUESTS));
	if (!e)
		e = put_fig(b, c, LC_OUTPUT_TPS, "%.1f");
	if (!e)
		e = put_fig(b, c, LC_TTFT_P50_MS, "%.0f");
	if (!e)
		e = put_fig(b, c, LC_TTFT_P95_MS, "%.0f");
	if (!e)
		e = put_fig(b, c, LC_TPOT_P95_MS, "%.1f");
	if (!e)
		e = put_fig(b, c, LC_ITL_P95_MS, "%.1f");
	if (!e)
		e = put_fig(b, c, LC_E2E_P50_MS, "%.0f");
	if (!e)
		e = put_fig(b, c, LC_TTFC_P50_MS, "%.0f");
	if (!e)
		e = put_fig(b, c, LC_ACHIEVED_RATE, "%.3f");
	if (!e)
		e = put_fig(b, c, LC_SLO_ATTAINMENT, "%.3f");
	if (!e)
		e = put_fig(b, c, LC_LAG_P99_MS, "%.1f");
	return e ? e : buf_puts(b, "\n");
}

enum err loadcells_markdown(const cJSON *summary, struct buf *out)
{
	const cJSON *c, *load = jget(summary, LC_LOAD);
	enum err e;

	if (!load)
		return ERR_OK;
	e = buf_puts(out, "\n## Load\n\nMedians over valid rounds (min-max over them); a round is valid only "
		     "when every request passed. TTFT to the first non-empty generated fragment, reasoning "
		     "included; TPOT per request (last - first fragment) / (tokens - 1); ITL the gaps between "
		     "token chunks, pooled over a round's requests; TTFC to the first content or tool call.\n\n"
		     "| case | level | valid rounds | succeeded | output tok/s | TTFT P50 ms | TTFT P95 ms "
		     "| TPOT P95 ms | ITL P95 ms | E2E P50 ms | TTFC P50 ms | achieved req/s | SLO attainment "
		     "| lag P99 ms |\n"
		     "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	cJSON_ArrayForEach(c, jget(load, LC_CELLS))
		if (!e)
			e = md_row(out, c);
	cJSON_ArrayForEach(c, jget(load, LC_CELLS))
		if (cJSON_IsNumber(jget(c, LC_CONCURRENCY)))
			break;
	if (!e && c)
		e = buf_puts(out, "\n[load.png](load.png): output throughput and TTFT P95 against concurrency, "
			     "each case as multiples of its lowest level (C1).\n");
	return e;
}
