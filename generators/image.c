#include "image.h"

#include <string.h>

#include "base/canvas.h"
#include "prng.h"

/* Geometry runs on a grid of 1/8 pixel: supersamples sit at odd coordinates
 * (1/8, 3/8, 5/8, 7/8 of each pixel) and polygon vertices are rounded to even
 * ones, so no sample ever lies on a vertex's scanline and the crossing test
 * needs no tie rule. */
#define GRID 8
#define SAMPLES 4 /* per axis: 16 samples, coverage 0..16 */

static const char *const shape_names[IMAGE_NSHAPES] = {
	"circle", "square", "triangle", "star", "hexagon", "diamond"};
static const char *const colour_names[IMAGE_NCOLOURS] = {
	"red", "blue", "green", "yellow", "purple", "orange"};
/* Saturated, far apart, each obviously its name on white. */
static const unsigned char colour_rgb[IMAGE_NCOLOURS][3] = {
	{220, 30, 30}, {30, 80, 220}, {20, 150, 50},
	{240, 200, 0}, {130, 40, 170}, {250, 130, 0}};
static const unsigned char background[3] = {255, 255, 255};
static const unsigned char ink[3] = {0, 0, 0};

/* Unit vertex tables (y grows downwards, radius 1), written as literals so
 * that no libm rounding can differ between machines. */
struct vtx {
	double x, y;
};
static const struct vtx v_square[] = {
	{-0.8, -0.8}, {0.8, -0.8}, {0.8, 0.8}, {-0.8, 0.8}};
static const struct vtx v_diamond[] = {
	{0, -1}, {0.75, 0}, {0, 1}, {-0.75, 0}};
static const struct vtx v_triangle[] = { /* centroid at the origin */
	{0, -1}, {0.8660254038, 0.5}, {-0.8660254038, 0.5}};
static const struct vtx v_hexagon[] = {
	{1, 0}, {0.5, 0.8660254038}, {-0.5, 0.8660254038},
	{-1, 0}, {-0.5, -0.8660254038}, {0.5, -0.8660254038}};
static const struct vtx v_star[] = { /* outer radius 1, inner 0.381966 */
	{0, -1}, {0.2245139883, -0.3090169944},
	{0.9510565163, -0.3090169944}, {0.3632712640, 0.1180339887},
	{0.5877852523, 0.8090169944}, {0, 0.381966},
	{-0.5877852523, 0.8090169944}, {-0.3632712640, 0.1180339887},
	{-0.9510565163, -0.3090169944}, {-0.2245139883, -0.3090169944}};

const char *image_shape_name(enum image_shape s)
{
	return (unsigned)s < IMAGE_NSHAPES ? shape_names[s] : NULL;
}

const char *image_colour_name(enum image_colour c)
{
	return (unsigned)c < IMAGE_NCOLOURS ? colour_names[c] : NULL;
}

void image_colour_rgb(enum image_colour c, unsigned char rgb[3])
{
	memcpy(rgb, colour_rgb[(unsigned)c < IMAGE_NCOLOURS ? c : 0], 3);
}

void image_background_rgb(unsigned char rgb[3])
{
	memcpy(rgb, background, 3);
}

void image_ink_rgb(unsigned char rgb[3])
{
	memcpy(rgb, ink, 3);
}

void image_describe(const struct image_object *o, char *out, size_t n)
{
	const char *c = image_colour_name(o->colour), *s = image_shape_name(o->shape);
	size_t i = 0;

	if (!n)
		return;
	for (; c && *c && i + 1 < n; c++)
		out[i++] = *c;
	if (i + 1 < n)
		out[i++] = ' ';
	for (; s && *s && i + 1 < n; s++)
		out[i++] = *s;
	out[i] = '\0';
}

/* Labels keep to letters, digits, '-' and space (the canvas font's
 * punctuation is for charts). */
static int label_char(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') ||
	       (c >= 'a' && c <= 'z') || c == '-' || c == ' ';
}

static enum err check_label(const char *label, size_t n, struct diag *d)
{
	size_t i;

	if (n > IMAGE_LABEL_MAX)
		return diag_fail(d, ERR_INPUT,
				 "label '%.*s' is longer than %d characters",
				 (int)n, label, IMAGE_LABEL_MAX);
	for (i = 0; i < n; i++)
		if (!canvas_has_glyph(label[i]) || !label_char(label[i]))
			return diag_fail(d, ERR_INPUT,
					 "label '%.*s' has a character the font lacks "
					 "(use A-Z, 0-9, '-' and space)",
					 (int)n, label);
	return ERR_OK;
}

