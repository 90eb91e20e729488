/* uni — see uni.h. Tables: uni_data.c (generated, see its header). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "base/mem.h"
#include "base/rx.h"
#include "base/utf8.h"
#include "uni.h"
#include "uni_data.h"

#define UNI_MAX 0x10FFFFu
#define SURR_LO 0xD800u
#define SURR_HI 0xDFFFu

/* ---- range sets ------------------------------------------------------- */

/* A growable list of inclusive code point ranges; sorted and merged by
 * rset_norm. Owned memory in `r`. */
struct rset {
	struct uni_range *r;
	size_t n, cap;
};

static void rset_free(struct rset *s)
{
	mem_free(s->r);
	s->r = NULL;
	s->n = s->cap = 0;
}

static enum err rset_add(struct rset *s, uint32_t lo, uint32_t hi)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct uni_range *r = mem_realloc(s->r, cap * sizeof *r);

		if (!r)
			return ERR_NOMEM;
		s->r = r;
		s->cap = cap;
	}
	s->r[s->n].lo = lo;
	s->r[s->n].hi = hi;
	s->n++;
	return ERR_OK;
}

static int range_cmp(const void *a, const void *b)
{
	const struct uni_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Sorts and merges overlapping or adjacent ranges. */
static void rset_norm(struct rset *s)
{
	size_t i, k = 0;

	if (!s->n)
		return;
	qsort(s->r, s->n, sizeof *s->r, range_cmp);
	for (i = 1; i < s->n; i++) {
		if (s->r[i].lo <= s->r[k].hi + 1) {
			if (s->r[i].hi > s->r[k].hi)
				s->r[k].hi = s->r[i].hi;
		} else {
			s->r[++k] = s->r[i];
		}
	}
	s->n = k + 1;
}

/* Adds the ranges of class `c`, or of its complement over the scalar values
 * when `neg`. */
static enum err rset_add_class(struct rset *s, const struct uni_class *c,
			       int neg)
{
	uint32_t next = 0;
	enum err e = ERR_OK;
	size_t i;

	if (!neg) {
		for (i = 0; i < c->n && !e; i++)
			e = rset_add(s, c->r[i].lo, c->r[i].hi);
		return e;
	}
	for (i = 0; i < c->n && !e; i++) {
		if (c->r[i].lo > next)
			e = rset_add(s, next, c->r[i].lo - 1);
		next = c->r[i].hi + 1;
	}
	if (!e && next <= UNI_MAX)
		e = rset_add(s, next, UNI_MAX);
	return e;
}

int uni_in_ranges(const struct uni_range *r, size_t n, uint32_t cp)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cp < r[mid].lo)
			hi = mid;
		else if (cp > r[mid].hi)
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}

static int in_class(enum uni_class_id id, uint32_t cp)
{
	return uni_in_ranges(uni_classes[id].r, uni_classes[id].n, cp);
}

/* ---- pattern rewriting ------------------------------------------------ */

/* A class being built: explicit ranges plus HF classes written in PCRE2's
 * own spelling (bit i of `native` = uni_pcre2[i]), which PCRE2 matches much
 * faster than hundreds of ranges. */
struct cls {
	struct rset set;
	uint64_t native;
	int compact; /* uni_pcre2 matches the running PCRE2's tables */
	int lone;    /* a lone escape outside [...]: negation goes to `neg` */
	int neg;
};

/* Whether uni_pcre2 was generated for the Unicode version of the PCRE2
 * library in use; otherwise every class is written as explicit ranges. */
static int compact_ok(void)
{
	char ver[RX_VERSION_MAX];

	rx_unicode_version(ver);
	return !strcmp(ver, uni_pcre2_unicode);
}

/* Below this many ranges, explicit ranges beat a property lookup: for
 * characters below U+0100 PCRE2 then decides from its bitmap alone. */
#define SPELL_MIN_RANGES 32

/* Adds HF class `id` (its complement when `neg`) to `c`. A complement is
 * always explicit: PCRE2's \P{X} would keep HF's additions to X. */
static enum err cls_add(struct cls *c, enum uni_class_id id, int neg)
{
	const struct uni_spelling *sp = &uni_pcre2[id];
	enum err e = ERR_OK;
	size_t i;

	if (neg && c->lone) {
		c->neg = 1;
		neg = 0;
	}
	if (neg || !c->compact || !sp->pcre2 ||
	    uni_classes[id].n < SPELL_MIN_RANGES)
		return rset_add_class(&c->set, &uni_classes[id], neg);
	c->native |= (uint64_t)1 << id;
	/* members below U+0100 also go to PCRE2's bitmap: hits there skip the
	 * property lookup */
	for (i = 0; i < uni_classes[id].n && uni_classes[id].r[i].lo < 0x100 &&
		    !e; i++)
		e = rset_add(&c->set, uni_classes[id].r[i].lo,
			     uni_classes[id].r[i].hi < 0x100 ?
				     uni_classes[id].r[i].hi : 0xFF);
	for (i = 0; i < sp->n && !e; i++)
		if (sp->add[i].lo || sp->add[i].hi)
			e = rset_add(&c->set, sp->add[i].lo, sp->add[i].hi);
	return e;
}

#define RW_DEPTH 256

/* Rewriter state. Oniguruma (Ruby syntax, as the `onig` crate compiles
 * tokenizer.json patterns) and PCRE2 agree on most syntax; what differs is
 * translated here and what is not translated is refused by name. */
