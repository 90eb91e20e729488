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

struct rnd {
	long round;
	struct loadstat_req *q; /* owned */
	size_t n, cap;
	double *itl;            /* owned: its successful requests' itl_ms, pooled */
	size_t nitl, citl;
};

struct cell {
	const char *id;         /* borrowed from a record */
	long level;
	const cJSON *first;     /* the first record's "load", for the level's value */
	struct loadstat_slo slo;
	int has_slo;
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

static struct cell *find_cell(struct acc *a, const char *id, long level, const cJSON *load)
{
	const cJSON *slo = jget(load, "slo");
	struct cell *c;
	size_t i;

	for (i = 0; i < a->n; i++)
		if (a->c[i].level == level && !strcmp(a->c[i].id, id))
			return &a->c[i];
	if (!(c = grow(a->c, &a->cap, a->n, sizeof(*c))))
		return NULL;
	a->c = c;
	c = &a->c[a->n++];
	memset(c, 0, sizeof(*c));
	c->id = id;
	c->level = level;
	c->first = load;
	c->has_slo = cJSON_IsObject(slo);
	c->slo.ttft_ms = jget_num(slo, "ttft_ms");
	c->slo.tpot_ms = jget_num(slo, "tpot_ms");
	c->slo.e2e_ms = jget_num(slo, "e2e_ms");
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

/* The inter-token latencies of a successful request, onto its round's. */
static int add_itl(struct rnd *r, const cJSON *gaps)
{
	const cJSON *g;
	double *p;

	cJSON_ArrayForEach(g, gaps) {
		if (!cJSON_IsNumber(g))
			continue;
		if (r->nitl == r->citl) {
			if (!(p = mem_grow(r->itl, &r->citl, sizeof(*p), 256)))
				return 0;
			r->itl = p;
		}
		r->itl[r->nitl++] = g->valuedouble;
	}
	return 1;
}

static int add(struct acc *a, const cJSON *rec)
{
	const cJSON *load = jget(rec, "load"), *id = jget(rec, "case");
	struct loadstat_req one, *q;
	struct cell *c;
	struct rnd *r;

	if (!cJSON_IsString(id) || !loadstat_request(rec, &one))
		return 1;
	if (!(c = find_cell(a, id->valuestring, (long)jget_num(load, "level"), load)) ||
	    !(r = find_round(c, (long)jget_num(load, "round"))) ||
	    !(q = grow(r->q, &r->cap, r->n, sizeof(*q))))
		return 0;
	r->q = q;
	r->q[r->n++] = one;
	return one.ok ? add_itl(r, jget(load, "itl_ms")) : 1;
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

	json_add_int(jb, o, "round", round);
	json_add_bool(jb, o, "valid", r->valid);
	json_add_int(jb, o, "requests", (long long)r->requests);
	json_add_int(jb, o, "succeeded", (long long)r->succeeded);
	json_add_num(jb, o, "wall_ms", r->wall_ms);
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

/* The level's value as the records give it: "concurrency" or "rate". */
static void add_level(struct json_build *jb, cJSON *o, const struct cell *c, int *open)
{
	const cJSON *rate = jget(c->first, "rate");

	json_add_str(jb, o, "case", c->id);
	*open = cJSON_IsNumber(rate);
	if (*open)
		json_add_num(jb, o, "rate", rate->valuedouble);
	else
		json_add_int(jb, o, "concurrency", (long long)jget_num(c->first, "concurrency"));
}

static void add_figures(struct json_build *jb, cJSON *o, const struct loadstat_cell *s,
			int open, int has_slo)
{
	json_add_int(jb, o, LC_ROUNDS_TOTAL, (long long)s->rounds_total);
	json_add_int(jb, o, LC_ROUNDS_VALID, (long long)s->rounds_valid);
	json_add_int(jb, o, "requests", (long long)s->requests);
	json_add_int(jb, o, "succeeded", (long long)s->succeeded);
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
		loadstat_round(c->r[i].q, c->r[i].n, c->has_slo ? &c->slo : NULL, scratch, &rs[i]);
		loadstat_round_itl(&rs[i], c->r[i].itl, c->r[i].nitl);
	}
	loadstat_cell(rs, c->nr, scratch, &s);
	add_figures(jb, o, &s, open, c->has_slo);
	arr = json_add_arr(jb, o, "rounds");
	for (i = 0; i < c->nr; i++)
		add_round(jb, arr, c->r[i].round, &rs[i], open, c->has_slo);
	mem_free(rs);
	mem_free(scratch);
	return ERR_OK;
}

enum err loadcells_build(const cJSON *records, cJSON **out, struct diag *d)
{
	struct acc a = {0};
	struct json_build jb;
	const cJSON *rec;
	cJSON *cells;
	size_t i;
	enum err e = ERR_OK;

