/*
 * jdoc — a JSON document into a cJSON tree in one pass (see json.h).
 */
#include "json.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jscan.h"
#include "mem.h"
#include "utf8.h"

/* The tree is cJSON 1.7.15's, node for node (unit/test_jdoc and the fuzz
 * target compare them): against another cJSON, compare again before
 * changing this check. */
#if CJSON_VERSION_MAJOR != 1 || CJSON_VERSION_MINOR != 7 || CJSON_VERSION_PATCH != 15
#error "jdoc reproduces cJSON 1.7.15's parse; run unit/test_jdoc against this cJSON, then update the check"
#endif

#define NUMBER_MAX 63 /* bytes of cJSON's number buffer, NUL excluded */

struct jd {
	const char *p, *end; /* the text not read yet */
	enum err e;          /* ERR_UNSUPPORTED or ERR_NOMEM once the read stops */
};

static void *stop(struct jd *j, enum err e)
{
	if (!j->e)
		j->e = e;
	return NULL;
}

/* stop(j, ERR_UNSUPPORTED) for a function that answers 1 or 0. */
static int refuse(struct jd *j)
{
	stop(j, ERR_UNSUPPORTED);
	return 0;
}

static void skip_ws(struct jd *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t'))
		j->p++;
}

static int at(const struct jd *j, char c)
{
	return j->p < j->end && *j->p == c;
}

/* Four hex digits at `p` into *v; 0 when one is not (cJSON reads it as 0). */
static int hex4(const char *p, uint32_t *v)
{
	int i, x;

	for (*v = 0, i = 0; i < 4; i++) {
		if ((x = utf8_hexval((unsigned char)p[i])) < 0)
			return 0;
		*v = *v << 4 | (uint32_t)x;
	}
	return 1;
}

/* The \u escape at `r` (before the closing quote `q`) as UTF-8 at *w: the
 * bytes of text it took (6, or 12 for a surrogate pair), 0 for one cJSON
 * reads otherwise (\u0000 cuts its string) or refuses. */
static size_t unicode(const char *r, const char *q, char **w)
{
	uint32_t hi, lo;

	if (q - r < 6 || !hex4(r + 2, &hi) || hi == 0 || (hi >= 0xDC00 && hi <= 0xDFFF))
		return 0;
	if (hi < 0xD800 || hi > 0xDBFF) {
		*w += utf8_encode(hi, *w);
		return 6;
	}
	if (q - r < 12 || r[6] != '\\' || r[7] != 'u' || !hex4(r + 8, &lo) || lo < 0xDC00 || lo > 0xDFFF)
		return 0;
	*w += utf8_encode(0x10000 + ((hi & 0x3FF) << 10 | (lo & 0x3FF)), *w);
	return 12;
}

/* The escape at `r` (a backslash before `q`, the escaped byte before `q`
 * too) written at *w; the bytes of text it took, or 0. */
static size_t escape(const char *r, const char *q, char **w)
{
	char c;

	switch (r[1]) {
	case '"': case '\\': case '/': c = r[1]; break;
	case 'b': c = '\b'; break;
	case 'f': c = '\f'; break;
	case 'n': c = '\n'; break;
	case 'r': c = '\r'; break;
	case 't': c = '\t'; break;
	case 'u': return unicode(r, q, w);
	default: return 0;
	}
	*(*w)++ = c;
	return 2;
}

/* The closing quote of the string whose bytes start at `s`, or NULL (no
 * end, or a byte below 0x20 in it). */
static const char *closing_quote(const char *s, const char *end)
{
	for (;;) {
		s = jscan_plain_end(s, end);
		if (s == end || (unsigned char)*s < 0x20)
			return NULL;
		if (*s == '"')
			return s;
		if (end - s < 2)
			return NULL;
		s += 2; /* the escaped byte, whatever it is, is checked by escape() */
	}
}

/* The string at j->p (its opening quote), decoded into new memory. */
static char *string(struct jd *j)
{
	const char *s = j->p + 1, *q = closing_quote(s, j->end), *r, *t;
	char *out, *w;
	size_t n;

	if (!q)
		return stop(j, ERR_UNSUPPORTED);
	if (!(out = w = mem_alloc((size_t)(q - s) + 1))) /* escapes only shrink */
		return stop(j, ERR_NOMEM);
	for (r = s; r < q; r += n) {
		t = jscan_plain_end(r, q);
		memcpy(w, r, (size_t)(t - r));
		w += t - r;
		if ((r = t) == q)
			break;
		if (!(n = escape(r, q, &w))) {
			mem_free(out);
			return stop(j, ERR_UNSUPPORTED);
		}
	}
	*w = '\0';
	j->p = q + 1;
	return out;
}