struct rw {
	const char *p;
	size_t len, i;
	struct buf *out;
	struct diag *d;
	int caseless;             /* (?i) in force */
	int compact;              /* compact_ok() */
	int saved[RW_DEPTH];      /* caseless at each open group */
	int extra[RW_DEPTH + 1];  /* ')' owed at the end of each group */
	int depth;
};

static enum err rw_refuse(struct rw *w, size_t at, const char *what)
{
	return diag_fail(w->d, ERR_UNSUPPORTED,
			 "unsupported regex construct '%s' at offset %zu in '%.*s'",
			 what, at, (int)(w->len > 200 ? 200 : w->len), w->p);
}

static enum err rw_bad(struct rw *w, size_t at, const char *what)
{
	return diag_fail(w->d, ERR_INPUT, "bad regex: %s at offset %zu in '%.*s'",
			 what, at, (int)(w->len > 200 ? 200 : w->len), w->p);
}

static const struct {
	const char *name;
	enum uni_class_id id;
} PROPS[] = {
	{"l", UNI_L}, {"letter", UNI_L}, {"lu", UNI_Lu},
	{"uppercaseletter", UNI_Lu}, {"ll", UNI_Ll}, {"lowercaseletter", UNI_Ll},
	{"lt", UNI_Lt}, {"titlecaseletter", UNI_Lt}, {"lm", UNI_Lm},
	{"modifierletter", UNI_Lm}, {"lo", UNI_Lo}, {"otherletter", UNI_Lo},
	{"m", UNI_M}, {"mark", UNI_M}, {"combiningmark", UNI_M}, {"mn", UNI_Mn},
	{"nonspacingmark", UNI_Mn}, {"mc", UNI_Mc}, {"spacingmark", UNI_Mc},
	{"me", UNI_Me}, {"enclosingmark", UNI_Me}, {"n", UNI_N},
	{"number", UNI_N}, {"nd", UNI_Nd}, {"decimalnumber", UNI_Nd},
	{"nl", UNI_Nl}, {"letternumber", UNI_Nl}, {"no", UNI_No},
	{"othernumber", UNI_No}, {"p", UNI_P}, {"punctuation", UNI_P},
	{"pc", UNI_Pc}, {"connectorpunctuation", UNI_Pc}, {"pd", UNI_Pd},
	{"dashpunctuation", UNI_Pd}, {"ps", UNI_Ps}, {"openpunctuation", UNI_Ps},
	{"pe", UNI_Pe}, {"closepunctuation", UNI_Pe}, {"pi", UNI_Pi},
	{"initialpunctuation", UNI_Pi}, {"pf", UNI_Pf},
	{"finalpunctuation", UNI_Pf}, {"po", UNI_Po},
	{"otherpunctuation", UNI_Po}, {"s", UNI_S}, {"symbol", UNI_S},
	{"sm", UNI_Sm}, {"mathsymbol", UNI_Sm}, {"sc", UNI_Sc},
	{"currencysymbol", UNI_Sc}, {"sk", UNI_Sk}, {"modifiersymbol", UNI_Sk},
	{"so", UNI_So}, {"othersymbol", UNI_So}, {"z", UNI_Z},
	{"separator", UNI_Z}, {"zs", UNI_Zs}, {"spaceseparator", UNI_Zs},
	{"zl", UNI_Zl}, {"lineseparator", UNI_Zl}, {"zp", UNI_Zp},
	{"paragraphseparator", UNI_Zp}, {"c", UNI_C}, {"other", UNI_C},
	{"cc", UNI_Cc}, {"control", UNI_Cc}, {"cf", UNI_Cf}, {"format", UNI_Cf},
	{"co", UNI_Co}, {"privateuse", UNI_Co}, {"cn", UNI_Cn},
	{"unassigned", UNI_Cn},
};

/* Oniguruma property names ignore case, spaces, '-' and '_'. */
static int prop_lookup(const char *s, size_t n, enum uni_class_id *id)
{
	char key[32];
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		char c = s[i];

		if (c == ' ' || c == '-' || c == '_')
			continue;
		if (k + 1 >= sizeof key)
			return 0;
		key[k++] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
	}
	key[k] = '\0';
	for (i = 0; i < sizeof PROPS / sizeof PROPS[0]; i++)
		if (!strcmp(PROPS[i].name, key)) {
			*id = PROPS[i].id;
			return 1;
		}
	return 0;
}

/* Parses `\p{..}` / `\P{..}` / `\p{^..}` at w->i (pointing at 'p' or 'P')
 * into `c`. */
static enum err rw_property(struct rw *w, struct cls *c, size_t at)
{
	int neg = w->p[w->i] == 'P';
	size_t start, end;
	enum uni_class_id id;

	if (w->i + 1 >= w->len || w->p[w->i + 1] != '{')
		return rw_refuse(w, at, "\\p without braces");
	start = w->i + 2;
	if (start < w->len && w->p[start] == '^') {
		neg = !neg;
		start++;
	}
	for (end = start; end < w->len && w->p[end] != '}'; end++)
		;
	if (end >= w->len)
		return rw_bad(w, at, "unterminated \\p{");
	if (!prop_lookup(w->p + start, end - start, &id))
		return diag_fail(w->d, ERR_UNSUPPORTED,
				 "unsupported regex property '\\p{%.*s}' at offset %zu",
				 (int)(end - start), w->p + start, at);
	w->i = end + 1;
	return cls_add(c, id, neg);
}

