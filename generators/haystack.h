/*
 * haystack — needle documents: filler text with K project/access-code pairs at
 * chosen token depths, wrapped in a chat prompt whose rendered form is exactly
 * `tokens` tokens for the given tokenizer and template (proved by one final
 * full count). Deterministic: the same options give the same bytes.
 */
#ifndef NEEDLE_HAYSTACK_H
#define NEEDLE_HAYSTACK_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

struct filler;

#include "base/err.h"
#include "base/io.h"
#include "tok/tok.h"
#include "tpl/tpl.h"

#define HAYSTACK_MAX_NEEDLES 16
#define HAYSTACK_MAX_DISTRACTORS 64
/* The default question; the requested names are listed on the line before it. */
#define HAYSTACK_QUESTION \
	"Return only a JSON object mapping each requested project name to its access_code."

struct haystack_opts {
	const struct tok *tok;  /* borrowed */
	const struct tpl *tpl;  /* borrowed */
	const cJSON *kwargs;    /* chat_template_kwargs or NULL, borrowed */
	long tokens;            /* exact size of the rendered prompt */
	uint64_t seed;
	int depths[HAYSTACK_MAX_NEEDLES]; /* percent of the document, 0..100 */
	int ndepths;            /* 0 = default 10,50,90 */
	int needles;            /* 0 = one per depth; K without depths: spread over 10..90 */
	const char *filler;     /* "prose", "code", "zh", "mixed"; NULL = prose */
	int distractors;        /* near-miss names and unasked codes; 0 = none */
	int ask;                /* how many projects the question asks for; 0 = all */
	const char *question;   /* NULL = the default question */
	int ask_reversed;       /* 1: list the requested projects last first (the same
				 * document asked differently: recprobe.h) */
	const char *preface;    /* text at the very start of the user content, before
				 * the document (a cache probe's nonce line, recprobe.h),
				 * counted in `tokens`; NULL = none; not for plain/raw */
	int code_shift;         /* shifts the final two letters of every code by this
				 * many places (of 576) and nothing else, so each jitter
				 * length has codes of its own in the same document */
	/* Server flavour and reasoning_effort for rendering (tpl.h), borrowed;
	 * NULL = vLLM without reasoning_effort. */
	const struct tpl_render_opts *render;
	/* Plain documents for load prompts (loadgen.h): no needles, no
	 * distractors and no question, the filler alone. With `raw` there is
	 * no template either: the prompt is the document, plus `raw_extra`
	 * tokens the server adds (the BOS of a /v1/completions prompt); `tpl`
	 * may then be NULL and `messages` stays NULL. */
	int plain;
	int raw;
	long raw_extra;
	/* Borrowed, or NULL: a filler of the kind `filler` names (filler.h),
	 * reseeded for this build instead of one loaded per build; the prompt
	 * is the same either way (loadgen.h keeps one per load case). */
	struct filler *reuse;
};

struct haystack_needle {
	char project[64];
	char code[32];
	int depth;              /* requested percent */
	size_t char_offset;     /* byte offset of the needle sentence in the document */
	size_t token_offset;    /* tokens of the document before it */
	int asked;              /* part of the expected answer */
	int near_miss;          /* distractors: 1 = a near-miss of a needle's name */
	size_t tokens;          /* tokens of the sentence with its "\n\n" */
};

struct haystack {
	cJSON *messages;        /* owned: the messages array */
	char *document;         /* owned, NUL-terminated */
	size_t document_len;
	struct haystack_needle needle[HAYSTACK_MAX_NEEDLES];
	int nneedles;
	cJSON *expected;        /* owned: {"Project": "CODE", ...} for asked projects */
	struct haystack_needle distractor[HAYSTACK_MAX_DISTRACTORS];
	int ndistractors;
	char *question;         /* owned: the text after the document */
	size_t document_tokens; /* sum of the chunk counts (proved by the final count) */
	size_t prefix_tokens;   /* template (and preface) tokens before the document */
	int fit_rounds;         /* full counts made (1 unless a join was not additive) */
	size_t prompt_tokens;   /* the final full count */
	char prompt_sha256[IO_SHA256_HEX]; /* of the rendered prompt string */
};

/*
 * Builds a needle document: the prompt is template prefix + document +
 * question + template suffix, where the document is a run of chunks (filler
 * paragraphs and needle/distractor sentences), each ending in "\n\n" and
 * starting with a non-space, so that a byte-level BPE count is additive over
 * chunks. Filler is counted in batches of paragraphs (two at a time, one on a
 * second thread), sentence by sentence near each needle and at the end; the
 * counts are summed to place the needles and fit the size, and one full count
 * of the rendered prompt proves the total (on a mismatch the document is
 * rebuilt for the difference and counted again, at most a few times). The
 * output depends only on the counts, never on thread timing.
 *
 * Needles are placed so that their token offset is depth% of (document tokens
 * - the needle's tokens). Each code is checked to occur exactly once, the joins
 * around each needle are checked to be additive, and the filler is scanned for
 * code-like strings and project names.
 *
 * `out` is filled and owned by the caller, who releases it with
 * haystack_release (also after a failure). ERR_INPUT for options that cannot
 * be met (too few tokens, bad or repeated depths, more needles than the
 * document holds, unknown filler); ERR_UNSUPPORTED for a tokenizer whose
 * paragraph joins are not additive. */
enum err haystack_build(const struct haystack_opts *o, struct haystack *out,
			struct diag *d);
/* Frees what `h` owns and zeroes it. Accepts NULL. */
void haystack_release(struct haystack *h);

#endif
