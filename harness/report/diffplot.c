/*
 * diffplot — see diffplot.h.
 */
#include "diffplot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/canvas.h"
#include "base/jget.h"
#include "base/mem.h"

const unsigned char diffplot_rgb_a[3] = {40, 110, 200}, diffplot_rgb_b[3] = {230, 120, 20};
const unsigned char diffplot_rgb_fail[3] = {210, 30, 30}, diffplot_rgb_underpowered[3] = {190, 150, 0};
static const unsigned char black[3] = {0, 0, 0}, white[3] = {255, 255, 255},
			   grid[3] = {225, 225, 225}, axis[3] = {120, 120, 120};

static const char *const figs[DIFFPLOT_PANELS] = {"output_tps", "ttft_p50_ms", "ttft_p95_ms"};
static const char *const titles[DIFFPLOT_PANELS] = {"OUTPUT THROUGHPUT (TOK/S)", "TTFT P50 (MS)",
						     "TTFT P95 (MS)"};

/* One load case: its entries (borrowed), ascending by level. */
struct dcase {
	const char *name;   /* borrowed */
	const cJSON **lv;   /* owned array */
	int n;
};

/* One panel being drawn: where it is and its scale. */
struct panel {
	int x0, y0;         /* the left edge and the bottom (value 0) */
	double step, top;   /* y axis: 0..top in steps */
};

void diffplot_size(int ncases, int *w, int *h)
{
	*w = DIFFPLOT_PANELS * (DIFFPLOT_LEFT + DIFFPLOT_PANEL_W) + 24;
	*h = DIFFPLOT_TOP + (ncases > 0 ? ncases : 0) * DIFFPLOT_ROW + 8;
}