/* Reads up to `max` hex digits (exactly `max` when `exact`) at w->i. */
static int rw_hex(struct rw *w, int max, int exact, uint32_t *cp)
{
	int k = 0, v;

	*cp = 0;
	while (k < max && w->i < w->len && (v = utf8_hexval(w->p[w->i])) >= 0) {
		*cp = *cp * 16 + (uint32_t)v;
		w->i++;
		k++;
	}
	return k > 0 && (!exact || k == max);
}

/* Decodes a code point escape (\xHH \x{H..} \uHHHH \t \n \r \f \v \a \e
 * \0oo, escaped punctuation) at w->i (just past the backslash). Returns 1
 * with `cp` set, 0 if the escape is not a single character. */
static int rw_char_escape(struct rw *w, uint32_t *cp, enum err *e, size_t at)
{
	char c = w->p[w->i];
	uint32_t len;

	*e = ERR_OK;
	switch (c) {
	case 't': *cp = '\t'; break;
	case 'n': *cp = '\n'; break;
	case 'r': *cp = '\r'; break;
	case 'f': *cp = '\f'; break;
	case 'v': *cp = 0x0B; break; /* Onig \v is VT; PCRE2's is a class */
	case 'a': *cp = 0x07; break;
	case 'e': *cp = 0x1B; break;
	case 'x':
		w->i++;
		if (w->i < w->len && w->p[w->i] == '{') {
			w->i++;
			if (!rw_hex(w, 8, 0, cp) || w->i >= w->len ||
			    w->p[w->i] != '}')
				*e = rw_bad(w, at, "bad \\x{...}");
			w->i++;
		} else if (!rw_hex(w, 2, 0, cp)) {
			*e = rw_refuse(w, at, "\\x without hex digits");
		}
		goto check;
	case 'u':
		w->i++;
		if (!rw_hex(w, 4, 1, cp))
			*e = rw_bad(w, at, "bad \\uHHHH");
		goto check;
	case '0':
		*cp = 0;
		w->i++;
		for (len = 0; len < 2 && w->i < w->len && w->p[w->i] >= '0' &&
			      w->p[w->i] <= '7'; len++)
			*cp = *cp * 8 + (uint32_t)(w->p[w->i++] - '0');
		return 1;
	default:
		if ((unsigned char)c >= 0x80) {
			w->i += utf8_decode(w->p + w->i, w->len - w->i, cp);
			return 1;
		}
		if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
		    (c >= 'A' && c <= 'Z'))
			return 0;
		*cp = (uint32_t)(unsigned char)c;
		break;
	}
	w->i++;
	return 1;
check:
	if (!*e && (*cp > UNI_MAX || (*cp >= SURR_LO && *cp <= SURR_HI)))
		*e = rw_bad(w, at, "code point out of range");
	return 1;
}

/* A class escape (\s \S \d \D \w \W \h \H \p \P) at w->i, added to `set`.
 * Returns 1 if it was one. */
static int rw_class_escape(struct rw *w, struct cls *cl, enum err *e,
			   size_t at)
{
	char c = w->p[w->i];
	int neg = c >= 'A' && c <= 'Z';

	*e = ERR_OK;
	switch (c) {
	case 's': case 'S':
		*e = cls_add(cl, UNI_ONIG_SPACE, neg);
		break;
	case 'd': case 'D':
		*e = cls_add(cl, UNI_ONIG_DIGIT, neg);
		break;
	case 'w': case 'W':
		*e = cls_add(cl, UNI_ONIG_WORD, neg);
		break;
	case 'h': case 'H': { /* Oniguruma: hexadecimal digit, not PCRE2's \h */
		static const struct uni_range hex[] = {
			{'0', '9'}, {'A', 'F'}, {'a', 'f'}};
		static const struct uni_class hexc = {"hex", hex, 3};

		*e = rset_add_class(&cl->set, &hexc, neg);
		break;
	}
	case 'p': case 'P':
		*e = rw_property(w, cl, at);
		return 1;
	default:
		return 0;
	}
	w->i++;
	return 1;
}

static enum err put_cp(struct buf *out, uint32_t cp)
{
	return buf_printf(out, "\\x{%X}", (unsigned)cp);
}

/* Emits one range; PCRE2 refuses surrogates in UTF mode (they never occur
 * in a subject), so ranges are cut around them. */
static enum err put_range(struct buf *out, uint32_t lo, uint32_t hi)
{
	enum err e = ERR_OK;

	if (lo < SURR_LO && hi > SURR_HI) {
		e = put_range(out, lo, SURR_LO - 1);
		lo = SURR_HI + 1;
	} else if (lo >= SURR_LO && lo <= SURR_HI) {
		lo = SURR_HI + 1;
	} else if (hi >= SURR_LO && hi <= SURR_HI) {
		hi = SURR_LO - 1;
	}
	if (e || lo > hi)
		return e;
	e = put_cp(out, lo);
	if (!e && hi > lo + 1)
		e = buf_putc(out, '-');
	if (!e && hi > lo)
		e = put_cp(out, hi);
	return e;
}

static int size_cmp(const void *a, const void *b)
{
	const struct uni_range *x = a, *y = b;
	uint32_t sx = x->hi - x->lo, sy = y->hi - y->lo;

	return sx > sy ? -1 : sx < sy;
}

/* Emits `c` as one PCRE2 class, negated when `neg`. */
static enum err rw_emit(struct rw *w, struct cls *c, int neg)
{
	struct rset *set = &c->set;
	enum err e;
	size_t i;

