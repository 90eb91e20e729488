/*
 * diffplot — see diffplot.h.
 */
#include "diffplot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "load/loadcells.h"
#include "chart.h"
#include "gate.h"

const unsigned char diffplot_rgb_a[3] = {40, 110, 200}, diffplot_rgb_b[3] = {230, 120, 20};
const unsigned char diffplot_rgb_fail[3] = {210, 30, 30}, diffplot_rgb_underpowered[3] = {190, 150, 0};
const unsigned char diffplot_rgb_pass[3] = {30, 140, 50};
static const unsigned char *const black = chart_black, *const grid = chart_grid,
			   *const axis = chart_axis;
static const unsigned char beyond[3] = {252, 230, 230};

static const enum loadcells_fig figs[DIFFPLOT_PANELS] = {LCF_OUTPUT_TPS, LCF_TTFT_P50_MS, LCF_TTFT_P95_MS};
static const char *const titles[DIFFPLOT_PANELS] = {"OUTPUT THROUGHPUT (TOK/S)", "TTFT P50 (MS)",
						     "TTFT P95 (MS)"};

/* One load case: its cells (borrowed), ascending by level. */
struct dcase {
	const char *name;   /* borrowed */
	const struct diff_cell **lv; /* owned array */
	int n;
};

void diffplot_size(int ncases, int *w, int *h)
{
	*w = DIFFPLOT_PANELS * (DIFFPLOT_LEFT + DIFFPLOT_PANEL_W) + 24;
	*h = DIFFPLOT_TOP + (ncases > 0 ? ncases : 0) * DIFFPLOT_ROW + 8;
}

static int by_level(const void *x, const void *y)
{
	double a = (*(const struct diff_cell *const *)x)->named->level_value;
	double b = (*(const struct diff_cell *const *)y)->named->level_value;

	return (a > b) - (a < b);
}

/* The index in cs[0..n) of case `name`, n when absent. */
static int case_index(const struct dcase *cs, int n, const char *name)
{
	int i;

	for (i = 0; i < n && strcmp(cs[i].name, name); i++)
		;
	return i;
}

/* The cases of cells[0..ncells) (at most DIFFPLOT_MAX_CASES), each with
 * its cells sorted by level, into cs; returns how many, or -1 when out of
 * memory. */
static int group(const struct diff_cell *cells, size_t ncells, struct dcase *cs)
{
	const struct diff_cell *e;
	int n = 0, i;

	for (e = cells; e < cells + ncells; e++) {
		if ((i = case_index(cs, n, e->named->case_id)) == n && n < DIFFPLOT_MAX_CASES) {
			cs[n].name = e->named->case_id;
			cs[n].n = 0;
			if (!(cs[n++].lv = mem_calloc(ncells, sizeof(*cs->lv))))
				return -1;
		}
		if (i < n)
			cs[i].lv[cs[i].n++] = e;
	}
	for (i = 0; i < n; i++)
		qsort(cs[i].lv, (size_t)cs[i].n, sizeof(*cs[i].lv), by_level);
	return n;
}

/* NaN for what is not a finite number. */
static double finite_or_nan(double v)
{
	return isfinite(v) ? v : NAN;
}

/* Figure `f` of one run's cell `c` (NULL: the run lacks it); its median,
 * min and max NaN when missing. */
static struct loadstat_fig fig(const struct loadcells_cell *c, enum loadcells_fig f)
{
	const struct loadstat_fig *g = c ? loadcells_fig(c, f) : NULL;

	if (!g || !g->n)
		return (struct loadstat_fig){0, NAN, NAN, NAN};
	return (struct loadstat_fig){g->n, finite_or_nan(g->median), finite_or_nan(g->min), finite_or_nan(g->max)};
}

/* Run A's (side 0) or B's cell of comparison cell `c`. */
static const struct loadcells_cell *side_of(const struct diff_cell *c, int side)
{
	return side ? c->b : c->a;
}

/* Panel `p` of case `c` in row `row`: its place, and one scale for both
 * runs over the largest maximum (or median) either has. */
static void panel_of(const struct dcase *c, int row, int p, struct chart_panel *pn)
{
	double most = 0;
	int j, s;

	for (j = 0; j < c->n; j++)
		for (s = 0; s < 2; s++) {
			struct loadstat_fig g = fig(side_of(c->lv[j], s), figs[p]);
			most = g.max > most ? g.max : most;
			most = g.median > most ? g.median : most;
		}
	*pn = (struct chart_panel){p * (DIFFPLOT_LEFT + DIFFPLOT_PANEL_W) + DIFFPLOT_LEFT,
				   DIFFPLOT_TOP + row * DIFFPLOT_ROW + DIFFPLOT_HEAD + DIFFPLOT_PANEL_H,
				   DIFFPLOT_PANEL_W, DIFFPLOT_PANEL_H, c->n, 0, 0};
	chart_scale(pn, most > 0 ? most : 1, 5);
}

