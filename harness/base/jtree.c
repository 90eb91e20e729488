/*
 * jtree — see jscan.h, its tree mode.
 *
 * One loop builds the tree, the open containers on a stack of its own (no
 * call per level). What compact JSON (a journal line) holds is read inline:
 * names followed by ':', punctuation, strings without escapes, plain
 * numbers, true, false and null. Anything else (whitespace, escapes,
 * exponents, long numbers, errors) goes to the jscan call that read it
 * before, at the same position, so the tree and every message are the same
 * whichever path read a byte.
 */
#include "jscan.h"

#include <limits.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jget.h"
#include "jscan.h"
#include "mem.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define JTREE_X86 1
#include <immintrin.h>
#endif

struct jtree_block {
	struct jtree_block *next;
	size_t cap;              /* bytes of data */
	alignas(max_align_t) char data[];
};

void jtree_init(struct jtree *t)
{
	t->first = t->cur = NULL;
	t->avail = t->limit = NULL;
	buf_init(&t->scratch, BUF_MAX_DEFAULT);
	t->root = NULL;
	t->ascii = 0;
	t->marked = 0;
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

/* Makes `b` the block being filled. */
static void use(struct jtree *t, struct jtree_block *b)
{
	t->cur = b;
	t->avail = b ? b->data : NULL;
	t->limit = b ? b->data + b->cap : NULL;
}

/* take() when the current block has no room for `want` bytes: the next kept
 * block large enough, else a new one added at the end of the chain. */
static void *take_next(struct jtree *t, size_t want)
{
	struct jtree_block *b;
	size_t cap = want > JTREE_BLOCK ? want : JTREE_BLOCK;
	char *p;

	while (t->cur && t->cur->next && t->cur->next->cap < want)
		t->cur = t->cur->next;
	if (t->cur && t->cur->next) {
		use(t, t->cur->next);
	} else {
		if (!(b = mem_alloc(sizeof(*b) + cap)))
			return NULL;
		b->cap = cap;
		b->next = NULL;
		if (t->cur)
			t->cur->next = b;
		else
			t->first = b;
		use(t, b);
	}
	p = t->avail;
	t->avail += want;
	return p;
}

/* `n` bytes from the blocks (aligned for any object), a new block added after
 * the current one when none of those after it has room; NULL when out of
 * memory. */
static inline void *take(struct jtree *t, size_t n)
{
	size_t want = (n + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1);
	char *p = t->avail;

	/* as integers: no block yet is avail == limit == NULL */
	if ((uintptr_t)t->limit - (uintptr_t)p < want)
		return take_next(t, want);
	t->avail = p + want;
	return p;
}

static enum err nomem(struct jscan *j, struct diag *d)
{
	return diag_fail(d, ERR_NOMEM, "cannot parse '%s': out of memory", j->name);
}

static inline cJSON *node(struct jtree *t, struct jscan *j, int type, struct diag *d)
{
	struct jtree_node *n = take(t, sizeof(*n));

	if (!n) {
		nomem(j, d);
		return NULL;
	}
	memset(n, 0, sizeof(*n));
	n->c.type = type;
	return &n->c;
}

/* Number node `n`'s text: `len` bytes at `s`, `frac` digits after the
 * point when it is plain (else -1). */
static inline void number_text(cJSON *n, const char *s, size_t len, int frac)
{
	struct jtree_node *j = (struct jtree_node *)(void *)n;

	if (len > UINT16_MAX)
		return;
	j->text = s;
	j->text_len = (uint16_t)len;
	j->frac = (int8_t)frac;
}

/* ---- marking: where the strings of a small document stop ----
 *
 * A journal line holds some 60 names and strings, most shorter than one
 * SIMD step: finding each one's end apart (jscan_plain_end) cost more than
 * marking the whole line first, 64 bytes a step, and then reading an end as
 * the next set bit. Bit i of t->stops is set when byte i is a '"', a '\\' or
 * a control byte (below 0x20): what jscan_plain_end stops at. The bytes are
 * read once for that, so whether they are all ASCII comes along. */

/* The stop bits of the 64 bytes at `s`; the bytes ORed into *hi (a high
 * bit there: a byte that is not ASCII). */
#ifdef JTREE_X86
__attribute__((target("avx2"))) static inline uint64_t block_stops(const char *s, __m256i *hi)
{
	const __m256i q = _mm256_set1_epi8('"'), b = _mm256_set1_epi8('\\');
	const __m256i c = _mm256_set1_epi8(0x1F);
	__m256i x = _mm256_loadu_si256((const __m256i *)(const void *)s);
	__m256i y = _mm256_loadu_si256((const __m256i *)(const void *)(s + 32));
	__m256i mx = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(x, q), _mm256_cmpeq_epi8(x, b)),
				     _mm256_cmpeq_epi8(_mm256_max_epu8(x, c), c));
	__m256i my = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(y, q), _mm256_cmpeq_epi8(y, b)),
				     _mm256_cmpeq_epi8(_mm256_max_epu8(y, c), c));

	*hi = _mm256_or_si256(*hi, _mm256_or_si256(x, y));
	return (uint32_t)_mm256_movemask_epi8(mx) | (uint64_t)(uint32_t)_mm256_movemask_epi8(my) << 32;
}

