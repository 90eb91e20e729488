#include "json.h"

#include <stdio.h>
#include <math.h>
#include <string.h>

#include "io.h"
#include "mem.h"

/* Allocations cJSON asked for and did not get, in this thread: a parse that
 * fails while this grows failed for want of memory, not for bad text. */
static _Thread_local unsigned long alloc_failures;

static void *hook_alloc(size_t n)
{
	void *p = mem_alloc(n);

	if (!p)
		alloc_failures++;
	return p;
}

void json_init(void)
{
	cJSON_Hooks h = {hook_alloc, mem_free};

	cJSON_InitHooks(&h);
}

void json_build_init(struct json_build *jb)
{
	jb->code = ERR_OK;
	jb->key[0] = '\0';
	jb->why = NULL;
}

/* Records the first failure only. */
static void fail(struct json_build *jb, enum err code, const char *key, const char *why)
{
	if (jb->code)
		return;
	jb->code = code;
	snprintf(jb->key, sizeof(jb->key), "%s", key ? key : "");
	jb->why = why;
}

/* Whether an add to `to` may go ahead; records why not. */
static int can_add(struct json_build *jb, const cJSON *to, const char *key)
{
	if (jb->code)
		return 0;
	if (!to)
		fail(jb, ERR_NOMEM, key, NULL);
	else if (key && !cJSON_IsObject(to))
		fail(jb, ERR_INTERNAL, key, "a key on a value that is not an object");
	else if (!key && !cJSON_IsArray(to))
		fail(jb, ERR_INTERNAL, key, "no key on a value that is not an array");
	return !jb->code;
}

/* Attaches `item` (consumed) once can_add has agreed. Returns item or NULL. */
static cJSON *put(struct json_build *jb, cJSON *to, const char *key, cJSON *item)
{
	if (item && (key ? cJSON_AddItemToObject(to, key, item) : cJSON_AddItemToArray(to, item)))
		return item;
	cJSON_Delete(item);
	fail(jb, ERR_NOMEM, key, NULL);
	return NULL;
}

enum err json_build_end(const struct json_build *jb, cJSON **root, const char *what,
			struct diag *d)
{
	enum err code = jb->code;

	if (!code && root && !*root)
		code = ERR_NOMEM;
	if (!code)
		return ERR_OK;
	if (root) {
		cJSON_Delete(*root);
		*root = NULL;
	}
	if (code == ERR_NOMEM)
		return diag_fail(d, code, "out of memory building %s", what);
	return diag_fail(d, code, "cannot build %s: field '%s': %s", what, jb->key,
			 jb->why ? jb->why : "failed");
}

cJSON *json_new_obj(struct json_build *jb)
{
	cJSON *o = jb->code ? NULL : cJSON_CreateObject();

	if (!o)
		fail(jb, ERR_NOMEM, NULL, NULL);
	return o;
}

cJSON *json_new_arr(struct json_build *jb)
{
	cJSON *a = jb->code ? NULL : cJSON_CreateArray();

	if (!a)
		fail(jb, ERR_NOMEM, NULL, NULL);
	return a;
}

void json_add_str(struct json_build *jb, cJSON *to, const char *key, const char *s)
{
	if (!can_add(jb, to, key))
		return;
	if (!s)
		fail(jb, ERR_INTERNAL, key, "a NULL string");
	else
		put(jb, to, key, cJSON_CreateString(s));
}

void json_add_str_ref(struct json_build *jb, cJSON *to, const char *key, const char *s)
{
	cJSON *item;

	if (!can_add(jb, to, key))
		return;
	if (!s) {
		fail(jb, ERR_INTERNAL, key, "a NULL string");
		return;
	}
	item = cJSON_CreateStringReference(s);
	if (item && (key ? cJSON_AddItemToObjectCS(to, key, item) : cJSON_AddItemToArray(to, item)))
		return;
	cJSON_Delete(item);
	fail(jb, ERR_NOMEM, key, NULL);
}

