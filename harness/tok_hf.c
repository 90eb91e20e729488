#include "tok_hf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <cjson/cJSON.h>

#include "buf.h"
#include "jscan.h"
#include "json.h"
#include "mem.h"
#include "tok_bpe.h"
#include "tok_scan.h"
#include "uni.h"

#define MAX_PRE 16   /* pre-tokenizers after flattening Sequences */
#define MAX_NORM 16  /* normalizers after flattening Sequences */
#define MAX_SPECIAL 64 /* ids a post-processor template may add */

/* The GPT-2 pattern of ByteLevel with use_regex (pre_tokenizers/byte_level.rs). */
static const char gpt2_pattern[] =
	"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

/* A compiled pattern: `exact` is the pattern rewritten with HF's Unicode
 * tables (uni_rewrite_pattern); `ascii` (or NULL) is the same translation
 * with classes as explicit ranges (uni_rewrite_pattern_ranges), used on
 * subjects of ASCII characters only, where it is about twice as fast. */
struct rx {
	pcre2_code *exact, *ascii;
	enum scan_kind scan;  /* a hand-written matcher replaces both */
};

enum behavior { B_REMOVED, B_ISOLATED, B_MERGED_PREV, B_MERGED_NEXT, B_CONTIGUOUS };
enum pre_kind { PRE_SPLIT, PRE_DIGITS, PRE_BYTELEVEL, PRE_METASPACE };
enum norm_kind { NORM_NFC, NORM_PREPEND, NORM_REPLACE };
enum scheme { SCHEME_ALWAYS, SCHEME_FIRST, SCHEME_NEVER };

struct pre {
	enum pre_kind kind;
	struct rx re;         /* Split pattern; Metaspace: the replacement */
	enum behavior behavior;
	int invert, individual, add_prefix_space, use_regex, split;
	enum scheme scheme;
	char repl[8];         /* Metaspace replacement, UTF-8 */
	size_t repl_len;
};

struct norm {
	enum norm_kind kind;
	char *s;              /* Prepend text or Replace content, owned */
	size_t n;
	struct rx re;         /* Replace pattern */
};

struct added {
	char *s;              /* content (normalized for normalized tokens), owned */
	size_t n;
	char *raw;            /* content as written, owned */
	size_t raw_n;
	uint32_t id;
	unsigned lstrip : 1, rstrip : 1, single_word : 1, normalized : 1;
};

/* Byte trie of added tokens: root edges dense, the rest as sibling lists. */
struct tnode {
	int32_t term;         /* index into tok_hf.added, or -1 */
	int32_t edge;         /* first edge, or -1 */
};
struct tedge {
	unsigned char byte;
	int32_t child, next;
};
struct aset {
	int32_t root[256];    /* node of each first byte, or -1 */
	int nfirst;           /* distinct first bytes */
	unsigned char first;  /* the first byte when nfirst == 1 */
	struct tnode *node;
	size_t nnode;
	struct tedge *edge;
	size_t nedge;
};

struct tok_hf {
	struct bpe *bpe;
	struct pre pre[MAX_PRE];
	size_t npre;
	struct norm norm[MAX_NORM];
	size_t nnorm;
	struct rx gpt2;       /* for ByteLevel use_regex */
	struct added *added;
	size_t nadded;
	struct aset raw, normed; /* non-normalized / normalized tokens */
	struct scan_tab *tab; /* for patterns with a scanner, else NULL */
	uint32_t head[MAX_SPECIAL], tail[MAX_SPECIAL]; /* template ids */
	size_t nhead, ntail;
};

/* ---- per-call scratch ------------------------------------------------- */

struct item {
	size_t a, b;
	int match;
};

struct stage {
	struct buf s;         /* transformed piece (prefix space, Metaspace) */
	struct item *it;
	size_t n, cap;
};

struct run {
	const struct tok_hf *h;
	struct bpe_work *w;
	pcre2_match_data *md;
	pcre2_match_context *mc;
	pcre2_jit_stack *js;
	struct buf norm[2];
	struct stage st[MAX_PRE + 1];
	int count_only;
	size_t count;
	uint32_t **ids;
	size_t *nids, *cap;
	struct diag *d;
};

static enum err run_init(struct run *r, const struct tok_hf *h, struct diag *d)
{
	size_t i;

	memset(r, 0, sizeof(*r));
	r->h = h;
	r->d = d;
	for (i = 0; i < 2; i++)
		buf_init(&r->norm[i], BUF_MAX_DEFAULT);
	for (i = 0; i <= MAX_PRE; i++)
		buf_init(&r->st[i].s, BUF_MAX_DEFAULT);
	r->md = pcre2_match_data_create(1, NULL);
	r->mc = pcre2_match_context_create(NULL);
	r->js = pcre2_jit_stack_create(32 * 1024, 64 * 1024 * 1024, NULL);
	if (!r->md || !r->mc || !r->js || bpe_work_new(&r->w))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	pcre2_jit_stack_assign(r->mc, NULL, r->js);
	return ERR_OK;
}

static void run_release(struct run *r)
{
	size_t i;

	for (i = 0; i < 2; i++)
		buf_release(&r->norm[i]);
	for (i = 0; i <= MAX_PRE; i++) {
		buf_release(&r->st[i].s);
		mem_free(r->st[i].it);
	}
	pcre2_match_data_free(r->md);
	pcre2_match_context_free(r->mc);
	pcre2_jit_stack_free(r->js);
	bpe_work_free(r->w);
}

static enum err nomem(struct run *r)
{
	return diag_fail(r->d, ERR_NOMEM, "out of memory");
}

static enum err push_item(struct run *r, struct stage *st, size_t a, size_t b, int match)
{
	if (st->n == st->cap) {
		size_t c = st->cap ? st->cap * 2 : 64;
		struct item *p = mem_realloc(st->it, c * sizeof(*p));

		if (!p)
			return nomem(r);
		st->it = p;
		st->cap = c;
	}
	st->it[st->n++] = (struct item){a, b, match};
	return ERR_OK;
}

static size_t char_len(const char *s, size_t n)
{
	unsigned char c = (unsigned char)s[0];
	size_t k = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;

	return k < n ? k : n;
}

/* Matches and gaps of `re` over the subject s[0..n), as the onig crate's
 * find_iter and HF's Pattern::find_matches produce them: an empty match right
 * after the previous match is skipped by advancing one character. */
static int is_ascii(const char *s, size_t n)
{
	uint64_t acc = 0, v;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&v, s + i, 8);
		acc |= v;
	}
	for (; i < n; i++)
		acc |= (unsigned char)s[i];
	return !(acc & 0x8080808080808080ULL);
}

