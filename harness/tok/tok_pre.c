#include "tok_pre.h"

#include <stdint.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "tok_int.h"
#include "uni.h"
#include "base/utf8.h"

/* The GPT-2 pattern of ByteLevel with use_regex (pre_tokenizers/byte_level.rs). */
static const char gpt2_pattern[] =
	"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

/* Every numeric character is its own match (HF's Fn(char) -> bool pattern). */
static enum err digit_items(struct tok_run *r, const char *s, size_t n, struct tok_pieces *st)
{
	size_t i = 0, last = 0;

	st->n = 0;
	while (i < n) {
		uint32_t cp;
		size_t k = utf8_decode(s + i, n - i, &cp);

		if (uni_is_numeric(cp)) {
			if (last < i && tok_pieces_push(st, last, i, 0))
				return tok_run_nomem(r);
			if (tok_pieces_push(st, i, i + k, 1))
				return tok_run_nomem(r);
			last = i + k;
		}
		i += k;
	}
	if (last < n && tok_pieces_push(st, last, n, 0))
		return tok_run_nomem(r);
	return ERR_OK;
}

/* Rewrites st->it in place into the pieces kept by `b` (NormalizedString::
 * split); `match` is set on pieces to drop. */
static void apply_behavior(struct tok_pieces *st, enum tok_behavior b)
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
			struct tok_item it = st->it[i];
			int glue = b == B_CONTIGUOUS ? it.match == prev : it.match && !prev;

			if (glue && k)
				st->it[k - 1].b = it.b;
			else
				st->it[k++] = (struct tok_item){it.a, it.b, 0};
			prev = it.match;
		}
		break;
	case B_MERGED_NEXT:
		/* built right to left, at the end of the array */
		k = st->n;
		for (i = st->n; i-- > 0;) {
			struct tok_item it = st->it[i];

			if (it.match && !prev && k < st->n)
				st->it[k].a = it.a;
			else
				st->it[--k] = (struct tok_item){it.a, it.b, 0};
			prev = it.match;
		}
		memmove(st->it, st->it + k, (st->n - k) * sizeof(*st->it));
		k = st->n - k;
		break;
	}
	st->n = k;
}



/* Runs stage k+1 on every kept, non-empty piece of stage k. */
static enum err descend(struct tok_run *r, size_t k, const char *s, int first)
{
	struct tok_pieces *st = &r->st[k];
	size_t i;
	enum err e;

	for (i = 0; i < st->n; i++) {
		struct tok_item it = st->it[i];

		if (it.match || it.a == it.b)
			continue;
		if (r->h->pre[k].kind == PRE_BYTELEVEL || r->h->pre[k].kind == PRE_METASPACE)
			e = tok_run_model(r, s + it.a, it.b - it.a);
		else
			e = tok_pre_run(r, k + 1, s + it.a, it.b - it.a, first && it.a == 0);
		if (e)
			return e;
	}
	return ERR_OK;
}

#define SCAN_BATCH 256 /* matches per scan_find_many call */
_Static_assert(SCAN_BATCH <= BPE_BATCH_MAX, "a batch of matches is one bpe_count_many call");

static enum err byte_level(struct tok_run *r, size_t k, const char *s, size_t n)
{
	const struct tok_pre *p = &r->h->pre[k];
	struct tok_pieces *st = &r->st[k];

	if (p->add_prefix_space && s[0] != ' ') {
		buf_reset(&st->s);
		if (buf_putc(&st->s, ' ') || buf_append(&st->s, s, n))
			return tok_run_nomem(r);
		s = st->s.data;
		n = st->s.len;
	}
	if (!p->use_regex)
		return tok_run_model(r, s, n);
	if (tok_pat_split(&r->h->gpt2, r->h->tab, r->m, s, n, 0, st, r->d))
		return r->d->code;
	apply_behavior(st, B_ISOLATED);
	return descend(r, k, s, 0);
}

