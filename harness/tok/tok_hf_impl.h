/*
 * tok_hf_impl — the layout of a loaded tok_hf and its per-call scratch,
 * shared by the modules that make up tok_hf (tok_hf.c the entry points,
 * tok_load.c tokenizer.json, tok_norm.c, tok_pre.c, tok_added.c, tok_pat.c).
 * Nothing outside them includes this header: everyone else sees tok_hf.h.
 */
#ifndef NEEDLE_TOK_HF_IMPL_H
#define NEEDLE_TOK_HF_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/rx.h"
#include "tok_added.h"
#include "tok_bpe.h"
#include "tok_cache.h"
#include "tok_norm.h"
#include "tok_pat.h"
#include "tok_pre.h"
#include "tok_scan.h"

#define TOK_SPECIAL_MAX 64 /* ids a post-processor template may add */

/* A loaded tokenizer; read-only after tok_hf_load. Every pointer is owned. */
struct tok_hf {
	struct bpe *bpe;
	struct tok_pre pre[TOK_PRE_MAX];
	size_t npre;
	struct tok_norm norm[TOK_NORM_MAX];
	size_t nnorm;
	struct tok_pat gpt2;  /* for ByteLevel use_regex */
	struct tok_added *added;
	size_t nadded;
	struct tok_aset raw, normed; /* non-normalized / normalized tokens */
	struct scan_tab *tab; /* for patterns with a scanner, else NULL */
	uint32_t head[TOK_SPECIAL_MAX], tail[TOK_SPECIAL_MAX]; /* template ids */
	size_t nhead, ntail;
	struct tok_cache cache; /* the cache file bpe borrows its tables from, or zeroed */
	char sha[IO_SHA256_HEX]; /* of the tokenizer.json */
	int split_ok;         /* tok_split_ok: large texts are counted in parts */
};

/* The scratch of one count or encode call (one thread). Output goes either
 * to `count` (count_only) or to the caller's id array (*ids, *nids, *cap). */
struct tok_run {
	const struct tok_hf *h;
	struct bpe_work *w;
	struct rx_match *m;
	struct buf norm[2];   /* normalizers' output, alternating */
	struct tok_pieces st[TOK_PRE_MAX + 1]; /* one per pre-tokenizer; the last for Replace */
	int count_only;
	size_t count;
	uint32_t **ids;
	size_t *nids, *cap;
	struct diag *d;
};

/* Sets up `r` for `h`; tok_run_release frees it, also after a failure. */
enum err tok_run_init(struct tok_run *r, const struct tok_hf *h, struct diag *d);
void tok_run_release(struct tok_run *r);
/* Fails r->d with ERR_NOMEM. */
enum err tok_run_nomem(struct tok_run *r);
/* The BPE model on one pre-token s[0..n). */
enum err tok_run_model(struct tok_run *r, const char *s, size_t n);
/* One id (an added token) to the output. */
enum err tok_run_emit(struct tok_run *r, uint32_t id);
/* tok_hf_count on the calling thread alone. */
enum err tok_run_count(const struct tok_hf *h, const char *text, size_t len,
		       size_t *count, struct diag *d);

#endif
