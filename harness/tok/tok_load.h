/*
 * tok_load — reading tokenizer.json into a tok_hf: the top-level object and
 * the model streamed with jscan (the vocabulary and merges are most of the
 * file), the rest parsed with cJSON and handed to tok_norm, tok_pre,
 * tok_added and the post-processor reader; plus the helpers those readers
 * share. Every message starts "cannot load tokenizer 'PATH': ".
 */
#ifndef NEEDLE_TOK_LOAD_H
#define NEEDLE_TOK_LOAD_H

#include <stddef.h>

#include "base/err.h"
#include "tok_pat.h"

struct cJSON;
struct tok_hf;

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

struct tok_cache;

/* Fills l->h (zeroed by the caller) from the len bytes of `json`, borrowed. */
enum err tok_load_json(struct tok_load *l, const char *json, size_t len);
/* Fills l->h (zeroed by the caller) from a cache file whose sections are
 * the TOK_MEMBERS members then the model's blob; the blob stays
 * borrowed from `c` for the life of the tokenizer. ERR_INPUT (no message
 * needed: the caller loads the JSON instead) when the file does not fit. */
enum err tok_load_cached(struct tok_load *l, const struct tok_cache *c);

/* ERR_UNSUPPORTED: "unsupported WHAT 'NAME'". */
enum err tok_load_unsupported(struct tok_load *l, const char *what, const char *name);
/* ERR_INPUT with `what` as the reason. */
enum err tok_load_bad(struct tok_load *l, const char *what);
/* Refuses any member of `o` not named in the space-separated `known`;
 * `what` names the component. */
enum err tok_load_keys(struct tok_load *l, const struct cJSON *o, const char *known,
		       const char *what);
/* Member `key` of `o` if it is a boolean, else `dflt`. */
int tok_load_bool(const struct cJSON *o, const char *key, int dflt);
/* Member `key` of `o` if it is a string (borrowed from `o`), else NULL. */
const char *tok_load_str(const struct cJSON *o, const char *key);
/* The "type" string of `o`, "" if none. */
const char *tok_load_type(const struct cJSON *o);
/* tok_pat_compile of the n bytes of `pat` into `out`, messages naming the file. */
enum err tok_load_compile(struct tok_load *l, const char *pat, size_t n, int literal,
			  struct tok_pat *out);
/* A {"String": s} or {"Regex": r} pattern object compiled into `out`. */
enum err tok_load_pattern(struct tok_load *l, const struct cJSON *p, struct tok_pat *out);

#endif
