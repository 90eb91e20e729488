/*
 * loadplot — see loadplot.h.
 */
#include "loadplot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "chart.h"

static const unsigned char palette[][3] = {
	{230, 120, 20}, {120, 60, 170}, {40, 110, 200}, {40, 150, 70},
	{200, 40, 40}, {0, 140, 140}, {140, 90, 40}, {60, 60, 60}};
#define NPALETTE (sizeof(palette) / sizeof(palette[0]))

/* The panels' frame: levels on x (shared), multiples on y (per panel). */
struct frame {
	double *levels;    /* owned while drawing */
	int nlevels;
	struct chart_panel p[2]; /* throughput, TTFT P95 */
	int values;        /* label each point with its figure (few cases) */
};

void loadplot_size(int ncases, int *w, int *h)
{
	*w = 2 * (LOADPLOT_LEFT + LOADPLOT_PANEL_W) + 24;
	*h = LOADPLOT_TOP + LOADPLOT_PANEL_H + LOADPLOT_BOTTOM + 16 +
	     (ncases > 0 ? ncases : 0) * LOADPLOT_LEGEND_ROW;
}

static int missing(double v)
{
	return !(v > 0) || !isfinite(v);
}

/* v[i] over the figure of the lowest level that has one; NaN if none. */
static double ratio(const double *v, int n, int i)
{
	int b;

	for (b = 0; b < n && missing(v[b]); b++)
		;
	if (b == n || missing(v[i]))
		return NAN;
	return v[i] / v[b];
}

/* bound[i] (a min or a max) over the lowest level's median of `v`; NaN
 * when either is missing or there is no bound. */