/* Finds `word` (n bytes) in `names`; -1 when absent. */
static int lookup(const char *const *names, int count, const char *word, size_t n)
{
	int i;

	for (i = 0; i < count; i++)
		if (strlen(names[i]) == n && !strncmp(names[i], word, n))
			return i;
	return -1;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t';
}

static void upcase(char *s)
{
	for (; *s; s++)
		if (*s >= 'a' && *s <= 'z')
			*s = (char)(*s - 'a' + 'A');
}

/* One item "colour shape[:label]", `n` bytes at `s`, spaces around allowed. */
static enum err parse_one(const char *s, size_t n, struct image_object *o,
			  struct diag *d)
{
	const char *end = s + n, *colon = memchr(s, ':', n), *w2, *w2end;
	const char *w1end;
	int c, sh;

	memset(o, 0, sizeof(*o));
	if (colon) {
		const char *l = colon + 1, *lend = end;

		while (l < lend && is_space(*l))
			l++;
		while (lend > l && is_space(lend[-1]))
			lend--;
		if (check_label(l, (size_t)(lend - l), d))
			return ERR_INPUT;
		memcpy(o->label, l, (size_t)(lend - l));
		upcase(o->label); /* the font draws capitals: say what is shown */
		end = colon;
	}
	while (s < end && is_space(*s))
		s++;
	while (end > s && is_space(end[-1]))
		end--;
	w1end = s;
	while (w1end < end && !is_space(*w1end))
		w1end++;
	w2 = w1end;
	while (w2 < end && is_space(*w2))
		w2++;
	w2end = w2;
	while (w2end < end && !is_space(*w2end))
		w2end++;
	if (w2 == end || w2end != end)
		return diag_fail(d, ERR_INPUT,
				 "object '%.*s' is not 'COLOUR SHAPE[:LABEL]'",
				 (int)n, s);
	c = lookup(colour_names, IMAGE_NCOLOURS, s, (size_t)(w1end - s));
	if (c < 0)
		return diag_fail(d, ERR_INPUT,
				 "unknown colour '%.*s' (red, blue, green, yellow, purple, orange)",
				 (int)(w1end - s), s);
	sh = lookup(shape_names, IMAGE_NSHAPES, w2, (size_t)(w2end - w2));
	if (sh < 0)
		return diag_fail(d, ERR_INPUT,
				 "unknown shape '%.*s' (circle, square, triangle, star, hexagon, diamond)",
				 (int)(w2end - w2), w2);
	o->colour = (enum image_colour)c;
	o->shape = (enum image_shape)sh;
	return ERR_OK;
}

enum err image_parse_objects(const char *list, struct image_object *out,
			     int max, int *n, struct diag *d)
{
	const char *p = list;

	*n = 0;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);

		if (*n >= max)
			return diag_fail(d, ERR_INPUT, "more than %d objects in '%s'",
					 max, list);
		if (parse_one(p, len, &out[*n], d))
			return ERR_INPUT;
		(*n)++;
		if (!comma)
			return ERR_OK;
		p = comma + 1;
	}
}

/* 0..n-1 in an order drawn by `p`. */
static void shuffle(struct prng *p, int *v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		v[i] = i;
	prng_shuffle_int(p, v, (size_t)n);
}

void image_pick(uint64_t seed, int count, int numbers, struct image_object *out)
{
	struct prng st;
	int shapes[IMAGE_NSHAPES], colours[IMAGE_NCOLOURS], labels[90], i;

	prng_init(&st, seed, UINT64_C(0x696d616765)); /* "image": its own stream */
	shuffle(&st, shapes, IMAGE_NSHAPES);
	shuffle(&st, colours, IMAGE_NCOLOURS);
	shuffle(&st, labels, 90);
	if (count > IMAGE_COUNT_MAX)
		count = IMAGE_COUNT_MAX;
	for (i = 0; i < count; i++) {
		/* Row i/6 pairs each shape with the colour shifted by the row,
		 * so the 36 pairs are all different. */
		memset(&out[i], 0, sizeof(out[i]));
		out[i].shape = (enum image_shape)shapes[i % IMAGE_NSHAPES];
		out[i].colour = (enum image_colour)
			colours[(i % IMAGE_NCOLOURS + i / IMAGE_NCOLOURS) % IMAGE_NCOLOURS];
		if (numbers) {
			int v = 10 + labels[i];

			out[i].label[0] = (char)('0' + v / 10);
			out[i].label[1] = (char)('0' + v % 10);
		}
	}
}

