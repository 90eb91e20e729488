/* Unit tests of generators/image: PNGs decode with libpng and show what they
 * claim; bytes are deterministic; object lists parse; data URLs round-trip. */
#include <png.h>
#include <stdlib.h>

#include <openssl/evp.h>

#include "base/buf.h"
#include "generators/image.h"
#include "base/mem.h"
#include "t.h"
#include "tpng.h"

static int pixel_is(const unsigned char *px, int w, int x, int y,
		    const unsigned char rgb[3])
{
	return !memcmp(px + ((size_t)y * (size_t)w + (size_t)x) * 3, rgb, 3);
}

/* Drawn area of the shape in pixels, counting partial coverage through the
 * distance from the background in the channel that differs most. */
static double shape_area(const unsigned char *px, int w, int h,
			 const unsigned char fg[3], const unsigned char bg[3])
{
	int k = 0, i;
	double area = 0;

	for (i = 1; i < 3; i++)
		if (abs(fg[i] - bg[i]) > abs(fg[k] - bg[k]))
			k = i;
	for (i = 0; i < w * h; i++)
		area += (double)(bg[k] - px[i * 3 + k]) / (double)(bg[k] - fg[k]);
	return area;
}

/* Every shape in every colour: centre pixel has the fill colour, corners
 * are background, and the drawn area matches the shape's analytic area. */
static void test_centre_and_corners(void)
{
	/* area / r^2 for the vertex tables in image.c */
	static const double unit_area[IMAGE_NSHAPES] = {
		3.14159265, 1.6 * 1.6, 1.29903811, 1.12256994, 2.59807621, 1.5};
	unsigned char fg[3], bg[3];
	int s, c;

	image_background_rgb(bg);
	for (s = 0; s < IMAGE_NSHAPES; s++)
		for (c = 0; c < IMAGE_NCOLOURS; c++) {
			struct image_object o = {(enum image_shape)s, (enum image_colour)c, ""};
			struct buf png;
			unsigned char *px;
			int w = 0, h = 0, x, y, size = 200;
			double r = size * 3 / 8, area;

			buf_init(&png, 1 << 24);
			CHECK(image_png(&o, size, &png, NULL) == ERR_OK);
			px = tpng_decode(&png, &w, &h);
			CHECK(px != NULL);
			if (px) {
				CHECK(w == size && h == size);
				image_colour_rgb(o.colour, fg);
				image_shape_centre(&o, size, &x, &y);
				CHECK(pixel_is(px, w, x, y, fg));
				CHECK(pixel_is(px, w, 0, 0, bg));
				CHECK(pixel_is(px, w, w - 1, 0, bg));
				CHECK(pixel_is(px, w, 0, h - 1, bg));
				CHECK(pixel_is(px, w, w - 1, h - 1, bg));
				area = shape_area(px, w, h, fg, bg);
				if (area < unit_area[s] * r * r * 0.98 ||
				    area > unit_area[s] * r * r * 1.02) {
					fprintf(stderr, "%s: area %.0f, expected %.0f\n",
						image_shape_name(o.shape), area,
						unit_area[s] * r * r);
					CHECK(0);
				}
			}
			free(px);
			buf_release(&png);
		}
}

/* A label puts black ink in the bottom quarter; no label, none anywhere. */
static void test_label_ink(void)
{
	struct image_object o = {IMAGE_STAR, IMAGE_BLUE, "42"};
	unsigned char ink[3], fg[3];
	int pass, w = 0, h = 0, x, y, cx, cy;

	image_ink_rgb(ink);
	image_colour_rgb(o.colour, fg);
	for (pass = 0; pass < 2; pass++) {
		struct buf png;
		unsigned char *px;
		long below = 0, above = 0;

		buf_init(&png, 1 << 24);
		CHECK(image_png(&o, 256, &png, NULL) == ERR_OK);
		px = tpng_decode(&png, &w, &h);
		CHECK(px != NULL);
		for (y = 0; px && y < h; y++)
			for (x = 0; x < w; x++)
				if (pixel_is(px, w, x, y, ink))
					*(y >= h * 3 / 4 ? &below : &above) += 1;
		CHECK(above == 0);
		CHECK(pass == 0 ? below > 100 : below == 0);
		image_shape_centre(&o, 256, &cx, &cy);
		CHECK(px && pixel_is(px, w, cx, cy, fg));
		free(px);
		buf_release(&png);
		o.label[0] = '\0';
	}
}

static void render(const struct image_object *o, struct buf *png)
{
	buf_init(png, 1 << 24);
	CHECK(image_png(o, 128, png, NULL) == ERR_OK);
}

/* Same seed, same bytes; another seed, other objects and bytes. */
static void test_determinism(void)
{
	struct image_object a[6], b[6], c[6];
	struct buf pa, pb, pc;
	int i, j, same = 1;

	image_pick(11, 6, 1, a);
	image_pick(11, 6, 1, b);
	image_pick(12, 6, 1, c);
	CHECK(!memcmp(a, b, sizeof(a)));
	for (i = 0; i < 6; i++)
		same &= a[i].shape == c[i].shape && a[i].colour == c[i].colour &&
			!strcmp(a[i].label, c[i].label);
	CHECK(!same);
	/* the first six: all shapes and all colours, once each */
	for (i = 0; i < 6; i++)
		for (j = 0; j < i; j++) {
			CHECK(a[i].shape != a[j].shape);
			CHECK(a[i].colour != a[j].colour);
			CHECK(strcmp(a[i].label, a[j].label) != 0);
		}
	render(&a[0], &pa);
	render(&b[0], &pb);
	render(&c[0], &pc);
	CHECK(pa.len == pb.len && !memcmp(pa.data, pb.data, pa.len));
	CHECK(pa.len != pc.len || memcmp(pa.data, pc.data, pa.len) != 0);
	buf_release(&pa);
	buf_release(&pb);
	buf_release(&pc);
}