	*out = NULL;
	cJSON_ArrayForEach(rec, records)
		if (!add(&a, rec)) {
			acc_free(&a);
			return diag_fail(d, ERR_NOMEM, "out of memory summarising load cells");
		}
	if (!a.n) {
		acc_free(&a);
		return ERR_OK;
	}
	json_build_init(&jb);
	*out = json_new_obj(&jb);
	cells = json_add_arr(&jb, *out, "cells");
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

/* Whether load record `rec` is a counted request of cell `cell`. */
static int in_cell(const cJSON *rec, const cJSON *cell)
{
	const cJSON *load = jget(rec, "load"), *id = jget(rec, "case"), *rate = jget(load, "rate");
	const cJSON *want = jget(cell, "rate");

	if (!cJSON_IsObject(load) || !cJSON_IsString(id) || jget_num(load, "round") < 1 ||
	    strcmp(id->valuestring, jget(cell, "case")->valuestring))
		return 0;
	if (cJSON_IsNumber(want))
		return cJSON_IsNumber(rate) && rate->valuedouble == want->valuedouble;
	return !cJSON_IsNumber(rate) && jget_num(load, "concurrency") == jget_num(cell, "concurrency");
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

enum err loadcells_samples(const cJSON *records, const cJSON *cell, enum loadstat_kind k,
			   struct loadci_set *out, struct diag *d)
{
	struct tagged *t = NULL, *nt;
	struct loadstat_req q;
	const cJSON *rec;
	size_t n = 0, cap = 0;
	int ok = 1;

	loadci_set_reset(out);
	cJSON_ArrayForEach(rec, records) {
		if (!in_cell(rec, cell) || !loadstat_request(rec, &q))
			continue;
		if (!(nt = grow(t, &cap, n, sizeof(*t)))) {
			ok = 0;
			break;
		}
		t = nt;
		t[n].round = (long)jget_num(jget(rec, "load"), "round");
		t[n].ok = q.ok;
		t[n].has = loadstat_sample(&q, k, &t[n].v);
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
	cJSON_ArrayForEach(c, jget(load, "cells")) {
		cJSON_ArrayForEach(e, jget(manifest, "load_sizing")) {
			rate = jget(e, "rate");
			id = jget(e, "case");
			stop = jget(e, "stopped");
			if (!cJSON_IsString(id) || !cJSON_IsString(stop) || !cJSON_IsString(jget(c, "case")) ||
			    strcmp(id->valuestring, jget(c, "case")->valuestring) ||
			    (cJSON_IsNumber(rate) ? jget_num(c, "rate") != rate->valuedouble
						  : jget_num(c, "concurrency") != jget_num(e, "concurrency")))
				continue;
			o = json_add_obj(&jb, c, "sizing");
			json_add_int(&jb, o, "min_rounds", (long long)jget_num(e, "min_rounds"));
			json_add_int(&jb, o, "max_rounds", (long long)jget_num(e, "max_rounds"));
			json_add_int(&jb, o, "rounds", (long long)jget_num(e, "rounds"));
			json_add_str(&jb, o, "stopped", stop->valuestring);
			break;
		}
	}
	return json_build_end(&jb, NULL, "the load cells", d);
}

void loadcells_name(const cJSON *c, char *out, size_t cap)
{
	const cJSON *rate = jget(c, "rate"), *id = jget(c, "case");
	const char *s = cJSON_IsString(id) ? id->valuestring : "?";

	if (cJSON_IsNumber(rate))
		snprintf(out, cap, "%s/r%g", s, rate->valuedouble);
	else
		snprintf(out, cap, "%s/c%.0f", s, jget_num(c, "concurrency"));
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
	const cJSON *rate = jget(c, "rate");
	enum err e;

	e = buf_puts(b, "| ");
	if (!e)
		e = md_cell(b, cJSON_IsString(jget(c, "case")) ? jget(c, "case")->valuestring : "?");
	if (!e && cJSON_IsNumber(rate))
		e = buf_printf(b, " | r%g |", rate->valuedouble);
	else if (!e)
		e = buf_printf(b, " | c%.0f |", jget_num(c, "concurrency"));
	if (!e)
		e = buf_printf(b, " %.0f/%.0f | %.0f/%.0f |", jget_num(c, LC_ROUNDS_VALID),
			       jget_num(c, LC_ROUNDS_TOTAL), jget_num(c, "succeeded"), jget_num(c, "requests"));
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
	const cJSON *c, *load = jget(summary, "load");
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
	cJSON_ArrayForEach(c, jget(load, "cells"))
		if (!e)
			e = md_row(out, c);
	cJSON_ArrayForEach(c, jget(load, "cells"))
		if (cJSON_IsNumber(jget(c, "concurrency")))
			break;
	if (!e && c)
		e = buf_puts(out, "\n[load.png](load.png): output throughput and TTFT P95 against concurrency, "
			     "each case as multiples of its lowest level (C1).\n");
	return e;
}