/* `s` (`n` bytes) as a JSON string literal in `out`: quote, backslash and
 * control bytes escaped, NUL as \u0000. */
static enum err literal(const char *s, size_t n, struct buf *out)
{
	char esc[8];
	size_t i;
	enum err e = buf_append(out, "\"", 1);

	for (i = 0; i < n && !e; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			esc[0] = '\\', esc[1] = (char)c;
			e = buf_append(out, esc, 2);
		} else if (c < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			e = buf_append(out, esc, 6);
		} else {
			e = buf_append(out, s + i, 1);
		}
	}
	return e ? e : buf_append(out, "\"", 1);
}

void json_add_strn(struct json_build *jb, cJSON *to, const char *key, const char *s,
		   size_t n)
{
	struct buf b;

	if (!s) {
		json_add_str(jb, to, key, s);
		return;
	}
	if (!memchr(s, '\0', n)) { /* n bytes, which need not end the string */
		char *head = can_add(jb, to, key) ? mem_strndup(s, n) : NULL;

		if (head)
			json_add_str(jb, to, key, head);
		else if (!jb->code)
			fail(jb, ERR_NOMEM, key, NULL);
		mem_free(head);
		return;
	}
	if (!can_add(jb, to, key))
		return;
	buf_init(&b, BUF_MAX_DEFAULT);
	if (literal(s, n, &b))
		fail(jb, ERR_NOMEM, key, NULL);
	else
		put(jb, to, key, cJSON_CreateRaw(b.data));
	buf_release(&b);
}

size_t json_nul_at(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] == '\0')
			return i;
		if (s[i] != '\\' || i + 1 >= n)
			continue;
		if (i + 5 < n && s[i + 1] == 'u' && !memcmp(s + i + 2, "0000", 4))
			return i;
		i++; /* an escaped character, maybe a backslash */
	}
	return n;
}

size_t json_control_at(const char *s, size_t n)
{
	size_t i;
	int in = 0;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"')
			in = !in;
		else if (in && c == '\\')
			i++;
		else if (in && c < 0x20)
			return i;
	}
	return n;
}

void json_add_num(struct json_build *jb, cJSON *to, const char *key, double v)
{
	if (can_add(jb, to, key))
		put(jb, to, key, cJSON_CreateNumber(v));
}

void json_add_int(struct json_build *jb, cJSON *to, const char *key, long long v)
{
	json_add_num(jb, to, key, (double)v);
}

void json_add_bool(struct json_build *jb, cJSON *to, const char *key, int v)
{
	if (can_add(jb, to, key))
		put(jb, to, key, cJSON_CreateBool(v != 0));
}

void json_add_null(struct json_build *jb, cJSON *to, const char *key)
{
	if (can_add(jb, to, key))
		put(jb, to, key, cJSON_CreateNull());
}

void json_add_item(struct json_build *jb, cJSON *to, const char *key, cJSON *item)
{
	if (can_add(jb, to, key))
		put(jb, to, key, item);
	else
		cJSON_Delete(item);
}

void json_add_dup(struct json_build *jb, cJSON *to, const char *key, const cJSON *v)
{
	if (!can_add(jb, to, key))
		return;
	if (!v)
		fail(jb, ERR_INTERNAL, key, "a NULL value to copy");
	else
		put(jb, to, key, cJSON_Duplicate(v, 1));
}

cJSON *json_add_obj(struct json_build *jb, cJSON *to, const char *key)
{
	return can_add(jb, to, key) ? put(jb, to, key, cJSON_CreateObject()) : NULL;
}

cJSON *json_add_arr(struct json_build *jb, cJSON *to, const char *key)
{
	return can_add(jb, to, key) ? put(jb, to, key, cJSON_CreateArray()) : NULL;
}

enum err json_parse(const char *text, size_t len, cJSON **out, const char *what,
		    struct diag *d)
{
	unsigned long before = alloc_failures;
	const char *end = NULL;
	size_t at;
	enum err e = jdoc_parse(text, len, out);

