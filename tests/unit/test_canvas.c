/*
 * Unit tests of canvas: sizes, clipped rectangles, the font's dot counts and
 * the PNG it writes, read back with libpng's simplified API.
 */
#include <math.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/canvas.h"
#include "t.h"

static const unsigned char white[3] = {255, 255, 255}, ink[3] = {0, 0, 0};

static int count_rgb(const struct canvas *c, const unsigned char rgb[3])
{
	int x, y, n = 0;

	for (y = 0; y < c->h; y++)
		for (x = 0; x < c->w; x++)
			n += !memcmp(c->px + ((size_t)y * (size_t)c->w + (size_t)x) * 3, rgb, 3);
	return n;
}

/* The chart glyphs draw; an unknown character draws as '-', never a gap. */
static void test_text(void)
{
	struct canvas *c = NULL;
	struct diag d;

	diag_init(&d);
	CHECK(canvas_new(0, 10, white, &c, &d) == ERR_LIMIT && !c);
	diag_init(&d);
	CHECK(canvas_new(10, CANVAS_MAX + 1, white, &c, &d) == ERR_LIMIT && !c);
	diag_init(&d);
	CHECK(canvas_new(40, 20, white, &c, &d) == ERR_OK && c);
	CHECK_EQ_LONG(canvas_text_width("5%", 2), 22);
	CHECK_EQ_LONG(canvas_text_width("", 3), 0);
	CHECK_EQ_LONG(canvas_text(c, 1, 1, 2, "5%", ink), 22);
	/* '5' has 17 dots and '%' 13 in the 5x7 font, 4 pixels each at scale 2 */
	CHECK_EQ_LONG(count_rgb(c, ink), (17 + 13) * 4);
	canvas_fill_rect(c, 0, 0, 40, 20, white);
	CHECK_EQ_LONG(canvas_text(c, 0, 0, 1, "~", ink), 5);
	CHECK_EQ_LONG(count_rgb(c, ink), 5); /* the '-' glyph: one row of five */
	CHECK(canvas_has_glyph('a') && canvas_has_glyph('%') && !canvas_has_glyph('~'));
	/* a model id's punctuation has glyphs of its own, not '-' (issue 25.7) */
	CHECK(canvas_has_glyph(',') && canvas_has_glyph('_') && canvas_has_glyph('+'));
	canvas_fill_rect(c, 0, 0, 40, 20, white);
	canvas_text(c, 0, 0, 1, ",_+", ink);
	CHECK_EQ_LONG(count_rgb(c, ink), 4 + 5 + 9);
	canvas_free(c);
	canvas_free(NULL);
}

/* Rectangles are clipped to the canvas on every side. */
static void test_clip(void)
{
	static const unsigned char red[3] = {255, 0, 0};
	struct canvas *c = NULL;

	CHECK(canvas_new(10, 8, white, &c, NULL) == ERR_OK && c);
	canvas_fill_rect(c, -5, -5, 8, 7, red); /* covers 3 x 2 */
	CHECK_EQ_LONG(count_rgb(c, red), 6);
	canvas_fill_rect(c, 8, 6, 100, 100, red); /* covers 2 x 2 */
	CHECK_EQ_LONG(count_rgb(c, red), 10);
	canvas_fill_rect(c, 20, 20, 5, 5, red);
	CHECK_EQ_LONG(count_rgb(c, red), 10);
	canvas_free(c);
}

/* A line covers its ends and the pixels between, clipped; a scale has at
 * most the grid lines asked for, in 1-2-5 steps, and covers the values. */
static void test_line_scale(void)
{
	static const unsigned char red[3] = {255, 0, 0};
	struct canvas *c = NULL;
	double step, top;

	CHECK(canvas_new(10, 10, white, &c, NULL) == ERR_OK && c);
	canvas_line(c, 0, 0, 9, 0, 1, red);
	CHECK_EQ_LONG(count_rgb(c, red), 10);
	canvas_line(c, 0, 0, 9, 9, 1, red); /* the diagonal: 9 more (0,0 is drawn) */
	CHECK_EQ_LONG(count_rgb(c, red), 19);
	canvas_line(c, -20, 5, 30, 5, 2, red); /* rows 5 and 6 across, clipped */
	CHECK_EQ_LONG(count_rgb(c, red), 19 + 20 - 2);
	canvas_free(c);
	canvas_scale(2, 6, &step, &top);
	CHECK(step == 0.5 && top == 2);
	canvas_scale(7, 6, &step, &top);
	CHECK(step == 2 && top == 8);
	canvas_scale(1234, 5, &step, &top);
	CHECK(step == 500 && top == 1500);
	canvas_scale(0.37, 4, &step, &top);
	CHECK(fabs(step - 0.1) < 1e-12 && fabs(top - 0.4) < 1e-12);
	canvas_scale(0, 6, &step, &top);
	CHECK(step == 1 && top == 1);
}

/* The PNG reads back pixel for pixel; a buffer too small leaves it as it was. */
static void test_png(void)
{
	static const unsigned char blue[3] = {0, 0, 200};
	struct canvas *c = NULL;
	struct buf png;
	struct diag d;
	png_image img;
	unsigned char *px;

	buf_init(&png, 1 << 20);
	diag_init(&d);
	CHECK(canvas_new(33, 17, white, &c, &d) == ERR_OK && c);
	canvas_fill_rect(c, 3, 4, 5, 6, blue);
	canvas_text(c, 10, 2, 1, "OK 7", ink);
	CHECK(buf_puts(&png, "x") == ERR_OK);
	CHECK(canvas_png(c, &png, &d) == ERR_OK && png.len > 9);
	memset(&img, 0, sizeof(img));
	img.version = PNG_IMAGE_VERSION;
	CHECK(png_image_begin_read_from_memory(&img, png.data + 1, png.len - 1));
	img.format = PNG_FORMAT_RGB;
	CHECK(img.width == 33 && img.height == 17);
	px = malloc(PNG_IMAGE_SIZE(img));
	CHECK(px && png_image_finish_read(&img, NULL, px, 0, NULL));
	CHECK(px && !memcmp(px, c->px, (size_t)33 * 17 * 3));
	free(px);
	buf_release(&png);
	buf_init(&png, 40);
	CHECK(buf_puts(&png, "abc") == ERR_OK);
	diag_init(&d);
	CHECK(canvas_png(c, &png, &d) == ERR_LIMIT);
	CHECK(png.len == 3 && strstr(d.msg, "cannot write png") != NULL);
	buf_release(&png);
	canvas_free(c);
}

int main(void)
{
	T_RUN(test_text);
	T_RUN(test_clip);
	T_RUN(test_line_scale);
	T_RUN(test_png);
	return T_DONE();
}
