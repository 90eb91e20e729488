/*
 * heatmap — see heatmap.h.
 */
#include "heatmap.h"

#include <math.h>
#include <stdio.h>

#include "chart.h"

static const unsigned char *const black = chart_black, *const white = chart_white;
static const unsigned char grey[3] = {200, 200, 200}, dark[3] = {90, 90, 90};

#define HEATMAP_STRIP 12  /* px: the hatched strip of a cell with failures */

void heatmap_rgb(double f, unsigned char rgb[3])
{
	static const double lo[3] = {215, 48, 39}, mid[3] = {254, 224, 139},
			    hi[3] = {26, 152, 80};
	const double *a = f < 0.5 ? lo : mid, *z = f < 0.5 ? mid : hi;
	double t = f < 0.5 ? f * 2 : (f - 0.5) * 2;
	int i;

	if (t < 0)
		t = 0;
	if (t > 1)
		t = 1;
	for (i = 0; i < 3; i++)
		rgb[i] = (unsigned char)lround(a[i] + (z[i] - a[i]) * t);
}

void heatmap_cell(int row, int col, int *x, int *y)
{
	*x = HEATMAP_LEFT + col * HEATMAP_CELL_W + 1;
	*y = HEATMAP_TOP + row * HEATMAP_CELL_H + 1;
}

void heatmap_length_label(double t, char *out, size_t cap)
{
	if (t >= 1048576 && fmod(t, 1048576) == 0)
		snprintf(out, cap, "%.0fM", t / 1048576);
	else if (t >= 1024 && fmod(t, 1024) == 0)
		snprintf(out, cap, "%.0fK", t / 1024);
	else
		snprintf(out, cap, "%.0f", t);
}

/* Grey with dark diagonal lines: where the attempts got no answer. */
static void hatch(struct canvas *cv, int x, int y, int w, int h)
{
	int i, j;

	canvas_fill_rect(cv, x, y, w, h, grey);
	for (j = 0; j < h; j++)
		for (i = 0; i < w; i++)
			if ((i + j) % 8 < 2)
				canvas_fill_rect(cv, x + i, y + j, 1, 1, dark);
}

static void draw_cell(struct canvas *cv, int row, int col, double found, double failed,
		      double total)
{
	unsigned char rgb[3];
	const unsigned char *ink = black;
	char big[16], small[48];
	double answered = total - failed;
	int x, y, w = HEATMAP_CELL_W - 2, h = HEATMAP_CELL_H - 2;

	heatmap_cell(row, col, &x, &y);
	if (total <= 0) {
		canvas_fill_rect(cv, x, y, w, h, grey);
		chart_text_centred(cv, x, w, y + (h - 14) / 2, 2, "-", black);
		return;
	}
	if (answered <= 0) {
		hatch(cv, x, y, w, h);
		canvas_fill_rect(cv, x + 4, y + 12, w - 8, 24, grey);
		chart_text_centred(cv, x, w, y + 14, 1, "NO ANSWER", black);
		snprintf(small, sizeof(small), "%.0f FAILED", failed);
		chart_text_centred(cv, x, w, y + 26, 1, small, black);
		return;
	}
	heatmap_rgb(found / answered, rgb);
	if (0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] < 110)
		ink = white;
	canvas_fill_rect(cv, x, y, w, h, rgb);
	if (failed > 0)
		hatch(cv, x + w - HEATMAP_STRIP, y, HEATMAP_STRIP, h);
	snprintf(big, sizeof(big), "%.0f%%", 100.0 * found / answered);
	if (failed > 0)
		snprintf(small, sizeof(small), "%.0f/%.0f (%.0f FAIL)", found, answered, failed);
	else
		snprintf(small, sizeof(small), "%.0f/%.0f", found, answered);
	chart_text_centred(cv, x, w - (failed > 0 ? HEATMAP_STRIP : 0), y + 8, 2, big, ink);
	chart_text_centred(cv, x, w - (failed > 0 ? HEATMAP_STRIP : 0), y + 30, 1, small, ink);
}

