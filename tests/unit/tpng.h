/*
 * tpng.h — PNG bytes decoded for the unit tests that check pictures, with
 * libpng's simplified API (an independent reader of what canvas writes).
 */
#ifndef NEEDLE_TPNG_H
#define NEEDLE_TPNG_H

#include <png.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"

/* The pixels of `png` as RGB rows (malloc'd, the caller frees) and its size
 * in *w, *h; NULL when libpng cannot read it. */
static unsigned char *tpng_decode(const struct buf *png, int *w, int *h)
{
	png_image img;
	unsigned char *px;

	memset(&img, 0, sizeof(img));
	img.version = PNG_IMAGE_VERSION;
	if (!png_image_begin_read_from_memory(&img, png->data, png->len))
		return NULL;
	img.format = PNG_FORMAT_RGB;
	px = malloc(PNG_IMAGE_SIZE(img));
	if (!px || !png_image_finish_read(&img, NULL, px, 0, NULL)) {
		free(px);
		png_image_free(&img);
		return NULL;
	}
	*w = (int)img.width;
	*h = (int)img.height;
	return px;
}

#endif