/* Layout in pixels: the shape's centre and radius. With a label the shape
 * moves up to leave the bottom quarter for the text. */
static void layout(const struct image_object *o, int size, int *cx, int *cy,
		   int *radius)
{
	int labelled = o->label[0] != '\0';

	*cx = size / 2;
	*cy = labelled ? size * 2 / 5 : size / 2;
	*radius = labelled ? size * 3 / 10 : size * 3 / 8;
}

void image_shape_centre(const struct image_object *o, int size, int *x, int *y)
{
	int r;

	layout(o, size, x, y, &r);
}

struct shape_geom {
	enum image_shape shape;
	int64_t cx, cy, r;     /* grid units */
	int64_t vx[10], vy[10]; /* polygon vertices, even grid units */
	int nv;
};

static int64_t even_round(double v)
{
	int64_t h = (int64_t)(v / 2.0 + (v >= 0 ? 0.5 : -0.5));

	return 2 * h;
}

static void geom_init(struct shape_geom *g, const struct image_object *o,
		      int size)
{
	static const struct {
		const struct vtx *v;
		int n;
	} poly[IMAGE_NSHAPES] = {
		[IMAGE_SQUARE] = {v_square, 4}, [IMAGE_DIAMOND] = {v_diamond, 4},
		[IMAGE_TRIANGLE] = {v_triangle, 3}, [IMAGE_HEXAGON] = {v_hexagon, 6},
		[IMAGE_STAR] = {v_star, 10}};
	int cx, cy, r, i;

	layout(o, size, &cx, &cy, &r);
	/* Pixel (x, y) covers grid [8x, 8x+8): its centre is 8x + 4. */
	g->shape = o->shape;
	g->cx = (int64_t)cx * GRID + GRID / 2;
	g->cy = (int64_t)cy * GRID + GRID / 2;
	g->r = (int64_t)r * GRID;
	g->nv = poly[o->shape].n;
	for (i = 0; i < g->nv; i++) {
		g->vx[i] = g->cx + even_round(poly[o->shape].v[i].x * (double)g->r);
		g->vy[i] = g->cy + even_round(poly[o->shape].v[i].y * (double)g->r);
	}
}

/* Even-odd crossing test against a polygon whose vertices are never on the
 * sample's scanline (odd y vs even vertices). */
static int inside(const struct shape_geom *g, int64_t px, int64_t py)
{
	int i, j, in = 0;

	if (g->shape == IMAGE_CIRCLE) {
		int64_t dx = px - g->cx, dy = py - g->cy;

		return dx * dx + dy * dy <= g->r * g->r;
	}
	for (i = 0, j = g->nv - 1; i < g->nv; j = i++) {
		int64_t x1 = g->vx[j], y1 = g->vy[j], x2 = g->vx[i], y2 = g->vy[i];

		if ((y1 > py) == (y2 > py))
			continue;
		/* px < x1 + (py - y1) * (x2 - x1) / (y2 - y1), without division */
		if (y2 > y1 ? (px - x1) * (y2 - y1) < (py - y1) * (x2 - x1)
			    : (px - x1) * (y2 - y1) > (py - y1) * (x2 - x1))
			in = !in;
	}
	return in;
}

static int coverage(const struct shape_geom *g, int x, int y)
{
	int i, j, n = 0;

	for (j = 0; j < SAMPLES; j++)
		for (i = 0; i < SAMPLES; i++)
			n += inside(g, (int64_t)x * GRID + 2 * i + 1,
				    (int64_t)y * GRID + 2 * j + 1);
	return n;
}

