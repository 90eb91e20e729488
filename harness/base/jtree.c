/*
 * jtree — see jtree.h.
 */
#include "jtree.h"

#include <limits.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jget.h"
#include "jscan.h"
#include "mem.h"

struct jtree_block {
	struct jtree_block *next;
	size_t cap;              /* bytes of data */
	alignas(max_align_t) char data[];
};

void jtree_init(struct jtree *t)
{
	t->first = t->cur = NULL;
	t->used = 0;
	buf_init(&t->scratch, BUF_MAX_DEFAULT);
	t->root = NULL;
}

void jtree_release(struct jtree *t)
{
	struct jtree_block *b = t->first, *next;

	jget_forget(t->root);
	for (; b; b = next) {
		next = b->next;
		mem_free(b);
	}
	buf_release(&t->scratch);
	jtree_init(t);
}

/* `n` bytes from the blocks (aligned for any object), a new block added after
 * the current one when none of those after it has room; NULL when out of
 * memory. */
static void *take(struct jtree *t, size_t n)
{
	struct jtree_block *b;
	size_t want = (n + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1);
	void *p;

	if (t->cur && t->cur->cap - t->used >= want) {
		p = t->cur->data + t->used;
		t->used += want;
		return p;
	}
	while (t->cur && t->cur->next) {
		t->cur = t->cur->next;
		t->used = 0;
		if (t->cur->cap >= want)
			return take(t, n);
	}
	b = mem_alloc(sizeof(*b) + (want > JTREE_BLOCK ? want : JTREE_BLOCK));
	if (!b)
		return NULL;
	b->cap = want > JTREE_BLOCK ? want : JTREE_BLOCK;
	b->next = NULL;
	if (t->cur)
		t->cur->next = b;
	else
		t->first = b;
	t->cur = b;
	t->used = 0;
	return take(t, n);
}

static enum err nomem(struct jscan *j, struct diag *d)
{
	return diag_fail(d, ERR_NOMEM, "cannot parse '%s': out of memory", j->name);
}

static cJSON *node(struct jtree *t, struct jscan *j, int type, struct diag *d)
{
	cJSON *n = take(t, sizeof(*n));

	if (!n) {
		nomem(j, d);
		return NULL;
	}
	memset(n, 0, sizeof(*n));
	n->type = type;
	return n;
}

/* The byte at j->pos, or -1 at the end: the fast paths below read what
 * compact JSON (a journal line) holds there, and leave anything else
 * (whitespace, escapes, exponents, errors) to jscan. */
static int at(const struct jscan *j)
{
	return j->pos < j->len ? (unsigned char)j->s[j->pos] : -1;
}

/* A JSON string at j->pos, decoded and NUL-terminated: in place of its
 * closing quote when it has no escape, else copied into the blocks. */
static char *string(struct jtree *t, struct jscan *j, struct diag *d)
{
	const char *s;
	size_t n, p = j->pos + 1;
	char *out;

	if (at(j) == '"') {
		p = (size_t)(jscan_plain_end(j->s + p, j->s + j->len) - j->s);
		if (p < j->len && j->s[p] == '"') {
			out = (char *)(uintptr_t)(j->s + j->pos + 1);
			out[p - j->pos - 1] = '\0';
			j->pos = p + 1;
			return out;
		}
	}
	if (jscan_string(j, &t->scratch, &s, &n, d))
		return NULL;
	if (s != t->scratch.data) {
		out = (char *)(uintptr_t)s; /* a view into the caller's text */
		out[n] = '\0';
		return out;
	}
	if (!(out = take(t, n + 1))) {
		nomem(j, d);
		return NULL;
	}
	memcpy(out, s, n);
	out[n] = '\0';
	return out;
}

/* The value of a JSON number's `n` bytes at `s` (already validated). */
static double number(struct jtree *t, const char *s, size_t n)
{
	static const double p10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
				     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
				     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
	const char *p = s, *end = s + n;
	uint64_t m = 0;
	int sig = 0, e = 0, neg = p < end && *p == '-';
	double v;

	for (p += neg; p < end && *p >= '0' && *p <= '9'; p++)
		if (m || *p != '0')
			m = m * 10 + (uint64_t)(*p - '0'), sig++;
	if (p < end && *p == '.')
		for (p++; p < end && *p >= '0' && *p <= '9'; p++, e--)
			if (m || *p != '0')
				m = m * 10 + (uint64_t)(*p - '0'), sig++;
	if (p == end && sig <= 15 && e >= -22) {
		/* Clinger's fast path: m and 10^-e are exact, so one division
		 * rounds once, as strtod does */
		v = e ? (double)m / p10[-e] : (double)m;
		return neg ? -v : v;
	}
	buf_reset(&t->scratch);
	if (buf_append(&t->scratch, s, n))
		return strtod("nan", NULL); /* unreachable: a number is far below the cap */
	return strtod(t->scratch.data, NULL);
}

/* The end of a plain number ([-]digits[.digits]) at j->pos followed by a
 * byte that may follow a value, or 0 (then jscan_skip judges it). */