static enum err regex_items(struct run *r, const struct rx *rx, const char *s,
			    size_t n, int invert, struct stage *st)
{
	size_t last_end = 0, prev = 0, last_match_end = 0;
	int have_last = 0;
	const pcre2_code *re;

	st->n = 0;
	if (rx->scan) {
		size_t ms, me;

		while (scan_find(rx->scan, r->h->tab, s, n, prev, &ms, &me)) {
			if (prev != ms && push_item(r, st, prev, ms, invert))
				return ERR_NOMEM;
			if (push_item(r, st, ms, me, !invert))
				return ERR_NOMEM;
			prev = me;
		}
		if (prev != n && push_item(r, st, prev, n, invert))
			return ERR_NOMEM;
		return ERR_OK;
	}
	re = rx->ascii && is_ascii(s, n) ? rx->ascii : rx->exact;
	while (last_end <= n) {
		/* pcre2_jit_match skips the option checks of pcre2_match; every
		 * pattern is JIT-compiled at load (compile() refuses otherwise) */
		int rc = pcre2_jit_match(re, (PCRE2_SPTR)s, n, last_end, PCRE2_NO_UTF_CHECK,
					 r->md, r->mc);
		PCRE2_SIZE *ov;

		if (rc == PCRE2_ERROR_NOMATCH)
			break;
		if (rc < 0) {
			PCRE2_UCHAR msg[256];

			pcre2_get_error_message(rc, msg, sizeof(msg));
			return diag_fail(r->d, ERR_LIMIT, "regex failed at byte %zu: %s",
					 last_end, (const char *)msg);
		}
		ov = pcre2_get_ovector_pointer(r->md);
		if (ov[0] == ov[1] && have_last && last_match_end == ov[1]) {
			last_end += last_end < n ? char_len(s + last_end, n - last_end) : 1;
			continue;
		}
		last_end = last_match_end = ov[1];
		have_last = 1;
		if (prev != ov[0] && push_item(r, st, prev, ov[0], invert))
			return ERR_NOMEM;
		if (push_item(r, st, ov[0], ov[1], !invert))
			return ERR_NOMEM;
		prev = ov[1];
	}
	if (prev != n && push_item(r, st, prev, n, invert))
		return ERR_NOMEM;
	return ERR_OK;
}

/* Every numeric character is its own match (HF's Fn(char) -> bool pattern). */
static enum err digit_items(struct run *r, const char *s, size_t n, struct stage *st)
{
	size_t i = 0, last = 0;

	st->n = 0;
	while (i < n) {
		uint32_t cp;
		size_t k = uni_decode(s + i, n - i, &cp);

		if (uni_is_numeric(cp)) {
			if (last < i && push_item(r, st, last, i, 0))
				return ERR_NOMEM;
			if (push_item(r, st, i, i + k, 1))
				return ERR_NOMEM;
			last = i + k;
		}
		i += k;
	}
	if (last < n && push_item(r, st, last, n, 0))
		return ERR_NOMEM;
	return ERR_OK;
}

/* Rewrites st->it in place into the pieces kept by `b` (NormalizedString::
 * split); `match` is set on pieces to drop. */
static void apply_behavior(struct stage *st, enum behavior b)
{
	size_t i, k = 0;
	int prev = 0;

	switch (b) {
	case B_REMOVED:
		return;
	case B_ISOLATED:
		for (i = 0; i < st->n; i++)
			st->it[i].match = 0;
		return;
	case B_CONTIGUOUS:
	case B_MERGED_PREV:
		for (i = 0; i < st->n; i++) {
			struct item it = st->it[i];
			int glue = b == B_CONTIGUOUS ? it.match == prev : it.match && !prev;

			if (glue && k)
				st->it[k - 1].b = it.b;
			else
				st->it[k++] = (struct item){it.a, it.b, 0};
			prev = it.match;
		}
		break;
	case B_MERGED_NEXT:
		/* built right to left, at the end of the array */
		k = st->n;
		for (i = st->n; i-- > 0;) {
			struct item it = st->it[i];

			if (it.match && !prev && k < st->n)
				st->it[k].a = it.a;
			else
				st->it[--k] = (struct item){it.a, it.b, 0};
			prev = it.match;
		}
		memmove(st->it, st->it + k, (st->n - k) * sizeof(*st->it));
		k = st->n - k;
		break;
	}
	st->n = k;
}

/* ---- the pipeline ----------------------------------------------------- */

static enum err model(struct run *r, const char *s, size_t n)
{
	enum err e;

	if (r->count_only)
		e = bpe_count(r->h->bpe, r->w, s, n, &r->count);
	else
		e = bpe_encode(r->h->bpe, r->w, s, n, r->ids, r->nids, r->cap);
	return e ? diag_fail(r->d, e, "out of memory") : ERR_OK;
}

static enum err emit_id(struct run *r, uint32_t id)
{
	if (r->count_only) {
		r->count++;
		return ERR_OK;
	}
	if (*r->nids == *r->cap) {
		size_t c = *r->cap ? *r->cap * 2 : 256;
		uint32_t *p = mem_realloc(*r->ids, c * sizeof(*p));

		if (!p)
			return nomem(r);
		*r->ids = p;
		*r->cap = c;
	}
	(*r->ids)[(*r->nids)++] = id;
	return ERR_OK;
}

static enum err pre_stage(struct run *r, size_t k, const char *s, size_t n, int first);

/* Runs stage k+1 on every kept, non-empty piece of stage k. */
static enum err descend(struct run *r, size_t k, const char *s, int first)
{
	struct stage *st = &r->st[k];
	size_t i;
	enum err e;

	for (i = 0; i < st->n; i++) {
		struct item it = st->it[i];

		if (it.match || it.a == it.b)
			continue;
		if (r->h->pre[k].kind == PRE_BYTELEVEL || r->h->pre[k].kind == PRE_METASPACE)
			e = model(r, s + it.a, it.b - it.a);
		else
			e = pre_stage(r, k + 1, s + it.a, it.b - it.a, first && it.a == 0);
		if (e)
			return e;
	}
	return ERR_OK;
}

static enum err byte_level(struct run *r, size_t k, const char *s, size_t n)
{
	const struct pre *p = &r->h->pre[k];
	struct stage *st = &r->st[k];

	if (p->add_prefix_space && s[0] != ' ') {
		buf_reset(&st->s);
		if (buf_putc(&st->s, ' ') || buf_append(&st->s, s, n))
			return nomem(r);
		s = st->s.data;
		n = st->s.len;
	}
	if (!p->use_regex)
		return model(r, s, n);
	if (regex_items(r, &r->h->gpt2, s, n, 0, st))
		return r->d->code;
	apply_behavior(st, B_ISOLATED);
	return descend(r, k, s, 0);
}

static enum err metaspace(struct run *r, size_t k, const char *s, size_t n, int first)
{
	const struct pre *p = &r->h->pre[k];
	struct stage *st = &r->st[k];
	int prepend = p->scheme == SCHEME_ALWAYS || (p->scheme == SCHEME_FIRST && first);
	size_t i;

	buf_reset(&st->s);
	if (prepend && s[0] != ' ' &&
	    !(n >= p->repl_len && !memcmp(s, p->repl, p->repl_len)) &&
	    buf_append(&st->s, p->repl, p->repl_len))
		return nomem(r);
	for (i = 0; i < n; i++) {
		enum err e = s[i] == ' ' ? buf_append(&st->s, p->repl, p->repl_len)
					 : buf_putc(&st->s, s[i]);

		if (e)
			return nomem(r);
	}
	if (!p->split)
		return model(r, st->s.data, st->s.len);
	if (regex_items(r, &p->re, st->s.data, st->s.len, 0, st))
		return r->d->code;
	apply_behavior(st, B_MERGED_NEXT);
	return descend(r, k, st->s.data, 0);
}