/* The legend under the grid: the colour ramp, then the two greys. */
static void draw_legend(struct canvas *cv, int top)
{
	static const double stops[] = {0, 0.25, 0.5, 0.75, 1};
	unsigned char rgb[3];
	int i, x = 12;

	x += canvas_text(cv, x, top + 4, 1, "FOUND:", black) + 6;
	for (i = 0; i < 5; i++) {
		char t[8];
		heatmap_rgb(stops[i], rgb);
		canvas_fill_rect(cv, x, top, 14, 14, rgb);
		snprintf(t, sizeof(t), "%.0f%%", stops[i] * 100);
		x += 18 + canvas_text(cv, x + 18, top + 4, 1, t, black) + 8;
	}
	hatch(cv, x, top, 14, 14);
	x += 18 + canvas_text(cv, x + 18, top + 4, 1, "NO ANSWER (TRANSPORT FAILED)", black) + 8;
	canvas_fill_rect(cv, x, top, 14, 14, grey);
	canvas_text(cv, x + 18, top + 4, 1, "NO DATA", black);
	canvas_text(cv, 12, top + 22, 1, "K = 1024 TOKENS   CELL: PERCENT AND FOUND/ANSWERED   (N FAIL) = N GOT NO ANSWER", black);
}

static void draw_labels(struct canvas *cv, const struct heatmap *h)
{
	char t[32];
	int i;

	canvas_text(cv, 12, 12, 2, "RECALL BY DEPTH AND PROMPT TOKENS", black);
	if (h->title)
		canvas_text(cv, 12, 36, 1, h->title, black);
	canvas_text(cv, 12, 52, 1, "ROWS: NEEDLE DEPTH   COLUMNS: PROMPT TOKENS", black);
	for (i = 0; i < h->nlengths; i++) {
		int scale;
		heatmap_length_label(h->lengths[i], t, sizeof(t));
		scale = canvas_text_width(t, 2) <= HEATMAP_CELL_W - 4 ? 2 : 1;
		chart_text_centred(cv, HEATMAP_LEFT + i * HEATMAP_CELL_W, HEATMAP_CELL_W, HEATMAP_TOP - 18,
				   scale, t, black);
	}
	for (i = 0; i < h->ndepths; i++) {
		snprintf(t, sizeof(t), "%.0f%%", h->depths[i]);
		chart_text_left_of(cv, HEATMAP_LEFT, HEATMAP_TOP + i * HEATMAP_CELL_H + (HEATMAP_CELL_H - 14) / 2,
				   2, t, black);
	}
}

enum err heatmap_png(const struct heatmap *h, struct buf *png, struct diag *d)
{
	struct canvas *cv = NULL;
	int r, c, w, ht, tw = h->title ? canvas_text_width(h->title, 1) + 24 : 0;
	enum err e;

	if (h->ndepths > HEATMAP_MAX_DEPTHS || h->nlengths > HEATMAP_MAX_LENGTHS)
		return diag_fail(d, ERR_LIMIT, "recall grid of %d depths x %d lengths is too large to draw",
				 h->ndepths, h->nlengths);
	w = HEATMAP_LEFT + h->nlengths * HEATMAP_CELL_W + 16;
	if (w < HEATMAP_MIN_W)
		w = HEATMAP_MIN_W;
	if (w < tw && tw <= CANVAS_MAX)
		w = tw;
	ht = HEATMAP_TOP + h->ndepths * HEATMAP_CELL_H + 16 + HEATMAP_LEGEND_H;
	if ((e = canvas_new(w, ht, white, &cv, d)))
		return e;
	draw_labels(cv, h);
	for (r = 0; r < h->ndepths; r++)
		for (c = 0; c < h->nlengths; c++)
			draw_cell(cv, r, c, h->found[r * h->nlengths + c],
				  h->failed ? h->failed[r * h->nlengths + c] : 0,
				  h->total[r * h->nlengths + c]);
	draw_legend(cv, HEATMAP_TOP + h->ndepths * HEATMAP_CELL_H + 16);
	e = canvas_png(cv, png, d);
	canvas_free(cv);
	return e;
}
