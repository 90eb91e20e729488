/*
 * suite — read and validate a suite file: the cases `needle run` sends.
 *
 *	{"suite": NAME, "description": TEXT, "defaults": {CASE FIELDS},
 *	 "cases": [CASE, ...]}
 *
 * Every case field may also appear in "defaults" (except "id"); a case's own
 * value replaces the default whole (objects such as chat_template_kwargs are
 * not merged key by key). The full schema is in docs/suite-files.md.
 *
 * Validation is strict: an unknown key, a wrong type, a value out of range, a
 * missing or duplicate id, an unknown kind, a regex that does not compile, all
 * fail with ERR_INPUT and a message naming the file, the JSON path and the
 * reason, e.g. "suites/x.json: cases[2].expect.json: ...". An unknown key that
 * is close to a known one gets "(did you mean 'max_tokens'?)". The suite
 * checks the shape of "expect" where it is written; the rules between its
 * members (exactly one way to grade, the regex compiles, ...) are expect.h's,
 * whose parse every case's `expect` is.
 *
 * A loaded suite owns its parsed JSON; every pointer in a `struct suite_case`
 * borrows from it and lives until suite_free (which also releases each
 * case's `expect`).
 */
#ifndef NEEDLE_SUITE_H
#define NEEDLE_SUITE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "base/err.h"
#include "expect.h"
#include "base/io.h"
#include "load/loadspec.h"

#define SUITE_MAX_CASES 100000
#define SUITE_MAX_DEPTHS 16      /* equals HAYSTACK_MAX_NEEDLES */
#define SUITE_MAX_SEEDS 1000
#define SUITE_MAX_REPEAT 100000
#define SUITE_MAX_BYTES ((size_t)1 << 30)
#define SUITE_ID_MAX 4096 /* bytes of a case id: longer ones are refused */

enum suite_kind {
	SUITE_CHAT = 0,    /* one request; graded by "expect" */
	SUITE_RECALL,      /* generated needle documents; graded per needle */
	SUITE_TOOL_CALL,   /* tool round trip: call, simulated result, answer */
	SUITE_MULTI_TURN,  /* scripted history in "messages"; graded by "expect" */
	SUITE_IMAGE_ORDER, /* images in "messages"; graded by "expect" */
	SUITE_LOAD         /* generated fixed-length prompts at levels (loadspec.h) */
};

#define SUITE_TOKENS_MAX (-1L) /* "tokens": "max" */

/* Recall options ("recall": {...}); defaults in brackets. */
struct suite_recall {
	long tokens;                 /* exact rendered prompt size (required), or
				      * SUITE_TOKENS_MAX ("max"): max_model_len -
				      * max_tokens, the longest prompt the server takes */
	int depths[SUITE_MAX_DEPTHS];/* percent [10,50,90] */
	int ndepths;
	long seeds[SUITE_MAX_SEEDS]; /* one document per seed [1] */
	int nseeds;
	int needles;                 /* [one per depth] */
	const char *filler;          /* prose|code|zh|mixed [prose]; borrowed */
	int distractors;             /* [0] */
	int jitter;                  /* lengths tokens .. tokens+jitter-1 [1] (recprobe.h) */
	int cache;                   /* 1: a cache-consistency probe [0] (recprobe.h) */
};

/* One validated case, defaults merged. Pointers borrow from the suite. */
struct suite_case {
	const char *id;
	enum suite_kind kind;
	size_t index;               /* position in "cases" */
	const cJSON *json;          /* the merged case object */
	const cJSON *messages;      /* array or NULL (recall; or "prompt" cases) */
	const char *prompt;         /* raw prompt for /v1/completions, or NULL */
	const cJSON *tools;         /* array or NULL */
	const cJSON *kwargs;        /* chat_template_kwargs object or NULL */
	struct expect expect;       /* parsed "expect" (kind EXPECT_NONE without) */
	long repeat;                /* >= 1 [1] */
	long usage_tolerance;       /* allowed |usage_delta| [0] */
	long max_tokens;            /* 0 = not set */
	int has_seed;
	long seed;                  /* sampling seed when has_seed */
	int ignore_eos;             /* fixed-length case: completion == max_tokens */
	int parity;                 /* also ask without streaming and compare
				     * (run/parity.h) */
	const char *during;         /* id of the load case it runs under, or NULL */
	struct suite_recall recall; /* kind == SUITE_RECALL only */
	struct loadspec load;       /* kind == SUITE_LOAD only */
};

struct suite {
	char *path;                 /* owned copy of the file name */
	char sha256[IO_SHA256_HEX]; /* of the file's bytes */
	const char *name;           /* "suite" */
	const char *description;    /* or NULL */
	struct suite_case *cases;   /* owned array */
	size_t ncases;
	cJSON *root;                /* owned: the parsed file */
	cJSON *merged;              /* owned: array of merged case objects */
};

/* Reads and validates the suite file at `path`. Returns a suite the caller
 * frees with suite_free. ERR_IO when unreadable, ERR_INPUT when invalid (file,
 * JSON path and reason in `d`), including any string or key holding the
 * escape \u0000 (cJSON would cut it short silently). */
enum err suite_load(const char *path, struct suite **out, struct diag *d);

/* Validates a suite already in memory; `path` names it in diagnostics. */
enum err suite_parse(const char *path, const char *text, size_t len,
		     struct suite **out, struct diag *d);

/* Accepts NULL. */
void suite_free(struct suite *s);

/* "chat", "recall", ... */
const char *suite_kind_name(enum suite_kind k);

/* The case with this id, or NULL. */
const struct suite_case *suite_find(const struct suite *s, const char *id);

#endif
