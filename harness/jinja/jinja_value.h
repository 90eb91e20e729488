/*
 * jinja_value — the Python values a chat template computes with, and the
 * arena they live in (internal to the jinja modules; see jinja.h).
 *
 * A `struct jv` is a small tagged union copied by value. Strings, sequences
 * and dicts point into an arena: nothing is freed before the arena is, so
 * values may share parts freely. Values are immutable once built (the sandbox
 * forbids mutation), except a namespace's dict, which `set ns.x` rewrites.
 *
 * A str's bytes need not follow its header: a view (jinja_value_str_view)
 * points at bytes that already exist and outlive it (a template's names and
 * literals in the template's arena, the strings of a context's JSON text in
 * the copy the context keeps), so reading a context or binding a name copies
 * nothing. Every str's bytes end with a NUL all the same. A str's code points
 * are counted the first time a builtin asks (jinja_value_str_ncp: len,
 * indexing, slicing, center, ...), not when it is made; most strings of a
 * chat template are only printed and compared.
 *
 * Python types: None, bool, int (int64; an integer outside int64, from JSON,
 * a literal or arithmetic (jinja_bigint in jinja_int.h), is a JV_BIGINT of
 * its canonical decimal digits, so that == and hashing compare the text),
 * float (double), str (UTF-8, code points), list, tuple, dict (any
 * hashable keys, insertion order), plus Jinja's Undefined (carrying the name
 * it was looked up by, for messages), namespace, macros, callables and the
 * loop object.
 */
#ifndef NEEDLE_JINJA_VALUE_H
#define NEEDLE_JINJA_VALUE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/err.h"

/* Containers nested deeper than this are refused by every walk over a value
 * (==, <, in, sort, unique, repr, str, tojson). CPython's recursion limit is
 * 1000: jinja2 3.1 on CPython 3.11 raises RecursionError from 990 nested
 * lists for tojson and from 994 for printing or comparing (measured), so
 * refusing past 989 never renders what Python refuses. */
#define JV_MAX_DEPTH 989
/* Work units (jinja_int.h, the render's budget) of one item a builtin
 * visits or makes (a compared item, a split piece):
 * about what scanning 256 bytes costs. */
#define JV_WORK_ITEM 256
/* Work units of one match str.count or str.replace finds (a search restarts
 * there; measured at about 1,000 scanned bytes' time). */
#define JV_WORK_MATCH 1024
/* Digits of the largest JV_BIGINT: CPython 3.11 converts no int of more
 * to or from text (sys.int_info.default_max_str_digits). */
#define JV_BIGINT_MAX_DIGITS 4300
/* jinja_value_eq's answer for a walk past JV_MAX_DEPTH. */
#define JV_EQ_DEEP (-2)

struct jv_arena {
	struct jv_block *head; /* owned chain of blocks, newest first */
	size_t used;           /* bytes handed out, all blocks */
	size_t max;            /* cap on `used`, fixed at init */
};

enum jv_kind {
	JV_UNDEF,  /* u.s: name looked up (may be NULL) */
	JV_NONE,
	JV_BOOL,   /* u.i: 0 or 1 */
	JV_INT,    /* u.i */
	JV_BIGINT, /* u.s: decimal digits, optional '-', outside int64 */
	JV_FLOAT,  /* u.f */
	JV_STR,    /* u.s */
	JV_LIST,   /* u.l; flags JV_F_VIEW / JV_F_GEN / JV_F_RANGE */
	JV_TUPLE,  /* u.l */
	JV_DICT,   /* u.d */
	JV_NS,     /* u.d: the namespace's attributes (mutable) */
	JV_MACRO,  /* u.p: the evaluator's macro */
	JV_FUNC,   /* u.fn: a global function or a bound method */
	JV_LOOP    /* u.p: the evaluator's loop state */
};