static size_t plain_number(const struct jscan *j)
{
	const char *s = j->s;
	size_t p = j->pos + (s[j->pos] == '-'), d0 = p;

	while (p < j->len && s[p] >= '0' && s[p] <= '9')
		p++;
	if (p == d0)
		return 0;
	if (p < j->len && s[p] == '.') {
		d0 = ++p;
		while (p < j->len && s[p] >= '0' && s[p] <= '9')
			p++;
		if (p == d0)
			return 0;
	}
	return p == j->len || s[p] == ',' || s[p] == '}' || s[p] == ']' ? p : 0;
}

/* Whether word `w` (true, false, null) is at j->pos; consumed if so. */
static int word(struct jscan *j, const char *w, size_t n)
{
	if (j->len - j->pos < n || memcmp(j->s + j->pos, w, n))
		return 0;
	j->pos += n;
	return 1;
}

/* A scalar (number, true, false, null) at j->pos. */
static cJSON *scalar(struct jtree *t, struct jscan *j, struct diag *d)
{
	size_t start = j->pos, end = at(j) >= 0 ? plain_number(j) : 0;
	cJSON *n;
	char c;

	if (end)
		j->pos = end;
	else if (word(j, "true", 4) || word(j, "false", 5) || word(j, "null", 4))
		;
	else if (jscan_skip(j, &start, d))
		return NULL;
	c = j->s[start];
	if (c == 't' || c == 'f')
		return node(t, j, c == 't' ? cJSON_True : cJSON_False, d);
	if (c == 'n')
		return node(t, j, cJSON_NULL, d);
	if (!(n = node(t, j, cJSON_Number, d)))
		return NULL;
	n->valuedouble = number(t, j->s + start, j->pos - start);
	/* as cJSON sets it */
	if (n->valuedouble >= INT_MAX)
		n->valueint = INT_MAX;
	else if (n->valuedouble <= (double)INT_MIN)
		n->valueint = INT_MIN;
	else
		n->valueint = (int)n->valuedouble;
	return n;
}

static cJSON *value(struct jtree *t, struct jscan *j, int depth, struct diag *d);

/* A string (`c` is '"') or a scalar at j->pos. */
static cJSON *leaf(struct jtree *t, struct jscan *j, int c, struct diag *d)
{
	cJSON *n;

	if (c != '"')
		return scalar(t, j, d);
	if (!(n = node(t, j, cJSON_String, d)) || !(n->valuestring = string(t, j, d)))
		return NULL;
	return n;
}

/* A member's or element's value at depth `depth`: a string or a scalar
 * starting right at j->pos (no whitespace) taken here, as value() would take
 * it, without its call; anything else (containers, whitespace, too deep)
 * is value()'s. */
static cJSON *member(struct jtree *t, struct jscan *j, int depth, struct diag *d)
{
	int c = at(j);

	if (depth <= JSCAN_MAX_DEPTH &&
	    (c == '"' || c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n'))
		return leaf(t, j, c, d);
	return value(t, j, depth, d);
}

/* An object or array (`c` its opening byte) at j->pos, members in order;
 * the first child's prev is the last, as cJSON keeps it. */
static cJSON *container(struct jtree *t, struct jscan *j, char c, int depth,
			struct diag *d)
{
	cJSON *n = node(t, j, c == '{' ? cJSON_Object : cJSON_Array, d), *last = NULL, *it;
	int more = n ? jscan_open(j, c, d) : -1;

	while (more > 0) {
		char *key = NULL;

		if (c == '{' && at(j) != '"' && jscan_peek(j) != '"') {
			jscan_fail(j, d, "expected a member name");
			return NULL;
		}
		if (c == '{' && !(key = string(t, j, d)))
			return NULL;
		if (c == '{' && at(j) == ':')
			j->pos++;
		else if (c == '{' && jscan_expect(j, ':', d))
			return NULL;
		if (!(it = member(t, j, depth + 1, d)))
			return NULL;
		it->string = key;
		if (last)
			last->next = it, it->prev = last;
		else
			n->child = it;
		last = it;
		if (at(j) == ',')
			j->pos++, more = 1;
		else
			more = jscan_next(j, c == '{' ? '}' : ']', d);
	}
	if (more < 0)
		return NULL;
	if (n->child)
		n->child->prev = last;
	return n;
}

static cJSON *value(struct jtree *t, struct jscan *j, int depth, struct diag *d)
{
	int c = at(j);

	if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
		c = jscan_peek(j);

	if (depth > JSCAN_MAX_DEPTH) {
		jscan_fail(j, d, "nested too deeply");
		return NULL;
	}
	if (c == '{' || c == '[')
		return container(t, j, (char)c, depth, d);
	return leaf(t, j, c, d);
}

enum err jtree_parse(struct jtree *t, char *text, size_t len, const char *name,
		     cJSON **out, struct diag *d)
{
	struct jscan j;
	struct diag local;

	if (!d) {
		diag_init(&local);
		d = &local;
	}
	jget_forget(t->root);
	t->root = NULL;
	t->cur = t->first;
	t->used = 0;
	jscan_init(&j, text, len, name);
	*out = value(t, &j, 0, d);
	if (*out && jscan_peek(&j) >= 0) {
		*out = NULL;
		return jscan_fail(&j, d, "expected the end after the value");
	}
	if (!*out)
		return d->code;
	jget_index(t->root = *out);
	return ERR_OK;
}