static const char *digits(const char *p, const char *end)
{
	while (p < end && *p >= '0' && *p <= '9')
		p++;
	return p;
}

/* An RFC 8259 number at j->p into `n`, as cJSON's parse_number sets it. */
static int number(struct jd *j, cJSON *n)
{
	const char *s = j->p, *p = s + (*s == '-'), *t;
	char buf[NUMBER_MAX + 1];
	double v;

	if (p == j->end || *p < '0' || *p > '9')
		return 0;
	p = *p == '0' ? p + 1 : digits(p, j->end);
	if (p < j->end && *p == '.') {
		if ((t = digits(p + 1, j->end)) == p + 1)
			return 0;
		p = t;
	}
	if (p < j->end && (*p == 'e' || *p == 'E')) {
		p += p + 1 < j->end && (p[1] == '+' || p[1] == '-') ? 2 : 1;
		if ((t = digits(p, j->end)) == p)
			return 0;
		p = t;
	}
	if (p - s > NUMBER_MAX)
		return 0;
	memcpy(buf, s, (size_t)(p - s));
	buf[p - s] = '\0';
	v = strtod(buf, NULL);
	n->type = cJSON_Number;
	n->valuedouble = v;
	n->valueint = v >= INT_MAX ? INT_MAX : v <= (double)INT_MIN ? INT_MIN : (int)v;
	j->p = p;
	return 1;
}

static cJSON *value(struct jd *j, int depth);

/* Appends `c` to `n`'s children (`*last` the last one so far). */
static void link_child(cJSON *n, cJSON **last, cJSON *c)
{
	if (*last) {
		(*last)->next = c;
		c->prev = *last;
	} else {
		n->child = c;
	}
	n->child->prev = c;
	*last = c;
}

/* The array or object at j->p into `n`. */
static int container(struct jd *j, cJSON *n, int depth)
{
	int obj = *j->p == '{';
	char close = obj ? '}' : ']';
	cJSON *last = NULL, *c;
	char *key = NULL;

	n->type = obj ? cJSON_Object : cJSON_Array;
	j->p++;
	skip_ws(j);
	if (at(j, close)) {
		j->p++;
		return 1;
	}
	for (;;) {
		if (obj && !at(j, '"'))
			return refuse(j);
		if (obj && !(key = string(j)))
			return 0;
		if (obj)
			skip_ws(j);
		if (obj && !at(j, ':')) {
			mem_free(key);
			return refuse(j);
		}
		j->p += obj;
		skip_ws(j);
		if (!(c = value(j, depth + 1))) {
			mem_free(key);
			return 0;
		}
		c->string = key;
		link_child(n, &last, c);
		skip_ws(j);
		if (!at(j, ',') && !at(j, close))
			return refuse(j);
		if (*j->p++ == close)
			return 1;
		skip_ws(j);
	}
}

/* One value at j->p (whitespace skipped before it), or NULL with j->e set. */
static cJSON *value(struct jd *j, int depth)
{
	cJSON *n = mem_calloc(1, sizeof(*n));
	int ok;

	if (!n)
		return stop(j, ERR_NOMEM);
	if (j->p == j->end) {
		ok = 0;
	} else if (*j->p == '"') {
		n->type = cJSON_String;
		ok = (n->valuestring = string(j)) != NULL;
	} else if (*j->p == '[' || *j->p == '{') {
		ok = depth < JDOC_MAX_DEPTH && container(j, n, depth);
	} else if (*j->p == '-' || (*j->p >= '0' && *j->p <= '9')) {
		ok = number(j, n);
	} else {
		static const struct { const char *word; size_t n; int type, i; } lit[] = {
			{"true", 4, cJSON_True, 1}, {"false", 5, cJSON_False, 0}, {"null", 4, cJSON_NULL, 0}};
		size_t k;

		for (ok = 0, k = 0; !ok && k < 3; k++)
			if ((size_t)(j->end - j->p) >= lit[k].n && !memcmp(j->p, lit[k].word, lit[k].n)) {
				n->type = lit[k].type;
				n->valueint = lit[k].i;
				j->p += lit[k].n;
				ok = 1;
			}
	}
	if (ok)
		return n;
	cJSON_Delete(n);
	return stop(j, ERR_UNSUPPORTED);
}

enum err jdoc_parse(const char *text, size_t len, cJSON **out)
{
	struct jd j = {text, text + len, ERR_OK};

	skip_ws(&j);
	*out = value(&j, 0);
	skip_ws(&j);
	if (*out && j.p == j.end)
		return ERR_OK;
	cJSON_Delete(*out);
	*out = NULL;
	return j.e ? j.e : ERR_UNSUPPORTED;
}