static enum err metaspace(struct tok_run *r, size_t k, const char *s, size_t n, int first)
{
	const struct tok_pre *p = &r->h->pre[k];
	struct tok_pieces *st = &r->st[k];
	int prepend = p->scheme == SCHEME_ALWAYS || (p->scheme == SCHEME_FIRST && first);
	size_t i;

	buf_reset(&st->s);
	if (prepend && s[0] != ' ' &&
	    !(n >= p->repl_len && !memcmp(s, p->repl, p->repl_len)) &&
	    buf_append(&st->s, p->repl, p->repl_len))
		return tok_run_nomem(r);
	for (i = 0; i < n; i++) {
		enum err e = s[i] == ' ' ? buf_append(&st->s, p->repl, p->repl_len)
					 : buf_putc(&st->s, s[i]);

		if (e)
			return tok_run_nomem(r);
	}
	if (!p->split)
		return tok_run_model(r, st->s.data, st->s.len);
	if (tok_pat_split(&p->re, r->h->tab, r->m, st->s.data, st->s.len, 0, st, r->d))
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

/* A Split with a hand-written scanner whose pieces go straight to the
 * model: Isolated (every match and every gap is a piece; invert changes
 * nothing), or Removed with invert (the matches are the pieces, the gaps
 * are dropped): `gaps` says which. */
static enum err scan_to_model(struct tok_run *r, const struct tok_pre *p, const char *s,
			      size_t n, int gaps)
{
	size_t prev = 0, ms[SCAN_BATCH], me[SCAN_BATCH], k, j;
	enum err e;

	while ((k = scan_find_many(p->re.scan, r->h->tab, s, n, prev, ms, me, SCAN_BATCH))) {
		for (j = 0; j < k; j++) {
			if (gaps && prev != ms[j] && (e = tok_run_model(r, s + prev, ms[j] - prev)))
				return e;
			if ((e = tok_run_model(r, s + ms[j], me[j] - ms[j])))
				return e;
			prev = me[j];
		}
	}
	return gaps && prev != n ? tok_run_model(r, s + prev, n - prev) : ERR_OK;
}

/* Whether stage k is a Split with a hand-written scanner whose pieces are
 * what scan_to_model takes (Isolated, or Removed with invert). */
static int scan_split_ok(const struct tok_pre *p)
{
	return p->kind == PRE_SPLIT && p->re.scan &&
	       (p->behavior == B_ISOLATED || (p->behavior == B_REMOVED && p->invert));
}

/* Whether stages k.. are such Splits (one or more) and then the model. */
static int scan_chain_ok(const struct tok_hf *h, size_t k)
{
	return k < h->npre && scan_split_ok(&h->pre[k]) &&
	       (feeds_model(h, k + 1) || scan_chain_ok(h, k + 1));
}

/* The pieces of a chain of scanner Splits waiting for bpe_count_many:
 * t[ms[i]..me[i]) (i < k) of the chain's text t[0..n). */
struct count_batch {
	const char *t;
	size_t n, k, ms[SCAN_BATCH], me[SCAN_BATCH];
};

static enum err batch_flush(struct tok_run *r, struct count_batch *cb)
{
	enum err e = bpe_count_many(r->h->bpe, r->w, cb->t, cb->n, cb->ms, cb->me, cb->k,
				    &r->count);