/* Marks s[0..len) into stops, a block of 64 bytes at a time (the last one
 * copied after 'a's, which stop nothing), the bits past len clear; returns
 * whether every byte is ASCII. */
__attribute__((target("avx2"))) static int mark(const char *s, size_t len, uint64_t *stops)
{
	__m256i hi = _mm256_setzero_si256();
	char last[64];
	size_t i, k;

	for (i = 0, k = 0; i + 64 <= len; i += 64, k++)
		stops[k] = block_stops(s + i, &hi);
	if (i < len) {
		memset(last, 'a', sizeof(last));
		memcpy(last, s + i, len - i);
		stops[k++] = block_stops(last, &hi);
	}
	stops[k] = 0; /* a search past the last block stops */
	return !_mm256_movemask_epi8(hi);
}
#endif

/* Whether this machine marks (AVX2; elsewhere every end is found apart). */
static int can_mark(void)
{
#ifdef JTREE_X86
	return __builtin_cpu_supports("avx2");
#else
	return 0;
#endif
}

/* jscan_plain_end of a marked document, p in it: the next set bit. */
static inline const char *marked_end(const struct jtree *t, const struct jscan *j, const char *p,
				     const char *end)
{
	size_t i = (size_t)(p - j->s), k;
	uint64_t m = t->stops[i / 64] >> (i % 64);

	if (m)
		return p + __builtin_ctzll(m);
	for (k = i / 64 + 1; k * 64 < j->len; k++)
		if (t->stops[k])
			return j->s + k * 64 + __builtin_ctzll(t->stops[k]);
	return end;
}

/* jscan_plain_end, kept out of line: an unmarked document is the rare one. */
__attribute__((noinline)) static const char *unmarked_end(const char *p, const char *end)
{
	return jscan_plain_end(p, end);
}

/* The first byte in [p, end) that ends the plain part of a string. */
static inline const char *plain_end(const struct jtree *t, const struct jscan *j, const char *p,
				    const char *end)
{
	return t->marked ? marked_end(t, j, p, end) : unmarked_end(p, end);
}

/* The text, writable: jtree_parse was given it so. */
static char *text(const struct jscan *j)
{
	return (char *)(uintptr_t)j->s;
}

/* The byte at j->pos, or -1 at the end. */
static int at(const struct jscan *j)
{
	return j->pos < j->len ? (unsigned char)j->s[j->pos] : -1;
}

/* The parse loop's position, kept apart from `j` (whose address the calls
 * into jscan take) so that it stays in registers: j->pos is set from it
 * before such a call (to_jscan) and it from j->pos after (from_jscan). */
struct cur {
	char *p;   /* the next byte */
	char *end; /* the end of the text */
};

static inline void to_jscan(struct jscan *j, const struct cur *c)
{
	j->pos = (size_t)(c->p - j->s);
}

static inline void from_jscan(const struct jscan *j, struct cur *c)
{
	c->p = text(j) + j->pos;
}