	rset_norm(set);
	if (!set->n && !c->native)
		return buf_puts(w->out, neg ? "(?s:.)" : "(*FAIL)");
	e = buf_puts(w->out, neg ? "[^" : "[");
	for (i = 0; i < UNI_CLASS_COUNT && !e; i++)
		if (c->native & ((uint64_t)1 << i))
			e = buf_puts(w->out, uni_pcre2[i].pcre2);
	if (!c->compact)
		qsort(set->r, set->n, sizeof *set->r, size_cmp);
	for (i = 0; i < set->n && !e; i++)
		e = put_range(w->out, set->r[i].lo, set->r[i].hi);
	return e ? e : buf_putc(w->out, ']');
}

/* Reads one class atom at w->i: a literal code point (returns 1) or a class
 * escape added to `set` (returns 2). */
static int rw_class_atom(struct rw *w, struct cls *cl, uint32_t *cp,
			 enum err *e)
{
	size_t at = w->i;

	*e = ERR_OK;
	if (w->p[w->i] != '\\') {
		w->i += utf8_decode(w->p + w->i, w->len - w->i, cp);
		return 1;
	}
	w->i++;
	if (w->i >= w->len) {
		*e = rw_bad(w, at, "trailing backslash");
		return 0;
	}
	if (rw_class_escape(w, cl, e, at))
		return *e ? 0 : 2;
	if (rw_char_escape(w, cp, e, at))
		return *e ? 0 : 1;
	*e = rw_refuse(w, at, "escape in a character class");
	return 0;
}

/* One member of a class at w->i: a class escape, a character or a range
 * a-b; sets *escape for a class escape. */
static enum err rw_class_member(struct rw *w, struct cls *cl, int *escape)
{
	uint32_t lo, hi;
	size_t at = w->i;
	enum err e;
	int kind;

	if (w->p[w->i] == '[')
		return rw_refuse(w, w->i, "nested class or [:posix:]");
	if (w->p[w->i] == '&' && w->i + 1 < w->len && w->p[w->i + 1] == '&')
		return rw_refuse(w, w->i, "class intersection &&");
	kind = rw_class_atom(w, cl, &lo, &e);
	if (e)
		return e;
	*escape = kind == 2;
	hi = lo;
	if (w->i + 1 < w->len && w->p[w->i] == '-' && w->p[w->i + 1] != ']') {
		if (kind == 2)
			return rw_refuse(w, w->i, "class range from a class escape");
		w->i++;
		if (w->p[w->i] == '[')
			return rw_refuse(w, w->i, "nested class");
		kind = rw_class_atom(w, cl, &hi, &e);
		if (e)
			return e;
		if (kind != 1 || hi < lo)
			return rw_refuse(w, at, "class range");
	}
	return kind == 2 ? ERR_OK : rset_add(&cl->set, lo, hi);
}

/* Translates the class starting at w->i ('['). A ']' right after '[' or
 * '[^' is a member, as in Ruby. */
static enum err rw_class(struct rw *w)
{
	struct cls cl = {{0}, 0, w->compact, 0, 0};
	size_t at = w->i, k;
	int neg = 0, first = 1, escape = 0, escapes = 0;
	enum err e = ERR_OK;

	w->i++;
	if (w->i < w->len && w->p[w->i] == '^') {
		neg = 1;
		w->i++;
	}
	for (; !e; first = 0) {
		if (w->i >= w->len) {
			e = rw_bad(w, at, "unterminated character class");
		} else if (w->p[w->i] == ']' && !first) {
			w->i++;
			break;
		} else {
			e = rw_class_member(w, &cl, &escape);
			escapes |= escape;
		}
	}
	/* Under (?i) both engines close the class under case folding; only
	 * ASCII members are known to fold alike (s and k with U+017F and
	 * U+212A included), PCRE2 10.42 folding with older Unicode data. */
	for (k = 0; !e && w->caseless && k < cl.set.n; k++)
		escapes |= cl.set.r[k].hi >= 0x80;
	if (!e && w->caseless && escapes)
		e = rw_refuse(w, at, "class with a non-ASCII or escape member under (?i)");
	if (!e)
		e = rw_emit(w, &cl, neg);
	rset_free(&cl.set);
	return e;
}

/* A backslash outside a class, at w->i. */
static enum err rw_escape(struct rw *w)
{
	struct cls cl = {{0}, 0, w->compact, 1, 0};
	size_t at = w->i;
	uint32_t cp;
	enum err e;
	char c;

