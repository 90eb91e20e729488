/*
 * Unit tests of heatmap: the colour scale, the cell layout, and a small grid
 * drawn and read back with libpng's simplified API.
 */
#include <png.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "report/heatmap.h"
#include "t.h"

/* Red at 0, yellow at 0.5, green at 1; outside [0, 1] clamps. */
static void test_rgb(void)
{
	unsigned char a[3], b[3];

	heatmap_rgb(0, a);
	CHECK(a[0] == 215 && a[1] == 48 && a[2] == 39);
	heatmap_rgb(0.5, a);
	CHECK(a[0] == 254 && a[1] == 224 && a[2] == 139);
	heatmap_rgb(1, a);
	CHECK(a[0] == 26 && a[1] == 152 && a[2] == 80);
	heatmap_rgb(0.25, a); /* half way from red to yellow */
	CHECK(a[0] == 235 && a[1] == 136 && a[2] == 89);
	heatmap_rgb(-3, a);
	heatmap_rgb(0, b);
	CHECK(!memcmp(a, b, 3));
	heatmap_rgb(7, a);
	heatmap_rgb(1, b);
	CHECK(!memcmp(a, b, 3));
}

static void test_cell(void)
{
	int x, y;

	heatmap_cell(0, 0, &x, &y);
	CHECK(x == HEATMAP_LEFT + 1 && y == HEATMAP_TOP + 1);
	heatmap_cell(2, 3, &x, &y);
	CHECK(x == HEATMAP_LEFT + 3 * HEATMAP_CELL_W + 1 && y == HEATMAP_TOP + 2 * HEATMAP_CELL_H + 1);
}

static void at(const unsigned char *px, int w, int row, int col, unsigned char out[3])
{
	int x, y;

	heatmap_cell(row, col, &x, &y);
	memcpy(out, px + ((size_t)(y + 2) * (size_t)w + (size_t)(x + 2)) * 3, 3);
}

/* Dark hatch pixels in cell (row, col) of the decoded picture. */
static int hatched(const unsigned char *px, int w, int row, int col)
{
	static const unsigned char dark[3] = {90, 90, 90};
	unsigned char got[3];
	int x, y, i, j, n = 0;

	heatmap_cell(row, col, &x, &y);
	for (j = 0; j < HEATMAP_CELL_H - 2; j++)
		for (i = 0; i < HEATMAP_CELL_W - 2; i++) {
			memcpy(got, px + ((size_t)(y + j) * (size_t)w + (size_t)(x + i)) * 3, 3);
			n += !memcmp(got, dark, 3);
		}
	return n;
}

/* Transport failures are not misses: (10%, 131072) got no answer at all
 * (3 of 3 failed): hatched, not the red of 0%; (90%, 1000) has one failure
 * of 2 and 1 found: coloured as 1/1 with a hatched strip. */
static void test_failed_cells(struct heatmap *h)
{
	static const double failed[6] = {0, 0, 3, 1, 0, 0};
	static const double found2[6] = {4, 1, 0, 1, 2, 0}, total2[6] = {4, 2, 3, 2, 2, 1};
	struct buf png;
	struct diag d;
	png_image img;
	unsigned char *px = NULL, got[3], want[3];

	h->failed = failed;
	h->found = found2;
	h->total = total2;
	h->title = "MODEL M  RUN R  2026-01-01";
	buf_init(&png, 1 << 22);
	diag_init(&d);
	CHECK(heatmap_png(h, &png, &d) == ERR_OK);
	memset(&img, 0, sizeof(img));
	img.version = PNG_IMAGE_VERSION;
	CHECK(png_image_begin_read_from_memory(&img, png.data, png.len));
	img.format = PNG_FORMAT_RGB;
	px = malloc(PNG_IMAGE_SIZE(img));
	CHECK(px && png_image_finish_read(&img, NULL, px, 0, NULL));
	at(px, (int)img.width, 0, 2, got);
	heatmap_rgb(0, want);
	CHECK(memcmp(got, want, 3) != 0);
	CHECK(hatched(px, (int)img.width, 0, 2) > 200);
	CHECK(hatched(px, (int)img.width, 0, 1) == 0);
	at(px, (int)img.width, 1, 0, got);
	heatmap_rgb(1, want);
	CHECK(!memcmp(got, want, 3));
	CHECK(hatched(px, (int)img.width, 1, 0) > 20);
	free(px);
	buf_release(&png);
	h->failed = NULL;
	h->title = NULL;
}

/* 2 depths x 3 lengths: full, half, none found, and one cell without data. */
static void test_png(void)
{
	static const double dep[2] = {10, 90}, len[3] = {1000, 2000, 131072};
	static const double found[6] = {4, 1, 0, 0, 2, 0}, total[6] = {4, 2, 3, 0, 2, 1};
	static const unsigned char grey[3] = {200, 200, 200};
	struct heatmap h = {2, 3, dep, len, found, total};
	struct buf png;
	struct diag d;
	png_image img;
	unsigned char *px = NULL, got[3], want[3];

	buf_init(&png, 1 << 22);
	diag_init(&d);
	CHECK(heatmap_png(&h, &png, &d) == ERR_OK && png.len > 100);
	memset(&img, 0, sizeof(img));
	img.version = PNG_IMAGE_VERSION;
	CHECK(png_image_begin_read_from_memory(&img, png.data, png.len));
	img.format = PNG_FORMAT_RGB;
	CHECK(img.width == HEATMAP_MIN_W &&
	      img.height == HEATMAP_TOP + 2 * HEATMAP_CELL_H + 16 + HEATMAP_LEGEND_H);
	px = malloc(PNG_IMAGE_SIZE(img));
	CHECK(px && png_image_finish_read(&img, NULL, px, 0, NULL));
	at(px, (int)img.width, 0, 0, got);
	heatmap_rgb(1, want);
	CHECK(!memcmp(got, want, 3));
	at(px, (int)img.width, 0, 1, got);
	heatmap_rgb(0.5, want);
	CHECK(!memcmp(got, want, 3));
	at(px, (int)img.width, 0, 2, got);
	heatmap_rgb(0, want);
	CHECK(!memcmp(got, want, 3));
	at(px, (int)img.width, 1, 0, got);
	CHECK(!memcmp(got, grey, 3));
	free(px);
	buf_release(&png);
	test_failed_cells(&h);
	h.ndepths = HEATMAP_MAX_DEPTHS + 1;
	buf_init(&png, 1 << 22);
	diag_init(&d);
	CHECK(heatmap_png(&h, &png, &d) == ERR_LIMIT && png.len == 0);
	CHECK(strstr(d.msg, "too large") != NULL);
	buf_release(&png);
}

int main(void)
{
	T_RUN(test_rgb);
	T_RUN(test_cell);
	T_RUN(test_png);
	return T_DONE();
}