/* The colour of verdict `v`: `pass` for pass. */
static const unsigned char *verdict_colour(enum gate_verdict v, const unsigned char *pass)
{
	return v == GATE_FAIL ? diffplot_rgb_fail : v == GATE_UNDERPOWERED ? diffplot_rgb_underpowered : pass;
}

/* A cell's label colour: its verdict's, black for pass or none. */
static const unsigned char *verdict_rgb(const struct diff_cell *c)
{
	return c->judged ? verdict_colour(c->verdict, black) : black;
}

/* The frame of a panel: grid, y labels, title, and each level's tick and
 * label in its verdict's colour. `t`, `labels` and `rgb` have room for the
 * case's levels. */
static void draw_frame(struct canvas *cv, const struct chart_panel *pn, const struct dcase *c, int p,
		       char (*t)[48], const char **labels, const unsigned char **rgb)
{
	int k;

	for (k = 0; k < c->n; k++) {
		loadcells_level(c->lv[k]->named, t[k], sizeof(t[k]));
		labels[k] = t[k];
		rgb[k] = verdict_rgb(c->lv[k]);
	}
	chart_frame(cv, pn, titles[p], 12, "", labels, rgb, NULL);
}

/* One run's marks in a panel: per level a min-max bar and a median square,
 * the medians joined by a line; `dx` is its offset from the ticks. `pt` has
 * room for the case's levels. */
static void draw_side(struct canvas *cv, const struct chart_panel *pn, const struct dcase *c, int p,
		      int side, int dx, const unsigned char rgb[3], struct chart_point *pt)
{
	const struct chart_style st = {rgb, dx, 1, 0, 0};
	int k;

	for (k = 0; k < c->n; k++) {
		struct loadstat_fig g = fig(side_of(c->lv[k], side), figs[p]);
		pt[k] = (struct chart_point){k, g.median, g.min, g.max, NULL};
	}
	chart_series(cv, pn, pt, c->n, &st);
}

static void draw_legend(struct canvas *cv, const char *name_a, const char *name_b)
{
	char t[400];

	canvas_text(cv, 12, 12, 2, "NEEDLE DIFF: LOAD CELLS OF BASELINE A AND CANDIDATE B", black);
	snprintf(t, sizeof(t), "A (BASELINE): %.300s", name_a ? name_a : "-");
	chart_key(cv, 12, 40, diffplot_rgb_a, t);
	snprintf(t, sizeof(t), "B (CANDIDATE): %.300s", name_b ? name_b : "-");
	chart_key(cv, 12, 56, diffplot_rgb_b, t);
	canvas_text(cv, 12, 74, 1, "SQUARE: MEDIAN OVER VALID ROUNDS. BAR: MIN TO MAX OVER ROUNDS. "
		    "A LEFT OF EACH LEVEL AND B RIGHT. ONE SCALE FOR BOTH.", axis);
	canvas_text(cv, 12, 86, 1, "LEVEL LABEL IN RED: A GATE FAILED THERE", diffplot_rgb_fail);
	canvas_text(cv, 12 + canvas_text_width("LEVEL LABEL IN RED: A GATE FAILED THERE   ", 1), 86, 1,
		    "AMBER: UNDERPOWERED", diffplot_rgb_underpowered);
}

/* Row `row`: the case's name and its three panels. ERR_NOMEM. */
static enum err draw_case(struct canvas *cv, const struct dcase *c, int row, struct diag *d)
{
	size_t n = (size_t)c->n + 1;
	char (*t)[48] = mem_calloc(n, sizeof(*t));
	const char **labels = mem_calloc(n, sizeof(*labels));
	const unsigned char **rgb = mem_calloc(n, sizeof(*rgb));
	struct chart_point *pt = mem_calloc(n, sizeof(*pt));
	struct chart_panel pn;
	int p = 0;