/* flags */
#define JV_F_MARKUP 1u /* str: markupsafe.Markup (from |safe or |e) */
#define JV_F_VIEW 2u   /* list: a dict view (dict_items, dict_keys, ...) */
#define JV_F_GEN 4u    /* list: a generator (no len, always true, one pass) */
#define JV_F_RANGE 8u  /* list: a range object */
#define JV_F_KEYS 16u  /* view: dict_keys */
#define JV_F_VALUES 32u /* view: dict_values */
#define JV_F_ITEMS 64u /* view: dict_items */

/* jv_str.ncp before jinja_value_str_ncp has counted them. */
#define JV_NCP_UNKNOWN SIZE_MAX

struct jv_str {
	size_t len;       /* bytes */
	size_t ncp;       /* code points, or JV_NCP_UNKNOWN: a cache that
			   * jinja_value_str_ncp fills (read it through that) */
	const char *data; /* len bytes of valid UTF-8 + NUL: right after this
			   * header, or (a view) in an arena that outlives it */
};

struct jv_seq {
	size_t n;        /* items */
	size_t cap;      /* allocated slots */
	struct jv *v;    /* items, arena */
	size_t taken;    /* a generator: items already consumed */
	int raised;      /* a generator: `err` was raised (it is finished) */
	enum err err;    /* a generator: what its next item after v[n-1] raises */
	const char *err_msg; /* the message of that failure (arena) */
};

struct jv_dict {
	size_t n, cap;
	struct jv *keys, *vals; /* arena, parallel, insertion order */
};

struct jv_fn {
	int id;              /* builtin function / method number (jinja_builtin) */
	const char *name;    /* for messages */
	struct jv *self;     /* bound receiver, or NULL */
};

struct jv {
	enum jv_kind k;
	unsigned flags;
	union {
		int64_t i;
		double f;
		struct jv_str *s;
		struct jv_seq *l;
		struct jv_dict *d;
		struct jv_fn *fn;
		void *p;
	} u;
};

/* --- arena --- */
void jinja_value_arena_init(struct jv_arena *a, size_t max);
void jinja_value_arena_release(struct jv_arena *a);
/* `n` zeroed bytes, 16-aligned; NULL when out of memory or past the cap. */
void *jinja_value_alloc(struct jv_arena *a, size_t n);
/* Whether `n` more bytes would pass the arena's cap (so a failed
 * jinja_value_alloc of `n` was the cap, not exhausted memory). */
int jinja_value_arena_full(const struct jv_arena *a, size_t n);
/* Counts `n` bytes against the cap as jinja_value_alloc(a, n) would, and
 * allocates nothing: a value the evaluator prints piece by piece instead of
 * making is charged as if made, so the cap stays exact. ERR_NOMEM past the
 * cap (as that allocation would fail). */
enum err jinja_value_arena_charge(struct jv_arena *a, size_t n);
/* Undoes jinja_value_arena_charge(a, n) (the value is then made after all). */
void jinja_value_arena_refund(struct jv_arena *a, size_t n);
/* The arena bytes jinja_value_str_new takes for a str of `n` bytes. */
size_t jinja_value_str_size(size_t n);

/* --- constructors (NULL-free: on failure they return ERR_NOMEM/ERR_LIMIT) --- */
static inline struct jv jinja_value_none(void)
{
	struct jv v = { JV_NONE, 0, { 0 } };

	return v;
}

static inline struct jv jinja_value_bool(int b)
{
	struct jv v = { JV_BOOL, 0, { 0 } };

	v.u.i = b != 0;
	return v;
}

static inline struct jv jinja_value_int(int64_t i)
{
	struct jv v = { JV_INT, 0, { 0 } };

	v.u.i = i;
	return v;
}

static inline struct jv jinja_value_float(double f)
{
	struct jv v = { JV_FLOAT, 0, { 0 } };

	v.u.f = f;
	return v;
}

