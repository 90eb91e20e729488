/*
 * diffplot — the picture of a comparison's load cells (`needle diff --plot
 * FILE`): baseline A and candidate B drawn together, in absolute values, so
 * a reader sees at once where B is slower and whether the runs' spread
 * covers the difference.
 *
 * One row per load case (first-appearance order), three panels in a row:
 * output throughput (tok/s), TTFT P50 and TTFT P95 (ms), each against the
 * case's levels (concurrency or rate; equally spaced, ascending, labelled as
 * the entry's "level", e.g. "c32" or "r0.3"). At every level A's mark sits
 * DIFFPLOT_OFFSET pixels left of the tick and B's as far right: a square at
 * the median over valid rounds, a bar from the minimum to the maximum over
 * rounds, and a line joining a run's medians from level to level. A and B
 * share each panel's scale (0 to above the larger maximum of the two, in
 * 1-2-5 steps), so their heights compare directly. A level's label is red
 * when its verdict is "fail" and amber when "underpowered". A legend above
 * the rows names both runs and says what the marks mean.
 *
 * Input: the diff's "load" array, each entry {"case", "level", "concurrency"
 * or "rate", "a": {FIG, FIG_min, FIG_max, ...} or null, "b": the same,
 * "verdict"}, FIG being output_tps, ttft_p50_ms and ttft_p95_ms; a figure
 * that is missing or not a number is not drawn. Past DIFFPLOT_MAX_CASES
 * cases the first ones are drawn. It knows nothing of files: the caller
 * writes the bytes.
 */
#ifndef NEEDLE_DIFFPLOT_H
#define NEEDLE_DIFFPLOT_H

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/err.h"

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

/* The runs' colours (A left of each tick, B right) and the verdicts'. */
extern const unsigned char diffplot_rgb_a[3], diffplot_rgb_b[3];
extern const unsigned char diffplot_rgb_fail[3], diffplot_rgb_underpowered[3];

/* The picture's width and height in pixels for `ncases` cases. Row r's
 * panel p spans x from p * (DIFFPLOT_LEFT + DIFFPLOT_PANEL_W) + DIFFPLOT_LEFT,
 * DIFFPLOT_PANEL_W wide, and y from DIFFPLOT_TOP + r * DIFFPLOT_ROW +
 * DIFFPLOT_HEAD, DIFFPLOT_PANEL_H high (its bottom is 0); level k of n has
 * its tick at x0 + (k + 0.5) * DIFFPLOT_PANEL_W / n. */
void diffplot_size(int ncases, int *w, int *h);

/* Draws the entries of `load` (borrowed) and appends the PNG to `png`;
 * `name_a` and `name_b` name the runs in the legend. Appends nothing when no
 * entry names a case. ERR_NOMEM, ERR_LIMIT (the buffer's cap). */
enum err diffplot_png(const cJSON *load, const char *name_a, const char *name_b,
		      struct buf *png, struct diag *d);

#endif