	w->i++;
	if (w->i >= w->len)
		return rw_bad(w, at, "trailing backslash");
	c = w->p[w->i];
	if (c == 'A' || c == 'z' || c == 'G') {
		w->i++;
		return buf_printf(w->out, "\\%c", c);
	}
	if (c == 'Z') { /* Ruby: before a final LF; PCRE2's depends on NEWLINE */
		w->i++;
		return buf_puts(w->out, "(?=\\n?\\z)");
	}
	if (rw_class_escape(w, &cl, &e, at)) {
		if (!e && w->caseless)
			e = rw_refuse(w, at, "class escape under (?i)");
		if (!e)
			e = rw_emit(w, &cl, cl.neg);
		rset_free(&cl.set);
		return e;
	}
	if (rw_char_escape(w, &cp, &e, at))
		return e ? e : put_cp(w->out, cp);
	{
		char what[3] = {'\\', c, '\0'};

		return rw_refuse(w, at, what);
	}
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* `{` outside a class: a valid interval {n} {n,} {n,m} {,m} becomes PCRE2's
 * (Ruby's {,m} is {0,m}); anything else is a literal brace, as in Ruby. */
static enum err rw_brace(struct rw *w)
{
	size_t j = w->i + 1, n1 = 0, n2 = 0, k;

	while (j < w->len && is_digit(w->p[j]))
		j++, n1++;
	if (j < w->len && w->p[j] == ',') {
		j++;
		while (j < w->len && is_digit(w->p[j]))
			j++, n2++;
	}
	if (j >= w->len || w->p[j] != '}' || (n1 == 0 && n2 == 0)) {
		w->i++;
		return buf_puts(w->out, "\\{");
	}
	if (j + 1 < w->len && w->p[j + 1] == '+')
		return rw_refuse(w, w->i, "{n,m}+ (Ruby reads it as a repeat)");
	if (buf_putc(w->out, '{'))
		return ERR_NOMEM;
	if (n1 == 0 && buf_putc(w->out, '0'))
		return ERR_NOMEM;
	for (k = w->i + 1; k <= j; k++)
		if (buf_putc(w->out, w->p[k]))
			return ERR_NOMEM;
	w->i = j + 1;
	return ERR_OK;
}

static enum err rw_push(struct rw *w, size_t at)
{
	if (w->depth >= RW_DEPTH)
		return rw_refuse(w, at, "groups nested too deep");
	w->saved[w->depth++] = w->caseless;
	w->extra[w->depth] = 0;
	return ERR_OK;
}

/* `(?` option syntax: only i is translated. `(?i)` applies, in Oniguruma, to
 * the rest of the group including later alternatives (a(?i)b|c is
 * a(?i:b|c)), so it becomes an opened `(?i:` closed with the group. */
static enum err rw_options(struct rw *w, size_t at)
{
	int on = 1, val = w->caseless;
	enum err e;

	for (; w->i < w->len; w->i++) {
		char c = w->p[w->i];

		if (c == '-')
			on = 0;
		else if (c == 'i')
			val = on;
		else
			break;
	}
	if (w->i >= w->len || (w->p[w->i] != ':' && w->p[w->i] != ')'))
		return rw_refuse(w, at, "group option other than i");
	if (w->p[w->i] == ':') {
		w->i++;
		if ((e = rw_push(w, at)))
			return e;
		w->caseless = val;
		return buf_puts(w->out, val ? "(?i:" : "(?-i:");
	}
	w->i++;
	w->caseless = val;
	w->extra[w->depth]++;
	return buf_puts(w->out, val ? "(?i:" : "(?-i:");
}

static enum err rw_group(struct rw *w)
{
	size_t at = w->i;
	const char *q = w->p + w->i + 1;
	size_t left = w->len - w->i - 1;
	size_t n = 0;
	enum err e;

	if (!left || q[0] != '?')
		n = 1; /* "(" */
	else if (left >= 2 && (q[1] == ':' || q[1] == '=' || q[1] == '!' ||
			       q[1] == '>'))
		n = 3;
	else if (left >= 3 && q[1] == '<' && (q[2] == '=' || q[2] == '!'))
		n = 4;
	if (n == 1 && left && q[0] == '*')
		return rw_refuse(w, at, "(*");
	if (n) {
		if ((e = rw_push(w, at)))
			return e;
		w->i += n;
		return buf_append(w->out, w->p + at, n);
	}
	if (left >= 2 && q[1] == '#') {
		while (w->i < w->len && w->p[w->i] != ')')
			w->i++;
		if (w->i >= w->len)
			return rw_bad(w, at, "unterminated comment");
		w->i++;
		return ERR_OK;
	}
	if (left >= 3 && q[1] == '<' &&
	    ((q[2] >= 'a' && q[2] <= 'z') || (q[2] >= 'A' && q[2] <= 'Z') ||
	     q[2] == '_')) {
		size_t j = w->i + 3;

		while (j < w->len && w->p[j] != '>')
			j++;
		if (j >= w->len)
			return rw_bad(w, at, "unterminated group name");
		if ((e = rw_push(w, at)))
			return e;
		n = j + 1 - w->i;
		w->i = j + 1;
		return buf_append(w->out, w->p + at, n);
	}
	w->i += 2;
	return rw_options(w, at);
}

static enum err rw_close_extra(struct rw *w)
{
	enum err e = ERR_OK;

	for (; w->extra[w->depth] > 0 && !e; w->extra[w->depth]--)
		e = buf_putc(w->out, ')');
	return e;
}

static enum err rw_step(struct rw *w)
{
	char c = w->p[w->i];
	uint32_t cp;
	size_t n;
	enum err e;

	switch (c) {
	case '\\':
		return rw_escape(w);
	case '[':
		return rw_class(w);
	case '(':
		return rw_group(w);
	case ')':
		if (!w->depth)
			return rw_bad(w, w->i, "unmatched ')'");
		if ((e = rw_close_extra(w)))
			return e;
		w->caseless = w->saved[--w->depth];
		w->i++;
		return buf_putc(w->out, ')');
	case '{':
		return rw_brace(w);
	case '.': /* Ruby syntax: any character but LF */
		w->i++;
		return buf_puts(w->out, "[^\\n]");
	case '^': /* Ruby syntax: always a line anchor, lines end at LF */
		w->i++;
		return buf_puts(w->out, "(?<![^\\n])");
	case '$':
		w->i++;
		return buf_puts(w->out, "(?![^\\n])");
	default:
		/* PCRE2 10.42 folds case with Unicode 14 data, Oniguruma with 16 */
		if ((unsigned char)c >= 0x80 && w->caseless)
			return rw_refuse(w, w->i, "non-ASCII literal under (?i)");
		n = utf8_decode(w->p + w->i, w->len - w->i, &cp);
		w->i += n;
		return buf_append(w->out, w->p + w->i - n, n);
	}
}

static enum err rewrite(const char *pattern, size_t len, struct buf *out,
		       struct diag *d, int compact)
{
	struct rw w;
	size_t start = out->len;
	enum err e = ERR_OK;

	memset(&w, 0, sizeof w);
	w.p = pattern;
	w.len = len;
	w.out = out;
	w.d = d;
	w.compact = compact && compact_ok();
	while (w.i < w.len && !e)
		e = rw_step(&w);
	if (!e && w.depth)
		e = rw_bad(&w, len, "unclosed group");
	if (!e)
		e = rw_close_extra(&w);
	if (e) {
		if (e == ERR_NOMEM || e == ERR_LIMIT)
			diag_fail(d, e, "cannot rewrite regex: out of memory");
		buf_truncate(out, start);
	}
	return e;
}

enum err uni_rewrite_pattern(const char *pattern, size_t len, struct buf *out,
			     struct diag *d)
{
	return rewrite(pattern, len, out, d, 1);
}

enum err uni_rewrite_pattern_ranges(const char *pattern, size_t len,
				    struct buf *out, struct diag *d)
{
	return rewrite(pattern, len, out, d, 0);
}

/* ---- NFC (Unicode 9.0) ------------------------------------------------- */

#define S_BASE 0xAC00u
#define L_BASE 0x1100u
#define V_BASE 0x1161u
#define T_BASE 0x11A7u
#define L_COUNT 19u
#define V_COUNT 21u
#define T_COUNT 28u
#define N_COUNT (V_COUNT * T_COUNT)
#define S_COUNT (L_COUNT * N_COUNT)

static uint8_t ccc_of(uint32_t cp)
{
	size_t lo = 0, hi = nfc_ccc_n;

	if (cp < 0x300)
		return 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cp < nfc_ccc[mid].lo)
			hi = mid;
		else if (cp > nfc_ccc[mid].hi)
			lo = mid + 1;
		else
			return nfc_ccc[mid].ccc;
	}
	return 0;
}

