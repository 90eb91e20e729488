#include "tok_added.h"

#include <string.h>

#include <cjson/cJSON.h>

#include "base/mem.h"
#include "tok_int.h"
#include "uni.h"
#include "base/utf8.h"

/* Longest added token of `set` starting at s[i]; returns its end, 0 if none. */
static size_t longest_at(const struct tok_aset *set, const char *s, size_t n, size_t i,
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
	utf8_decode(s + k, i - k, &cp);
	return uni_is_word(cp);
}

static int word_after(const char *s, size_t n, size_t i)
{
	uint32_t cp;

	if (i >= n)
		return 0;
	utf8_decode(s + i, n - i, &cp);
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
		utf8_decode(s + k, i - k, &cp);
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
		size_t k = utf8_decode(s + i, n - i, &cp);

		if (!uni_is_space(cp))
			break;
		i += k;
	}
	return i;
}

static enum err gap(struct tok_run *r, int level, const char *s, size_t n, int first);

/* HF's AddedVocabulary::find_matches + split_with_indices over s[0..n):
 * leftmost-longest matches; single_word discards without retry; lstrip and
 * rstrip absorb whitespace; the search resumes at the end of the match
 * proper. Gaps go to `gap` at `level`. */
static enum err split_added(struct tok_run *r, const struct tok_aset *set, int level,
			    const char *s, size_t n, int first)
{
	const struct tok_hf *h = r->h;
	size_t pos = 0, start_offset = 0;
	enum err e;

	while (set->nnode && pos < n) {
		size_t start, stop, end;
		int32_t term = -1;
		const struct tok_added *a;

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
		if ((e = tok_run_emit(r, a->id)))
			return e;
		start_offset = stop;
	}
	if (start_offset < n)
		return gap(r, level, s + start_offset, n - start_offset,
			   first && start_offset == 0);
	return ERR_OK;
}

static enum err gap(struct tok_run *r, int level, const char *s, size_t n, int first)
{
	const char *ns;
	size_t nn;

	if (level == 1)
		return tok_pre_run(r, 0, s, n, first);
	if (tok_norm_apply(r, s, n, &ns, &nn))
		return r->d->code;
	if (!nn)
		return ERR_OK;
	return split_added(r, &r->h->normed, 1, ns, nn, first);
}


static enum err trie_add(struct tok_aset *set, const char *s, size_t n, int32_t term)
{
	int32_t node;
	size_t i;

	if (!set->nnode)
		memset(set->root, 0xFF, sizeof(set->root));
	/* worst case n new nodes and edges */
	while (set->nnode + n + 1 > set->node_cap) {
		struct tok_tnode *pn = mem_grow(set->node, &set->node_cap, sizeof(*pn), 256);

		if (!pn)
			return ERR_NOMEM;
		set->node = pn;
	}
	while (set->nedge + n + 1 > set->edge_cap) {
		struct tok_tedge *pe = mem_grow(set->edge, &set->edge_cap, sizeof(*pe), 256);

		if (!pe)
			return ERR_NOMEM;
		set->edge = pe;
	}
	node = set->root[(unsigned char)s[0]];
	if (node < 0) {
		set->nfirst++;
		set->first = (unsigned char)s[0];
		node = (int32_t)set->nnode++;
		set->node[node] = (struct tok_tnode){-1, -1};
		set->root[(unsigned char)s[0]] = node;
	}
	for (i = 1; i < n; i++) {
		int32_t e;

		for (e = set->node[node].edge; e >= 0 && set->edge[e].byte != (unsigned char)s[i];
		     e = set->edge[e].next)
			;
		if (e < 0) {
			int32_t child = (int32_t)set->nnode++;

			set->node[child] = (struct tok_tnode){-1, -1};
			e = (int32_t)set->nedge++;
			set->edge[e] = (struct tok_tedge){(unsigned char)s[i], child, set->node[node].edge};
			set->node[node].edge = e;
		}
		node = set->edge[e].child;
	}
	if (set->node[node].term < 0)
		set->node[node].term = term;
	return ERR_OK;
}

void tok_aset_release(struct tok_aset *set)
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

enum err tok_added_parse(struct tok_load *l, const cJSON *arr)
{
	struct tok_hf *h = l->h;
	size_t n = (size_t)cJSON_GetArraySize(arr);
	long max_added = -1;
	const cJSON *o;
	struct tok_run r;
	enum err e = ERR_OK;