	if (t && labels && rgb && pt) {
		canvas_text(cv, 12, DIFFPLOT_TOP + row * DIFFPLOT_ROW + 2, 1, c->name, black);
		for (p = 0; p < DIFFPLOT_PANELS; p++) {
			panel_of(c, row, p, &pn);
			draw_frame(cv, &pn, c, p, t, labels, rgb);
			draw_side(cv, &pn, c, p, 0, -DIFFPLOT_OFFSET, diffplot_rgb_a, pt);
			draw_side(cv, &pn, c, p, 1, DIFFPLOT_OFFSET, diffplot_rgb_b, pt);
		}
	}
	mem_free(t);
	mem_free(labels);
	mem_free(rgb);
	mem_free(pt);
	return p == DIFFPLOT_PANELS ? ERR_OK : diag_fail(d, ERR_NOMEM, "out of memory drawing the diff picture");
}

enum err diffplot_png(const struct diff_cell *cells, size_t ncells, const char *name_a,
		      const char *name_b, struct buf *png, struct diag *d)
{
	struct dcase cs[DIFFPLOT_MAX_CASES];
	struct canvas *cv = NULL;
	int n, w, h, i;
	enum err e = ERR_OK;

	memset(cs, 0, sizeof(cs));
	if ((n = group(cells, ncells, cs)) < 0)
		e = diag_fail(d, ERR_NOMEM, "out of memory drawing the diff picture");
	if (!e && n > 0) {
		diffplot_size(n, &w, &h);
		e = canvas_new(w, h, chart_white, &cv, d);
	}
	if (!e && cv) {
		draw_legend(cv, name_a, name_b);
		for (i = 0; !e && i < n; i++)
			e = draw_case(cv, &cs[i], i, d);
		if (!e)
			e = canvas_png(cv, png, d);
	}
	canvas_free(cv);
	for (i = 0; i < DIFFPLOT_MAX_CASES; i++)
		mem_free(cs[i].lv);
	return e;
}

/* ---- the decision picture ---- */

/* One gate's panel: its spec, the operator and its x scale. */
struct dpanel {
	const char *gate;   /* borrowed */
	int ratio, parsed;  /* a *_ratio metric; gate_parse took the spec */
	enum gate_op op;
	double lo, hi, step;
	int x0, y0;         /* plotting area: left edge, top of the first row */
};

/* The decision's panels and rows, gathered from the cells. */
struct decision {
	struct dpanel p[DIFFPLOT_DEC_PANELS];
	const struct diff_cell *row[DIFFPLOT_DEC_ROWS];
	int np, nr;
};

/* The judgement of gate `gate` in cell `c`, or NULL. */
static const struct diff_judgement *item_of(const struct diff_cell *c, const char *gate)
{
	size_t k;

	for (k = 0; k < c->ngates; k++)
		if (!strcmp(c->gates[k].gate, gate))
			return &c->gates[k];
	return NULL;
}

/* `x` NaN when not finite; a ratio's clipped to 0..DIFFPLOT_DEC_RATIO_MAX. */
static double dnum(double x, int ratio)
{
	x = finite_or_nan(x);
	if (ratio && !isnan(x))
		x = x < 0 ? 0 : x > DIFFPLOT_DEC_RATIO_MAX ? DIFFPLOT_DEC_RATIO_MAX : x;
	return x;
}

/* The value of judgement `j`, NaN when it has none. */
static double value_of(const struct diff_judgement *j)
{
	return j->have ? j->value : NAN;
}

/* [*lo, *hi] widened to hold `x` (as dnum takes it) unless it is NaN. */
static void widen(double x, int ratio, double *lo, double *hi)
{
	if (isnan(x = dnum(x, ratio)))
		return;
	*lo = x < *lo ? x : *lo;
	*hi = x > *hi ? x : *hi;
}

/* Panel p's scale over every number its judgements hold. */
static void dec_scale(const struct decision *dc, struct dpanel *p)
{
	double lo = p->ratio ? 1 : INFINITY, hi = p->ratio ? 1 : -INFINITY, x, span;
	const struct diff_judgement *it;
	int r;

	for (r = 0; r < dc->nr; r++)
		if ((it = item_of(dc->row[r], p->gate))) {
			widen(value_of(it), p->ratio, &lo, &hi);
			widen(it->lo, p->ratio, &lo, &hi);
			widen(it->hi, p->ratio, &lo, &hi);
			widen(it->threshold, p->ratio, &lo, &hi);
		}
	if (lo > hi)
		lo = 0, hi = 1;
	span = hi - lo > 0 ? hi - lo : (fabs(hi) > 0 ? fabs(hi) * 0.2 : 1);
	canvas_scale(span * 1.16, 4, &p->step, &x);
	p->lo = floor((lo - span * 0.08) / p->step) * p->step;
	p->hi = ceil((hi + span * 0.08) / p->step) * p->step;
	if (p->lo < 0 && lo >= 0) /* no negative axis for figures that are not */
		p->lo = 0;
}

