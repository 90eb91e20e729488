/* tok_load — reading tokenizer.json into a tok_hf; see tok_int.h. */
#include "tok_int.h"

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/jscan.h"
#include "base/json.h"
#include "base/mem.h"
#include "tok_cache.h"

static enum err add_special(struct tok_load *l, uint32_t *ids, size_t *n, double id)
{
	if (*n == TOK_SPECIAL_MAX)
		return tok_read_unsupported(l, "post-processor", "template with more than 64 ids");
	if (id < 0 || id > 4294967294.0)
		return tok_read_bad(l, "bad special token id in the post-processor");
	ids[(*n)++] = (uint32_t)id;
	return ERR_OK;
}

/* TemplateProcessing's `single`: ids before and after the sequence "A". */
static enum err template(struct tok_load *l, const cJSON *o)
{
	const cJSON *item, *specials = cJSON_GetObjectItemCaseSensitive(o, "special_tokens");
	int seen_a = 0;
	enum err e;

	if ((e = tok_read_keys(l, o, "type single pair special_tokens", "TemplateProcessing")))
		return e;
	cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(o, "single")) {
		const cJSON *sp = cJSON_GetObjectItemCaseSensitive(item, "SpecialToken"), *tok, *id;
		const char *name = tok_read_str(sp, "id");

		if (cJSON_GetObjectItemCaseSensitive(item, "Sequence")) {
			if (seen_a)
				return tok_read_unsupported(l, "post-processor", "template with two sequences");
			seen_a = 1;
			continue;
		}
		tok = name ? cJSON_GetObjectItemCaseSensitive(specials, name) : NULL;
		if (!tok)
			return tok_read_bad(l, "template names a special token missing from special_tokens");
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
static enum err cls_sep(struct tok_load *l, const cJSON *o, const char *t)
{
	const cJSON *cls = cJSON_GetObjectItemCaseSensitive(o, "cls");
	const cJSON *sep = cJSON_GetObjectItemCaseSensitive(o, "sep");
	enum err e = tok_read_keys(l, o, "type cls sep trim_offsets add_prefix_space", t);

	if (e)
		return e;
	if (cJSON_GetArraySize(cls) != 2 || cJSON_GetArraySize(sep) != 2)
		return tok_read_bad(l, "cls and sep must be [token, id]");
	if ((e = add_special(l, l->h->head, &l->h->nhead, cJSON_GetArrayItem(cls, 1)->valuedouble)))
		return e;
	return add_special(l, l->h->tail, &l->h->ntail, cJSON_GetArrayItem(sep, 1)->valuedouble);
}

static enum err add_post(struct tok_load *l, const cJSON *o, int depth)
{
	const char *t = tok_read_type(o);
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
	return tok_read_unsupported(l, "post-processor", t);
}


static enum err load_vocab(struct tok_load *l, struct jscan *j)
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

static enum err one_merge(struct tok_load *l, struct jscan *j, struct buf *s1,
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

static enum err load_merges(struct tok_load *l, struct jscan *j)
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
static enum err sub_json(struct tok_load *l, struct jscan *j, cJSON **out)
{
	size_t start;
	enum err e = jscan_skip(j, &start, l->d);

	if (e)
		return e;
	*out = cJSON_ParseWithLength(j->s + start, j->pos - start);
	return *out ? ERR_OK : diag_fail(l->d, ERR_NOMEM, "out of memory");
}

static enum err model_opts(struct tok_load *l, const cJSON *o, struct bpe_opts *bo)
{
	const char *t = tok_read_type(o);
	const cJSON *v;
	enum err e;

	if (*t && strcmp(t, "BPE"))
		return tok_read_unsupported(l, "model", t);
	if ((e = tok_read_keys(l, o, "type dropout unk_token continuing_subword_prefix "
				  "end_of_word_suffix fuse_unk byte_fallback ignore_merges",
			    "BPE")))
		return e;
	v = cJSON_GetObjectItemCaseSensitive(o, "dropout");
	if (v && !cJSON_IsNull(v) && !(cJSON_IsNumber(v) && v->valuedouble == 0))
		return tok_read_unsupported(l, "BPE option", "dropout");
	if (tok_read_str(o, "continuing_subword_prefix") && *tok_read_str(o, "continuing_subword_prefix"))
		return tok_read_unsupported(l, "BPE option", "continuing_subword_prefix");
	if (tok_read_str(o, "end_of_word_suffix") && *tok_read_str(o, "end_of_word_suffix"))
		return tok_read_unsupported(l, "BPE option", "end_of_word_suffix");
	bo->fuse_unk = tok_read_bool(o, "fuse_unk", 0);
	bo->byte_fallback = tok_read_bool(o, "byte_fallback", 0);
	bo->ignore_merges = tok_read_bool(o, "ignore_merges", 0);
	bo->unk = tok_read_str(o, "unk_token");
	bo->unk_len = bo->unk ? strlen(bo->unk) : 0;
	return ERR_OK;
}

static enum err load_model(struct tok_load *l, struct jscan *j)
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
		e = tok_read_bad(l, "the model has no 'vocab'");
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


struct top {
	cJSON *normalizer, *pre, *post, *added;
	int have_model, have_pre;
	size_t model_at;
};

/* sub_json into `*slot`, dropping what an earlier occurrence of the member put
 * there: the tokenizers crate's TokenizerVisitor keeps the last one. */
static enum err top_json(struct tok_load *l, struct jscan *j, cJSON **slot)
{
	cJSON_Delete(*slot);
	*slot = NULL;
	return sub_json(l, j, slot);
}

/* top_json (or sub_json for the pre-tokenizer) of member m, noting where its
 * text is. */
static enum err member_json(struct tok_load *l, struct jscan *j, enum tok_member m,
			    cJSON **slot)
{
	size_t at = j->pos;
	enum err e = m == TOK_PRE_TOKENIZER ? sub_json(l, j, slot) : top_json(l, j, slot);

	l->member[m] = j->s + at;
	l->member_len[m] = j->pos - at;
	return e;
}

static enum err top_member(struct tok_load *l, struct jscan *j, const char *k,
			   size_t n, struct top *t)
{
	cJSON *v = NULL;
	enum err e;

#define IS(name) (n == sizeof(name) - 1 && !memcmp(k, name, n))
	/* A repeated model or pre_tokenizer would be built twice (the crate keeps
	 * the last); refused rather than counted wrong. */
	if ((IS("model") && t->have_model) || (IS("pre_tokenizer") && t->have_pre))
		return tok_read_unsupported(l, "repeated field", IS("model") ? "model" : "pre_tokenizer");
	if (IS("model")) {
		t->have_model = 1;
		if (t->have_pre)
			return load_model(l, j);
		return jscan_skip(j, &t->model_at, l->d);
	}
	if (IS("version") || IS("decoder"))
		return jscan_skip(j, NULL, l->d);
	if (IS("normalizer"))
		return member_json(l, j, TOK_NORMALIZER, &t->normalizer);
	if (IS("pre_tokenizer")) {
		t->have_pre = 1;
		if ((e = member_json(l, j, TOK_PRE_TOKENIZER, &t->pre)))
			return e;
		return tok_pre_parse(l, t->pre, 0);
	}
	if (IS("post_processor"))
		return member_json(l, j, TOK_POST_PROCESSOR, &t->post);
	if (IS("added_tokens"))
		return member_json(l, j, TOK_ADDED_TOKENS, &t->added);
	if (IS("truncation") || IS("padding")) {
		if ((e = sub_json(l, j, &v)))
			return e;
		e = cJSON_IsNull(v) ? ERR_OK : tok_read_unsupported(l, "option", IS("padding") ? "padding" : "truncation");
		cJSON_Delete(v);
		return e;
	}
#undef IS
	{
		char name[128];

		snprintf(name, sizeof(name), "%.*s", (int)(n > 100 ? 100 : n), k);
		return tok_read_unsupported(l, "field", name);
	}
}

enum err tok_load_json(struct tok_load *l, const char *json, size_t len)
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
		e = tok_read_bad(l, "no 'model'");
	if (!e && !t.have_pre) {
		t.have_pre = 1;
		j.pos = t.model_at;
		e = load_model(l, &j);
	}
	if (!e && t.normalizer)
		e = tok_norm_parse(l, t.normalizer, 0);
	if (!e && t.post)
		e = add_post(l, t.post, 0);
	if (!e && t.added)
		e = tok_added_parse(l, t.added);
	cJSON_Delete(t.normalizer);
	cJSON_Delete(t.pre);
	cJSON_Delete(t.post);
	cJSON_Delete(t.added);
	buf_release(&key);
	return e;
}

/* Member m of the cache (a JSON one: not the added tokens) parsed and
 * handed to its reader (absent: nothing). */
static enum err cached_member(struct tok_load *l, const struct tok_cache *c,
			      enum tok_member m)
{
	cJSON *v;
	enum err e;

	if (!c->len[m])
		return ERR_OK;
	if (!(v = cJSON_ParseWithLength(c->sect[m], c->len[m])))
		return ERR_INPUT;
	switch (m) {
	case TOK_NORMALIZER:
		e = tok_norm_parse(l, v, 0);
		break;
	case TOK_PRE_TOKENIZER:
		e = tok_pre_parse(l, v, 0);
		break;
	default: /* TOK_POST_PROCESSOR */
		e = add_post(l, v, 0);
		break;
	}
	cJSON_Delete(v);
	return e;
}

enum err tok_load_cached(struct tok_load *l, const struct tok_cache *c)
{
	struct tok_hf *h = l->h;
	enum err e;

	if (c->n != TOK_MEMBERS + 1)
		return ERR_INPUT;
	if ((e = cached_member(l, c, TOK_PRE_TOKENIZER)))
		return e;
	if ((e = bpe_from_blob(c->sect[TOK_MEMBERS], c->len[TOK_MEMBERS], &h->bpe)))
		return e;
	if (bpe_byte_level(h->bpe) != (h->npre && h->pre[h->npre - 1].kind == PRE_BYTELEVEL))
		return ERR_INPUT;
	if ((e = cached_member(l, c, TOK_NORMALIZER)) ||
	    (e = cached_member(l, c, TOK_POST_PROCESSOR)))
		return e;
	return tok_added_load(h, c->sect[TOK_ADDED_TOKENS], c->len[TOK_ADDED_TOKENS]);
}
