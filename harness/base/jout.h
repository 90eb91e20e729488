/*
 * jout — a cJSON value's indented text, byte for byte what cJSON_Print gives
 * (json.h's JSON_PRETTY), made in pieces: an array standing for a long list
 * is printed from a callback one item at a time, and the text can go to a
 * file as it is made. A summary or a comparison of 100,000 cases is so
 * printed without holding its cases as a tree or its text whole.
 *
 * Every value is printed here, as cJSON 1.7.15's print_value does: numbers
 * with "%1.15g" (json_g15) unless that reads back off, then "%1.17g";
 * strings escaped as print_string_ptr escapes them; raw values as they are.
 */
#ifndef NEEDLE_JOUT_H
#define NEEDLE_JOUT_H

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "err.h"

/* Item `i` of a list, as a new value the printer frees; NULL when out of
 * memory. */
typedef cJSON *(*jout_item_fn)(void *ctx, size_t i);

/* A list printed in place of an (empty) array of the value. */
struct jout_list {
	const cJSON *at;   /* borrowed: the array it stands for */
	size_t n;          /* its items */
	jout_item_fn item;
	void *ctx;
};

/*
 * Appends the text of `v` (borrowed) to `out`, each array lists[i].at
 * printed as lists[i]'s items, then "\n" when `newline`. When `f` is not
 * NULL, `out` is written to it and emptied whenever it holds 64 KiB and at
 * the end (so `out` then ends empty). ERR_NOMEM, ERR_LIMIT (out's cap) or
 * ERR_IO (a failed write), named with `what`.
 */
enum err jout_print(const cJSON *v, const struct jout_list *lists, size_t nlists,
		    int newline, struct buf *out, FILE *f, const char *what, struct diag *d);

#endif