/* The panels (gates in first-appearance order) and rows of cells[0..n). */
static void dec_gather(const struct diff_cell *cells, size_t n, struct decision *dc)
{
	const struct diff_cell *en;
	const char *g;
	struct gate pg;
	size_t k;
	int i;

	memset(dc, 0, sizeof(*dc));
	memset(&pg, 0, sizeof(pg));
	for (en = cells; en < cells + n && dc->nr < DIFFPLOT_DEC_ROWS; en++) {
		dc->row[dc->nr++] = en;
		for (k = 0; k < en->ngates && dc->np < DIFFPLOT_DEC_PANELS; k++) {
			g = en->gates[k].gate;
			for (i = 0; i < dc->np && strcmp(dc->p[i].gate, g); i++)
				;
			if (i < dc->np)
				continue;
			dc->p[i].gate = g;
			dc->p[i].parsed = !gate_parse(g, &pg, NULL);
			dc->p[i].op = pg.op;
			dc->p[i].ratio = dc->p[i].parsed && strlen(pg.name) > 6 &&
					 !strcmp(pg.name + strlen(pg.name) - 6, "_ratio");
			dc->np++;
		}
	}
	for (i = 0; i < dc->np; i++)
		dec_scale(dc, &dc->p[i]);
}

void diffplot_decision_size(int npanels, int nrows, int *w, int *h)
{
	int cols = npanels < DIFFPLOT_DEC_COLS ? npanels : DIFFPLOT_DEC_COLS;
	int bands = (npanels + DIFFPLOT_DEC_COLS - 1) / DIFFPLOT_DEC_COLS;

	*w = DIFFPLOT_DEC_LABEL + (cols > 0 ? cols : 0) * (DIFFPLOT_DEC_W + DIFFPLOT_DEC_GAP) + 12;
	*h = DIFFPLOT_DEC_TOP + (bands > 0 ? bands : 0) *
	     (DIFFPLOT_DEC_HEAD + nrows * DIFFPLOT_DEC_ROW + DIFFPLOT_DEC_FOOT) + 8;
}

/* x of value v in panel p, held inside the panel. */
static int dec_x(const struct dpanel *p, double v)
{
	double f = (v - p->lo) / (p->hi - p->lo);

	f = f < 0 ? 0 : f > 1 ? 1 : f;
	return p->x0 + (int)lround(f * (DIFFPLOT_DEC_W - 1));
}

/* Panel p's frame: title, tint beyond the threshold, grid and x labels, the
 * line at 1 and the threshold's; nr rows high. */
static void dec_frame(struct canvas *cv, const struct dpanel *p, const struct diff_judgement *thr_item, int nr)
{
	int hgt = nr * DIFFPLOT_DEC_ROW, x, xt;
	double thr = thr_item ? finite_or_nan(thr_item->threshold) : NAN, v;
	char t[48];

	snprintf(t, sizeof(t), "%.40s", p->gate);
	canvas_text(cv, p->x0, p->y0 - DIFFPLOT_DEC_HEAD + 8, 1, t, black);
	if (!isnan(thr) && p->parsed && p->op != GATE_EQ) {
		xt = dec_x(p, thr);
		if (p->op == GATE_GE || p->op == GATE_GT)
			canvas_fill_rect(cv, p->x0, p->y0, xt - p->x0, hgt, beyond);
		else
			canvas_fill_rect(cv, xt, p->y0, p->x0 + DIFFPLOT_DEC_W - xt, hgt, beyond);
	}
	for (v = p->lo; v <= p->hi + p->step / 2; v += p->step) {
		x = dec_x(p, v);
		canvas_fill_rect(cv, x, p->y0, 1, hgt, grid);
		canvas_fill_rect(cv, x, p->y0 + hgt, 1, 4, axis);
		snprintf(t, sizeof(t), "%g", fabs(v) < p->step / 1e6 ? 0 : v);
		chart_text_centred(cv, x, 0, p->y0 + hgt + 8, 1, t, black);
	}
	canvas_fill_rect(cv, p->x0, p->y0 + hgt, DIFFPLOT_DEC_W, 1, axis);
	if (p->ratio)
		canvas_fill_rect(cv, dec_x(p, 1), p->y0, 1, hgt, axis);
	if (!isnan(thr))
		canvas_fill_rect(cv, dec_x(p, thr), p->y0, 2, hgt, black);
}

