/*
 * image — deterministic PNG pictures of one unmistakable object each: a shape
 * in a colour (red circle, blue square, ...) on a white background, optionally
 * with a short word or number written under it in a built-in 5x7 bitmap font.
 * They feed the image-order cases: a vision model is asked what each picture
 * shows and in which order, so the pictures must leave no doubt.
 *
 * Determinism: geometry is integer arithmetic on a 1/8-pixel grid (vertex
 * tables are literals, no libm), anti-aliasing is a fixed 4x4 supersample, and
 * the picture is drawn on a canvas (harness/base/canvas.h: its font and its PNG
 * writer, fixed zlib settings and no time chunk), so the same object and size
 * give the same bytes for a given zlib build.
 */
#ifndef NEEDLE_IMAGE_H
#define NEEDLE_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/json.h"

#define IMAGE_SIZE_MIN 32      /* pixels per side */
#define IMAGE_SIZE_MAX 1024
#define IMAGE_SIZE_DEFAULT 256
#define IMAGE_LABEL_MAX 8      /* characters: A-Z a-z 0-9 '-' ' ' */
#define IMAGE_COUNT_MAX 36     /* every shape x colour once */

enum image_shape {
	IMAGE_CIRCLE,
	IMAGE_SQUARE,
	IMAGE_TRIANGLE,
	IMAGE_STAR,
	IMAGE_HEXAGON,
	IMAGE_DIAMOND,
	IMAGE_NSHAPES
};

enum image_colour {
	IMAGE_RED,
	IMAGE_BLUE,
	IMAGE_GREEN,
	IMAGE_YELLOW,
	IMAGE_PURPLE,
	IMAGE_ORANGE,
	IMAGE_NCOLOURS
};

/* What one picture shows. `label` is empty for none. */
struct image_object {
	enum image_shape shape;
	enum image_colour colour;
	char label[IMAGE_LABEL_MAX + 1];
};

/* Lower-case English names ("circle", "red"); NULL when out of range. */
const char *image_shape_name(enum image_shape s);
const char *image_colour_name(enum image_colour c);
/* The fill colour as 8-bit RGB; the background is image_background_rgb. */
void image_colour_rgb(enum image_colour c, unsigned char rgb[3]);
void image_background_rgb(unsigned char rgb[3]);
/* The label colour (black). */
void image_ink_rgb(unsigned char rgb[3]);

/* "COLOUR SHAPE" (e.g. "red circle", without the label) into `out` of `n`
 * bytes, truncated and NUL-terminated. */
void image_describe(const struct image_object *o, char *out, size_t n);

/*
 * Parses a comma-separated list such as "red circle, blue square:42" (colour,
 * shape, optional ":LABEL") into out[0..max). ERR_INPUT names the bad item
 * ("unknown shape 'blob' in 'red blob'"); more than `max` items is ERR_INPUT.
 */
enum err image_parse_objects(const char *list, struct image_object *out,
			     int max, int *n, struct diag *d);

/*
 * Picks `count` objects (1..IMAGE_COUNT_MAX) from `seed`: the first six have
 * six different shapes and six different colours, and all 36 are different
 * pairs. With `numbers`, each gets a two-digit label 10..99, all different.
 */
void image_pick(uint64_t seed, int count, int numbers, struct image_object *out);

/* Where the shape's centre pixel is for this object and image size; that
 * pixel is always fully inside the shape. */
void image_shape_centre(const struct image_object *o, int size, int *x, int *y);

/*
 * Draws `o` at `size` x `size` pixels (IMAGE_SIZE_MIN..IMAGE_SIZE_MAX) and
 * appends the PNG bytes (8-bit RGB, no interlace) to `png`. ERR_INPUT for a
 * bad size or label, ERR_NOMEM, ERR_INTERNAL for a libpng failure.
 */
enum err image_png(const struct image_object *o, int size, struct buf *png,
		   struct diag *d);

/* Appends "data:image/png;base64,..." for `len` bytes of `png` to `out`. */
enum err image_data_url(const void *png, size_t len, struct buf *out,
			struct diag *d);

/* Adds to `to` under `key` (json.h's builder rules) a JSON object describing
 * `o` drawn at `size` (text, colour, shape, label or null, rgb as "#rrggbb",
 * centre [x, y]) and returns it, owned by `to`; NULL once `jb` has failed. */
cJSON *image_object_json(struct json_build *jb, cJSON *to, const char *key,
			 const struct image_object *o, int size);

#endif
