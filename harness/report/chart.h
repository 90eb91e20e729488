/*
 * chart — the one engine behind needle's pictures of results, over canvas
 * (base/canvas.h): panels with categories along x and a linear y scale from
 * 0, their frames (title, grid, axis labels, ticks), series of points (a
 * square at each median, a bar from the minimum to the maximum over rounds,
 * a line joining the medians, a figure above a point), legend keys and
 * labels. The load picture (loadplot.h), the comparison's level picture and
 * decision picture (diffplot.h) and the recall heatmap's axes (heatmap.h)
 * draw with it; each picture decides only its layout and what it shows.
 */
#ifndef NEEDLE_CHART_H
#define NEEDLE_CHART_H

#include "base/canvas.h"

/* The colours every picture shares: text, background, grid, axes. */
extern const unsigned char chart_black[3], chart_white[3], chart_grid[3], chart_axis[3];

/* A panel: its plotting area (left edge x0, bottom y0 where the value is 0,
 * w x h px), n categories equally spaced along x, and y from 0 to top in
 * steps of step. */
struct chart_panel {
	int x0, y0, w, h, n;
	double step, top;
};

/* The panel's y scale for values up to `most`, with at most `lines` grid
 * lines above 0 (canvas_scale). */
void chart_scale(struct chart_panel *p, double most, int lines);
/* The x of category k's tick, the y of value v. */
int chart_x(const struct chart_panel *p, int k);
int chart_y(const struct chart_panel *p, double v);

/* The panel's frame: `title` `gap` px above the area; a grid line at each
 * step (the axis colour at 0), labelled "%g" followed by `ysuffix` left of
 * the area; the y axis; a tick under each category with labels[k] centred
 * under it in rgb[k] (rgb may be NULL: black); `xname` (may be NULL)
 * centred under the labels in the axis colour. */
void chart_frame(struct canvas *cv, const struct chart_panel *p, const char *title, int gap,
		 const char *ysuffix, const char *const *labels, const unsigned char *const *rgb,
		 const char *xname);

/* A point of a series: its category, its median and the minimum and maximum
 * over rounds (NaN: missing), and a figure drawn above it (or NULL). */
struct chart_point {
	int k;
	double mid, lo, hi;
	const char *label;
};

/* How a series is drawn: its colour; its marks `dx` px right of the ticks
 * (negative: left); its line `line` px thick; a min-max bar when lo <= hi
 * spans at least `bar_px` px, with 11 px caps at both ends when `caps`. */
struct chart_style {
	const unsigned char *rgb;
	int dx, line, bar_px, caps;
};

/* Draws n points in order: each one's bar, then, when its median is there,
 * the line from the previous median (a missing one breaks it), its square
 * and its label. */
void chart_series(struct canvas *cv, const struct chart_panel *p, const struct chart_point *pt,
		  int n, const struct chart_style *s);

/* A legend key: a 20 x 9 swatch at x, y and `text` right of it. */
void chart_key(struct canvas *cv, int x, int y, const unsigned char rgb[3], const char *text);
/* `text` centred in [x, x + w) (w = 0: centred on x), top at y. */
void chart_text_centred(struct canvas *cv, int x, int w, int y, int scale, const char *text,
			const unsigned char rgb[3]);
/* `text` ending 8 px left of x (an axis label), top at y. */
void chart_text_left_of(struct canvas *cv, int x, int y, int scale, const char *text,
			const unsigned char rgb[3]);

#endif
