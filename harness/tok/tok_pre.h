/*
 * tok_pre — the pre-tokenizers of a tokenizer.json: read from its
 * "pre_tokenizer" member (a Sequence flattened) and run on each segment the
 * added tokens and normalizers leave, down to the BPE model:
 *
 *   Split (a pattern and a behaviour: Removed, Isolated, MergedWithPrevious,
 *   MergedWithNext, Contiguous; invert), Digits (individual_digits), then at
 *   most one last ByteLevel (add_prefix_space, use_regex: the GPT-2 pattern)
 *   or Metaspace (replacement, prepend_scheme, split).
 *
 * Each stage runs on each piece of the stage before as its own subject, as
 * HF's PreTokenizedString::split does.
 */
#ifndef NEEDLE_TOK_PRE_H
#define NEEDLE_TOK_PRE_H

#include <stddef.h>

#include "base/err.h"
#include "tok_pat.h"

#define TOK_PRE_MAX 16   /* pre-tokenizers after flattening Sequences */

enum tok_behavior { B_REMOVED, B_ISOLATED, B_MERGED_PREV, B_MERGED_NEXT, B_CONTIGUOUS };
enum tok_pre_kind { PRE_SPLIT, PRE_DIGITS, PRE_BYTELEVEL, PRE_METASPACE };
enum tok_scheme { SCHEME_ALWAYS, SCHEME_FIRST, SCHEME_NEVER };

struct tok_pre {
	enum tok_pre_kind kind;
	struct tok_pat re;    /* Split pattern; Metaspace: the replacement; owned */
	enum tok_behavior behavior;
	int invert, individual, add_prefix_space, use_regex, split;
	enum tok_scheme scheme;
	char repl[8];         /* Metaspace replacement, UTF-8 */
	size_t repl_len;
};

struct tok_load;
struct tok_run;
struct cJSON;

/* Appends the pre-tokenizer (or Sequence) `o` to l->h->pre; `depth` is the
 * Sequence nesting so far (0 at the top). Refuses what tok_hf.h does not list. */
enum err tok_pre_parse(struct tok_load *l, const struct cJSON *o, int depth);

/* Pre-tokenizer k (k == npre: the model) on piece s[0..n), non-empty;
 * `first` says the piece starts at offset 0 of the original text (Metaspace
 * prepend_scheme "first"). Feeds the model through tok_run_model. */
enum err tok_pre_run(struct tok_run *r, size_t k, const char *s, size_t n, int first);

#endif