static void test_pick_all_pairs(void)
{
	struct image_object o[IMAGE_COUNT_MAX];
	int seen[IMAGE_NSHAPES][IMAGE_NCOLOURS] = {{0}}, i, all = 1, s, c;

	image_pick(3, IMAGE_COUNT_MAX, 0, o);
	for (i = 0; i < IMAGE_COUNT_MAX; i++)
		seen[o[i].shape][o[i].colour]++;
	for (s = 0; s < IMAGE_NSHAPES; s++)
		for (c = 0; c < IMAGE_NCOLOURS; c++)
			all &= seen[s][c] == 1;
	CHECK(all);
}

static void test_parse(void)
{
	struct image_object o[4];
	struct diag d;
	char text[64];
	int n = 0;

	diag_init(&d);
	CHECK(image_parse_objects("red circle, blue square:ab-9 ,  yellow   star", o, 4,
				  &n, &d) == ERR_OK);
	CHECK_EQ_LONG(n, 3);
	image_describe(&o[1], text, sizeof(text));
	CHECK_STR(text, "blue square");
	CHECK_STR(o[1].label, "AB-9");
	CHECK(o[2].shape == IMAGE_STAR && o[2].colour == IMAGE_YELLOW && !o[2].label[0]);

	CHECK(image_parse_objects("red blob", o, 4, &n, &d) == ERR_INPUT);
	CHECK(strstr(d.msg, "unknown shape 'blob'") != NULL);
	diag_init(&d);
	CHECK(image_parse_objects("pink circle", o, 4, &n, &d) == ERR_INPUT);
	CHECK(strstr(d.msg, "unknown colour 'pink'") != NULL);
	diag_init(&d);
	CHECK(image_parse_objects("red circle:a*b", o, 4, &n, &d) == ERR_INPUT);
	diag_init(&d);
	CHECK(image_parse_objects("red circle:TOOLONGLABEL", o, 4, &n, &d) == ERR_INPUT);
	diag_init(&d);
	CHECK(image_parse_objects("red", o, 4, &n, &d) == ERR_INPUT);
	diag_init(&d);
	CHECK(image_parse_objects("red circle,", o, 4, &n, &d) == ERR_INPUT);
	diag_init(&d);
	CHECK(image_parse_objects("red circle,red circle,red circle,red circle,red circle",
				  o, 4, &n, &d) == ERR_INPUT);
	/* the canvas font's chart punctuation stays out of picture labels */
	diag_init(&d);
	CHECK(image_parse_objects("red circle:5%", o, 4, &n, &d) == ERR_INPUT);
}

static void test_bad_size(void)
{
	struct image_object o = {IMAGE_CIRCLE, IMAGE_RED, ""};
	struct buf png;
	struct diag d;

	diag_init(&d);
	buf_init(&png, 1 << 20);
	CHECK(image_png(&o, 16, &png, &d) == ERR_INPUT);
	CHECK(png.len == 0);
	strcpy(o.label, "7");
	diag_init(&d);
	CHECK(image_png(&o, 48, &png, &d) == ERR_INPUT);
	diag_init(&d);
	CHECK(image_png(&o, 64, &png, &d) == ERR_OK);
	buf_release(&png);
	/* a buffer too small for the PNG: libpng's error path returns cleanly */
	buf_init(&png, 100);
	diag_init(&d);
	CHECK(image_png(&o, 256, &png, &d) == ERR_LIMIT);
	CHECK(png.len == 0);
	CHECK(strstr(d.msg, "cannot write png") != NULL);
	buf_release(&png);
}

static void test_data_url(void)
{
	struct image_object o = {IMAGE_HEXAGON, IMAGE_PURPLE, ""};
	struct buf png, url;
	const char *b64;
	unsigned char *back;
	int n;

	render(&o, &png);
	buf_init(&url, 1 << 24);
	CHECK(image_data_url(png.data, png.len, &url, NULL) == ERR_OK);
	CHECK(!strncmp(url.data, "data:image/png;base64,", 22));
	b64 = url.data + 22;
	CHECK(strlen(b64) == 4 * ((png.len + 2) / 3));
	back = malloc(strlen(b64));
	n = EVP_DecodeBlock(back, (const unsigned char *)b64, (int)strlen(b64));
	/* EVP_DecodeBlock counts padding bytes as data: trim them */
	n -= (b64[strlen(b64) - 1] == '=') + (b64[strlen(b64) - 2] == '=');
	CHECK(n == (int)png.len && !memcmp(back, png.data, png.len));
	free(back);
	buf_release(&png);
	buf_release(&url);
}

int main(void)
{
	T_RUN(test_centre_and_corners);
	T_RUN(test_label_ink);
	T_RUN(test_determinism);
	T_RUN(test_pick_all_pairs);
	T_RUN(test_parse);
	T_RUN(test_bad_size);
	T_RUN(test_data_url);
	return T_DONE();
}