/* Row r's mark in panel p: the interval as a bar, the value as a square. */
static void dec_mark(struct canvas *cv, const struct dpanel *p, const struct diff_judgement *it, int r)
{
	const unsigned char *rgb = verdict_colour(it->v, diffplot_rgb_pass);
	double v = dnum(value_of(it), p->ratio), lo = dnum(it->lo, p->ratio), hi = dnum(it->hi, p->ratio);
	int y = p->y0 + r * DIFFPLOT_DEC_ROW + DIFFPLOT_DEC_ROW / 2;

	if (!isnan(lo) && !isnan(hi) && hi >= lo)
		canvas_fill_rect(cv, dec_x(p, lo), y - 1, dec_x(p, hi) - dec_x(p, lo) + 1, 3, rgb);
	if (isnan(v))
		canvas_fill_rect(cv, p->x0, y - 1, 12, 3, rgb);
	else
		canvas_fill_rect(cv, dec_x(p, v) - 3, y - 3, 7, 7, rgb);
}

static void dec_legend(struct canvas *cv, const char *name_a, const char *name_b)
{
	char t[400];
	int x = 12;

	canvas_text(cv, 12, 12, 2, "NEEDLE DIFF: THE DECISION, CELL BY CELL AND GATE BY GATE", black);
	snprintf(t, sizeof(t), "A (BASELINE): %.300s", name_a ? name_a : "-");
	canvas_text(cv, 12, 38, 1, t, black);
	snprintf(t, sizeof(t), "B (CANDIDATE): %.300s", name_b ? name_b : "-");
	canvas_text(cv, 12, 50, 1, t, black);
	canvas_text(cv, 12, 66, 1, "SQUARE: B/A (B'S FIGURE FOR A GATE THAT IS NOT A RATIO). BAR: ITS 90% "
		    "INTERVAL. BLACK LINE: THE THRESHOLD, TINTED BEYOND IT. GREY LINE: 1.", axis);
	x += canvas_text(cv, x, 80, 1, "PASS  ", diffplot_rgb_pass);
	x += canvas_text(cv, x, 80, 1, "UNDERPOWERED  ", diffplot_rgb_underpowered);
	canvas_text(cv, x, 80, 1, "FAIL", diffplot_rgb_fail);
}

/* Band k: its panels, with the row labels at its left. */
static void dec_band(struct canvas *cv, struct decision *dc, int k)
{
	int band_h = DIFFPLOT_DEC_HEAD + dc->nr * DIFFPLOT_DEC_ROW + DIFFPLOT_DEC_FOOT;
	int y0 = DIFFPLOT_DEC_TOP + k * band_h + DIFFPLOT_DEC_HEAD, r, i;
	const struct diff_judgement *it, *thr;
	char t[48], level[64];

	for (r = 0; r < dc->nr; r++) {
		loadcells_level(dc->row[r]->named, level, sizeof(level));
		snprintf(t, sizeof(t), "%.18s/%.8s", dc->row[r]->named->case_id, level);
		canvas_text(cv, 12, y0 + r * DIFFPLOT_DEC_ROW + DIFFPLOT_DEC_ROW / 2 - 3, 1, t,
			    verdict_rgb(dc->row[r]));
	}
	for (i = k * DIFFPLOT_DEC_COLS; i < dc->np && i < (k + 1) * DIFFPLOT_DEC_COLS; i++) {
		struct dpanel *p = &dc->p[i];
		p->x0 = DIFFPLOT_DEC_LABEL + (i % DIFFPLOT_DEC_COLS) * (DIFFPLOT_DEC_W + DIFFPLOT_DEC_GAP);
		p->y0 = y0;
		for (r = 0, thr = NULL; r < dc->nr && !thr; r++)
			thr = item_of(dc->row[r], p->gate);
		dec_frame(cv, p, thr, dc->nr);
		for (r = 0; r < dc->nr; r++)
			if ((it = item_of(dc->row[r], p->gate)))
				dec_mark(cv, p, it, r);
	}
}

enum err diffplot_decision_png(const struct diff_cell *cells, size_t ncells, const char *name_a,
			       const char *name_b, struct buf *png, struct diag *d)
{
	struct decision dc;
	struct canvas *cv = NULL;
	int w, h, k;
	enum err e;

	dec_gather(cells, ncells, &dc);
	if (!dc.np)
		return ERR_OK;
	diffplot_decision_size(dc.np, dc.nr, &w, &h);
	if ((e = canvas_new(w, h, chart_white, &cv, d)))
		return e;
	dec_legend(cv, name_a, name_b);
	for (k = 0; k * DIFFPLOT_DEC_COLS < dc.np; k++)
		dec_band(cv, &dc, k);
	e = canvas_png(cv, png, d);
	canvas_free(cv);
	return e;
}
