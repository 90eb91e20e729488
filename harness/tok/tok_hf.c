#include "tok_hf.h"

#include <stdint.h>
#include <string.h>

#include "base/mem.h"
#include "tok_int.h"
#include "tok_cache.h"
#include "tok_split.h"

enum err tok_hf_count(const struct tok_hf *h, const char *text, size_t len,
		      size_t *count, struct diag *d)
{
	int cpus;

	if (h->split_ok && len >= TOK_SPLIT_MIN && (cpus = tok_split_cpus()) > 1)
		return tok_split_count(h, text, len, cpus, count, d);
	return tok_added_count(h, text, len, count, d);
}

enum err tok_hf_encode(const struct tok_hf *h, const char *text, size_t len,
		       int add_special, uint32_t **ids, size_t *n, size_t *cap,
		       struct diag *d)
{
	struct tok_run r;
	enum err e = tok_run_init(&r, h, d);
	size_t i;

	r.ids = ids;
	r.nids = n;
	r.cap = cap;
	for (i = 0; !e && add_special && i < h->nhead; i++)
		e = tok_run_emit(&r, h->head[i]);
	if (!e)
		e = tok_added_run(&r, text, len);
	for (i = 0; !e && add_special && i < h->ntail; i++)
		e = tok_run_emit(&r, h->tail[i]);
	tok_run_release(&r);
	return e;
}

/* A tokenizer from the cache file at `cpath`, or NULL (ERR_OK) when the file
 * is missing or unusable. `src` is the source file to check the cache file
 * against when `sha` came from the source index (tok_cache_open), NULL when
 * it was just computed from the source's bytes. */
static enum err from_cache(const char *path, const char *cpath, const char *sha,
			   const char *src, struct tok_hf **out, struct diag *d)
{
	struct tok_load l = {path, NULL, d, {0}, {0}};
	struct tok_cache c;
	struct diag quiet;
	enum err e;

	*out = NULL;
	if (!tok_cache_open(cpath, sha, TOK_MEMBERS + 1, src, &c))
		return ERR_OK;
	if (!(l.h = mem_calloc(1, sizeof(*l.h)))) {
		tok_cache_close(&c);
		return diag_fail(d, ERR_NOMEM, "out of memory");
	}
	l.h->cache = c;
	diag_init(&quiet);
	l.d = &quiet;
	if ((e = tok_load_cached(&l, &l.h->cache))) {
		tok_hf_free(l.h);
		return e == ERR_NOMEM ? diag_fail(d, e, "out of memory") : ERR_OK;
	}
	*out = l.h;
	return ERR_OK;
}

/* Writes the cache file of a tokenizer just loaded from its JSON (`json`,
 * `len` bytes); a failure only costs the next load its speed. */
static void to_cache(const struct tok_load *l, const char *json, size_t len_json,
		     const char *cpath)
{
	const char *sect[TOK_MEMBERS + 1];
	size_t len[TOK_MEMBERS + 1], i;
	struct buf blob, added;
	struct diag quiet;

	buf_init(&blob, BUF_MAX_DEFAULT);
	buf_init(&added, BUF_MAX_DEFAULT);
	diag_init(&quiet);
	for (i = 0; i < TOK_MEMBERS; i++) {
		sect[i] = l->member[i];
		len[i] = l->member[i] ? l->member_len[i] : 0;
	}
	if (!bpe_save(l->h->bpe, &blob) && !tok_added_save(l->h, &added)) {
		sect[TOK_ADDED_TOKENS] = added.data;
		len[TOK_ADDED_TOKENS] = added.len;
		sect[TOK_MEMBERS] = blob.data;
		len[TOK_MEMBERS] = blob.len;
		tok_cache_write(cpath, l->h->sha, json, len_json, sect, len, TOK_MEMBERS + 1,
				&quiet);
	}
	buf_release(&added);
	buf_release(&blob);
}

enum err tok_hf_load(const char *path, const char *json, size_t len,
		     struct tok_hf **out, struct diag *d)
{
	struct tok_load l = {path, NULL, d, {0}, {0}};
	char sha[IO_SHA256_HEX];
	struct buf cpath;
	int cached = 0;
	enum err e;

	*out = NULL;
	buf_init(&cpath, BUF_MAX_DEFAULT);
	if ((e = io_sha256_hex(json, len, sha, d)))
		goto out;
	cached = tok_cache_path(sha, &cpath);
	if (cached && ((e = from_cache(path, cpath.data, sha, NULL, out, d)) || *out))
		goto out;
	if (!(l.h = mem_calloc(1, sizeof(*l.h)))) {
		e = diag_fail(d, ERR_NOMEM, "out of memory");
		goto out;
	}
	memcpy(l.h->sha, sha, sizeof(sha));
	if ((e = tok_load_json(&l, json, len))) {
		tok_hf_free(l.h);
		goto out;
	}
	if (cached)
		to_cache(&l, json, len, cpath.data);
	*out = l.h;
out:
	if (*out && cached)
		tok_cache_remember_sha(path, sha);
	if (*out) {
		memcpy((*out)->sha, sha, sizeof(sha));
		(*out)->split_ok = tok_split_ok(*out);
	}
	buf_release(&cpath);
	return e;
}

enum err tok_hf_load_known(const char *path, struct tok_hf **out, struct diag *d)
{
	char sha[IO_SHA256_HEX];
	struct buf cpath;
	enum err e = ERR_OK;

	*out = NULL;
	buf_init(&cpath, BUF_MAX_DEFAULT);
	if (tok_cache_known_sha(path, sha) && tok_cache_path(sha, &cpath) &&
	    !(e = from_cache(path, cpath.data, sha, path, out, d)) && *out) {
		memcpy((*out)->sha, sha, sizeof(sha));
		(*out)->split_ok = tok_split_ok(*out);
	}
	buf_release(&cpath);
	return e;
}

const char *tok_hf_sha256(const struct tok_hf *h)
{
	return h->sha;
}

void tok_hf_free(struct tok_hf *h)
{
	size_t i;

	if (!h)
		return;
	bpe_free(h->bpe);
	for (i = 0; i < h->npre; i++)
		tok_pat_release(&h->pre[i].re);
	for (i = 0; i < h->nnorm; i++)
		tok_norm_release(&h->norm[i]);
	tok_pat_release(&h->gpt2);
	scan_tab_free(h->tab);
	for (i = 0; i < h->nadded; i++) {
		mem_free(h->added[i].s);
		mem_free(h->added[i].raw);
	}
	mem_free(h->added);
	tok_aset_release(&h->raw);
	tok_aset_release(&h->normed);
	tok_cache_close(&h->cache);
	tok_run_unpark(h);
	mem_free(h);
}