	if (cJSON_IsNull(arr) || !n)
		return ERR_OK;
	if (!cJSON_IsArray(arr))
		return tok_read_bad(l, "'added_tokens' must be an array");
	h->added = mem_calloc(n, sizeof(*h->added));
	if (!h->added)
		return diag_fail(l->d, ERR_NOMEM, "out of memory");
	if ((e = tok_run_init(&r, h, l->d)))
		goto out;
	cJSON_ArrayForEach(o, arr) {
		const char *content = tok_read_str(o, "content");
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
		struct tok_added *a = &h->added[h->nadded];
		const char *s;
		size_t len;

		if (!content || !cJSON_IsNumber(id) || id->valuedouble < 0 ||
		    id->valuedouble > 4294967294.0) {
			e = tok_read_bad(l, "every added token needs 'content' and 'id'");
			goto out;
		}
		if ((e = tok_read_keys(l, o, "id content single_word lstrip rstrip normalized special",
				    "added token")))
			goto out;
		if (!*content)
			continue;
		len = strlen(content);
		a->id = added_id(h, content, len, &max_added);
		a->single_word = tok_read_bool(o, "single_word", 0);
		a->lstrip = tok_read_bool(o, "lstrip", 0);
		a->rstrip = tok_read_bool(o, "rstrip", 0);
		a->normalized = tok_read_bool(o, "normalized", 1);
		a->raw = mem_strndup(content, len);
		a->raw_n = len;
		h->nadded++; /* from here tok_hf_free owns a->raw and a->s */
		s = content;
		if (a->normalized && (e = tok_norm_apply(&r, content, len, &s, &len)))
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
	tok_run_release(&r);
	return e;
}

enum err tok_added_run(struct tok_run *r, const char *text, size_t len)
{
	return len ? split_added(r, &r->h->raw, 0, text, len, 1) : ERR_OK;
}

enum err tok_added_count(const struct tok_hf *h, const char *text, size_t len, size_t *count,
			 struct diag *d)
{
	struct tok_run r;
	enum err e = tok_run_init(&r, h, d);

	r.count_only = 1;
	if (!e)
		e = tok_added_run(&r, text, len);
	*count = r.count;
	tok_run_release(&r);
	return e;
}

/* ---- the binary form, for the cache ------------------------------------ */

enum { F_LSTRIP = 1, F_RSTRIP = 2, F_SINGLE_WORD = 4, F_NORMALIZED = 8 };

static enum err put32(struct buf *out, size_t v)
{
	uint32_t x = (uint32_t)v;

	return buf_append(out, &x, 4);
}

enum err tok_added_save(const struct tok_hf *h, struct buf *out)
{
	size_t i;
	enum err e = put32(out, h->nadded);

	for (i = 0; !e && i < h->nadded; i++) {
		const struct tok_added *a = &h->added[i];

		if ((e = put32(out, a->id)) ||
		    (e = put32(out, (a->lstrip ? F_LSTRIP : 0) | (a->rstrip ? F_RSTRIP : 0) |
					    (a->single_word ? F_SINGLE_WORD : 0) |
					    (a->normalized ? F_NORMALIZED : 0))) ||
		    (e = put32(out, a->raw_n)) || (e = put32(out, a->n)) ||
		    (e = buf_append(out, a->raw, a->raw_n)) || (e = buf_append(out, a->s, a->n)))
			break;
	}
	return e;
}

/* The next 4-byte value of p[0..n) at *at, 0 past the end. */
static int take32(const char *p, size_t n, size_t *at, uint32_t *v)
{
	if (n - *at < 4)
		return 0;
	memcpy(v, p + *at, 4);
	*at += 4;
	return 1;
}

/* One token at *at into a (which then owns its strings). */
static enum err load_one(const char *p, size_t n, size_t *at, struct tok_added *a)
{
	uint32_t id, flags, raw_n, len;

	if (!take32(p, n, at, &id) || !take32(p, n, at, &flags) || !take32(p, n, at, &raw_n) ||
	    !take32(p, n, at, &len) || flags > 15 || !raw_n || raw_n > n - *at ||
	    len > n - *at - raw_n)
		return ERR_INPUT;
	a->id = id;
	a->lstrip = !!(flags & F_LSTRIP);
	a->rstrip = !!(flags & F_RSTRIP);
	a->single_word = !!(flags & F_SINGLE_WORD);
	a->normalized = !!(flags & F_NORMALIZED);
	a->raw = mem_strndup(p + *at, raw_n);
	a->s = mem_strndup(p + *at + raw_n, len);
	a->raw_n = raw_n;
	a->n = len;
	*at += raw_n + len;
	return a->raw && a->s ? ERR_OK : ERR_NOMEM;
}

enum err tok_added_load(struct tok_hf *h, const char *p, size_t n)
{
	uint32_t count;
	size_t at = 0, i;
	enum err e = ERR_OK;

	if (!take32(p, n, &at, &count) || count > n / 16)
		return ERR_INPUT;
	if (count && !(h->added = mem_calloc(count, sizeof(*h->added))))
		return ERR_NOMEM;
	for (i = 0; !e && i < count; i++) {
		struct tok_added *a = &h->added[i];

		h->nadded++; /* from here tok_hf_free owns a->raw and a->s */
		if (!(e = load_one(p, n, &at, a)) && a->n)
			e = trie_add(a->normalized ? &h->normed : &h->raw, a->s, a->n, (int32_t)i);
	}
	return e ? e : at == n ? ERR_OK : ERR_INPUT;
}