/* Whether stage k hands its pieces to the model unchanged: no stage left,
 * or a ByteLevel that adds no space and splits nothing. */
static int feeds_model(const struct tok_hf *h, size_t k)
{
	return k == h->npre || (h->pre[k].kind == PRE_BYTELEVEL &&
				!h->pre[k].add_prefix_space && !h->pre[k].use_regex);
}

/* An Isolated Split with a hand-written scanner whose pieces go straight to
 * the model: every match and every gap is a piece (invert changes nothing). */
static enum err scan_to_model(struct run *r, const struct pre *p, const char *s,
			      size_t n)
{
	const struct bpe *b = r->h->bpe;
	size_t prev = 0, ms, me;
	enum err e;

	if (r->count_only) { /* the hot loop of `needle count`: no detour via model() */
		while (scan_find(p->re.scan, r->h->tab, s, n, prev, &ms, &me)) {
			if ((prev != ms && (e = bpe_count(b, r->w, s + prev, ms - prev, &r->count))) ||
			    (e = bpe_count(b, r->w, s + ms, me - ms, &r->count)))
				return diag_fail(r->d, e, "out of memory");
			prev = me;
		}
		if (prev != n && (e = bpe_count(b, r->w, s + prev, n - prev, &r->count)))
			return diag_fail(r->d, e, "out of memory");
		return ERR_OK;
	}
	while (scan_find(p->re.scan, r->h->tab, s, n, prev, &ms, &me)) {
		if (prev != ms && (e = model(r, s + prev, ms - prev)))
			return e;
		if ((e = model(r, s + ms, me - ms)))
			return e;
		prev = me;
	}
	return prev != n ? model(r, s + prev, n - prev) : ERR_OK;
}

/* Pre-tokenizer k on piece s[0..n) (non-empty); `first` says the piece
 * starts at offset 0 of the original text (Metaspace prepend_scheme first). */
static enum err pre_stage(struct run *r, size_t k, const char *s, size_t n, int first)
{
	const struct pre *p;

	if (k == r->h->npre)
		return model(r, s, n);
	p = &r->h->pre[k];
	switch (p->kind) {
	case PRE_SPLIT:
		if (p->re.scan && p->behavior == B_ISOLATED && feeds_model(r->h, k + 1))
			return scan_to_model(r, p, s, n);
		if (regex_items(r, &p->re, s, n, p->invert, &r->st[k]))
			return r->d->code;
		if (p->behavior == B_ISOLATED && feeds_model(r->h, k + 1)) {
			/* the common last Split (DeepSeek, Llama 3, Qwen, o200k):
			 * every item is a piece, straight to the model */
			size_t i;

			for (i = 0; i < r->st[k].n; i++) {
				struct item it = r->st[k].it[i];
				enum err e = model(r, s + it.a, it.b - it.a);

				if (e)
					return e;
			}
			return ERR_OK;
		}
		break;
	case PRE_DIGITS:
		if (digit_items(r, s, n, &r->st[k]))
			return r->d->code;
		break;
	case PRE_BYTELEVEL:
		return byte_level(r, k, s, n);
	case PRE_METASPACE:
		return metaspace(r, k, s, n, first);
	}
	apply_behavior(&r->st[k], p->kind == PRE_DIGITS
					  ? (p->individual ? B_ISOLATED : B_CONTIGUOUS)
					  : p->behavior);
	return descend(r, k, s, first);
}

/* Applies the normalizers to s[0..n); `*out` points at the result (s itself
 * when there is nothing to do). */
static enum err normalize(struct run *r, const char *s, size_t n,
			  const char **out, size_t *nout)
{
	size_t i, j;
	int cur = 0;

	for (i = 0; i < r->h->nnorm; i++) {
		const struct norm *m = &r->h->norm[i];
		struct buf *o = &r->norm[cur];
		enum err e = ERR_OK;

		buf_reset(o);
		switch (m->kind) {
		case NORM_NFC:
			e = uni_nfc(s, n, o);
			break;
		case NORM_PREPEND:
			if (n)
				e = buf_append(o, m->s, m->n);
			if (!e)
				e = buf_append(o, s, n);
			break;
		case NORM_REPLACE:
			if (regex_items(r, &m->re, s, n, 0, &r->st[MAX_PRE]))
				return r->d->code;
			for (j = 0; !e && j < r->st[MAX_PRE].n; j++) {
				struct item it = r->st[MAX_PRE].it[j];

				e = it.match ? buf_append(o, m->s, m->n)
					     : buf_append(o, s + it.a, it.b - it.a);
			}
			break;
		}
		if (e)
			return nomem(r);
		s = o->data;
		n = o->len;
		cur ^= 1;
	}
	*out = s;
	*nout = n;
	return ERR_OK;
}

/* Longest added token of `set` starting at s[i]; returns its end, 0 if none. */
static size_t longest_at(const struct aset *set, const char *s, size_t n, size_t i,
			 int32_t *term)
{
	int32_t node = set->root[(unsigned char)s[i]];
	size_t end = 0;

	while (node >= 0) {
		int32_t e;

		i++;
		if (set->node[node].term >= 0) {
			*term = set->node[node].term;
			end = i;
		}
		if (i >= n)
			break;
		for (e = set->node[node].edge; e >= 0 && set->edge[e].byte != (unsigned char)s[i];
		     e = set->edge[e].next)
			;
		node = e >= 0 ? set->edge[e].child : -1;
	}
	return end;
}

static int word_before(const char *s, size_t i)
{
	uint32_t cp;
	size_t k = i;

	if (!i)
		return 0;
	while (k > 0 && ((unsigned char)s[k - 1] & 0xC0) == 0x80)
		k--;
	if (k > 0)
		k--;
	uni_decode(s + k, i - k, &cp);
	return uni_is_word(cp);
}

static int word_after(const char *s, size_t n, size_t i)
{
	uint32_t cp;

	if (i >= n)
		return 0;
	uni_decode(s + i, n - i, &cp);
	return uni_is_word(cp);
}

/* Start of the run of whitespace ending at s[i] (HF's `\s*$`). */
static size_t space_before(const char *s, size_t i)
{
	for (;;) {
		size_t k = i;
		uint32_t cp;

		if (!i)
			return 0;
		while (k > 0 && ((unsigned char)s[k - 1] & 0xC0) == 0x80)
			k--;
		if (k > 0)
			k--;
		uni_decode(s + k, i - k, &cp);
		if (!uni_is_space(cp))
			return i;
		i = k;
	}
}

/* End of the run of whitespace starting at s[i] (HF's `^\s*`). */
static size_t space_after(const char *s, size_t n, size_t i)
{
	while (i < n) {
		uint32_t cp;
		size_t k = uni_decode(s + i, n - i, &cp);

		if (!uni_is_space(cp))
			break;
		i += k;
	}
	return i;
}

static enum err gap(struct run *r, int level, const char *s, size_t n, int first);