	cb->k = 0;
	return e;
}

/* Whether the m matches ms[i]..me[i] follow one another from `at` with no
 * gap (a loop without branches: nearly every batch has none). */
static int no_gaps(size_t at, const size_t *ms, const size_t *me, size_t m)
{
	size_t j, d = ms[0] ^ at;

	for (j = 1; j < m; j++)
		d |= ms[j] ^ me[j - 1];
	return !d;
}

/* The last Split p of a chain on t[a..b): its matches scanned straight into
 * the batch (a scanner looks at no byte before the position it starts
 * from, so scanning t[0..b) from a finds the matches of t[a..b), already
 * at their offsets in t), its gaps (`gaps`: Isolated; rare: the scanners
 * of cl100k and o200k leave none) counted one at a time. */
static enum err chain_last(struct tok_run *r, const struct tok_pre *p, struct count_batch *cb,
			   size_t a, size_t b, int gaps)
{
	size_t prev = a, m, j, room, *ms, *me;
	enum err e = ERR_OK;

	for (;;) {
		if (cb->k == SCAN_BATCH && (e = batch_flush(r, cb)))
			return e;
		room = SCAN_BATCH - cb->k;
		ms = cb->ms + cb->k, me = cb->me + cb->k;
		m = scan_find_many(p->re.scan, r->h->tab, cb->t, b, prev, ms, me, room);
		if (gaps && m && !no_gaps(prev, ms, me, m)) {
			for (j = 0; j < m; prev = me[j++])
				if (prev != ms[j] &&
				    (e = bpe_count(r->h->bpe, r->w, cb->t + prev, ms[j] - prev, &r->count)))
					return e;
		}
		if (m)
			prev = me[m - 1];
		cb->k += m;
		if (m < room) /* no match left */
			break;
	}
	return gaps && prev != b ? bpe_count(r->h->bpe, r->w, cb->t + prev, b - prev, &r->count)
				 : ERR_OK;
}

/* Whether stages k and k + 1 are DeepSeek V3's digits and CJK Splits, both
 * Isolated, before the chain's last Split (scan_ds_split2 runs the two). */
static int ds_split2_ok(const struct tok_hf *h, size_t k)
{
	const struct tok_pre *p = &h->pre[k];

	return k + 2 < h->npre && p[0].re.scan == SCAN_DIGITS3 && p[0].behavior == B_ISOLATED &&
	       p[1].kind == PRE_SPLIT && p[1].re.scan == SCAN_CJK && p[1].behavior == B_ISOLATED &&
	       scan_split_ok(&p[2]) && feeds_model(h, k + 3);
}

/* Piece t[a..b) into the batch. */
static enum err batch_add(struct tok_run *r, struct count_batch *cb, size_t a, size_t b)
{
	enum err e;

	if (cb->k == SCAN_BATCH && (e = batch_flush(r, cb)))
		return e;
	cb->ms[cb->k] = a;
	cb->me[cb->k++] = b;
	return ERR_OK;
}

/* Stages k, k + 1 (ds_split2_ok) and the last of a chain on t[a..b): each
 * piece of the first two, found in one pass, the last one's subject; but
 * with DeepSeek's last pattern, Isolated, a digit match and a CJK run of
 * ideographs only go to the batch whole, since that pattern leaves each of
 * them one piece: it matches nothing in 1-3 \p{N} code points (each of its
 * alternatives needs a letter, mark, punctuation, symbol or space,
 * categories apart from N), so leaves it one gap, and it matches a run of
 * letters starting with a letter whole ([\p{L}\p{M}]+ after the empty
 * optional prefix). */
static enum err chain_ds(struct tok_run *r, size_t k, struct count_batch *cb, size_t a,
			 size_t b)
{
	const struct tok_pre *last = &r->h->pre[k + 2];
	size_t prev = 0, ms, me;
	int gaps = last->behavior == B_ISOLATED, kind;
	int whole = gaps && last->re.scan == SCAN_DS_MAIN;
	enum err e = ERR_OK;

	while (!e && (kind = scan_ds_split2(r->h->tab, cb->t + a, b - a, prev, &ms, &me))) {
		if (prev != ms)
			e = chain_last(r, last, cb, a + prev, a + ms, gaps);
		if (!e && kind != 2 && whole)
			e = batch_add(r, cb, a + ms, a + me);
		else if (!e)
			e = chain_last(r, last, cb, a + ms, a + me, gaps);
		prev = me;
	}
	if (!e && prev != b - a)
		e = chain_last(r, last, cb, a + prev, b, gaps);
	return e;
}

/* Stages k.. of a chain (scan_chain_ok) on t[a..b) (non-empty), as
 * tok_pre_run runs them, each piece of stage k its own subject for stage
 * k + 1; but the pieces of the last stage, from every subject, fill one
 * batch after another. */
static enum err chain_run(struct tok_run *r, size_t k, struct count_batch *cb, size_t a,
			  size_t b)
{
	const struct tok_pre *p = &r->h->pre[k];
	size_t prev = 0, ms[SCAN_BATCH], me[SCAN_BATCH], m, j;
	int gaps = p->behavior == B_ISOLATED;
	enum err e = ERR_OK;

	if (feeds_model(r->h, k + 1))
		return chain_last(r, p, cb, a, b, gaps);
	if (ds_split2_ok(r->h, k))
		return chain_ds(r, k, cb, a, b);
	while (!e && (m = scan_find_many(p->re.scan, r->h->tab, cb->t + a, b - a, prev, ms, me,
					 SCAN_BATCH))) {
		for (j = 0; j < m && !e; prev = me[j++]) {
			if (gaps && prev != ms[j])
				e = chain_run(r, k + 1, cb, a + prev, a + ms[j]);
			if (!e)
				e = chain_run(r, k + 1, cb, a + ms[j], a + me[j]);
		}
	}
	if (!e && gaps && prev != b - a)
		e = chain_run(r, k + 1, cb, a + prev, b);
	return e;
}

/* scan_to_model for counts, the hot loop of `needle count`, for a chain of
 * one or more scanner Splits (DeepSeek's three, or the one of cl100k and
 * o200k): no detour via tok_pieces, descend and tok_run_model, and the
 * pieces counted a full batch at a time (bpe_count_many), however short
 * the earlier stages' pieces are. */
static enum err scan_to_count(struct tok_run *r, size_t k, const char *s, size_t n)
{
	struct count_batch cb;
	enum err e;