static double ratio_of(const double *bound, const double *v, int n, int i)
{
	double base = ratio(v, n, i);

	if (!bound || missing(bound[i]) || !isfinite(base))
		return NAN;
	return bound[i] / (v[i] / base);
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

/* The distinct levels of all cases, ascending. ERR_NOMEM. */
static enum err frame_levels(struct frame *f, const struct loadplot_case *c, int n,
			     struct diag *d)
{
	size_t most = 1;
	int i, j, k;

	for (i = 0; i < n; i++)
		most += (size_t)(c[i].n > 0 ? c[i].n : 0);
	f->nlevels = 0;
	if (!(f->levels = mem_calloc(most, sizeof(double))))
		return diag_fail(d, ERR_NOMEM, "out of memory drawing load.png");
	for (i = 0; i < n; i++)
		for (j = 0; j < c[i].n; j++) {
			for (k = 0; k < f->nlevels && f->levels[k] != c[i].concurrency[j]; k++)
				;
			if (k == f->nlevels)
				f->levels[f->nlevels++] = c[i].concurrency[j];
		}
	qsort(f->levels, (size_t)f->nlevels, sizeof(double), cmp_double);
	return ERR_OK;
}

/* Each panel's place and y scale: at least 0..2, with at most 6 grid lines
 * above 0, so TTFT growing 300 times does not flatten throughput. */
static void frame_scale(struct frame *f, const struct loadplot_case *c, int n)
{
	double most[2] = {2, 2};
	int i, j, k;

	for (i = 0; i < n; i++)
		for (j = 0; j < c[i].n; j++) {
			double a = fmax(ratio(c[i].tps, c[i].n, j), ratio_of(c[i].tps_max, c[i].tps, c[i].n, j));
			double b = fmax(ratio(c[i].ttft_p95, c[i].n, j),
					ratio_of(c[i].ttft_max, c[i].ttft_p95, c[i].n, j));
			most[0] = a > most[0] ? a : most[0];
			most[1] = b > most[1] ? b : most[1];
		}
	for (k = 0; k < 2; k++) {
		f->p[k] = (struct chart_panel){k * (LOADPLOT_LEFT + LOADPLOT_PANEL_W) + LOADPLOT_LEFT,
					       LOADPLOT_TOP + LOADPLOT_PANEL_H, LOADPLOT_PANEL_W,
					       LOADPLOT_PANEL_H, f->nlevels, 0, 0};
		chart_scale(&f->p[k], most[k], 6);
	}
	f->values = n <= LOADPLOT_VALUES_MAX;
}

/* The place of `level` among the frame's levels. */
static int level_k(const struct frame *f, double level)
{
	int k;

	for (k = 0; k < f->nlevels && f->levels[k] != level; k++)
		;
	return k;
}

/* Panel `panel`'s frame, its levels labelled "C1", "C8", ... */
static enum err draw_panel(struct canvas *cv, const struct frame *f, int panel, const char *name,
			   struct diag *d)
{
	char (*t)[32] = mem_calloc((size_t)f->nlevels + 1, sizeof(*t));
	const char **labels = mem_calloc((size_t)f->nlevels + 1, sizeof(*labels));
	int k;

	if (!t || !labels) {
		mem_free(t);
		mem_free(labels);
		return diag_fail(d, ERR_NOMEM, "out of memory drawing load.png");
	}
	for (k = 0; k < f->nlevels; k++) {
		snprintf(t[k], sizeof(t[k]), "C%g", f->levels[k]);
		labels[k] = t[k];
	}
	chart_frame(cv, &f->p[panel], name, 20, "X", labels, NULL, "CONCURRENCY");
	mem_free(t);
	mem_free(labels);
	return ERR_OK;
}

/* One case's line in one panel: v are its figures, lo and hi their min and
 * max over rounds (or NULL), as multiples of its lowest level's; each point
 * labelled with its figure in its unit ("677 TOK/S", "7.6 MS") when the
 * picture has few cases. `pt` has room for the case's levels. */
static void draw_series(struct canvas *cv, const struct frame *f, int panel,
			const struct loadplot_case *c, const double *v, const double *lo,
			const double *hi, const unsigned char rgb[3], struct chart_point *pt,
			char (*t)[32])
{
	const struct chart_style s = {rgb, 0, 2, 2, 1};
	int j;

	for (j = 0; j < c->n; j++) {
		pt[j] = (struct chart_point){level_k(f, c->concurrency[j]), ratio(v, c->n, j),
					     ratio_of(lo, v, c->n, j), ratio_of(hi, v, c->n, j), NULL};
		if (f->values) {
			snprintf(t[j], sizeof(t[j]), panel ? (v[j] < 10 ? "%.1f MS" : "%.0f MS") : "%.0f TOK/S",
				 v[j]);
			pt[j].label = t[j];
		}
	}
	chart_series(cv, &f->p[panel], pt, c->n, &s);
}

static void draw_legend(struct canvas *cv, const struct loadplot_case *c, int n)
{
	int top = LOADPLOT_TOP + LOADPLOT_PANEL_H + LOADPLOT_BOTTOM + 8, i;

	for (i = 0; i < n; i++)
		chart_key(cv, LOADPLOT_LEFT, top + i * LOADPLOT_LEGEND_ROW, palette[(size_t)i % NPALETTE],
			  c[i].name ? c[i].name : "?");
}

enum err loadplot_png(const struct loadplot_case *c, int n, const char *title,
		      struct buf *png, struct diag *d)
{
	struct frame f;
	struct canvas *cv = NULL;
	struct chart_point *pt = NULL;
	char (*t)[32] = NULL;
	int w, h, i, most = 1;
	enum err e;

	if (n > LOADPLOT_MAX_CASES)
		return diag_fail(d, ERR_LIMIT, "load.png: more than %d load cases", LOADPLOT_MAX_CASES);
	if ((e = frame_levels(&f, c, n, d)))
		return e;
	frame_scale(&f, c, n);
	loadplot_size(n, &w, &h);
	for (i = 0; i < n; i++)
		most = c[i].n > most ? c[i].n : most;
	if (!(pt = mem_calloc((size_t)most, sizeof(*pt))) || !(t = mem_calloc((size_t)most, sizeof(*t))))
		e = diag_fail(d, ERR_NOMEM, "out of memory drawing load.png");
	if (e || (e = canvas_new(w, h, chart_white, &cv, d)))
		goto out;
	canvas_text(cv, 12, 12, 2, "LOAD: THROUGHPUT AND TTFT P95 AGAINST CONCURRENCY", chart_black);
	if (title)
		canvas_text(cv, 12, 36, 1, title, chart_black);
	canvas_text(cv, 12, 52, 1, "EACH LINE AS MULTIPLES OF ITS CASE AT ITS LOWEST LEVEL (1X = C1 IN A C1 MATRIX); EACH PANEL ITS OWN SCALE",
		    chart_black);
	if ((e = draw_panel(cv, &f, 0, "OUTPUT THROUGHPUT (TOK/S)", d)) ||
	    (e = draw_panel(cv, &f, 1, "TTFT P95", d)))
		goto out;
	for (i = 0; i < n; i++) {
		draw_series(cv, &f, 0, &c[i], c[i].tps, c[i].tps_min, c[i].tps_max,
			    palette[(size_t)i % NPALETTE], pt, t);
		draw_series(cv, &f, 1, &c[i], c[i].ttft_p95, c[i].ttft_min, c[i].ttft_max,
			    palette[(size_t)i % NPALETTE], pt, t);
	}
	draw_legend(cv, c, n);
	e = canvas_png(cv, png, d);
out:
	canvas_free(cv);
	mem_free(pt);
	mem_free(t);
	mem_free(f.levels);
	return e;
}

/* ---- from a summary ---- */

/* A level's figures: its concurrency, then NFIGS figures: output
 * throughput and TTFT P95, then their min and max over rounds. */
#define NFIGS 6

struct pt {
	int ci;            /* the case's place in order of first appearance */
	double c, f[NFIGS]; /* concurrency; figures in the order above */
};

static int by_case_level(const void *x, const void *y)
{
	const struct pt *a = x, *b = y;

	if (a->ci != b->ci)
		return (a->ci > b->ci) - (a->ci < b->ci);
	return (a->c > b->c) - (a->c < b->c);
}

/* Figure `f`'s median, min and max (NAN when null) into v[0], v[2], v[3]. */
static void fig(const struct loadcells_cell *c, enum loadcells_fig f, double *v)
{
	const struct loadstat_fig *g = loadcells_fig(c, f);
	int has = g && g->n;

	v[0] = has ? g->median : NAN;
	v[2] = has ? g->min : NAN;
	v[3] = has ? g->max : NAN;
}

/* The closed-loop cells of `lc` as points (*np of them, at most the first
 * LOADPLOT_MAX_CASES cases), sorted by case then level; names[i] is case
 * i's id (borrowed). Returns the number of cases. */
static int gather(const struct loadcells *lc, struct pt *p, size_t *np, const char **names)
{
	const struct loadcells_cell *cell;
	double tps[4], ttft[4];
	int n = 0, i;
	size_t k;

	*np = 0;
	for (k = 0; k < lc->n; k++) {
		cell = &lc->c[k];
		if (cell->open_loop)
			continue;
		for (i = 0; i < n && strcmp(names[i], cell->case_id); i++)
			;
		if (i == LOADPLOT_MAX_CASES)
			continue;
		if (i == n)
			names[n++] = cell->case_id;
		p[*np].ci = i;
		p[*np].c = cell->level_value;
		fig(cell, LCF_OUTPUT_TPS, tps);
		fig(cell, LCF_TTFT_P95_MS, ttft);
		p[*np].f[0] = tps[0];
		p[*np].f[1] = ttft[0];
		p[*np].f[2] = tps[2];
		p[*np].f[3] = tps[3];
		p[*np].f[4] = ttft[2];
		p[*np].f[5] = ttft[3];
		(*np)++;
	}
	qsort(p, *np, sizeof(*p), by_case_level);
	return n;
}

/* Splits the sorted points into each case's arrays in nums ((1 + NFIGS) *
 * np: levels, then each figure of fig_keys). */
static void split(const struct pt *p, size_t np, const char **names, int n,
		  struct loadplot_case *cs, double *nums)
{
	const double *a[1 + NFIGS];
	size_t k = 0, m;
	int i, j;

	for (i = 0; i < n; i++) {
		for (m = 0; k + m < np && p[k + m].ci == i; m++) {
			nums[k + m] = p[k + m].c;
			for (j = 0; j < NFIGS; j++)
				nums[(size_t)(j + 1) * np + k + m] = p[k + m].f[j];
		}
		for (j = 0; j <= NFIGS; j++)
			a[j] = nums + (size_t)j * np + k;
		cs[i] = (struct loadplot_case){names[i], (int)m, a[0], a[1], a[2], a[3], a[4], a[5], a[6]};
		k += m;
	}
}

enum err loadplot_summary(const struct loadcells *lc, const char *title, struct buf *png,
			  struct diag *d)
{
	size_t ncells = lc->n, np;
	const char *names[LOADPLOT_MAX_CASES];
	struct loadplot_case cs[LOADPLOT_MAX_CASES];
	struct pt *p;
	double *nums;
	int n;
	enum err e;

	if (!ncells)
		return ERR_OK;
	p = mem_calloc(ncells, sizeof(*p));
	nums = mem_calloc((1 + NFIGS) * ncells, sizeof(*nums));
	if (!p || !nums) {
		mem_free(p);
		mem_free(nums);
		return diag_fail(d, ERR_NOMEM, "out of memory drawing load.png");
	}
	n = gather(lc, p, &np, names);
	split(p, np, names, n, cs, nums);
	e = n ? loadplot_png(cs, n, title, png, d) : ERR_OK;
	mem_free(p);
	mem_free(nums);
	return e;
}