/* HF's AddedVocabulary::find_matches + split_with_indices over s[0..n):
 * leftmost-longest matches; single_word discards without retry; lstrip and
 * rstrip absorb whitespace; the search resumes at the end of the match
 * proper. Gaps go to `gap` at `level`. */
static enum err split_added(struct run *r, const struct aset *set, int level,
			    const char *s, size_t n, int first)
{
	const struct tok_hf *h = r->h;
	size_t pos = 0, start_offset = 0;
	enum err e;

	while (set->nnode && pos < n) {
		size_t start, stop, end;
		int32_t term = -1;
		const struct added *a;

		if (set->nfirst == 1) {
			const char *p = memchr(s + pos, set->first, n - pos);

			if (!p)
				break;
			pos = (size_t)(p - s);
		} else {
			while (pos < n && set->root[(unsigned char)s[pos]] < 0)
				pos++;
			if (pos == n)
				break;
		}
		if (!(end = longest_at(set, s, n, pos, &term))) {
			pos++;
			continue;
		}
		a = &h->added[term];
		start = pos;
		stop = end;
		pos = end;
		if (a->single_word && (word_before(s, start) || word_after(s, n, stop)))
			continue;
		if (a->lstrip) {
			start = space_before(s, start);
			if (start < start_offset)
				start = start_offset;
		}
		if (a->rstrip)
			stop = space_after(s, n, stop);
		if (start_offset < start &&
		    (e = gap(r, level, s + start_offset, start - start_offset,
			     first && start_offset == 0)))
			return e;
		if ((e = emit_id(r, a->id)))
			return e;
		start_offset = stop;
	}
	if (start_offset < n)
		return gap(r, level, s + start_offset, n - start_offset,
			   first && start_offset == 0);
	return ERR_OK;
}

static enum err gap(struct run *r, int level, const char *s, size_t n, int first)
{
	const char *ns;
	size_t nn;

	if (level == 1)
		return pre_stage(r, 0, s, n, first);
	if (normalize(r, s, n, &ns, &nn))
		return r->d->code;
	if (!nn)
		return ERR_OK;
	return split_added(r, &r->h->normed, 1, ns, nn, first);
}

static enum err run_text(struct run *r, const char *text, size_t len)
{
	if (!len)
		return ERR_OK;
	return split_added(r, &r->h->raw, 0, text, len, 1);
}

enum err tok_hf_count(const struct tok_hf *h, const char *text, size_t len,
		      size_t *count, struct diag *d)
{
	struct run r;
	enum err e = run_init(&r, h, d);

	r.count_only = 1;
	if (!e)
		e = run_text(&r, text, len);
	*count = r.count;
	run_release(&r);
	return e;
}

enum err tok_hf_encode(const struct tok_hf *h, const char *text, size_t len,
		       int add_special, uint32_t **ids, size_t *n, size_t *cap,
		       struct diag *d)
{
	struct run r;
	enum err e = run_init(&r, h, d);
	size_t i;

	r.ids = ids;
	r.nids = n;
	r.cap = cap;
	for (i = 0; !e && add_special && i < h->nhead; i++)
		e = emit_id(&r, h->head[i]);
	if (!e)
		e = run_text(&r, text, len);
	for (i = 0; !e && add_special && i < h->ntail; i++)
		e = emit_id(&r, h->tail[i]);
	run_release(&r);
	return e;
}

/* ---- loading: helpers ------------------------------------------------- */

struct load {
	const char *path;
	struct tok_hf *h;
	struct diag *d;
};

static enum err unsupported(struct load *l, const char *what, const char *name)
{
	return diag_fail(l->d, ERR_UNSUPPORTED,
			 "cannot load tokenizer '%s': unsupported %s '%s'", l->path, what, name);
}

static enum err bad(struct load *l, const char *what)
{
	return diag_fail(l->d, ERR_INPUT, "cannot load tokenizer '%s': %s", l->path, what);
}

/* Refuses any member of `o` not named in the space-separated `known`. */
static enum err check_keys(struct load *l, const cJSON *o, const char *known,
			   const char *what)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, o) {
		const char *k = strstr(known, c->string);
		size_t n = strlen(c->string);

		while (k && !((k == known || k[-1] == ' ') && (k[n] == ' ' || !k[n])))
			k = strstr(k + 1, c->string);
		if (!k) {
			char name[300];

			snprintf(name, sizeof(name), "%s' option '%s", what, c->string);
			return unsupported(l, "component", name);
		}
	}
	return ERR_OK;
}

static int get_bool(const cJSON *o, const char *key, int dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsBool(v) ? cJSON_IsTrue(v) : dflt;
}

static const char *get_str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const char *type_of(const cJSON *o)
{
	const char *t = get_str(o, "type");

	return t ? t : "";
}

static void rx_free(struct rx *x)
{
	pcre2_code_free(x->exact);
	pcre2_code_free(x->ascii);
}

/* PCRE2 code with the JIT, or NULL with the PCRE2 message in `msg`. */
static pcre2_code *jit_compile(const char *pat, size_t n, char *msg, size_t cap)
{
	PCRE2_SIZE off;
	pcre2_code *re;
	int code;

	re = pcre2_compile((PCRE2_SPTR)pat, n, PCRE2_UTF | PCRE2_UCP, &code, &off, NULL);
	if (re && (code = pcre2_jit_compile(re, PCRE2_JIT_COMPLETE))) {
		pcre2_code_free(re);
		re = NULL;
	}
	if (!re)
		pcre2_get_error_message(code, (PCRE2_UCHAR *)msg, cap);
	return re;
}

/* Compiles an Oniguruma pattern (tokenizer.json "Regex") or a literal
 * ("String", escaped as HF escapes it) for PCRE2. */
static enum err compile(struct load *l, const char *pat, size_t n, int literal,
			struct rx *out)
{
	struct buf b;
	char msg[256];
	size_t i;
	enum err e = ERR_OK;

	buf_init(&b, BUF_MAX_DEFAULT);
	if (literal) {
		for (i = 0; !e && i < n; i++) {
			unsigned char c = (unsigned char)pat[i];

			if (c < 0x80 && !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
					  (c >= 'A' && c <= 'Z')))
				e = c == 0 ? buf_append(&b, "\\x{0}", 5) : buf_putc(&b, '\\');
			if (!e && c)
				e = buf_putc(&b, (char)c);
		}
		if (e)
			e = diag_fail(l->d, ERR_NOMEM, "out of memory");
	} else {
		e = uni_rewrite_pattern(pat, n, &b, l->d);
		if (e)
			diag_prefix(l->d, "cannot load tokenizer '%s'", l->path);
	}
	if (!e && !(out->exact = jit_compile(b.data, b.len, msg, sizeof(msg))))
		e = diag_fail(l->d, ERR_UNSUPPORTED,
			      "cannot load tokenizer '%s': regex '%.200s' does not compile: %s",
			      l->path, pat, msg);
	/* the ASCII form must be translated too: Oniguruma's `$`, `\h`, `{,n}`
	 * and `(?i)` scope differ from PCRE2's even on ASCII subjects; the
	 * ranges form is as fast as the raw pattern there (uni.h) */
	if (!e && !literal) {
		struct diag quiet; /* no ASCII form is no error: `exact` serves */
		enum err er;

		diag_init(&quiet);
		buf_reset(&b);
		er = uni_rewrite_pattern_ranges(pat, n, &b, &quiet);
		if (!er)
			out->ascii = jit_compile(b.data, b.len, msg, sizeof(msg));
		else if (er == ERR_NOMEM)
			e = diag_fail(l->d, ERR_NOMEM, "out of memory");
	}
	if (!e && !literal && !getenv("NEEDLE_NO_SCAN"))
		out->scan = scan_kind_of(pat, n);
	if (!e && out->scan && !l->h->tab && scan_tab_new(&l->h->tab))
		e = diag_fail(l->d, ERR_NOMEM, "out of memory");
	buf_release(&b);
	return e;
}