	cb.t = s, cb.n = n, cb.k = 0;
	e = chain_run(r, k, &cb, 0, n);
	if (!e && cb.k)
		e = batch_flush(r, &cb);
	return e ? diag_fail(r->d, e, "out of memory") : ERR_OK;
}

/* Pre-tokenizer k on piece s[0..n) (non-empty); `first` says the piece
 * starts at offset 0 of the original text (Metaspace prepend_scheme first). */
enum err tok_pre_run(struct tok_run *r, size_t k, const char *s, size_t n, int first)
{
	const struct tok_pre *p;

	if (k == r->h->npre)
		return tok_run_model(r, s, n);
	p = &r->h->pre[k];
	switch (p->kind) {
	case PRE_SPLIT:
		if (r->count_only && scan_chain_ok(r->h, k))
			return scan_to_count(r, k, s, n);
		if (scan_split_ok(p) && feeds_model(r->h, k + 1))
			return scan_to_model(r, p, s, n, p->behavior == B_ISOLATED);
		if (tok_pat_split(&p->re, r->h->tab, r->m, s, n, p->invert, &r->st[k], r->d))
			return r->d->code;
		if (p->behavior == B_ISOLATED && feeds_model(r->h, k + 1)) {
			/* the common last Split (DeepSeek, Llama 3, Qwen, o200k):
			 * every item is a piece, straight to the model */
			size_t i;

			for (i = 0; i < r->st[k].n; i++) {
				struct tok_item it = r->st[k].it[i];
				enum err e = tok_run_model(r, s + it.a, it.b - it.a);

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


static enum err behavior_of(struct tok_load *l, const char *s, enum tok_behavior *b)
{
	static const char *names[] = {"Removed", "Isolated", "MergedWithPrevious",
				      "MergedWithNext", "Contiguous"};
	int i;

	for (i = 0; s && i < 5; i++) {
		if (!strcmp(s, names[i])) {
			*b = (enum tok_behavior)i;
			return ERR_OK;
		}
	}
	return tok_read_unsupported(l, "Split behavior", s ? s : "(none)");
}

static enum err metaspace_opts(struct tok_load *l, const cJSON *o, struct tok_pre *p)
{
	const char *repl = tok_read_str(o, "replacement"), *sch = tok_read_str(o, "prepend_scheme");
	enum err e = tok_read_keys(l, o, "type replacement prepend_scheme split add_prefix_space "
				      "str_rep", "Metaspace");

	if (e)
		return e;
	if (!repl || !*repl || strlen(repl) > 4 || tok_pat_char_len(repl, strlen(repl)) != strlen(repl))
		return tok_read_bad(l, "Metaspace needs a one-character 'replacement'");
	p->repl_len = strlen(repl);
	memcpy(p->repl, repl, p->repl_len);
	p->split = tok_read_bool(o, "split", 1);
	if (!sch)
		p->scheme = tok_read_bool(o, "add_prefix_space", 1) ? SCHEME_ALWAYS : SCHEME_NEVER;
	else if (!strcmp(sch, "always"))
		p->scheme = SCHEME_ALWAYS;
	else if (!strcmp(sch, "first"))
		p->scheme = SCHEME_FIRST;
	else if (!strcmp(sch, "never"))
		p->scheme = SCHEME_NEVER;
	else
		return tok_read_unsupported(l, "Metaspace prepend_scheme", sch);
	return tok_read_compile(l, repl, p->repl_len, 1, &p->re);
}

enum err tok_pre_parse(struct tok_load *l, const cJSON *o, int depth)
{
	struct tok_hf *h = l->h;
	const char *t = tok_read_type(o);
	struct tok_pre *p;
	const cJSON *c;
	enum err e;

	if (cJSON_IsNull(o))
		return ERR_OK;
	if (!strcmp(t, "Sequence") && depth < 8) {
		if ((e = tok_read_keys(l, o, "type pretokenizers", t)))
			return e;
		cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(o, "pretokenizers"))
			if ((e = tok_pre_parse(l, c, depth + 1)))
				return e;
		return ERR_OK;
	}
	if (strcmp(t, "Split") && strcmp(t, "Digits") && strcmp(t, "ByteLevel") &&
	    strcmp(t, "Metaspace"))
		return tok_read_unsupported(l, "pre-tokenizer", t);
	if (h->npre && (h->pre[h->npre - 1].kind == PRE_BYTELEVEL ||
			h->pre[h->npre - 1].kind == PRE_METASPACE))
		return tok_read_unsupported(l, "pre-tokenizer order", "a pre-tokenizer after ByteLevel or Metaspace");
	if (h->npre == TOK_PRE_MAX)
		return tok_read_unsupported(l, "pre-tokenizer", "Sequence longer than 16");
	p = &h->pre[h->npre++];
	if (!strcmp(t, "Split")) {
		p->kind = PRE_SPLIT;
		p->invert = tok_read_bool(o, "invert", 0);
		if ((e = tok_read_keys(l, o, "type pattern behavior invert", t)) ||
		    (e = behavior_of(l, tok_read_str(o, "behavior"), &p->behavior)))
			return e;
		return tok_read_pattern(l, cJSON_GetObjectItemCaseSensitive(o, "pattern"), &p->re);
	}
	if (!strcmp(t, "Digits")) {
		p->kind = PRE_DIGITS;
		p->individual = tok_read_bool(o, "individual_digits", 0);
		return tok_read_keys(l, o, "type individual_digits", t);
	}
	if (!strcmp(t, "ByteLevel")) {
		p->kind = PRE_BYTELEVEL;
		p->add_prefix_space = tok_read_bool(o, "add_prefix_space", 1);
		p->use_regex = tok_read_bool(o, "use_regex", 1);
		if ((e = tok_read_keys(l, o, "type add_prefix_space trim_offsets use_regex", t)))
			return e;
		if (p->use_regex && !h->gpt2.exact)
			return tok_read_compile(l, gpt2_pattern, strlen(gpt2_pattern), 0, &h->gpt2);
		return ERR_OK;
	}
	p->kind = PRE_METASPACE;
	return metaspace_opts(l, o, p);
}
