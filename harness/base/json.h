/*
 * json — checked building, parsing and printing of cJSON values.
 *
 * Building: every cJSON_Add* call can fail on allocation, and an ignored
 * result silently drops a field. Here the adds go through a builder with a
 * sticky error (SQLite's printf style): `struct json_build` records the first
 * failure, every later add is a no-op (an item handed over is freed), a NULL
 * container counts as a failure (its creation failed), and the caller checks
 * once, at json_build_end. A value built without error has every field.
 *
 *	struct json_build jb;
 *	cJSON *m, *a;
 *	json_build_init(&jb);
 *	m = json_new_obj(&jb);
 *	json_add_str(&jb, m, "name", name);
 *	a = json_add_arr(&jb, m, "depths");
 *	for (i = 0; i < n; i++)
 *		json_add_int(&jb, a, NULL, depth[i]);   // NULL key: append to an array
 *	if (json_build_end(&jb, &m, "the manifest", d)) // frees m on failure
 *		return d->code;
 *
 * Keys: a non-NULL key adds a member to an object; a NULL key appends to an
 * array. Anything else (a key on an array, none on an object, a NULL string
 * or source value) is a bug and makes the build fail with ERR_INTERNAL.
 *
 * Allocation: json_init points cJSON's allocator at mem (mem.h), so that
 * NEEDLE_FAIL_ALLOC covers cJSON too and cJSON_free / cJSON_Delete release
 * through the same hooks. It must run before any other cJSON call: main and
 * each test driver call it first. Parsing tells an allocation failure
 * (ERR_NOMEM) from malformed text (ERR_INPUT) by counting the hook's failures.
 */
#ifndef NEEDLE_JSON_H
#define NEEDLE_JSON_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "err.h"

/* Longest key kept for the diagnostic of a failed build (longer ones are cut). */
#define JSON_KEY_MAX 64

/* A builder's sticky state. Caller-owned, usually on the stack; holds no memory. */
struct json_build {
	enum err code;          /* ERR_OK until the first failure, then fixed */
	char key[JSON_KEY_MAX]; /* key of the first failed add ("" for an array slot) */
	const char *why;        /* static text for an ERR_INTERNAL failure, else NULL */
};

/* Printing flags (json_print, json_write_file). */
enum {
	JSON_PRETTY = 1,  /* cJSON_Print's indented form; compact without it */
	JSON_NEWLINE = 2  /* end the text with "\n" */
};

/* Sends cJSON's allocations through mem_alloc/mem_free. Idempotent; allocates
 * nothing. Call before any other cJSON function. */
void json_init(void);

/* Empties `jb`. Allocates nothing. */
void json_build_init(struct json_build *jb);
/* Ends a build. ERR_OK when every add succeeded; otherwise fills `d` ("out of
 * memory building WHAT" for ERR_NOMEM) and, when `root` is not NULL, frees
 * *root and sets it to NULL. `d` may be NULL. */
enum err json_build_end(const struct json_build *jb, cJSON **root, const char *what,
			struct diag *d);

/* A new empty object or array the caller owns (cJSON_Delete), or NULL with the
 * failure recorded in `jb`. */
cJSON *json_new_obj(struct json_build *jb);
cJSON *json_new_arr(struct json_build *jb);

/* Add a copy of string `s` / number `v` / an integer / true or false (`v` !=
 * 0) / null under `key` to `to` (see Keys above). cJSON prints a number with
 * 15 significant digits when that reads back within its tolerance, so an
 * integer prints exactly only up to 15 digits (below 10^15). */
void json_add_str(struct json_build *jb, cJSON *to, const char *key, const char *s);
/* Adds the string `s` without copying it or `key` (a reference, the key
 * borrowed): both must outlive `to`, whose cJSON_Delete frees neither. */
void json_add_str_ref(struct json_build *jb, cJSON *to, const char *key, const char *s);
/* Adds the `n` bytes at `s` as a string, NUL bytes included (escaped as
 * \u0000: the value is then a raw literal, printed as is); without a NUL it is
 * json_add_str of those n bytes (s need not end there). */
void json_add_strn(struct json_build *jb, cJSON *to, const char *key, const char *s,
		   size_t n);
void json_add_num(struct json_build *jb, cJSON *to, const char *key, double v);
void json_add_int(struct json_build *jb, cJSON *to, const char *key, long long v);
void json_add_bool(struct json_build *jb, cJSON *to, const char *key, int v);
void json_add_null(struct json_build *jb, cJSON *to, const char *key);
/* Adds `item`, which it consumes in every case: attached on success, freed on
 * failure. A NULL item (its creation failed) records ERR_NOMEM. */
void json_add_item(struct json_build *jb, cJSON *to, const char *key, cJSON *item);
/* Adds a deep copy of `v`, which stays the caller's. */
void json_add_dup(struct json_build *jb, cJSON *to, const char *key, const cJSON *v);
/* Add a new empty object / array and return it (owned by `to`), or NULL. */
cJSON *json_add_obj(struct json_build *jb, cJSON *to, const char *key);
cJSON *json_add_arr(struct json_build *jb, cJSON *to, const char *key);