/* A {"String": s} or {"Regex": r} pattern. */
static enum err compile_pattern(struct load *l, const cJSON *p, struct rx *out)
{
	const char *s = get_str(p, "String"), *re = get_str(p, "Regex");

	if (s)
		return compile(l, s, strlen(s), 1, out);
	if (re)
		return compile(l, re, strlen(re), 0, out);
	return bad(l, "pattern must be {\"String\": ...} or {\"Regex\": ...}");
}

/* ---- loading: normalizer ---------------------------------------------- */

static enum err add_norm(struct load *l, const cJSON *o, int depth)
{
	struct tok_hf *h = l->h;
	const char *t = type_of(o);
	struct norm *m;
	const cJSON *c;
	enum err e;

	if (cJSON_IsNull(o))
		return ERR_OK;
	if (!strcmp(t, "Sequence") && depth < 8) {
		if ((e = check_keys(l, o, "type normalizers", "Sequence")))
			return e;
		cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(o, "normalizers"))
			if ((e = add_norm(l, c, depth + 1)))
				return e;
		return ERR_OK;
	}
	if (strcmp(t, "NFC") && strcmp(t, "Prepend") && strcmp(t, "Replace"))
		return unsupported(l, "normalizer", t);
	if (h->nnorm == MAX_NORM)
		return unsupported(l, "normalizer", "Sequence longer than 16");
	m = &h->norm[h->nnorm++];
	if (!strcmp(t, "NFC")) {
		m->kind = NORM_NFC;
		return check_keys(l, o, "type", t);
	}
	if (!strcmp(t, "Prepend")) {
		const char *p = get_str(o, "prepend");

		m->kind = NORM_PREPEND;
		if ((e = check_keys(l, o, "type prepend", t)))
			return e;
		if (!p)
			return bad(l, "Prepend needs a 'prepend' string");
		m->n = strlen(p);
		m->s = mem_strndup(p, m->n);
		return m->s ? ERR_OK : diag_fail(l->d, ERR_NOMEM, "out of memory");
	}
	m->kind = NORM_REPLACE;
	if ((e = check_keys(l, o, "type pattern content", t)))
		return e;
	if (!get_str(o, "content"))
		return bad(l, "Replace needs a 'content' string");
	m->n = strlen(get_str(o, "content"));
	m->s = mem_strndup(get_str(o, "content"), m->n);
	if (!m->s)
		return diag_fail(l->d, ERR_NOMEM, "out of memory");
	return compile_pattern(l, cJSON_GetObjectItemCaseSensitive(o, "pattern"), &m->re);
}

/* ---- loading: pre-tokenizer ------------------------------------------- */

static enum err behavior_of(struct load *l, const char *s, enum behavior *b)
{
	static const char *names[] = {"Removed", "Isolated", "MergedWithPrevious",
				      "MergedWithNext", "Contiguous"};
	int i;

	for (i = 0; s && i < 5; i++) {
		if (!strcmp(s, names[i])) {
			*b = (enum behavior)i;
			return ERR_OK;
		}
	}
	return unsupported(l, "Split behavior", s ? s : "(none)");
}

static enum err metaspace_opts(struct load *l, const cJSON *o, struct pre *p)
{
	const char *repl = get_str(o, "replacement"), *sch = get_str(o, "prepend_scheme");
	enum err e = check_keys(l, o, "type replacement prepend_scheme split add_prefix_space "
				      "str_rep", "Metaspace");

	if (e)
		return e;
	if (!repl || !*repl || strlen(repl) > 4 || char_len(repl, strlen(repl)) != strlen(repl))
		return bad(l, "Metaspace needs a one-character 'replacement'");
	p->repl_len = strlen(repl);
	memcpy(p->repl, repl, p->repl_len);
	p->split = get_bool(o, "split", 1);
	if (!sch)
		p->scheme = get_bool(o, "add_prefix_space", 1) ? SCHEME_ALWAYS : SCHEME_NEVER;
	else if (!strcmp(sch, "always"))
		p->scheme = SCHEME_ALWAYS;
	else if (!strcmp(sch, "first"))
		p->scheme = SCHEME_FIRST;
	else if (!strcmp(sch, "never"))
		p->scheme = SCHEME_NEVER;
	else
		return unsupported(l, "Metaspace prepend_scheme", sch);
	return compile(l, repl, p->repl_len, 1, &p->re);
}

static enum err add_pre(struct load *l, const cJSON *o, int depth)
{
	struct tok_hf *h = l->h;
	const char *t = type_of(o);
	struct pre *p;
	const cJSON *c;
	enum err e;

	if (cJSON_IsNull(o))
		return ERR_OK;
	if (!strcmp(t, "Sequence") && depth < 8) {
		if ((e = check_keys(l, o, "type pretokenizers", t)))
			return e;
		cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(o, "pretokenizers"))
			if ((e = add_pre(l, c, depth + 1)))
				return e;
		return ERR_OK;
	}
	if (strcmp(t, "Split") && strcmp(t, "Digits") && strcmp(t, "ByteLevel") &&
	    strcmp(t, "Metaspace"))
		return unsupported(l, "pre-tokenizer", t);
	if (h->npre && (h->pre[h->npre - 1].kind == PRE_BYTELEVEL ||
			h->pre[h->npre - 1].kind == PRE_METASPACE))
		return unsupported(l, "pre-tokenizer order", "a pre-tokenizer after ByteLevel or Metaspace");
	if (h->npre == MAX_PRE)
		return unsupported(l, "pre-tokenizer", "Sequence longer than 16");
	p = &h->pre[h->npre++];
	if (!strcmp(t, "Split")) {
		p->kind = PRE_SPLIT;
		p->invert = get_bool(o, "invert", 0);
		if ((e = check_keys(l, o, "type pattern behavior invert", t)) ||
		    (e = behavior_of(l, get_str(o, "behavior"), &p->behavior)))
			return e;
		return compile_pattern(l, cJSON_GetObjectItemCaseSensitive(o, "pattern"), &p->re);
	}
	if (!strcmp(t, "Digits")) {
		p->kind = PRE_DIGITS;
		p->individual = get_bool(o, "individual_digits", 0);
		return check_keys(l, o, "type individual_digits", t);
	}
	if (!strcmp(t, "ByteLevel")) {
		p->kind = PRE_BYTELEVEL;
		p->add_prefix_space = get_bool(o, "add_prefix_space", 1);
		p->use_regex = get_bool(o, "use_regex", 1);
		if ((e = check_keys(l, o, "type add_prefix_space trim_offsets use_regex", t)))
			return e;
		if (p->use_regex && !h->gpt2.exact)
			return compile(l, gpt2_pattern, strlen(gpt2_pattern), 0, &h->gpt2);
		return ERR_OK;
	}
	p->kind = PRE_METASPACE;
	return metaspace_opts(l, o, p);
}

