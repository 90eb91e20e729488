/*
 * heatmap — see heatmap.h.
 */
#include "heatmap.h"

#include <math.h>
#include <stdio.h>

#include "canvas.h"

static const unsigned char black[3] = {0, 0, 0}, white[3] = {255, 255, 255},
			   grey[3] = {200, 200, 200};

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

static void centred(struct canvas *cv, int x, int y, int w, int scale,
		    const char *text, const unsigned char rgb[3])
{
	canvas_text(cv, x + (w - canvas_text_width(text, scale)) / 2, y, scale, text, rgb);
}

static void draw_cell(struct canvas *cv, int row, int col, double found, double total)
{
	unsigned char rgb[3];
	const unsigned char *ink = black;
	char big[16], small[48];
	int x, y, w = HEATMAP_CELL_W - 2, h = HEATMAP_CELL_H - 2;

	heatmap_cell(row, col, &x, &y);
	if (total <= 0) {
		canvas_fill_rect(cv, x, y, w, h, grey);
		centred(cv, x, y + (h - 14) / 2, w, 2, "-", black);
		return;
	}
	heatmap_rgb(found / total, rgb);
	if (0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] < 110)
		ink = white;
	canvas_fill_rect(cv, x, y, w, h, rgb);
	snprintf(big, sizeof(big), "%.0f%%", 100.0 * found / total);
	snprintf(small, sizeof(small), "%.0f/%.0f", found, total);
	centred(cv, x, y + 8, w, 2, big, ink);
	centred(cv, x, y + 30, w, 1, small, ink);
}

static void draw_labels(struct canvas *cv, const struct heatmap *h)
{
	char t[32];
	int i;

	canvas_text(cv, 12, 12, 2, "RECALL BY DEPTH AND PROMPT TOKENS", black);
	canvas_text(cv, 12, 36, 1, "ROWS: NEEDLE DEPTH   COLUMNS: PROMPT TOKENS   CELL: FOUND/TOTAL", black);
	for (i = 0; i < h->nlengths; i++) {
		int scale;
		snprintf(t, sizeof(t), "%.0f", h->lengths[i]);
		scale = canvas_text_width(t, 2) <= HEATMAP_CELL_W - 4 ? 2 : 1;
		centred(cv, HEATMAP_LEFT + i * HEATMAP_CELL_W, HEATMAP_TOP - 18,
			HEATMAP_CELL_W, scale, t, black);
	}
	for (i = 0; i < h->ndepths; i++) {
		snprintf(t, sizeof(t), "%.0f%%", h->depths[i]);
		canvas_text(cv, HEATMAP_LEFT - 8 - canvas_text_width(t, 2),
			    HEATMAP_TOP + i * HEATMAP_CELL_H + (HEATMAP_CELL_H - 14) / 2,
			    2, t, black);
	}
}

enum err heatmap_png(const struct heatmap *h, struct buf *png, struct diag *d)
{
	struct canvas *cv = NULL;
	int r, c, w, ht;
	enum err e;

	if (h->ndepths > HEATMAP_MAX_DEPTHS || h->nlengths > HEATMAP_MAX_LENGTHS)
		return diag_fail(d, ERR_LIMIT, "recall grid of %d depths x %d lengths is too large to draw",
				 h->ndepths, h->nlengths);
	w = HEATMAP_LEFT + h->nlengths * HEATMAP_CELL_W + 16;
	if (w < 420)
		w = 420;
	ht = HEATMAP_TOP + h->ndepths * HEATMAP_CELL_H + 16;
	if ((e = canvas_new(w, ht, white, &cv, d)))
		return e;
	draw_labels(cv, h);
	for (r = 0; r < h->ndepths; r++)
		for (c = 0; c < h->nlengths; c++)
			draw_cell(cv, r, c, h->found[r * h->nlengths + c],
				  h->total[r * h->nlengths + c]);
	e = canvas_png(cv, png, d);
	canvas_free(cv);
	return e;
}