/* Parses `len` bytes of `text` (no NUL needed) into a value the caller owns;
 * only whitespace may follow it. The tree is cJSON's reading of the text,
 * built by jdoc when it can (below), else by cJSON. ERR_NOMEM ("out of
 * memory parsing WHAT") or ERR_INPUT ("cannot parse WHAT: invalid JSON at
 * byte N", cJSON's position), with *out NULL. */
enum err json_parse(const char *text, size_t len, cJSON **out, const char *what,
		    struct diag *d);

/* The offset of the first NUL in JSON text `s` (`n` bytes): a raw NUL byte
 * or a `\u0000` escape (not `\\u0000`); `n` when there is none. cJSON ends
 * strings at a NUL, so text with one must be handled before cJSON reads it. */
size_t json_nul_at(const char *s, size_t n);

/* The offset of the first raw control byte U+0000..U+001F inside a string
 * of JSON text `s` (`n` bytes), which RFC 8259 §7 requires escaped and
 * cJSON takes as it is (a raw NUL it takes as the string's end); `n` when
 * there is none. */
size_t json_control_at(const char *s, size_t n);

#define JSON_G15_MAX 32 /* bytes of json_g15's text, NUL included */

/* `v` as printf's "%.15g" writes it, into out[JSON_G15_MAX]; returns its
 * length. An integer below 10^15 in magnitude is written without printf
 * (the common case of a table of counts and statuses). */
size_t json_g15(double v, char *out);
/* Whether the plain JSON number text s[0..n), [-]DIGITS[.DIGITS] of at
 * most 15 digits with `frac` after the point, is what json_g15 writes of its
 * value (a reader that prints a number it parsed may then copy its text):
 * each decimal of 15 digits survives the trip through a double, so it is
 * unless the text has a leading zero, a trailing zero in its fraction, or is
 * below 1e-4 but not zero (%g writes that with an exponent). 0 when not (the
 * caller formats the value), 1 for an integer, 2 with a decimal point. */
static inline int json_g15_is_plain(const char *s, size_t n, int frac)
{
	size_t neg = s[0] == '-';

	if (s[neg] == '0' && n - neg - (frac ? (size_t)frac + 1 : 0) > 1)
		return 0; /* 01 (not JSON) */
	if (!frac)
		return 1;
	if (s[n - 1] == '0' || (s[neg] == '0' && frac >= 4 && !memcmp(s + neg + 2, "0000", 4)))
		return 0;
	return 2;
}

/* Appends `v`'s text (see the flags) to `out`. ERR_NOMEM or ERR_LIMIT, with
 * "out of memory printing WHAT" / "WHAT is too large"; `out` is then unchanged. */
enum err json_print(const cJSON *v, unsigned flags, struct buf *out, const char *what,
		    struct diag *d);
/* Writes `v`'s text (see the flags) to the file `path` whole (io_write_file:
 * a failed write leaves no file). */
enum err json_write_file(const char *path, const cJSON *v, unsigned flags, struct diag *d);

/*
 * jdoc, the one-pass parse — one JSON document read into an ordinary cJSON
 * tree in a single pass, the fast path of json_parse for large request documents (a
 * conversation of thousands of messages, megabytes of string bytes).
 *
 * cJSON_Parse reads every string twice a byte at a time (once to find its
 * end, once to copy it); jdoc finds the plain runs sixteen bytes a step
 * (jscan_plain_end) and copies them whole. The tree is the one cJSON builds
 * from the same text, node for node: the same types, the same valueint and
 * valuedouble (numbers through strtod, valueint saturated as cJSON does),
 * the same decoded strings, members in order (duplicates kept), each list's
 * first child's `prev` pointing at its last, every node and string allocated
 * apart through mem_alloc (cJSON's hooks, json_init), so cJSON_Delete,
 * cJSON_Duplicate and the cJSON editing calls treat it as their own.
 *
 * jdoc takes only what it is sure cJSON reads the same way, RFC 8259 JSON
 * with a few exclusions, and otherwise answers ERR_UNSUPPORTED so that the
 * caller parses with cJSON (whose reading and error positions then stand):
 * bytes below 0x20 inside strings, \u0000, a lone or malformed surrogate,
 * numbers longer than cJSON's 63-byte number buffer, nesting deeper than
 * JDOC_MAX_DEPTH (cJSON's limit is 1000), a byte-order mark, and every
 * syntax error.
 */
#define JDOC_MAX_DEPTH 64 /* containers nested deeper go to cJSON */

/* Parses `len` bytes of `text` (no NUL needed) into *out, which the caller
 * owns (cJSON_Delete), when it is one JSON value with only whitespace around
 * it that jdoc reads as cJSON does. ERR_UNSUPPORTED when it is not (parse
 * the text with cJSON instead), ERR_NOMEM; *out is NULL on failure. */
enum err jdoc_parse(const char *text, size_t len, cJSON **out);

/*
 * jout, the printer in pieces — a cJSON value's indented text, byte for byte what cJSON_Print gives
 * (json.h's JSON_PRETTY), made in pieces: an array standing for a long list
 * is printed from a callback one item at a time, and the text can go to a
 * file as it is made. A summary or a comparison of 100,000 cases is so
 * printed without holding its cases as a tree or its text whole.
 *
 * Every value is printed here, as cJSON 1.7.15's print_value does: numbers
 * with "%1.15g" (json_g15) unless that reads back off, then "%1.17g";
 * strings escaped as print_string_ptr escapes them; raw values as they are.
 */

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