static inline struct jv jinja_value_undef(const char *name)
{
	struct jv v = { JV_UNDEF, 0, { 0 } };

	v.u.p = (void *)name;
	return v;
}
/* A str of `n` bytes of valid UTF-8 at `s` (copied). */
enum err jinja_value_str_new(struct jv_arena *a, const char *s, size_t n, struct jv *out);
/* The same, taking the bytes of `b` (copied; `b` is left as is). */
enum err jinja_value_str_buf(struct jv_arena *a, const struct buf *b, struct jv *out);
/* A str of the `n` bytes at `s`, not copied: `s` must hold valid UTF-8
 * followed by a NUL (s[n] == 0) and outlive every use of the value (the
 * template's arena, a context's arena, or `a` itself). Only the header is
 * allocated from `a`. */
enum err jinja_value_str_view(struct jv_arena *a, const char *s, size_t n, struct jv *out);
/* An uninitialised str of `n` bytes in `a` for the caller to fill at once
 * (`*bytes`, NUL already at [n]) before any other use of the value: so a
 * concatenation is written once, in place. */
enum err jinja_value_str_room(struct jv_arena *a, size_t n, char **bytes, struct jv *out);
/* The code points of `s`, counted on the first call (one pass over its
 * bytes) and cached in the header from then on. */
size_t jinja_value_str_ncp(const struct jv_str *s);
/* An empty list or tuple (`k`) with room for `cap` items. */
enum err jinja_value_seq_new(struct jv_arena *a, enum jv_kind k, size_t cap, struct jv *out);
enum err jinja_value_seq_push(struct jv_arena *a, struct jv *seq, struct jv item);
enum err jinja_value_dict_new(struct jv_arena *a, enum jv_kind k, struct jv *out);
/* Python's d[key] = val: an existing key keeps its position. */
enum err jinja_value_dict_set(struct jv_arena *a, struct jv *dict, struct jv key, struct jv val);
/* The value for `key`, or NULL. */
struct jv *jinja_value_dict_get(const struct jv *dict, struct jv key);
struct jv *jinja_value_dict_get_str(const struct jv *dict, const char *s, size_t n);

/* --- Python semantics --- */
/* Python truthiness (Undefined false, a generator true). */
int jinja_value_truthy(const struct jv *v);
/* The same, adding to `*work` the work units (bytes, JV_WORK_ITEM per item)
 * it spent (the render's budget counts them). */
int jinja_value_eq_work(const struct jv *a, const struct jv *b, size_t *work);
/* Whether the value can be a dict key (hashable in Python); a tuple nested
 * deeper than JV_MAX_DEPTH counts as not hashable. */
int jinja_value_hashable(const struct jv *v);
/* Python type name for messages ("str", "dict", "NoneType", ...). */
const char *jinja_value_type_name(const struct jv *v);
/* A number (int, bool, float): 1 and its value as double; else 0. */
int jinja_value_is_num(const struct jv *v);
int jinja_value_is_seq(const struct jv *v); /* list or tuple (views included) */

/* --- JSON input, as Python's json.loads --- */
/* Parses one JSON value of `len` bytes at `s` (named `name` in messages) into
 * `*out`, allocated from `a`. The text is copied into `a` once and every
 * string without escapes is a view into that copy (its closing quote
 * overwritten with the NUL); a string with escapes is decoded and copied. */
enum err jinja_value_from_json(struct jv_arena *a, const char *s, size_t len,
			       const char *name, struct jv *out, struct diag *d);

/* The same from a cJSON tree `v` (borrowed: its strings and keys become
 * views, so `v` must outlive every use of `*out`). A number kept as its
 * lexeme (a cJSON_Raw item, as tpl_py_parse leaves it) reads as that JSON
 * text; a cJSON number as the text cJSON prints for it; so the values are
 * those of jinja_value_from_json on the text cJSON would print for `v`.
 * ERR_INPUT past JSCAN_MAX_DEPTH levels of nesting. */
enum err jinja_value_from_cjson(struct jv_arena *a, const cJSON *v, const char *name,
				struct jv *out, struct diag *d);

#endif
