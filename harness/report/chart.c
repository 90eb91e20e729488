/*
 * chart — see chart.h.
 */
#include "chart.h"

#include <math.h>
#include <stdio.h>

const unsigned char chart_black[3] = {0, 0, 0}, chart_white[3] = {255, 255, 255},
		    chart_grid[3] = {225, 225, 225}, chart_axis[3] = {120, 120, 120};

void chart_scale(struct chart_panel *p, double most, int lines)
{
	canvas_scale(most, lines, &p->step, &p->top);
}

int chart_x(const struct chart_panel *p, int k)
{
	return p->x0 + (int)((k + 0.5) * p->w / p->n);
}

int chart_y(const struct chart_panel *p, double v)
{
	return p->y0 - (int)lround(v / p->top * p->h);
}

void chart_text_centred(struct canvas *cv, int x, int w, int y, int scale, const char *text,
			const unsigned char rgb[3])
{
	canvas_text(cv, x + (w - canvas_text_width(text, scale)) / 2, y, scale, text, rgb);
}

void chart_text_left_of(struct canvas *cv, int x, int y, int scale, const char *text,
			const unsigned char rgb[3])
{
	canvas_text(cv, x - 8 - canvas_text_width(text, scale), y, scale, text, rgb);
}

void chart_frame(struct canvas *cv, const struct chart_panel *p, const char *title, int gap,
		 const char *ysuffix, const char *const *labels, const unsigned char *const *rgb,
		 const char *xname)
{
	char t[48];
	double v;
	int k;

	canvas_text(cv, p->x0, p->y0 - p->h - gap, 1, title, chart_black);
	for (v = 0; v <= p->top + p->step / 2; v += p->step) {
		canvas_fill_rect(cv, p->x0, chart_y(p, v), p->w, 1, v == 0 ? chart_axis : chart_grid);
		snprintf(t, sizeof(t), "%g%s", v, ysuffix);
		chart_text_left_of(cv, p->x0, chart_y(p, v) - 3, 1, t, chart_black);
	}
	canvas_fill_rect(cv, p->x0, p->y0 - p->h, 1, p->h, chart_axis);
	for (k = 0; k < p->n; k++) {
		canvas_fill_rect(cv, chart_x(p, k), p->y0, 1, 4, chart_axis);
		chart_text_centred(cv, chart_x(p, k), 0, p->y0 + 8, 1, labels[k],
				   rgb && rgb[k] ? rgb[k] : chart_black);
	}
	if (xname)
		chart_text_centred(cv, p->x0, p->w, p->y0 + 22, 1, xname, chart_axis);
}

void chart_series(struct canvas *cv, const struct chart_panel *p, const struct chart_point *pt,
		  int n, const struct chart_style *s)
{
	int i, have = 0, px = 0, py = 0;

	for (i = 0; i < n; i++) {
		int x = chart_x(p, pt[i].k) + s->dx, y;

		if (!isnan(pt[i].lo) && !isnan(pt[i].hi) && pt[i].lo <= pt[i].hi) {
			int top = chart_y(p, pt[i].hi), bottom = chart_y(p, pt[i].lo);
			if (bottom - top >= s->bar_px) {
				canvas_fill_rect(cv, x - 1, top, 3, bottom - top + 1, s->rgb);
				if (s->caps) {
					canvas_fill_rect(cv, x - 5, top, 11, 1, s->rgb);
					canvas_fill_rect(cv, x - 5, bottom, 11, 1, s->rgb);
				}
			}
		}
		if (isnan(pt[i].mid)) {
			have = 0;
			continue;
		}
		y = chart_y(p, pt[i].mid);
		if (have)
			canvas_line(cv, px, py, x, y, s->line, s->rgb);
		canvas_fill_rect(cv, x - 3, y - 3, 7, 7, s->rgb);
		if (pt[i].label)
			chart_text_centred(cv, x, 0, y - 14, 1, pt[i].label, chart_black);
		px = x, py = y, have = 1;
	}
}

void chart_key(struct canvas *cv, int x, int y, const unsigned char rgb[3], const char *text)
{
	canvas_fill_rect(cv, x, y, 20, 9, rgb);
	canvas_text(cv, x + 28, y + 1, 1, text, chart_black);
}
