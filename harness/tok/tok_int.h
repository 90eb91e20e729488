/*
 * tok_int — the private header of the tokenizer: the layout of a loaded
 * tok_hf and its per-call scratch, and the loader's state and helpers,
 * shared by the modules that make up tok_hf (tok_hf.c the entry points,
 * tok_load.c tokenizer.json, tok_norm.c, tok_pre.c, tok_added.c, tok_pat.c,
 * tok_read.c what the readers of its parts share, tok_run.c a call's
 * scratch). Nothing outside tok/ (but its unit tests) includes this header:
 * everyone else sees tok.h.
 */
#ifndef NEEDLE_TOK_INT_H
#define NEEDLE_TOK_INT_H

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

/*
 * tok_load — reading tokenizer.json into a tok_hf: the top-level object and
 * the model streamed with jscan (the vocabulary and merges are most of the
 * file), the rest parsed with cJSON and handed to tok_norm, tok_pre,
 * tok_added and the post-processor reader (tok_read below: what those
 * readers share). Every message starts "cannot load tokenizer 'PATH': ".
 */

struct cJSON;

/* The top-level members kept in the cache (tok_cache.h): as JSON text, but
 * the added tokens as tok_added_save wrote them; the model is kept as
 * bpe_save's blob. */
enum tok_member { TOK_NORMALIZER, TOK_PRE_TOKENIZER, TOK_POST_PROCESSOR, TOK_ADDED_TOKENS,
		  TOK_MEMBERS };

/* One load in progress: the file's name, the tokenizer being built, and
 * where each member's JSON value was found (the last occurrence; NULL if
 * absent), borrowed from the JSON being read. */
struct tok_load {
	const char *path;
	struct tok_hf *h;
	struct diag *d;
	const char *member[TOK_MEMBERS];
	size_t member_len[TOK_MEMBERS];
};

/* Fills l->h (zeroed by the caller) from the len bytes of `json`, borrowed. */
enum err tok_load_json(struct tok_load *l, const char *json, size_t len);
/* Fills l->h (zeroed by the caller) from a cache file whose sections are
 * the TOK_MEMBERS members then the model's blob; the blob stays
 * borrowed from `c` for the life of the tokenizer. ERR_INPUT (no message
 * needed: the caller loads the JSON instead) when the file does not fit. */
enum err tok_load_cached(struct tok_load *l, const struct tok_cache *c);

/*
 * tok_read — what the readers of tokenizer.json's parts (tok_load, tok_norm,
 * tok_pre, tok_added) share: messages naming the file, members, patterns.
 */
/* ERR_UNSUPPORTED: "unsupported WHAT 'NAME'". */
enum err tok_read_unsupported(struct tok_load *l, const char *what, const char *name);
/* ERR_INPUT with `what` as the reason. */
enum err tok_read_bad(struct tok_load *l, const char *what);
/* Refuses any member of `o` not named in the space-separated `known`;
 * `what` names the component. */
enum err tok_read_keys(struct tok_load *l, const struct cJSON *o, const char *known,
		       const char *what);
/* Member `key` of `o` if it is a boolean, else `dflt`. */
int tok_read_bool(const struct cJSON *o, const char *key, int dflt);
/* Member `key` of `o` if it is a string (borrowed from `o`), else NULL. */
const char *tok_read_str(const struct cJSON *o, const char *key);
/* The "type" string of `o`, "" if none. */
const char *tok_read_type(const struct cJSON *o);
/* tok_pat_compile of the n bytes of `pat` into `out`, messages naming the file. */
enum err tok_read_compile(struct tok_load *l, const char *pat, size_t n, int literal,
			  struct tok_pat *out);
/* A {"String": s} or {"Regex": r} pattern object compiled into `out`. */
enum err tok_read_pattern(struct tok_load *l, const struct cJSON *p, struct tok_pat *out);


/*
 * tok_run — the scratch of one count or encode call, the stages' output.
 */
/* The scratch a tok_run maps and clears (the BPE work with its count
 * caches, the PCRE2 match state with its JIT stack), kept between runs. */
struct tok_spare {
	struct bpe_work *w;
	struct rx_match *m;
};

/* A loaded tokenizer; read-only after tok_hf_load but for `spare`. Every
 * pointer is owned. */
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
	/* One run's scratch, parked by tok_run_release and taken by
	 * tok_run_init, so a caller counting many short texts (a load case
	 * builds a prompt per request, each counted several times) maps and
	 * clears it once, not per call; a count cache warmed by other texts
	 * gives the same counts. Atomic: threads sharing the tokenizer each
	 * take it or make their own, and park it only into an empty slot. */
	_Atomic(struct tok_spare *) spare;
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
/* Frees the scratch parked in `h` (tok_hf_free). */
void tok_run_unpark(struct tok_hf *h);

#endif