/* The byte at c->p after any whitespace (skipped), or -1 at the end:
 * jscan_peek's, called only when the byte is at most ' '. */
static inline int peek(struct jscan *j, struct cur *c)
{
	int b;

	if ((b = (unsigned char)*c->p) > ' ') /* at the end: the terminator */
		return b;
	to_jscan(j, c);
	b = jscan_peek(j);
	from_jscan(j, c);
	return b;
}

/* string() of a string with an escape or an error: jscan_string's
 * decoding, copied into the blocks. */
static char *escaped(struct jtree *t, struct jscan *j, struct diag *d)
{
	const char *v;
	size_t n;
	char *q;

	if (jscan_string(j, &t->scratch, &v, &n, d))
		return NULL;
	if (!(q = take(t, n + 1))) {
		nomem(j, d);
		return NULL;
	}
	memcpy(q, v, n);
	q[n] = '\0';
	return q;
}

/* A JSON string at c->p (its opening quote), decoded and NUL-terminated:
 * in place of its closing quote when it has no escape, else escaped()'s. */
static inline char *string(struct jtree *t, struct jscan *j, struct cur *c, struct diag *d)
{
	char *v = c->p + 1, *q = (char *)(uintptr_t)plain_end(t, j, v, c->end);

	if (q == c->end || *q != '"') {
		to_jscan(j, c);
		v = escaped(t, j, d);
		from_jscan(j, c);
		return v;
	}
	*q = '\0';
	c->p = q + 1;
	return v;
}

/* name() of a name with whitespace around it, an escape or an error; its
 * length (as strlen counts it: an escaped NUL cuts it) in *len. */
static char *name_slow(struct jtree *t, struct jscan *j, size_t *len, struct diag *d)
{
	struct cur c;
	char *p;

	if (at(j) != '"' && jscan_peek(j) != '"') {
		jscan_fail(j, d, "expected a member name");
		return NULL;
	}
	c.p = text(j) + j->pos;
	c.end = text(j) + j->len;
	if (!(p = string(t, j, &c, d)))
		return NULL;
	*len = strlen(p);
	to_jscan(j, &c);
	if (at(j) == ':')
		j->pos++;
	else if (jscan_expect(j, ':', d))
		return NULL;
	return p;
}

/* A member's name at c->p and the ':' after it (whitespace around both
 * allowed), its length in *len; NULL with `d` filled. */
static inline char *name(struct jtree *t, struct jscan *j, struct cur *c, size_t *len,
			 struct diag *d)
{
	char *p = c->p, *q;

	if (*p == '"') { /* at the end: the terminator */
		q = (char *)(uintptr_t)plain_end(t, j, p + 1, c->end);
		if (q[0] == '"' && q[1] == ':') { /* q[1]: at most the terminator */
			*q = '\0';
			c->p = q + 2;
			*len = (size_t)(q - p - 1);
			return p + 1;
		}
	}
	to_jscan(j, c);
	p = name_slow(t, j, len, d);
	from_jscan(j, c);
	return p;
}

/* Sets number node `n` to `v`, valueint saturated as cJSON sets it. */
static inline void set_number(cJSON *n, double v)
{
	n->valuedouble = v;
	if (v >= INT_MAX)
		n->valueint = INT_MAX;
	else if (v <= (double)INT_MIN)
		n->valueint = INT_MIN;
	else
		n->valueint = (int)v;
}

/* Whether a plain number ([-]digits[.digits], no exponent after it) of at
 * most 15 digits is at c->p; then *v is its value, *end the byte after it
 * and *frac the digits after the point. m and 10^f (f fraction digits) are exact doubles, so m / 10^f rounds
 * once, to strtod's correctly rounded result (Clinger's fast path); other
 * numbers are strtod's (scalar()). */
