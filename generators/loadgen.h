/*
 * loadgen — load-test prompts of an exact token length: seeded filler that the
 * server counts as exactly `input_tokens` prompt tokens, for /v1/completions
 * (the BOS the server adds counted) or for chat (the rendered template
 * counted), built by the haystack fitter (haystack.h, plain documents).
 *
 * Invariants:
 * - the prompt depends only on (options, request seed): two runs with the same
 *   seeds send the same bytes;
 * - request seeds (loadgen_seed) differ per case (seed and id:
 *   loadgen_case_seed), level, round and index, and each seed starts a fresh filler, so two prompts share no
 *   prefix beyond what the template forces and a first sentence's opening
 *   words (the seeds' "new seed, no prefix reuse" cold cache);
 * - the prompt holds no needle, access code or question: it is filler text
 *   (filler.h), whose properties it keeps.
 */
#ifndef NEEDLE_LOADGEN_H
#define NEEDLE_LOADGEN_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

struct filler;

#include "base/err.h"
#include "base/io.h"
#include "tok/tok.h"
#include "tpl/tpl.h"

enum loadgen_endpoint { LOADGEN_COMPLETIONS, LOADGEN_CHAT };

/* What loadgen_build keeps between the prompts of one load case: the filler
 * with its grammars loaded, reseeded per prompt (a prompt is the same bytes
 * with or without it). Zero it to start; free it with loadgen_cache_release. */
struct loadgen_cache {
	struct filler *filler; /* owned, or NULL before the first build */
};

struct loadgen_opts {
	enum loadgen_endpoint endpoint;
	const struct tok *tok;          /* borrowed */
	const struct tpl *tpl;          /* borrowed; chat only */
	const cJSON *kwargs;            /* chat_template_kwargs or NULL, borrowed */
	const struct tpl_render_opts *render; /* chat; NULL = vLLM */
	long input_tokens;              /* usage.prompt_tokens to hit */
	long bos_tokens;                /* completions: tokens the server adds (0 or 1) */
	const char *filler;             /* "prose" (NULL), "code", "zh", "mixed" */
	struct loadgen_cache *cache;    /* borrowed, or NULL: nothing kept */
};

struct loadgen_prompt {
	char *prompt;                   /* owned: completions prompt, or NULL */
	size_t prompt_len;
	cJSON *messages;                /* owned: chat messages, or NULL */
	size_t tokens;                  /* the proved count (= input_tokens) */
	char sha256[IO_SHA256_HEX];     /* of the prompt as counted */
};

/* A case's seed stream: its "seed" mixed with its id (FNV-1a), so two cases
 * of a suite with the same seed (the default 1) still send different
 * prompts: no prefix is shared across cases either. */
uint64_t loadgen_case_seed(uint64_t seed, const char *case_id);

/* The seed of one request: a mix of the case's seed, the level's index, the
 * round (0 = warm-up, counted rounds from 1) and the request's index. */
uint64_t loadgen_seed(uint64_t case_seed, unsigned level, unsigned round,
		      unsigned index);

/* Builds the prompt of one request into `out` (released by the caller with
 * loadgen_release, also after a failure). ERR_INPUT when input_tokens cannot
 * be met (too small for the template, or unknown filler). */
enum err loadgen_build(const struct loadgen_opts *o, uint64_t seed,
		       struct loadgen_prompt *out, struct diag *d);
/* Frees what `p` owns and zeroes it. Accepts NULL. */
void loadgen_release(struct loadgen_prompt *p);
/* Frees what `c` keeps; it is empty after. Accepts NULL. */
void loadgen_cache_release(struct loadgen_cache *c);

#endif