/* ---- loading: post-processor ------------------------------------------ */

static enum err add_special(struct load *l, uint32_t *ids, size_t *n, double id)
{
	if (*n == MAX_SPECIAL)
		return unsupported(l, "post-processor", "template with more than 64 ids");
	if (id < 0 || id > 4294967294.0)
		return bad(l, "bad special token id in the post-processor");
	ids[(*n)++] = (uint32_t)id;
	return ERR_OK;
}

/* TemplateProcessing's `single`: ids before and after the sequence "A". */
static enum err template(struct load *l, const cJSON *o)
{
	const cJSON *item, *specials = cJSON_GetObjectItemCaseSensitive(o, "special_tokens");
	int seen_a = 0;
	enum err e;

	if ((e = check_keys(l, o, "type single pair special_tokens", "TemplateProcessing")))
		return e;
	cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(o, "single")) {
		const cJSON *sp = cJSON_GetObjectItemCaseSensitive(item, "SpecialToken"), *tok, *id;
		const char *name = get_str(sp, "id");

		if (cJSON_GetObjectItemCaseSensitive(item, "Sequence")) {
			if (seen_a)
				return unsupported(l, "post-processor", "template with two sequences");
			seen_a = 1;
			continue;
		}
		tok = name ? cJSON_GetObjectItemCaseSensitive(specials, name) : NULL;
		if (!tok)
			return bad(l, "template names a special token missing from special_tokens");
		cJSON_ArrayForEach(id, cJSON_GetObjectItemCaseSensitive(tok, "ids")) {
			e = seen_a ? add_special(l, l->h->tail, &l->h->ntail, id->valuedouble)
				   : add_special(l, l->h->head, &l->h->nhead, id->valuedouble);
			if (e)
				return e;
		}
	}
	return ERR_OK;
}

/* BertProcessing / RobertaProcessing: cls A sep. */
static enum err cls_sep(struct load *l, const cJSON *o, const char *t)
{
	const cJSON *cls = cJSON_GetObjectItemCaseSensitive(o, "cls");
	const cJSON *sep = cJSON_GetObjectItemCaseSensitive(o, "sep");
	enum err e = check_keys(l, o, "type cls sep trim_offsets add_prefix_space", t);

	if (e)
		return e;
	if (cJSON_GetArraySize(cls) != 2 || cJSON_GetArraySize(sep) != 2)
		return bad(l, "cls and sep must be [token, id]");
	if ((e = add_special(l, l->h->head, &l->h->nhead, cJSON_GetArrayItem(cls, 1)->valuedouble)))
		return e;
	return add_special(l, l->h->tail, &l->h->ntail, cJSON_GetArrayItem(sep, 1)->valuedouble);
}

static enum err add_post(struct load *l, const cJSON *o, int depth)
{
	const char *t = type_of(o);
	const cJSON *c;
	enum err e;

	if (cJSON_IsNull(o) || !strcmp(t, "ByteLevel"))
		return ERR_OK;
	if (!strcmp(t, "Sequence") && depth < 8) {
		cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(o, "processors"))
			if ((e = add_post(l, c, depth + 1)))
				return e;
		return ERR_OK;
	}
	if (!strcmp(t, "TemplateProcessing"))
		return template(l, o);
	if (!strcmp(t, "BertProcessing") || !strcmp(t, "RobertaProcessing"))
		return cls_sep(l, o, t);
	return unsupported(l, "post-processor", t);
}

/* ---- loading: added tokens -------------------------------------------- */

static enum err trie_add(struct aset *set, const char *s, size_t n, int32_t term)
{
	int32_t node;
	size_t i;

	if (!set->nnode)
		memset(set->root, 0xFF, sizeof(set->root));
	/* worst case n new nodes and edges */
	{
		struct tnode *pn = mem_realloc(set->node, (set->nnode + n + 1) * sizeof(*pn));
		struct tedge *pe;

		if (!pn)
			return ERR_NOMEM;
		set->node = pn;
		pe = mem_realloc(set->edge, (set->nedge + n + 1) * sizeof(*pe));
		if (!pe)
			return ERR_NOMEM;
		set->edge = pe;
	}
	node = set->root[(unsigned char)s[0]];
	if (node < 0) {
		set->nfirst++;
		set->first = (unsigned char)s[0];
		node = (int32_t)set->nnode++;
		set->node[node] = (struct tnode){-1, -1};
		set->root[(unsigned char)s[0]] = node;
	}
	for (i = 1; i < n; i++) {
		int32_t e;

		for (e = set->node[node].edge; e >= 0 && set->edge[e].byte != (unsigned char)s[i];
		     e = set->edge[e].next)
			;
		if (e < 0) {
			int32_t child = (int32_t)set->nnode++;

			set->node[child] = (struct tnode){-1, -1};
			e = (int32_t)set->nedge++;
			set->edge[e] = (struct tedge){(unsigned char)s[i], child, set->node[node].edge};
			set->node[node].edge = e;
		}
		node = set->edge[e].child;
	}
	if (set->node[node].term < 0)
		set->node[node].term = term;
	return ERR_OK;
}

static void aset_free(struct aset *set)
{
	mem_free(set->node);
	mem_free(set->edge);
}

/* The id HF gives an added token (AddedVocabulary::add_tokens): the id of the
 * same content added before, else its model vocab id, else the next id after
 * the vocab and the added tokens so far. The "id" written in tokenizer.json
 * is only checked by HF (with a warning), never used. */
static uint32_t added_id(const struct tok_hf *h, const char *content, size_t n,
			 long *max_added)
{
	size_t i, vs = bpe_vocab_size(h->bpe);
	long id;

	for (i = 0; i < h->nadded; i++)
		if (h->added[i].raw_n == n && !memcmp(h->added[i].raw, content, n))
			return h->added[i].id;
	id = bpe_token_id(h->bpe, content, n);
	if (id < 0)
		id = *max_added < 0 ? (long)vs : *max_added >= (long)vs ? *max_added + 1 : (long)vs;
	if (id > *max_added)
		*max_added = id;
	return (uint32_t)id;
}

static enum err add_tokens(struct load *l, const cJSON *arr)
{
	struct tok_hf *h = l->h;
	size_t n = (size_t)cJSON_GetArraySize(arr);
	long max_added = -1;
	const cJSON *o;
	struct run r;
	enum err e = ERR_OK;