	if (e == ERR_NOMEM)
		return diag_fail(d, ERR_NOMEM, "out of memory parsing %s", what);
	if (!e)
		return ERR_OK;
	*out = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (!*out && alloc_failures != before)
		return diag_fail(d, ERR_NOMEM, "out of memory parsing %s", what);
	at = end && end >= text ? (size_t)(end - text) : 0;
	while (*out && at < len && strchr(" \t\r\n", text[at]) && text[at])
		at++;
	if (*out && at == len)
		return ERR_OK;
	cJSON_Delete(*out);
	*out = NULL;
	return diag_fail(d, ERR_INPUT, "cannot parse %s: invalid JSON at byte %zu", what, at);
}

/* The decimal digits of `u` into out (no sign, no NUL); returns how many. */
static size_t digits(unsigned long long u, char *out)
{
	static const char pairs[] = "00010203040506070809101112131415161718192021222324"
				    "25262728293031323334353637383940414243444546474849"
				    "50515253545556575859606162636465666768697071727374"
				    "75767778798081828384858687888990919293949596979899";
	unsigned long long t;
	size_t n = 1, i;

	/* counted first, then two digits a division written from the end in
	 * place (a report writes some ten numbers a record) */
	for (t = u; t >= 100; t /= 100)
		n += 2;
	n += t >= 10;
	for (i = n; u >= 100; u /= 100) {
		i -= 2;
		memcpy(out + i, pairs + 2 * (u % 100), 2);
	}
	if (u >= 10)
		memcpy(out, pairs + 2 * u, 2);
	else
		out[0] = (char)('0' + u);
	return n;
}

/* "%.15g" of a finite non-zero `v` with 1e-4 <= |v| < 1e15 when its 15
 * significant digits can be had exactly from one rounded product: `v` times
 * a power of ten (exact up to 10^22) is rounded once, off by at most 1/16
 * from the exact product below 2^50, so its nearest integer is the correctly
 * rounded digits unless the product lies near a half (then 0, for printf).
 * Fixed notation, trailing zeros of the fraction dropped, as %g does. */
static size_t g15_fixed(double v, char *out)
{
	static const double p10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
				     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
				     1e16, 1e17, 1e18};
	static const double n10[] = {1e-1, 1e-2, 1e-3, 1e-4};
	static const unsigned long long drop[] = {100000000, 10000, 100, 10};
	double a = fabs(v), x, f;
	int e = 0, k;
	unsigned long long m;
	char dg[24];
	size_t n = 0, i, nd;

	/* the decimal exponent by comparisons (log10 costs more than the rest);
	 * one off by the rounding of 1e-k is caught by the range of x below */
	if (a >= 1) {
		while (e < 15 && a >= p10[e + 1])
			e++;
	} else {
		while (e > -5 && a < (e ? n10[-e - 1] : 1))
			e--;
	}
	if (e < -4 || e > 14)
		return 0;
	k = 14 - e;
	if (k < 0 || k > 18)
		return 0;
	x = a * p10[k];
	if (x < 1e14 || x >= 1e15)
		return 0;
	f = x - floor(x);
	if (f >= 0.4375 && f <= 0.5625)
		return 0;
	m = (unsigned long long)floor(x) + (f >= 0.5);
	if (m >= 1000000000000000ULL)
		return 0; /* rounded up to a new digit: rare, left to printf */
	/* the fraction's trailing zeros dropped from m, 8, 4, 2 and 1 at a time
	 * (at most 14 of them), keeping the e + 1 digits before the point */
	nd = 15;
	for (i = 0; i < 4; i++)
		if (m % drop[i] == 0 && (int)nd - (8 >> i) > e) {
			m /= drop[i];
			nd -= (size_t)(8 >> i);
		}
	digits(m, dg);
	if (v < 0)
		out[n++] = '-';
	if (e < 0) {
		out[n++] = '0';
		out[n++] = '.';
		for (i = 0; i < (size_t)(-e - 1); i++)
			out[n++] = '0';
	}
	for (i = 0; i < nd; i++) {
		if (e >= 0 && i == (size_t)e + 1)
			out[n++] = '.';
		out[n++] = dg[i];
	}
	out[n] = '\0';
	return n;
}