static void paint_shape(unsigned char *px, int size, const struct image_object *o)
{
	struct shape_geom g;
	unsigned char fg[3];
	int x, y, k, x0, x1, y0, y1, r;

	geom_init(&g, o, size);
	image_colour_rgb(o->colour, fg);
	r = (int)(g.r / GRID) + 2;
	x0 = (int)(g.cx / GRID) - r;
	x1 = (int)(g.cx / GRID) + r;
	y0 = (int)(g.cy / GRID) - r;
	y1 = (int)(g.cy / GRID) + r;
	for (y = y0 < 0 ? 0 : y0; y <= y1 && y < size; y++)
		for (x = x0 < 0 ? 0 : x0; x <= x1 && x < size; x++) {
			int cov = coverage(&g, x, y);
			unsigned char *p = px + ((size_t)y * (size_t)size + (size_t)x) * 3;

			for (k = 0; cov && k < 3; k++)
				p[k] = (unsigned char)((p[k] * (16 - cov) + fg[k] * cov + 8) / 16);
		}
}

/* The label in black, centred in the bottom quarter, each font dot a square
 * block of `s` pixels with one dot of space between characters. */
static void paint_label(struct canvas *c, const char *label)
{
	int n = (int)strlen(label), size = c->w, s;

	s = size * 16 / 100 / 7;
	if (s * (6 * n - 1) > size * 9 / 10)
		s = size * 9 / 10 / (6 * n - 1);
	if (s < 1)
		s = 1;
	canvas_text(c, (size - s * (6 * n - 1)) / 2, size * 7 / 8 - 7 * s / 2, s, label, ink);
}

enum err image_png(const struct image_object *o, int size, struct buf *png,
		   struct diag *d)
{
	struct canvas *c = NULL;
	enum err e;

	if (size < IMAGE_SIZE_MIN || size > IMAGE_SIZE_MAX)
		return diag_fail(d, ERR_INPUT, "image size %d is outside %d..%d",
				 size, IMAGE_SIZE_MIN, IMAGE_SIZE_MAX);
	if ((unsigned)o->shape >= IMAGE_NSHAPES || (unsigned)o->colour >= IMAGE_NCOLOURS)
		return diag_fail(d, ERR_INPUT, "unknown shape or colour");
	if (check_label(o->label, strlen(o->label), d))
		return ERR_INPUT;
	if (o->label[0] && size < 64)
		return diag_fail(d, ERR_INPUT,
				 "image size %d is too small for label '%s' (at least 64)",
				 size, o->label);
	if ((e = canvas_new(size, size, background, &c, d)))
		return e;
	paint_shape(c->px, size, o);
	if (o->label[0])
		paint_label(c, o->label);
	e = canvas_png(c, png, d);
	canvas_free(c);
	return e;
}

enum err image_data_url(const void *png, size_t len, struct buf *out,
			struct diag *d)
{
	static const char prefix[] = "data:image/png;base64,";
	size_t start = out->len;
	enum err e;

	if (len > (size_t)1 << 28)
		return diag_fail(d, ERR_LIMIT, "image of %zu bytes is too large", len);
	e = buf_puts(out, prefix);
	if (!e)
		e = buf_base64(out, png, len);
	if (e) {
		buf_truncate(out, start);
		return diag_fail(d, e, "cannot build an image data url: %s",
				 e == ERR_NOMEM ? "out of memory" : "too large");
	}
	return ERR_OK;
}

cJSON *image_object_json(struct json_build *jb, cJSON *to, const char *key,
			 const struct image_object *o, int size)
{
	cJSON *j = json_add_obj(jb, to, key), *c;
	unsigned char rgb[3];
	char text[64], hex[8];
	static const char digits[] = "0123456789abcdef";
	int x, y, i;

	image_describe(o, text, sizeof(text));
	image_colour_rgb(o->colour, rgb);
	hex[0] = '#';
	for (i = 0; i < 3; i++) {
		hex[1 + 2 * i] = digits[rgb[i] >> 4];
		hex[2 + 2 * i] = digits[rgb[i] & 15];
	}
	hex[7] = '\0';
	image_shape_centre(o, size, &x, &y);
	json_add_str(jb, j, "text", text);
	json_add_str(jb, j, "colour", image_colour_name(o->colour));
	json_add_str(jb, j, "shape", image_shape_name(o->shape));
	if (o->label[0])
		json_add_str(jb, j, "label", o->label);
	else
		json_add_null(jb, j, "label");
	json_add_str(jb, j, "rgb", hex);
	c = json_add_arr(jb, j, "centre");
	json_add_int(jb, c, NULL, x);
	json_add_int(jb, c, NULL, y);
	return jb->code ? NULL : j;
}