/* The level's concurrency or rate; NaN without either. */
static double level_of(const cJSON *e)
{
	const cJSON *v = jget(e, "concurrency");

	if (!cJSON_IsNumber(v))
		v = jget(e, "rate");
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static int by_level(const void *x, const void *y)
{
	double a = level_of(*(const cJSON *const *)x), b = level_of(*(const cJSON *const *)y);

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

/* The cases of `load` (at most DIFFPLOT_MAX_CASES), each with its entries
 * sorted by level, into cs; returns how many, or -1 when out of memory. */
static int group(const cJSON *load, struct dcase *cs)
{
	const cJSON *e, *id;
	int n = 0, i;

	cJSON_ArrayForEach(e, load) {
		if (!cJSON_IsString(id = jget(e, "case")))
			continue;
		if ((i = case_index(cs, n, id->valuestring)) == n && n < DIFFPLOT_MAX_CASES) {
			cs[n].name = id->valuestring;
			cs[n].n = 0;
			if (!(cs[n++].lv = mem_calloc((size_t)cJSON_GetArraySize(load), sizeof(*cs->lv))))
				return -1;
		}
		if (i < n)
			cs[i].lv[cs[i].n++] = e;
	}
	for (i = 0; i < n; i++)
		qsort(cs[i].lv, (size_t)cs[i].n, sizeof(*cs[i].lv), by_level);
	return n;
}

/* Figure `f` with `end` ("", "_min", "_max") of one run's side; NaN when
 * missing. */
static double fig(const cJSON *side, const char *f, const char *end)
{
	char k[64];
	const cJSON *v;

	snprintf(k, sizeof(k), "%s%s", f, end);
	v = jget(side, k);
	return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : NAN;
}

/* Panel `p` of case `c` in row `row`: its place, and one scale for both
 * runs over the largest maximum (or median) either has. */
static void panel_of(const struct dcase *c, int row, int p, struct panel *pn)
{
	static const char *const sides[] = {"a", "b"};
	double most = 0;
	int j, s;

	for (j = 0; j < c->n; j++)
		for (s = 0; s < 2; s++) {
			const cJSON *side = jget(c->lv[j], sides[s]);
			double hi = fig(side, figs[p], "_max"), mid = fig(side, figs[p], "");
			most = hi > most ? hi : most;
			most = mid > most ? mid : most;
		}
	canvas_scale(most > 0 ? most : 1, 5, &pn->step, &pn->top);
	pn->x0 = p * (DIFFPLOT_LEFT + DIFFPLOT_PANEL_W) + DIFFPLOT_LEFT;
	pn->y0 = DIFFPLOT_TOP + row * DIFFPLOT_ROW + DIFFPLOT_HEAD + DIFFPLOT_PANEL_H;
}

static int px_x(const struct panel *pn, int k, int n)
{
	return pn->x0 + (int)((k + 0.5) * DIFFPLOT_PANEL_W / n);
}

static int px_y(const struct panel *pn, double v)
{
	return pn->y0 - (int)lround(v / pn->top * DIFFPLOT_PANEL_H);
}

/* The level's label colour: its verdict's. */
static const unsigned char *verdict_rgb(const cJSON *e)
{
	const cJSON *v = jget(e, "verdict");

	if (cJSON_IsString(v) && !strcmp(v->valuestring, "fail"))
		return diffplot_rgb_fail;
	if (cJSON_IsString(v) && !strcmp(v->valuestring, "underpowered"))
		return diffplot_rgb_underpowered;
	return black;
}

/* The frame of a panel: grid, y labels, title, and each level's tick and
 * label. */
static void draw_frame(struct canvas *cv, const struct panel *pn, const struct dcase *c, int p)
{
	char t[48];
	double v;
	int k;

	canvas_text(cv, pn->x0, pn->y0 - DIFFPLOT_PANEL_H - 12, 1, titles[p], black);
	for (v = 0; v <= pn->top + pn->step / 2; v += pn->step) {
		canvas_fill_rect(cv, pn->x0, px_y(pn, v), DIFFPLOT_PANEL_W, 1, v == 0 ? axis : grid);
		snprintf(t, sizeof(t), "%g", v);
		canvas_text(cv, pn->x0 - 8 - canvas_text_width(t, 1), px_y(pn, v) - 3, 1, t, black);
	}
	canvas_fill_rect(cv, pn->x0, pn->y0 - DIFFPLOT_PANEL_H, 1, DIFFPLOT_PANEL_H, axis);
	for (k = 0; k < c->n; k++) {
		const cJSON *lv = jget(c->lv[k], "level");
		int x = px_x(pn, k, c->n);
		if (cJSON_IsString(lv))
			snprintf(t, sizeof(t), "%.40s", lv->valuestring);
		else
			snprintf(t, sizeof(t), "%s%g", cJSON_IsNumber(jget(c->lv[k], "rate")) ? "R" : "C",
				 level_of(c->lv[k]));
		canvas_fill_rect(cv, x, pn->y0, 1, 4, axis);
		canvas_text(cv, x - canvas_text_width(t, 1) / 2, pn->y0 + 8, 1, t, verdict_rgb(c->lv[k]));
	}
}

/* One run's marks in a panel: per level a min-max bar and a median square,
 * the medians joined by a line; `dx` is its offset from the ticks. */
static void draw_side(struct canvas *cv, const struct panel *pn, const struct dcase *c, int p,
		      const char *side, int dx, const unsigned char rgb[3])
{
	int k, have = 0, px = 0, py = 0;

	for (k = 0; k < c->n; k++) {
		const cJSON *s = jget(c->lv[k], side);
		double lo = fig(s, figs[p], "_min"), hi = fig(s, figs[p], "_max");
		double mid = fig(s, figs[p], "");
		int x = px_x(pn, k, c->n) + dx;

		if (!isnan(lo) && !isnan(hi) && hi >= lo)
			canvas_fill_rect(cv, x - 1, px_y(pn, hi), 3, px_y(pn, lo) - px_y(pn, hi) + 1, rgb);
		if (isnan(mid)) {
			have = 0;
			continue;
		}
		if (have)
			canvas_line(cv, px, py, x, px_y(pn, mid), 1, rgb);
		canvas_fill_rect(cv, x - 3, px_y(pn, mid) - 3, 7, 7, rgb);
		px = x, py = px_y(pn, mid), have = 1;
	}
}

static void draw_legend(struct canvas *cv, const char *name_a, const char *name_b)
{
	char t[400];

	canvas_text(cv, 12, 12, 2, "NEEDLE DIFF: LOAD CELLS OF BASELINE A AND CANDIDATE B", black);
	canvas_fill_rect(cv, 12, 40, 20, 9, diffplot_rgb_a);
	snprintf(t, sizeof(t), "A (BASELINE): %.300s", name_a ? name_a : "-");
	canvas_text(cv, 40, 41, 1, t, black);
	canvas_fill_rect(cv, 12, 56, 20, 9, diffplot_rgb_b);
	snprintf(t, sizeof(t), "B (CANDIDATE): %.300s", name_b ? name_b : "-");
	canvas_text(cv, 40, 57, 1, t, black);
	canvas_text(cv, 12, 74, 1, "SQUARE: MEDIAN OVER VALID ROUNDS. BAR: MIN TO MAX OVER ROUNDS. "
		    "A LEFT OF EACH LEVEL AND B RIGHT. ONE SCALE FOR BOTH.", axis);
	canvas_text(cv, 12, 86, 1, "LEVEL LABEL IN RED: A GATE FAILED THERE", diffplot_rgb_fail);
	canvas_text(cv, 12 + canvas_text_width("LEVEL LABEL IN RED: A GATE FAILED THERE   ", 1), 86, 1,
		    "AMBER: UNDERPOWERED", diffplot_rgb_underpowered);
}

/* Row `row`: the case's name and its three panels. */
static void draw_case(struct canvas *cv, const struct dcase *c, int row)
{
	struct panel pn;
	int p;

	canvas_text(cv, 12, DIFFPLOT_TOP + row * DIFFPLOT_ROW + 2, 1, c->name, black);
	for (p = 0; p < DIFFPLOT_PANELS; p++) {
		panel_of(c, row, p, &pn);
		draw_frame(cv, &pn, c, p);
		draw_side(cv, &pn, c, p, "a", -DIFFPLOT_OFFSET, diffplot_rgb_a);
		draw_side(cv, &pn, c, p, "b", DIFFPLOT_OFFSET, diffplot_rgb_b);
	}
}

enum err diffplot_png(const cJSON *load, const char *name_a, const char *name_b,
		      struct buf *png, struct diag *d)
{
	struct dcase cs[DIFFPLOT_MAX_CASES];
	struct canvas *cv = NULL;
	int n, w, h, i;
	enum err e = ERR_OK;

	memset(cs, 0, sizeof(cs));
	if ((n = group(load, cs)) < 0)
		e = diag_fail(d, ERR_NOMEM, "out of memory drawing the diff picture");
	if (!e && n > 0) {
		diffplot_size(n, &w, &h);
		e = canvas_new(w, h, white, &cv, d);
	}
	if (!e && cv) {
		draw_legend(cv, name_a, name_b);
		for (i = 0; i < n; i++)
			draw_case(cv, &cs[i], i);
		e = canvas_png(cv, png, d);
	}
	canvas_free(cv);
	for (i = 0; i < DIFFPLOT_MAX_CASES; i++)
		mem_free(cs[i].lv);
	return e;
}
