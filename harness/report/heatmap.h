/*
 * heatmap — the recall picture: a grid of needle depths (rows, ascending)
 * by prompt lengths (columns, ascending), each cell coloured by the fraction
 * of needles found among those that got an answer, labelled with its percent
 * and found/answered; a needle whose attempt failed at transport is not a
 * miss: a cell where every attempt failed is hatched grey ("NO ANSWER"), one
 * where some did carries a hatched strip and "(N FAIL)". A title line names
 * the run; a legend under the grid explains the colours. Prompt lengths are
 * labelled K = 1024 and M = 1024K tokens when they are whole multiples, and
 * in full otherwise (131072 is "128K", 128000 is "125K", 100000 stays
 * "100000"), so a label is never rounded. It knows
 * nothing of summaries or files: the caller hands it the numbers, and it
 * draws them on a canvas (canvas.h) and appends the PNG.
 */
#ifndef NEEDLE_HEATMAP_H
#define NEEDLE_HEATMAP_H

#include <stddef.h>

#include "base/buf.h"
#include "base/err.h"

/* Layout in pixels; heatmap_cell gives the top left of a cell's interior. */
#define HEATMAP_LEFT 88
#define HEATMAP_TOP 80
#define HEATMAP_LEGEND_H 40 /* below the grid */
#define HEATMAP_MIN_W 640   /* room for the legend */
#define HEATMAP_CELL_W 96
#define HEATMAP_CELL_H 48
#define HEATMAP_MAX_DEPTHS 100
#define HEATMAP_MAX_LENGTHS 80

/* The numbers to draw, all borrowed. found, total and failed are ndepths x
 * nlengths, row-major (depth row, length column): needles found, all
 * needles, needles whose attempt failed at transport (failed may be NULL:
 * none); a cell with total <= 0 has no data and is drawn plain grey with
 * "-". */
struct heatmap {
	int ndepths, nlengths;
	const double *depths;  /* percent, one per row */
	const double *lengths; /* prompt tokens, one per column */
	const double *found, *total;
	const double *failed;
	const char *title;     /* e.g. "MODEL X  RUN Y  2026-01-01"; may be NULL */
};

/* The column label of a prompt length into out[0..cap): "128K", "1M" or the
 * digits (see above). */
void heatmap_length_label(double tokens, char *out, size_t cap);

/* The colour of a recall fraction in [0, 1] (clamped): red at 0, yellow at
 * 0.5, green at 1, linear in between. */
void heatmap_rgb(double fraction, unsigned char rgb[3]);
/* Pixel position of the top left of cell (row, col)'s coloured interior. */
void heatmap_cell(int row, int col, int *x, int *y);
/* Draws `h` and appends it as PNG to `png`. ERR_LIMIT past
 * HEATMAP_MAX_DEPTHS x HEATMAP_MAX_LENGTHS, ERR_NOMEM. */
enum err heatmap_png(const struct heatmap *h, struct buf *png, struct diag *d);

#endif