	if (cJSON_IsNull(arr) || !n)
		return ERR_OK;
	if (!cJSON_IsArray(arr))
		return bad(l, "'added_tokens' must be an array");
	h->added = mem_calloc(n, sizeof(*h->added));
	if (!h->added)
		return diag_fail(l->d, ERR_NOMEM, "out of memory");
	if ((e = run_init(&r, h, l->d)))
		goto out;
	cJSON_ArrayForEach(o, arr) {
		const char *content = get_str(o, "content");
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
		struct added *a = &h->added[h->nadded];
		const char *s;
		size_t len;

		if (!content || !cJSON_IsNumber(id) || id->valuedouble < 0 ||
		    id->valuedouble > 4294967294.0) {
			e = bad(l, "every added token needs 'content' and 'id'");
			goto out;
		}
		if ((e = check_keys(l, o, "id content single_word lstrip rstrip normalized special",
				    "added token")))
			goto out;
		if (!*content)
			continue;
		len = strlen(content);
		a->id = added_id(h, content, len, &max_added);
		a->single_word = get_bool(o, "single_word", 0);
		a->lstrip = get_bool(o, "lstrip", 0);
		a->rstrip = get_bool(o, "rstrip", 0);
		a->normalized = get_bool(o, "normalized", 1);
		a->raw = mem_strndup(content, len);
		a->raw_n = len;
		h->nadded++; /* from here tok_hf_free owns a->raw and a->s */
		s = content;
		if (a->normalized && (e = normalize(&r, content, len, &s, &len)))
			goto out;
		a->s = a->raw ? mem_strndup(s, len) : NULL;
		a->n = len;
		if (!a->s) {
			e = diag_fail(l->d, ERR_NOMEM, "out of memory");
			goto out;
		}
		if (len && trie_add(a->normalized ? &h->normed : &h->raw, a->s, a->n,
				    (int32_t)(h->nadded - 1))) {
			e = diag_fail(l->d, ERR_NOMEM, "out of memory");
			goto out;
		}
	}
out:
	run_release(&r);
	return e;
}

/* ---- loading: the model (streamed with jscan) ------------------------- */

static enum err load_vocab(struct load *l, struct jscan *j)
{
	struct buf scratch;
	int more = jscan_open(j, '{', l->d);
	enum err e = ERR_OK;

	buf_init(&scratch, BUF_MAX_DEFAULT);
	while (more > 0) {
		const char *s;
		size_t n;
		unsigned long long id;

		if ((e = jscan_string(j, &scratch, &s, &n, l->d)) ||
		    (e = jscan_expect(j, ':', l->d)) ||
		    (e = jscan_uint(j, 4294967294ULL, &id, l->d)) ||
		    (e = bpe_add_token(l->h->bpe, s, n, (uint32_t)id, l->d)))
			break;
		more = jscan_next(j, '}', l->d);
	}
	buf_release(&scratch);
	if (!e && more < 0)
		e = l->d->code;
	return e;
}

static enum err one_merge(struct load *l, struct jscan *j, struct buf *s1,
			  struct buf *s2, size_t rank)
{
	const char *a, *b, *sp;
	size_t na, nb;
	enum err e;

	if (jscan_peek(j) == '"') {
		if ((e = jscan_string(j, s1, &a, &na, l->d)))
			return e;
		if (na >= 8 && !memcmp(a, "#version", 8))
			return ERR_OK;
		sp = memchr(a, ' ', na);
		if (!sp || memchr(sp + 1, ' ', na - (size_t)(sp + 1 - a)))
			return diag_fail(l->d, ERR_INPUT,
					 "cannot load tokenizer '%s': merge %zu '%.100s' is not two "
					 "tokens separated by one space", l->path, rank, a);
		b = sp + 1;
		nb = na - (size_t)(b - a);
		na = (size_t)(sp - a);
	} else {
		if ((e = jscan_expect(j, '[', l->d)) ||
		    (e = jscan_string(j, s1, &a, &na, l->d)) ||
		    (e = jscan_expect(j, ',', l->d)) ||
		    (e = jscan_string(j, s2, &b, &nb, l->d)) ||
		    (e = jscan_expect(j, ']', l->d)))
			return e;
	}
	e = bpe_add_merge(l->h->bpe, a, na, b, nb, l->d);
	if (e)
		diag_prefix(l->d, "cannot load tokenizer '%s'", l->path);
	return e;
}

static enum err load_merges(struct load *l, struct jscan *j)
{
	struct buf s1, s2;
	int more = jscan_open(j, '[', l->d);
	size_t rank = 0;
	enum err e = ERR_OK;

	/* BPE vocabularies hold about one merge per token */
	if (bpe_reserve(l->h->bpe, 0, bpe_vocab_size(l->h->bpe)))
		return diag_fail(l->d, ERR_NOMEM, "out of memory");
	buf_init(&s1, BUF_MAX_DEFAULT);
	buf_init(&s2, BUF_MAX_DEFAULT);
	while (more > 0) {
		if ((e = one_merge(l, j, &s1, &s2, rank++)))
			break;
		more = jscan_next(j, ']', l->d);
	}
	buf_release(&s1);
	buf_release(&s2);
	if (!e && more < 0)
		e = l->d->code;
	return e;
}

/* Parses the value at j->pos with cJSON (after validating it with jscan). */
static enum err sub_json(struct load *l, struct jscan *j, cJSON **out)
{
	size_t start;
	enum err e = jscan_skip(j, &start, l->d);

	if (e)
		return e;
	*out = cJSON_ParseWithLength(j->s + start, j->pos - start);
	return *out ? ERR_OK : diag_fail(l->d, ERR_NOMEM, "out of memory");
}

static enum err model_opts(struct load *l, const cJSON *o, struct bpe_opts *bo)
{
	const char *t = type_of(o);
	const cJSON *v;
	enum err e;

	if (*t && strcmp(t, "BPE"))
		return unsupported(l, "model", t);
	if ((e = check_keys(l, o, "type dropout unk_token continuing_subword_prefix "
				  "end_of_word_suffix fuse_unk byte_fallback ignore_merges",
			    "BPE")))
		return e;
	v = cJSON_GetObjectItemCaseSensitive(o, "dropout");
	if (v && !cJSON_IsNull(v) && !(cJSON_IsNumber(v) && v->valuedouble == 0))
		return unsupported(l, "BPE option", "dropout");
	if (get_str(o, "continuing_subword_prefix") && *get_str(o, "continuing_subword_prefix"))
		return unsupported(l, "BPE option", "continuing_subword_prefix");
	if (get_str(o, "end_of_word_suffix") && *get_str(o, "end_of_word_suffix"))
		return unsupported(l, "BPE option", "end_of_word_suffix");
	bo->fuse_unk = get_bool(o, "fuse_unk", 0);
	bo->byte_fallback = get_bool(o, "byte_fallback", 0);
	bo->ignore_merges = get_bool(o, "ignore_merges", 0);
	bo->unk = get_str(o, "unk_token");
	bo->unk_len = bo->unk ? strlen(bo->unk) : 0;
	return ERR_OK;
}

static enum err load_model(struct load *l, struct jscan *j)
{
	struct tok_hf *h = l->h;
	cJSON *opts = cJSON_CreateObject(), *v = NULL;
	struct buf key;
	struct bpe_opts bo = {0};
	int more, vocab_seen = 0;
	size_t merges_at = 0;
	enum err e;