static const struct uni_decomp *decomp_of(uint32_t cp)
{
	size_t lo = 0, hi = nfc_decomp_n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cp < nfc_decomp[mid].cp)
			hi = mid;
		else if (cp > nfc_decomp[mid].cp)
			lo = mid + 1;
		else
			return &nfc_decomp[mid];
	}
	return NULL;
}

/* The canonical composite of a + b, or 0. */
static uint32_t compose(uint32_t a, uint32_t b)
{
	size_t lo = 0, hi = nfc_comp_n;

	if (a >= L_BASE && a < L_BASE + L_COUNT && b >= V_BASE &&
	    b < V_BASE + V_COUNT)
		return S_BASE + ((a - L_BASE) * V_COUNT + (b - V_BASE)) * T_COUNT;
	if (a >= S_BASE && a < S_BASE + S_COUNT && (a - S_BASE) % T_COUNT == 0 &&
	    b > T_BASE && b < T_BASE + T_COUNT)
		return a + (b - T_BASE);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct uni_comp *c = &nfc_comp[mid];

		if (a < c->a || (a == c->a && b < c->b))
			hi = mid;
		else if (a > c->a || b > c->b)
			lo = mid + 1;
		else
			return c->c;
	}
	return 0;
}

/* A growable code point array for one chunk. */
struct cpv {
	uint32_t *v;
	size_t n, cap;
};

static enum err cpv_push(struct cpv *a, uint32_t cp)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 64;
		uint32_t *v = mem_realloc(a->v, cap * sizeof *v);

		if (!v)
			return ERR_NOMEM;
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = cp;
	return ERR_OK;
}

static enum err decompose_into(struct cpv *a, uint32_t cp)
{
	const struct uni_decomp *d;
	enum err e = ERR_OK;
	size_t i;

	if (cp >= S_BASE && cp < S_BASE + S_COUNT) {
		uint32_t s = cp - S_BASE;

		e = cpv_push(a, L_BASE + s / N_COUNT);
		if (!e)
			e = cpv_push(a, V_BASE + (s % N_COUNT) / T_COUNT);
		if (!e && s % T_COUNT)
			e = cpv_push(a, T_BASE + s % T_COUNT);
		return e;
	}
	d = decomp_of(cp);
	if (!d)
		return cpv_push(a, cp);
	for (i = 0; i < d->len && !e; i++)
		e = cpv_push(a, nfc_decomp_pool[d->off + i]);
	return e;
}

/* Stable counting sort of the non-starters v[0..n) by combining class. */
static enum err sort_long_run(uint32_t *v, size_t n)
{
	size_t count[257] = {0}, i;
	uint32_t *tmp = mem_alloc(n * sizeof *tmp);

	if (!tmp)
		return ERR_NOMEM;
	memcpy(tmp, v, n * sizeof *tmp);
	for (i = 0; i < n; i++)
		count[ccc_of(tmp[i]) + 1]++;
	for (i = 1; i < 257; i++)
		count[i] += count[i - 1];
	for (i = 0; i < n; i++)
		v[count[ccc_of(tmp[i])]++] = tmp[i];
	mem_free(tmp);
	return ERR_OK;
}

