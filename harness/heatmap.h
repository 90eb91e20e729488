/*
 * heatmap — the recall picture: a grid of needle depths (rows, ascending)
 * by prompt lengths (columns, ascending), each cell coloured by the fraction
 * of needles found there and labelled with its percent and found/total, the
 * axes labelled with exact values (131072 and 128000 are not both "128K").
 * It knows nothing of summaries or files: the caller hands it the numbers,
 * and it draws them on a canvas (canvas.h) and appends the PNG.
 */
#ifndef NEEDLE_HEATMAP_H
#define NEEDLE_HEATMAP_H

#include "buf.h"
#include "err.h"

/* Layout in pixels; heatmap_cell gives the top left of a cell's interior. */
#define HEATMAP_LEFT 88
#define HEATMAP_TOP 64
#define HEATMAP_CELL_W 96
#define HEATMAP_CELL_H 48
#define HEATMAP_MAX_DEPTHS 100
#define HEATMAP_MAX_LENGTHS 80

/* The numbers to draw, all borrowed. found and total are ndepths x nlengths,
 * row-major (depth row, length column); a cell with total <= 0 has no data
 * and is drawn grey with "-". */
struct heatmap {
	int ndepths, nlengths;
	const double *depths;  /* percent, one per row */
	const double *lengths; /* prompt tokens, one per column */
	const double *found, *total;
};

/* The colour of a recall fraction in [0, 1] (clamped): red at 0, yellow at
 * 0.5, green at 1, linear in between. */
void heatmap_rgb(double fraction, unsigned char rgb[3]);
/* Pixel position of the top left of cell (row, col)'s coloured interior. */
void heatmap_cell(int row, int col, int *x, int *y);
/* Draws `h` and appends it as PNG to `png`. ERR_LIMIT past
 * HEATMAP_MAX_DEPTHS x HEATMAP_MAX_LENGTHS, ERR_NOMEM. */
enum err heatmap_png(const struct heatmap *h, struct buf *png, struct diag *d);

#endif