	buf_init(&key, BUF_MAX_DEFAULT);
	e = opts ? bpe_new(h->npre && h->pre[h->npre - 1].kind == PRE_BYTELEVEL, &h->bpe, l->d)
		 : diag_fail(l->d, ERR_NOMEM, "out of memory");
	more = e ? -1 : jscan_open(j, '{', l->d);
	while (more > 0) {
		const char *k;
		size_t n;

		if ((e = jscan_string(j, &key, &k, &n, l->d)) || (e = jscan_expect(j, ':', l->d)))
			break;
		if (n == 5 && !memcmp(k, "vocab", 5)) {
			/* real tokenizer.json files spend 50-80 bytes per token */
			if (bpe_reserve(h->bpe, (j->len - j->pos) / 64, 0))
				e = diag_fail(l->d, ERR_NOMEM, "out of memory");
			else
				e = load_vocab(l, j);
			vocab_seen = 1;
		} else if (n == 6 && !memcmp(k, "merges", 6)) {
			if (vocab_seen)
				e = load_merges(l, j);
			else
				e = jscan_skip(j, &merges_at, l->d);
		} else {
			char *name = mem_strndup(k, n);
			struct json_build jb;

			json_build_init(&jb);
			e = name ? sub_json(l, j, &v) : diag_fail(l->d, ERR_NOMEM, "out of memory");
			if (!e) {
				json_add_item(&jb, opts, name, v);
				e = json_build_end(&jb, NULL, "the model options", l->d);
			}
			mem_free(name);
		}
		if (e)
			break;
		more = jscan_next(j, '}', l->d);
	}
	if (!e && more < 0)
		e = l->d->code;
	if (!e && !vocab_seen)
		e = bad(l, "the model has no 'vocab'");
	if (!e && merges_at) {
		size_t end = j->pos;

		j->pos = merges_at;
		e = load_merges(l, j);
		j->pos = end;
	}
	if (!e)
		e = model_opts(l, opts, &bo);
	if (!e && (e = bpe_finish(h->bpe, &bo, l->d)))
		diag_prefix(l->d, "cannot load tokenizer '%s'", l->path);
	cJSON_Delete(opts);
	buf_release(&key);
	return e;
}

/* ---- loading: top level ----------------------------------------------- */

struct top {
	cJSON *normalizer, *pre, *post, *added;
	int have_model, have_pre;
	size_t model_at;
};

/* sub_json into `*slot`, dropping what an earlier occurrence of the member put
 * there: the tokenizers crate's TokenizerVisitor keeps the last one. */
static enum err top_json(struct load *l, struct jscan *j, cJSON **slot)
{
	cJSON_Delete(*slot);
	*slot = NULL;
	return sub_json(l, j, slot);
}

static enum err top_member(struct load *l, struct jscan *j, const char *k,
			   size_t n, struct top *t)
{
	cJSON *v = NULL;
	enum err e;

#define IS(name) (n == sizeof(name) - 1 && !memcmp(k, name, n))
	/* A repeated model or pre_tokenizer would be built twice (the crate keeps
	 * the last); refused rather than counted wrong. */
	if ((IS("model") && t->have_model) || (IS("pre_tokenizer") && t->have_pre))
		return unsupported(l, "repeated field", IS("model") ? "model" : "pre_tokenizer");
	if (IS("model")) {
		t->have_model = 1;
		if (t->have_pre)
			return load_model(l, j);
		return jscan_skip(j, &t->model_at, l->d);
	}
	if (IS("version") || IS("decoder"))
		return jscan_skip(j, NULL, l->d);
	if (IS("normalizer"))
		return top_json(l, j, &t->normalizer);
	if (IS("pre_tokenizer")) {
		t->have_pre = 1;
		if ((e = sub_json(l, j, &t->pre)))
			return e;
		return add_pre(l, t->pre, 0);
	}
	if (IS("post_processor"))
		return top_json(l, j, &t->post);
	if (IS("added_tokens"))
		return top_json(l, j, &t->added);
	if (IS("truncation") || IS("padding")) {
		if ((e = sub_json(l, j, &v)))
			return e;
		e = cJSON_IsNull(v) ? ERR_OK : unsupported(l, "option", IS("padding") ? "padding" : "truncation");
		cJSON_Delete(v);
		return e;
	}
#undef IS
	{
		char name[128];

		snprintf(name, sizeof(name), "%.*s", (int)(n > 100 ? 100 : n), k);
		return unsupported(l, "field", name);
	}
}

static enum err load_top(struct load *l, const char *json, size_t len)
{
	struct jscan j;
	struct top t = {0};
	struct buf key;
	int more;
	enum err e = ERR_OK;

	buf_init(&key, BUF_MAX_DEFAULT);
	jscan_init(&j, json, len, l->path);
	more = jscan_open(&j, '{', l->d);
	while (more > 0) {
		const char *k;
		size_t n;

		if ((e = jscan_string(&j, &key, &k, &n, l->d)) || (e = jscan_expect(&j, ':', l->d)) ||
		    (e = top_member(l, &j, k, n, &t)))
			break;
		more = jscan_next(&j, '}', l->d);
	}
	if (!e && more < 0)
		e = l->d->code;
	if (!e && jscan_peek(&j) >= 0)
		e = jscan_fail(&j, l->d, "unexpected data after the JSON document");
	if (!e && !t.have_model)
		e = bad(l, "no 'model'");
	if (!e && !t.have_pre) {
		t.have_pre = 1;
		j.pos = t.model_at;
		e = load_model(l, &j);
	}
	if (!e && t.normalizer)
		e = add_norm(l, t.normalizer, 0);
	if (!e && t.post)
		e = add_post(l, t.post, 0);
	if (!e && t.added)
		e = add_tokens(l, t.added);
	cJSON_Delete(t.normalizer);
	cJSON_Delete(t.pre);
	cJSON_Delete(t.post);
	cJSON_Delete(t.added);
	buf_release(&key);
	return e;
}

enum err tok_hf_load(const char *path, const char *json, size_t len,
		     struct tok_hf **out, struct diag *d)
{
	struct load l = {path, NULL, d};
	enum err e;

	*out = NULL;
	l.h = mem_calloc(1, sizeof(*l.h));
	if (!l.h)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	e = load_top(&l, json, len);
	if (e) {
		tok_hf_free(l.h);
		return e;
	}
	*out = l.h;
	return ERR_OK;
}

void tok_hf_free(struct tok_hf *h)
{
	size_t i;

	if (!h)
		return;
	bpe_free(h->bpe);
	for (i = 0; i < h->npre; i++)
		rx_free(&h->pre[i].re);
	for (i = 0; i < h->nnorm; i++) {
		rx_free(&h->norm[i].re);
		mem_free(h->norm[i].s);
	}
	rx_free(&h->gpt2);
	scan_tab_free(h->tab);
	for (i = 0; i < h->nadded; i++) {
		mem_free(h->added[i].s);
		mem_free(h->added[i].raw);
	}
	mem_free(h->added);
	aset_free(&h->raw);
	aset_free(&h->normed);
	mem_free(h);
}
