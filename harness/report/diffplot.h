/*
 * diffplot — the picture of a comparison's load cells (`needle diff --plot
 * FILE`): baseline A and candidate B drawn together, in absolute values, so
 * a reader sees at once where B is slower and whether the runs' spread
 * covers the difference.
 *
 * One row per load case (first-appearance order), three panels in a row:
 * output throughput (tok/s), TTFT P50 and TTFT P95 (ms), each against the
 * case's levels (concurrency or rate; equally spaced, ascending, labelled as
 * the cell's level, e.g. "c32" or "r0.3"). At every level A's mark sits
 * DIFFPLOT_OFFSET pixels left of the tick and B's as far right: a square at
 * the median over valid rounds, a bar from the minimum to the maximum over
 * rounds, and a line joining a run's medians from level to level. A and B
 * share each panel's scale (0 to above the larger maximum of the two, in
 * 1-2-5 steps), so their heights compare directly. A level's label is red
 * when its cell's verdict is fail and amber when underpowered. A legend above
 * the rows names both runs and says what the marks mean.
 *
 * Input: the comparison's load cells (diff.h, struct diff_cell): each
 * one's case and level, both runs' cells (median, minimum and maximum over
 * rounds of output throughput, TTFT P50 and TTFT P95; a run without the
 * cell, or a figure that is missing or not finite, is not drawn) and its
 * verdict. Past DIFFPLOT_MAX_CASES cases the first ones are drawn. It knows
 * nothing of files: the caller writes the bytes.
 *
 * The decision picture (diffplot_decision_png, the one `needle diff --format
 * html` shows) draws what the gates concluded rather than the levels: one
 * panel per gate that judged a load cell (its spec as the title, in the
 * order the cells' judgements first name it; DIFFPLOT_DEC_COLS panels a
 * band, more bands below), one row per load cell (labelled "CASE/LEVEL" in
 * the cell's verdict colour, the same rows in every band). In a row, the
 * cell's judgement by that gate: a square at its value (B/A for a ratio
 * gate, B's figure for another) and a bar over its 90% interval when both
 * ends are finite, coloured by its verdict (pass green, underpowered amber,
 * fail red); no value is a short bar at the left edge in its colour. Each
 * panel has a black vertical line at the gate's threshold, the side beyond
 * it tinted (the side where the gate's operator, gate_parse, does not hold),
 * and for a ratio gate (a metric named *_ratio) a grey line at 1. The x scale
 * spans every value, interval end, threshold and 1 of the panel, a ratio's
 * clipped to 0..DIFFPLOT_DEC_RATIO_MAX, padded and rounded to 1-2-5 steps;
 * marks beyond it stop at the panel's edge. Cells past DIFFPLOT_DEC_ROWS and
 * gates past DIFFPLOT_DEC_PANELS are left out.
 */
#ifndef NEEDLE_DIFFPLOT_H
#define NEEDLE_DIFFPLOT_H

#include <stddef.h>

#include "base/buf.h"
#include "base/err.h"
#include "diff.h"

#define DIFFPLOT_PANEL_W 300   /* px, one panel's plotting area */
#define DIFFPLOT_PANEL_H 180
#define DIFFPLOT_LEFT 64       /* px left of each panel: its y labels */
#define DIFFPLOT_TOP 100       /* px above the first row: title and legend */
#define DIFFPLOT_HEAD 24       /* px above a row's panels: the case and panel names */
#define DIFFPLOT_FOOT 36       /* px below a row's panels: the level labels */
#define DIFFPLOT_ROW (DIFFPLOT_HEAD + DIFFPLOT_PANEL_H + DIFFPLOT_FOOT)
#define DIFFPLOT_OFFSET 7      /* px from a level's tick to each run's marks */
#define DIFFPLOT_PANELS 3
#define DIFFPLOT_MAX_CASES 16

#define DIFFPLOT_DEC_TOP 100    /* px above the first band: title and legend */
#define DIFFPLOT_DEC_LABEL 168  /* px of the row labels left of each band */
#define DIFFPLOT_DEC_W 240      /* px, one decision panel's plotting width */
#define DIFFPLOT_DEC_GAP 28     /* px right of each decision panel */
#define DIFFPLOT_DEC_COLS 3     /* decision panels per band */
#define DIFFPLOT_DEC_HEAD 28    /* px above a band's rows: the panels' titles */
#define DIFFPLOT_DEC_ROW 18     /* px per load entry */
#define DIFFPLOT_DEC_FOOT 28    /* px below a band's rows: the x labels */
#define DIFFPLOT_DEC_PANELS 9
#define DIFFPLOT_DEC_ROWS 96
#define DIFFPLOT_DEC_RATIO_MAX 3.0

/* The runs' colours (A left of each tick, B right) and the verdicts'. */
extern const unsigned char diffplot_rgb_a[3], diffplot_rgb_b[3];
extern const unsigned char diffplot_rgb_fail[3], diffplot_rgb_underpowered[3];
extern const unsigned char diffplot_rgb_pass[3];

/* The picture's width and height in pixels for `ncases` cases. Row r's
 * panel p spans x from p * (DIFFPLOT_LEFT + DIFFPLOT_PANEL_W) + DIFFPLOT_LEFT,
 * DIFFPLOT_PANEL_W wide, and y from DIFFPLOT_TOP + r * DIFFPLOT_ROW +
 * DIFFPLOT_HEAD, DIFFPLOT_PANEL_H high (its bottom is 0); level k of n has
 * its tick at x0 + (k + 0.5) * DIFFPLOT_PANEL_W / n. */
void diffplot_size(int ncases, int *w, int *h);

/* Draws cells[0..ncells) (borrowed) and appends the PNG to `png`; `name_a`
 * and `name_b` name the runs in the legend. Appends nothing without a
 * cell. ERR_NOMEM, ERR_LIMIT (the buffer's cap). */
enum err diffplot_png(const struct diff_cell *cells, size_t ncells, const char *name_a,
		      const char *name_b, struct buf *png, struct diag *d);

/* The decision picture's size for `npanels` gates and `nrows` cells:
 * bands = ceil(npanels / DIFFPLOT_DEC_COLS), w = DIFFPLOT_DEC_LABEL +
 * min(npanels, DIFFPLOT_DEC_COLS) * (DIFFPLOT_DEC_W + DIFFPLOT_DEC_GAP) + 12,
 * h = DIFFPLOT_DEC_TOP + bands * (DIFFPLOT_DEC_HEAD + nrows * DIFFPLOT_DEC_ROW
 * + DIFFPLOT_DEC_FOOT) + 8. Panel p's plotting area starts at x =
 * DIFFPLOT_DEC_LABEL + (p % DIFFPLOT_DEC_COLS) * (DIFFPLOT_DEC_W +
 * DIFFPLOT_DEC_GAP); row r of band k is centred at y = DIFFPLOT_DEC_TOP + k *
 * (band height) + DIFFPLOT_DEC_HEAD + r * DIFFPLOT_DEC_ROW +
 * DIFFPLOT_DEC_ROW / 2. */
void diffplot_decision_size(int npanels, int nrows, int *w, int *h);

/* Draws the decision of cells[0..ncells) (borrowed, with the judgements
 * gate.h gives them) and appends the PNG to `png`; the legend names the
 * runs. Appends nothing when no cell was judged. ERR_NOMEM, ERR_LIMIT. */
enum err diffplot_decision_png(const struct diff_cell *cells, size_t ncells, const char *name_a,
			       const char *name_b, struct buf *png, struct diag *d);

#endif