static inline int plain_number(const struct cur *c, char **end, double *v, int *frac)
{
	static const double p10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
				     1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
	const char *p = c->p, *e = c->end, *d0, *f0 = NULL;
	uint64_t m = 0;
	int neg = *p == '-';

	for (d0 = p += neg; p < e && (unsigned)(*p - '0') < 10; p++)
		m = m * 10 + (uint64_t)(*p - '0');
	if (p == d0)
		return 0;
	if (p < e && *p == '.') {
		for (f0 = ++p; p < e && (unsigned)(*p - '0') < 10; p++)
			m = m * 10 + (uint64_t)(*p - '0');
		if (p == f0)
			return 0;
	}
	if (p - d0 - (f0 != NULL) > 15 || (p < e && (*p == 'e' || *p == 'E')))
		return 0;
	*frac = f0 ? (int)(p - f0) : 0;
	*v = f0 ? (double)m / p10[*frac] : (double)m;
	if (neg)
		*v = -*v;
	*end = (char *)(uintptr_t)p;
	return 1;
}

/* A number, true, false or null at j->pos that the inline paths did not
 * read, or what jscan_skip refuses there. */
static cJSON *scalar(struct jtree *t, struct jscan *j, struct diag *d)
{
	size_t start;
	cJSON *n;
	char c;

	if (jscan_skip(j, &start, d))
		return NULL;
	c = j->s[start];
	if (c == 't' || c == 'f')
		return node(t, j, c == 't' ? cJSON_True : cJSON_False, d);
	if (c == 'n')
		return node(t, j, cJSON_NULL, d);
	if (!(n = node(t, j, cJSON_Number, d)))
		return NULL;
	number_text(n, j->s + start, j->pos - start, -1);
	buf_reset(&t->scratch);
	if (buf_append(&t->scratch, j->s + start, j->pos - start)) {
		nomem(j, d); /* unreachable: a number is far below the cap */
		return NULL;
	}
	set_number(n, strtod(t->scratch.data, NULL));
	return n;
}

/* Whether word `w` (true, false, null) is at c->p; consumed if so. */
static inline int word(struct cur *c, const char *w, size_t n)
{
	if ((size_t)(c->end - c->p) < n || memcmp(c->p, w, n))
		return 0;
	c->p += n;
	return 1;
}

/* A value other than an object or array at c->p, its first byte `b`. */
static inline cJSON *leaf(struct jtree *t, struct jscan *j, struct cur *c, int b,
			  struct diag *d)
{
	cJSON *n;
	char *end;
	double v;
	int frac;

	if (b == '"') {
		end = c->p + 1; /* where the value starts when it has no escape */
		if (!(n = node(t, j, cJSON_String, d)) || !(n->valuestring = string(t, j, c, d)))
			return NULL;
		if (n->valuestring == end && c->p - 1 - end <= UINT16_MAX) {
			((struct jtree_node *)(void *)n)->verbatim = 1;
			((struct jtree_node *)(void *)n)->text_len = (uint16_t)(c->p - 1 - end);
		}
		return n;
	}
	if ((b == '-' || (b >= '0' && b <= '9')) && plain_number(c, &end, &v, &frac)) {
		if (!(n = node(t, j, cJSON_Number, d)))
			return NULL;
		number_text(n, c->p, (size_t)(end - c->p), frac);
		c->p = end;
		set_number(n, v);
		return n;
	}
	if ((b == 't' && word(c, "true", 4)) || (b == 'f' && word(c, "false", 5)))
		return node(t, j, b == 't' ? cJSON_True : cJSON_False, d);
	if (b == 'n' && word(c, "null", 4))
		return node(t, j, cJSON_NULL, d);
	to_jscan(j, c);
	n = scalar(t, j, d);
	from_jscan(j, c);
	return n;
}

/* An open object or array: its last member so far, where the next member
 * is linked (its child, then the last member's next) and its closing byte. */
struct level {
	cJSON *node;
	cJSON *last;
	cJSON **tail;
	int close;
};

/* Adds `it`, named `key` of `klen` bytes (NULL in an array), after the
 * last member of `l` (the first's prev is set when `l` closes). */
static inline void append(struct level *l, cJSON *it, char *key, size_t klen)
{
	((struct jtree_node *)(void *)it)->name_len = key ? (uint32_t)klen : 0;
	it->string = key;
	it->prev = l->last;
	*l->tail = it;
	l->tail = &it->next;
	l->last = it;
}

