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

#include "err.h"
#include "io.h"
#include "tok.h"
#include "tpl.h"

#define HAYSTACK_MAX_NEEDLES 16

struct haystack_opts {
	const struct tok *tok;  /* borrowed */
	const struct tpl *tpl;  /* borrowed */
	const cJSON *kwargs;    /* chat_template_kwargs or NULL, borrowed */
	long tokens;            /* exact size of the rendered prompt */
	uint64_t seed;
	int depths[HAYSTACK_MAX_NEEDLES]; /* percent of the document, 0..100 */
	int ndepths;            /* 0 = default 10,50,90 */
	int needles;            /* 0 = one per depth */
	const char *filler;     /* "prose", "code", "zh", "mixed"; NULL = prose */
	int distractors;        /* near-miss names and unasked codes; 0 = none */
	int ask;                /* how many projects the question asks for; 0 = all */
	const char *question;   /* NULL = the default question */
};

struct haystack_needle {
	char project[64];
	char code[32];
	int depth;              /* requested percent */
	size_t char_offset;     /* byte offset of the needle sentence in the document */
	size_t token_offset;    /* tokens of the document before it */
	int asked;              /* part of the expected answer */
};

struct haystack {
	cJSON *messages;        /* owned: the messages array */
	char *document;         /* owned, NUL-terminated */
	size_t document_len;
	struct haystack_needle needle[HAYSTACK_MAX_NEEDLES];
	int nneedles;
	cJSON *expected;        /* owned: {"Project": "CODE", ...} for asked projects */
	size_t prompt_tokens;   /* the final full count */
	char prompt_sha256[IO_SHA256_HEX]; /* of the rendered prompt string */
};

/* Builds a needle document. `out` is filled and owned by the caller, who
 * releases it with haystack_release (also after a failure). ERR_INPUT for
 * options that cannot be met (too few tokens, bad depths, ...). */
enum err haystack_build(const struct haystack_opts *o, struct haystack *out,
			struct diag *d);
/* Frees what `h` owns and zeroes it. Accepts NULL. */
void haystack_release(struct haystack *h);

#endif