/* Canonical ordering (UAX #15): a stable sort by combining class of every
 * run of non-starters; insertion sort for the short runs of real text, a
 * counting sort for long ones so that adversarial input stays linear. */
static enum err reorder(uint32_t *v, size_t n)
{
	size_t i = 0, a, j, k;

	while (i < n) {
		if (!ccc_of(v[i])) {
			i++;
			continue;
		}
		for (a = i; i < n && ccc_of(v[i]); i++)
			;
		if (i - a > 32) {
			if (sort_long_run(v + a, i - a))
				return ERR_NOMEM;
			continue;
		}
		for (j = a + 1; j < i; j++) {
			uint32_t x = v[j];
			uint8_t cx = ccc_of(x);

			for (k = j; k > a && ccc_of(v[k - 1]) > cx; k--)
				v[k] = v[k - 1];
			v[k] = x;
		}
	}
	return ERR_OK;
}

/* Canonical composition in place (UAX #15). */
static size_t recompose(uint32_t *v, size_t n)
{
	size_t i, k = 0, si = (size_t)-1;
	uint8_t last = 0;

	for (i = 0; i < n; i++) {
		uint32_t c = v[i], comp;
		uint8_t cc = ccc_of(c);

		if (si != (size_t)-1 &&
		    (k == si + 1 || (last != 0 && last < cc)) &&
		    (comp = compose(v[si], c)) != 0) {
			v[si] = comp;
			continue;
		}
		if (cc == 0)
			si = k;
		last = cc;
		v[k++] = c;
	}
	return k;
}

static enum err put_utf8(struct buf *out, uint32_t cp)
{
	char b[4];

	return buf_append(out, b, utf8_encode(cp, b));
}

/* NFC of one chunk s[0..len), which starts at a starter or at the text's
 * start and ends before a character that interacts with nothing before it. */
static enum err nfc_chunk(const char *s, size_t len, struct cpv *a,
			  struct buf *out)
{
	size_t i = 0, k;
	uint32_t cp;
	enum err e = ERR_OK;

	a->n = 0;
	while (i < len && !e) {
		i += utf8_decode(s + i, len - i, &cp);
		e = decompose_into(a, cp);
	}
	if (e)
		return e;
	if ((e = reorder(a->v, a->n)))
		return e;
	a->n = recompose(a->v, a->n);
	for (k = 0; k < a->n && !e; k++)
		e = put_utf8(out, a->v[k]);
	return e;
}

/* nfc_unsafe for the BMP as one bit per code point (8 KiB), built once
 * (pthread_once) by the first uni_nfc: a lookup instead of a binary search
 * over the ranges for every character outside the fast paths of skip_safe
 * (CJK punctuation, box drawing, fullwidth forms). */
static uint8_t nfc_unsafe_bmp[0x10000 / 8];
static pthread_once_t nfc_bmp_once = PTHREAD_ONCE_INIT;

static void nfc_bmp_build(void)
{
	size_t i;
	uint32_t cp;

	for (i = 0; i < nfc_unsafe_n && nfc_unsafe[i].lo < 0x10000; i++)
		for (cp = nfc_unsafe[i].lo; cp <= nfc_unsafe[i].hi && cp < 0x10000; cp++)
			nfc_unsafe_bmp[cp >> 3] |= (uint8_t)(1u << (cp & 7));
}

/* Whether `cp` may change under NFC or change a neighbour. */
static inline int nfc_unsafe_cp(uint32_t cp)
{
	if (cp < 0x10000)
		return cp >= 0x300 && (nfc_unsafe_bmp[cp >> 3] >> (cp & 7) & 1);
	return uni_in_ranges(nfc_unsafe, nfc_unsafe_n, cp);
}

#ifdef __SSE2__
/* From s[i], a character's start with 16 bytes left, past the safe
 * characters 16 bytes at a time: a block in which no byte is the lead of a
 * character at or above U+0300 outside U+4000..U+9FFF (the two kinds
 * skip_safe passes unlooked) is passed whole, a 3-byte character that is
 * such a lead (CJK punctuation, fullwidth forms) after a lookup each. Returns
 * the first character left to the caller (unsafe, 2 or 4 bytes, or where
 * fewer than 16 bytes are left) and sets *prev to the start of the last
 * character before it. Bytes are compared signed after flipping the top
 * bit (SSE2 has no unsigned compare). */
static size_t skip_plain(const char *s, size_t len, size_t i, size_t *prev)
{
	const __m128i flip = _mm_set1_epi8((char)0x80), below_cc = _mm_set1_epi8(0xCB ^ 0x80),
		      below_e4 = _mm_set1_epi8(0xE3 ^ 0x80), above_e9 = _mm_set1_epi8(0xE9 ^ 0x80);
	const unsigned char *u = (const unsigned char *)s;
	size_t start = i, p;

	while (i + 16 <= len) {
		__m128i v = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(s + i)), flip);
		__m128i cjk = _mm_andnot_si128(_mm_cmpgt_epi8(v, above_e9), _mm_cmpgt_epi8(v, below_e4));
		int m = _mm_movemask_epi8(_mm_andnot_si128(cjk, _mm_cmpgt_epi8(v, below_cc)));

		/* each such lead in the block, without loading it again */
		for (; m; m &= m - 1) {
			size_t k = i + (size_t)__builtin_ctz((unsigned)m);

			if (u[k] < 0xE0 || u[k] >= 0xF0 ||
			    nfc_unsafe_cp((uint32_t)(u[k] & 0x0F) << 12 |
					  (uint32_t)(u[k + 1] & 0x3F) << 6 | (u[k + 2] & 0x3F))) {
				i = k;
				goto stop;
			}
		}
		for (i += 16; i < len && (u[i] & 0xC0) == 0x80; i++)
			;
	}