/* After the opening byte of container `l` at c->p: consumes it and returns
 * 1 when an element follows, 0 when the container is empty (its closing
 * byte consumed too). */
static inline int open_container(struct jscan *j, struct cur *c, const struct level *l)
{
	c->p++;
	if (peek(j, c) != l->close)
		return 1;
	c->p++;
	return 0;
}

/* After a value: consumes ',' (and in an object the next name, put in *key)
 * and returns 1, or closes containers (the first child's prev is the last,
 * as cJSON keeps it) until one has a next element (1) or only st[0] is left
 * (0); -1 with `d` filled. *lp is the innermost open level. */
static inline int after(struct jtree *t, struct jscan *j, struct cur *c, struct level *st,
			struct level **lp, char **key, size_t *klen, struct diag *d)
{
	struct level *l;
	int b, more;

	for (l = *lp; l > st; l--) {
		b = (unsigned char)*c->p; /* at the end: the terminator, neither */
		if (b == ',' || b == l->close) {
			c->p++;
			more = b == ',';
		} else {
			to_jscan(j, c);
			more = jscan_next(j, (char)l->close, d);
			from_jscan(j, c);
			if (more < 0)
				return -1;
		}
		if (more) {
			*lp = l;
			*key = NULL;
			return l->close == ']' || (*key = name(t, j, c, klen, d)) ? 1 : -1;
		}
		if (l->node->child)
			l->node->child->prev = l->last;
	}
	*lp = l;
	return 0;
}

/* The value at j->pos, or NULL with `d` filled; j->pos after it. st[0]
 * holds the value as a container's member, so that every value is
 * appended alike. */
static cJSON *parse(struct jtree *t, struct jscan *j, struct diag *d)
{
	struct level st[JSCAN_MAX_DEPTH + 2], *l = st; /* st[k]: the container at depth k - 1 */
	const struct level *deepest = st + JSCAN_MAX_DEPTH; /* a value's depth is l - st */
	struct cur c = {text(j) + j->pos, text(j) + j->len};
	cJSON holder = {0}, *v;
	char *key = NULL;
	size_t klen = 0;
	int b, more;

	*l = (struct level){&holder, NULL, &holder.child, -1};
	do {
		b = peek(j, &c);
		if ((b | 0x20) != '{') { /* neither '{' nor '[' (0x5B) */
			if (!(v = leaf(t, j, &c, b, d)))
				return NULL;
			append(l, v, key, klen);
		} else {
			if (!(v = node(t, j, b == '{' ? cJSON_Object : cJSON_Array, d)))
				return NULL;
			append(l, v, key, klen);
			*++l = (struct level){v, NULL, &v->child, b == '{' ? '}' : ']'};
			key = NULL;
			if (open_container(j, &c, l)) {
				more = b == '[' || (key = name(t, j, &c, &klen, d)) ? 1 : -1;
				if (more > 0 && l > deepest) {
					/* its first value is too deep: refused where it starts */
					peek(j, &c);
					to_jscan(j, &c);
					jscan_fail(j, d, "nested too deeply");
					return NULL;
				}
				continue;
			}
			l--;
		}
		more = after(t, j, &c, st, &l, &key, &klen, d);
	} while (more > 0);
	to_jscan(j, &c);
	return more < 0 ? NULL : holder.child;
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
	*out = NULL;
	if (len > UINT32_MAX) /* the nodes' lengths are 32 bits */
		return diag_fail(d, ERR_LIMIT, "cannot parse '%s': larger than 4 GB", name);
	use(t, t->first);
	t->marked = len <= JTREE_MARKED && can_mark();
#ifdef JTREE_X86
	t->ascii = t->marked && mark(text, len, t->stops);
#else
	t->ascii = 0;
#endif
	jscan_init(&j, text, len, name);
	*out = parse(t, &j, d);
	if (*out && jscan_peek(&j) >= 0) {
		*out = NULL;
		return jscan_fail(&j, d, "expected the end after the value");
	}
	if (!*out)
		return d->code;
	jget_index(t->root = *out);
	return ERR_OK;
}
