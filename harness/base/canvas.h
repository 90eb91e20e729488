/*
 * canvas — an RGB picture in memory, a built-in 5x7 bitmap font and the one
 * PNG writer: the generators' pictures (generators/image.c) and the report's
 * recall heatmap (heatmap.c) are both drawn here and written by canvas_png.
 *
 * The font has A-Z (lower case drawn as upper), 0-9, space and
 * - % . / : = ( ) < > , _ + ' ! ? * # [ ] ; @ (a model id such as
 * ref-good:prefill=20000,tpot=5 prints as written); canvas_text draws any
 * other character as '-'.
 * Coordinates are pixels from the top left; all drawing is clipped to the
 * canvas. The PNG is 8-bit RGB, no interlace, zlib level 9 and no time
 * chunk, so the same pixels give the same bytes for a given zlib build.
 * libpng's setjmp error handling never leaves this module: failures come
 * back as enum err.
 */
#ifndef NEEDLE_CANVAS_H
#define NEEDLE_CANVAS_H

#include "buf.h"
#include "err.h"

#define CANVAS_MAX 8192 /* pixels per side */

struct canvas {
	int w, h;          /* pixels */
	unsigned char *px; /* owned, w*h*3 bytes, rows top to bottom, RGB */
};

/* A new `w` x `h` canvas filled with `bg`, owned by the caller (free with
 * canvas_free). ERR_LIMIT outside 1..CANVAS_MAX, ERR_NOMEM. */
enum err canvas_new(int w, int h, const unsigned char bg[3], struct canvas **out,
		    struct diag *d);
/* Frees the canvas. Accepts NULL. */
void canvas_free(struct canvas *c);

/* Fills the rectangle (clipped) with `rgb`. */
void canvas_fill_rect(struct canvas *c, int x, int y, int w, int h,
		      const unsigned char rgb[3]);
/* A line `thick` pixels square at each step from (x0, y0) to (x1, y1),
 * clipped like every drawing. */
void canvas_line(struct canvas *c, int x0, int y0, int x1, int y1, int thick,
		 const unsigned char rgb[3]);
/* A chart axis from 0 for values up to `most` (> 0): *step, the smallest
 * of 1, 2 or 5 times a power of ten that gives at most `lines` grid lines
 * above 0, and *top, the first multiple of it at or above `most`. */
void canvas_scale(double most, int lines, double *step, double *top);
/* Whether the font has a glyph for `c` (lower case counts as upper). */
int canvas_has_glyph(char c);
/* Draws `text` with its top left at (x, y), each font dot `scale` pixels
 * square, one dot between characters; returns the width drawn. */
int canvas_text(struct canvas *c, int x, int y, int scale, const char *text,
		const unsigned char rgb[3]);
/* The width canvas_text would draw: (6 * chars - 1) * scale; 0 for "". */
int canvas_text_width(const char *text, int scale);

/* Appends the canvas as a PNG to `png`; on failure `png` is as it was.
 * ERR_NOMEM or ERR_LIMIT from the buffer, ERR_INTERNAL from libpng. */
enum err canvas_png(const struct canvas *c, struct buf *png, struct diag *d);

#endif