/* A number of at most three decimals (a journal's milliseconds): when
 * m = |v| * 1000 is whole, below 10^15, and m / 1000 (rounded once) is |v|
 * again, v is the double nearest the decimal m / 1000, of at most 15
 * significant digits, which "%.15g" writes as it is (DBL_DIG): its integer
 * part, then the fraction's digits without trailing zeros. 0 otherwise. */
static size_t g15_milli(double v, char *out)
{
	double a = fabs(v), x = a * 1000;
	unsigned long long m;
	unsigned r;
	size_t n = 0;

	/* 0 <= x < 1e15: whole when its conversion is exact (no call to floor) */
	if (!(x < 1e15) || x != (double)(m = (unsigned long long)x))
		return 0;
	if ((double)m / 1000 != a)
		return 0;
	if (v < 0)
		out[n++] = '-';
	n += digits(m / 1000, out + n);
	if ((r = (unsigned)(m % 1000))) {
		out[n++] = '.';
		out[n++] = (char)('0' + r / 100);
		if (r % 100) {
			out[n++] = (char)('0' + r / 10 % 10);
			if (r % 10)
				out[n++] = (char)('0' + r % 10);
		}
	}
	out[n] = '\0';
	return n;
}

size_t json_g15(double v, char *out)
{
	size_t n = 0;
	int len;

	if (v == v && v > -1e15 && v < 1e15 && v == (double)(long long)v &&
	    !(v == 0 && signbit(v))) {
		if (v < 0)
			out[n++] = '-';
		n += digits((unsigned long long)(v < 0 ? -v : v), out + n);
		out[n] = '\0';
		return n;
	}
	if (isfinite(v) && v != 0 && ((n = g15_milli(v, out)) || (n = g15_fixed(v, out))))
		return n;
	len = snprintf(out, JSON_G15_MAX, "%.15g", v);
	return len > 0 ? (size_t)len : 0;
}

/* cJSON's text for `v`, owned by the caller (cJSON_free), or NULL. */
static char *print_text(const cJSON *v, unsigned flags)
{
	return flags & JSON_PRETTY ? cJSON_Print(v) : cJSON_PrintUnformatted(v);
}

enum err json_print(const cJSON *v, unsigned flags, struct buf *out, const char *what,
		    struct diag *d)
{
	size_t keep = out->len;
	char *txt = v ? print_text(v, flags) : NULL;
	enum err e;

	if (!v)
		return diag_fail(d, ERR_INTERNAL, "cannot print %s: no value", what);
	if (!txt)
		return diag_fail(d, ERR_NOMEM, "out of memory printing %s", what);
	e = buf_puts(out, txt);
	if (!e && (flags & JSON_NEWLINE))
		e = buf_putc(out, '\n');
	cJSON_free(txt);
	if (!e)
		return ERR_OK;
	buf_truncate(out, keep);
	if (e == ERR_LIMIT)
		return diag_fail(d, e, "%s is too large to print", what);
	return diag_fail(d, e, "out of memory printing %s", what);
}

/* The text's NUL becomes the final newline: cJSON allocated it, so the file
 * is written from cJSON's own bytes without a copy. */
enum err json_write_file(const char *path, const cJSON *v, unsigned flags, struct diag *d)
{
	char *txt = v ? print_text(v, flags) : NULL;
	size_t n;
	enum err e;

	if (!v)
		return diag_fail(d, ERR_INTERNAL, "cannot write '%s': no value", path);
	if (!txt)
		return diag_fail(d, ERR_NOMEM, "cannot write '%s': out of memory", path);
	n = strlen(txt);
	if (flags & JSON_NEWLINE)
		txt[n++] = '\n';
	e = io_write_file(path, txt, n, d);
	cJSON_free(txt);
	return e;
}
