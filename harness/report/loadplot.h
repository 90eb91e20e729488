/*
 * loadplot — the load picture (load.png): how output throughput and TTFT P95
 * grow with concurrency, each normalised to the case's lowest level (C1 in
 * the field reports' matrices, both at 1x at C1 with no second axis:
 * docs/cutover.md "Where the rule comes from"). Two panels side by side, each with its own y scale of multiples
 * ("1X", "2X", ...; a TTFT that grows 300 times would flatten throughput on a
 * shared one): left throughput, right TTFT P95; in each, one line per case in
 * its own colour, a square at every level with a figure, labelled with the
 * figure itself (tok/s, ms) when there are at most LOADPLOT_VALUES_MAX
 * cases, and a bar from the level's min to its max over rounds where there
 * is one; a level without a figure (no valid round) breaks the line. The x axis has the distinct
 * concurrency levels of all cases, equally spaced, ascending ("C1", "C8",
 * "C32"). A legend under the panels names each case's colour.
 *
 * Only closed-loop cells are drawn (open-loop rates have no concurrency); a
 * summary without any gives no picture; past LOADPLOT_MAX_CASES cases the
 * first ones are drawn. It knows nothing of files: the
 * caller writes the bytes.
 */
#ifndef NEEDLE_LOADPLOT_H
#define NEEDLE_LOADPLOT_H

#include <stddef.h>

#include "base/buf.h"
#include "base/err.h"
#include "load/loadcells.h"

#define LOADPLOT_PANEL_W 400  /* px, one panel's plotting area */
#define LOADPLOT_PANEL_H 260
#define LOADPLOT_LEFT 64      /* px left of each panel: its y labels */
#define LOADPLOT_TOP 84       /* px above the panels: title lines */
#define LOADPLOT_BOTTOM 40    /* px below a panel: its x labels */
#define LOADPLOT_LEGEND_ROW 16 /* px per legend line (one per case) */
#define LOADPLOT_MAX_CASES 64
#define LOADPLOT_VALUES_MAX 2 /* cases whose points carry their figures */

/* One case's line: n levels (ascending concurrency) with throughput and TTFT
 * P95 (the median over rounds); a figure < 0 or NaN is missing. The min and
 * max over rounds, when not NULL, are drawn as a bar through each point. All
 * borrowed. */
struct loadplot_case {
	const char *name;
	int n;
	const double *concurrency;
	const double *tps;
	const double *ttft_p95;
	const double *tps_min, *tps_max;   /* or NULL */
	const double *ttft_min, *ttft_max; /* or NULL */
};

/* The picture's width and height in pixels for `ncases` cases. */
void loadplot_size(int ncases, int *w, int *h);

/* Draws `n` cases and appends the PNG to `png`; `title` may be NULL.
 * ERR_LIMIT past LOADPLOT_MAX_CASES cases, ERR_NOMEM. */
enum err loadplot_png(const struct loadplot_case *c, int n, const char *title,
		      struct buf *png, struct diag *d);

/* The picture of the closed-loop cells of `lc` (loadcells.h), appended to
 * `png`; nothing when it has none. `title` as above. */
enum err loadplot_summary(const struct loadcells *lc, const char *title, struct buf *png,
			  struct diag *d);

#endif