stop:
	for (p = i - 1; p > start && (u[p] & 0xC0) == 0x80; p--)
		;
	if (i > start)
		*prev = p;
	return i;
}
#endif

/* The index of the first character from s[i] on that NFC may change or that
 * may change a neighbour (or `len`); *prev becomes the start of the last
 * safe character passed, if any. */
static size_t skip_safe(const char *s, size_t len, size_t i, size_t *prev)
{
	uint32_t cp;
	size_t n;

	while (i < len) {
		const unsigned char u = (unsigned char)s[i];

#ifdef __SSE2__
		if (i + 16 <= len && (u < 0xCC || (u >= 0xE4 && u <= 0xE9))) {
			i = skip_plain(s, len, i, prev);
			continue;
		}
#endif

		if (u < 0x80 && i + 8 <= len) { /* ASCII, 8 bytes at a time */
			uint64_t x;

			memcpy(&x, s + i, 8);
			if (!(x & 0x8080808080808080u)) {
				i += 8;
				*prev = i - 1;
				continue;
			}
		}
		if (u < 0xCC) { /* below U+0300: always safe */
			*prev = i;
			i += u < 0x80 ? 1 : 2;
			continue;
		}
		if (u >= 0xE4 && u <= 0xE9 && i + 3 <= len) {
			/* U+4000..U+9FFF (CJK): no unsafe character (test_uni) */
			*prev = i;
			i += 3;
			continue;
		}
		if (u >= 0xE0 && u < 0xF0 && i + 3 <= len) { /* decoded inline */
			cp = (uint32_t)(u & 0x0F) << 12 | (uint32_t)(s[i + 1] & 0x3F) << 6 |
			     (s[i + 2] & 0x3F);
			n = 3;
		} else {
			n = utf8_decode(s + i, len - i, &cp);
		}
		if (nfc_unsafe_cp(cp))
			break;
		*prev = i;
		i += n;
	}
	return i;
}

/* The end of the stretch of unsafe characters starting at s[i]. */
static size_t skip_unsafe(const char *s, size_t len, size_t i)
{
	uint32_t cp;
	size_t n;

	while (i < len) {
		n = utf8_decode(s + i, len - i, &cp);
		if (!nfc_unsafe_cp(cp))
			break;
		i += n;
	}
	return i;
}

/* Copies the safe stretches verbatim and renormalizes each unsafe stretch
 * together with the (safe, starter) character before it: what follows the
 * stretch is a safe starter, which nothing before it can reach. With `lazy`
 * nothing is appended until a stretch comes out changed (then the text
 * before it is, and the stretch renormalized again), so an unchanged text
 * appends nothing; *changed tells which. */
static enum err nfc_into(const char *s, size_t len, struct buf *out, int lazy,
			 int *changed)
{
	struct cpv a = {0};
	size_t i = 0, flushed = 0, prev = 0, start, mark, start_len = out->len;
	enum err e = ERR_OK;

	pthread_once(&nfc_bmp_once, nfc_bmp_build);
	while (i < len && !e) {
		i = skip_safe(s, len, i, &prev);
		if (i == len)
			break;
		start = prev < i && prev >= flushed ? prev : i;
		i = skip_unsafe(s, len, i);
		if (!lazy)
			e = buf_append(out, s + flushed, start - flushed);
		mark = out->len;
		if (!e)
			e = nfc_chunk(s + start, i - start, &a, out);
		if (!e && lazy) {
			int same = out->len - mark == i - start &&
				   !memcmp(out->data + mark, s + start, i - start);

			buf_truncate(out, mark);
			if (same) {
				prev = i;
				continue;
			}
			lazy = 0;
			e = buf_append(out, s, start);
			if (!e)
				e = nfc_chunk(s + start, i - start, &a, out);
		}
		flushed = prev = i;
	}
	if (!e && !lazy)
		e = buf_append(out, s + flushed, len - flushed);
	if (e)
		buf_truncate(out, start_len);
	*changed = !lazy;
	mem_free(a.v);
	return e;
}

enum err uni_nfc(const char *s, size_t len, struct buf *out)
{
	int changed;

	return nfc_into(s, len, out, 0, &changed);
}

enum err uni_nfc_changed(const char *s, size_t len, struct buf *out, int *changed)
{
	return nfc_into(s, len, out, 1, changed);
}

/* ---- predicates and decoding ------------------------------------------ */

int uni_is_space(uint32_t cp)
{
	if (cp < 0x80)
		return cp == ' ' || (cp >= 9 && cp <= 13);
	return in_class(UNI_RUST_SPACE, cp);
}

int uni_is_word(uint32_t cp)
{
	if (cp < 0x80)
		return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') ||
		       (cp >= 'A' && cp <= 'Z') || cp == '_';
	return in_class(UNI_RUST_WORD, cp);
}

int uni_is_numeric(uint32_t cp)
{
	if (cp < 0x80)
		return cp >= '0' && cp <= '9';
	return in_class(UNI_RUST_NUMERIC, cp);
}
