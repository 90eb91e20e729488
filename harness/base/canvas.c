/*
 * canvas — see canvas.h.
 */
#include "canvas.h"

#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"

/* 5x7 bitmap font, one row per string, '#' is ink. Written for needle. */
static const struct glyph {
	char c;
	const char *rows[7];
} font[] = {
	{'0', {".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."}},
	{'1', {"..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."}},
	{'2', {".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"}},
	{'3', {"#####", "...#.", "..#..", "...#.", "....#", "#...#", ".###."}},
	{'4', {"...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."}},
	{'5', {"#####", "#....", "####.", "....#", "....#", "#...#", ".###."}},
	{'6', {"..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."}},
	{'7', {"#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."}},
	{'8', {".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."}},
	{'9', {".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."}},
	{'A', {".###.", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"}},
	{'B', {"####.", "#...#", "#...#", "####.", "#...#", "#...#", "####."}},
	{'C', {".###.", "#...#", "#....", "#....", "#....", "#...#", ".###."}},
	{'D', {"###..", "#..#.", "#...#", "#...#", "#...#", "#..#.", "###.."}},
	{'E', {"#####", "#....", "#....", "####.", "#....", "#....", "#####"}},
	{'F', {"#####", "#....", "#....", "####.", "#....", "#....", "#...."}},
	{'G', {".###.", "#...#", "#....", "#.###", "#...#", "#...#", ".####"}},
	{'H', {"#...#", "#...#", "#...#", "#####", "#...#", "#...#", "#...#"}},
	{'I', {".###.", "..#..", "..#..", "..#..", "..#..", "..#..", ".###."}},
	{'J', {"..###", "...#.", "...#.", "...#.", "...#.", "#..#.", ".##.."}},
	{'K', {"#...#", "#..#.", "#.#..", "##...", "#.#..", "#..#.", "#...#"}},
	{'L', {"#....", "#....", "#....", "#....", "#....", "#....", "#####"}},
	{'M', {"#...#", "##.##", "#.#.#", "#.#.#", "#...#", "#...#", "#...#"}},
	{'N', {"#...#", "#...#", "##..#", "#.#.#", "#..##", "#...#", "#...#"}},
	{'O', {".###.", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."}},
	{'P', {"####.", "#...#", "#...#", "####.", "#....", "#....", "#...."}},
	{'Q', {".###.", "#...#", "#...#", "#...#", "#.#.#", "#..#.", ".##.#"}},
	{'R', {"####.", "#...#", "#...#", "####.", "#.#..", "#..#.", "#...#"}},
	{'S', {".####", "#....", "#....", ".###.", "....#", "....#", "####."}},
	{'T', {"#####", "..#..", "..#..", "..#..", "..#..", "..#..", "..#.."}},
	{'U', {"#...#", "#...#", "#...#", "#...#", "#...#", "#...#", ".###."}},
	{'V', {"#...#", "#...#", "#...#", "#...#", "#...#", ".#.#.", "..#.."}},
	{'W', {"#...#", "#...#", "#...#", "#.#.#", "#.#.#", "#.#.#", ".#.#."}},
	{'X', {"#...#", "#...#", ".#.#.", "..#..", ".#.#.", "#...#", "#...#"}},
	{'Y', {"#...#", "#...#", ".#.#.", "..#..", "..#..", "..#..", "..#.."}},
	{'Z', {"#####", "....#", "...#.", "..#..", ".#...", "#....", "#####"}},
	{'-', {".....", ".....", ".....", "#####", ".....", ".....", "....."}},
	{' ', {".....", ".....", ".....", ".....", ".....", ".....", "....."}},
	/* punctuation for charts (image labels keep to the set above) */
	{'%', {"##...", "##..#", "...#.", "..#..", ".#...", "#..##", "...##"}},
	{'.', {".....", ".....", ".....", ".....", ".....", ".##..", ".##.."}},
	{'/', {".....", "....#", "...#.", "..#..", ".#...", "#....", "....."}},
	{':', {".....", ".##..", ".##..", ".....", ".##..", ".##..", "....."}},
	{'=', {".....", ".....", "#####", ".....", "#####", ".....", "....."}},
	{'(', {"...#.", "..#..", ".#...", ".#...", ".#...", "..#..", "...#."}},
	{')', {".#...", "..#..", "...#.", "...#.", "...#.", "..#..", ".#..."}},
	{'>', {".#...", "..#..", "...#.", "....#", "...#.", "..#..", ".#..."}},
	{'<', {"...#.", "..#..", ".#...", "#....", ".#...", "..#..", "...#."}},
	/* what model ids and file names hold (ref-good:prefill=20000,tpot=5) */
	{',', {".....", ".....", ".....", ".....", ".##..", "..#..", ".#..."}},
	{'_', {".....", ".....", ".....", ".....", ".....", ".....", "#####"}},
	{'+', {".....", "..#..", "..#..", "#####", "..#..", "..#..", "....."}},
	{'\'', {"..#..", "..#..", ".#...", ".....", ".....", ".....", "....."}},
	{'!', {"..#..", "..#..", "..#..", "..#..", "..#..", ".....", "..#.."}},
	{'?', {".###.", "#...#", "....#", "...#.", "..#..", ".....", "..#.."}},
	{'*', {".....", "#.#.#", ".###.", "#####", ".###.", "#.#.#", "....."}},
	{'#', {".#.#.", ".#.#.", "#####", ".#.#.", "#####", ".#.#.", ".#.#."}},
	{'[', {".###.", ".#...", ".#...", ".#...", ".#...", ".#...", ".###."}},
	{']', {".###.", "...#.", "...#.", "...#.", "...#.", "...#.", ".###."}},
	{';', {".....", ".##..", ".##..", ".....", ".##..", "..#..", ".#..."}},
	{'@', {".###.", "#...#", "#.###", "#.#.#", "#.###", "#....", ".###."}},
};

static const struct glyph *glyph_of(char c)
{
	size_t i;

	if (c >= 'a' && c <= 'z')
		c = (char)(c - 'a' + 'A');
	for (i = 0; i < sizeof(font) / sizeof(font[0]); i++)
		if (font[i].c == c)
			return &font[i];
	return NULL;
}


int canvas_has_glyph(char c)
{
	return glyph_of(c) != NULL;
}

/* libpng reports through these; the message is kept for the diag and
 * control returns to the setjmp in encode(). Warnings are dropped: modules
 * never print. */
struct png_ctx {
	struct buf *out;
	enum err code;
	char msg[200];
};

static void png_on_error(png_structp png, png_const_charp msg)
{
	struct png_ctx *c = png_get_error_ptr(png);
	size_t n = strlen(msg);

	if (n >= sizeof(c->msg))
		n = sizeof(c->msg) - 1;
	memcpy(c->msg, msg, n);
	c->msg[n] = '\0';
	png_longjmp(png, 1);
}

static void png_on_warning(png_structp png, png_const_charp msg)
{
	(void)png;
	(void)msg;
}

static void png_on_write(png_structp png, png_bytep data, size_t len)
{
	struct png_ctx *c = png_get_io_ptr(png);
	enum err e = buf_append(c->out, data, len);

	if (e) {
		c->code = e;
		png_error(png, e == ERR_NOMEM ? "out of memory"
					      : "output larger than its cap");
	}
}

static void png_on_flush(png_structp png)
{
	(void)png;
}

/* Encodes `w` x `h` RGB pixels. Locals that live across setjmp are
 * volatile or untouched after it (C11 7.13.2.1). */
static enum err encode(const unsigned char *px, int w, int h, struct buf *out,
		       struct diag *d)
{
	struct png_ctx ctx = {out, ERR_OK, ""};
	png_structp png;
	png_infop info = NULL;
	size_t start = out->len;
	int y;

	png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &ctx, png_on_error,
				      png_on_warning);
	if (!png)
		return diag_fail(d, ERR_NOMEM, "cannot start the png writer: out of memory");
	info = png_create_info_struct(png);
	if (!info) {
		png_destroy_write_struct(&png, NULL);
		return diag_fail(d, ERR_NOMEM, "cannot start the png writer: out of memory");
	}
	if (setjmp(png_jmpbuf(png))) {
		png_destroy_write_struct(&png, &info);
		buf_truncate(out, start);
		if (ctx.code)
			return diag_fail(d, ctx.code, "cannot write png: %s", ctx.msg);
		return diag_fail(d, ERR_INTERNAL, "cannot write png: %s", ctx.msg);
	}
	png_set_write_fn(png, &ctx, png_on_write, png_on_flush);
	png_set_compression_level(png, 9);
	png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8,
		     PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
		     PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	png_write_info(png, info);
	for (y = 0; y < h; y++)
		png_write_row(png, px + (size_t)y * (size_t)w * 3);
	png_write_end(png, info);
	png_destroy_write_struct(&png, &info);
	return ERR_OK;
}

enum err canvas_new(int w, int h, const unsigned char bg[3],
			  struct canvas **out, struct diag *d)
{
	struct canvas *c;
	size_t i, n;

	*out = NULL;
	if (w < 1 || h < 1 || w > CANVAS_MAX || h > CANVAS_MAX)
		return diag_fail(d, ERR_LIMIT, "picture of %dx%d pixels is outside 1..%d",
				 w, h, CANVAS_MAX);
	n = (size_t)w * (size_t)h;
	c = mem_alloc(sizeof(*c));
	if (!c || !(c->px = mem_alloc(n * 3))) {
		mem_free(c);
		return diag_fail(d, ERR_NOMEM, "cannot allocate a %dx%d picture: out of memory", w, h);
	}
	c->w = w;
	c->h = h;
	for (i = 0; i < n; i++)
		memcpy(c->px + i * 3, bg, 3);
	*out = c;
	return ERR_OK;
}

void canvas_free(struct canvas *c)
{
	if (!c)
		return;
	mem_free(c->px);
	mem_free(c);
}

void canvas_fill_rect(struct canvas *c, int x, int y, int w, int h,
		     const unsigned char rgb[3])
{
	int x0 = x < 0 ? 0 : x, y0 = y < 0 ? 0 : y;
	int x1 = x + w > c->w ? c->w : x + w, y1 = y + h > c->h ? c->h : y + h;
	int i, j;

	for (j = y0; j < y1; j++)
		for (i = x0; i < x1; i++)
			memcpy(c->px + ((size_t)j * (size_t)c->w + (size_t)i) * 3, rgb, 3);
}

void canvas_line(struct canvas *c, int x0, int y0, int x1, int y1, int thick,
		 const unsigned char rgb[3])
{
	int dx = abs(x1 - x0), dy = abs(y1 - y0), steps = dx > dy ? dx : dy, i;

	for (i = 0; i <= steps; i++) {
		double t = steps ? (double)i / steps : 0;
		canvas_fill_rect(c, (int)lround(x0 + t * (x1 - x0)), (int)lround(y0 + t * (y1 - y0)),
				 thick, thick, rgb);
	}
}

void canvas_scale(double most, int lines, double *step, double *top)
{
	static const double mult[] = {1, 2, 5};
	double p = pow(10, floor(log10(most / lines)));
	int k = 0;

	if (!(most > 0) || !isfinite(most) || lines < 1) {
		*step = 1;
		*top = 1;
		return;
	}
	while (most / (mult[k] * p) > lines) {
		if (++k == 3)
			k = 0, p *= 10;
	}
	*step = mult[k] * p;
	*top = ceil(most / *step) * *step;
}

int canvas_text_width(const char *text, int scale)
{
	size_t n = strlen(text);

	return n ? (int)(6 * n - 1) * scale : 0;
}

int canvas_text(struct canvas *c, int x, int y, int scale,
	       const char *text, const unsigned char rgb[3])
{
	int i, row, col;

	for (i = 0; text[i]; i++) {
		const struct glyph *gl = glyph_of(text[i]);
		if (!gl)
			gl = glyph_of('-'); /* a visible stand-in, never a gap */
		for (row = 0; row < 7; row++)
			for (col = 0; col < 5; col++)
				if (gl->rows[row][col] == '#')
					canvas_fill_rect(c, x + (6 * i + col) * scale,
							y + row * scale, scale, scale, rgb);
	}
	return canvas_text_width(text, scale);
}

enum err canvas_png(const struct canvas *c, struct buf *png,
			  struct diag *d)
{
	return encode(c->px, c->w, c->h, png, d);
}

