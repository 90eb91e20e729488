/*
 * cases — functional test cases for the runner, expanded deterministically
 * from a seed into suite-file JSON (the schema of the runner's suite module):
 * strict-JSON tasks, tool calls, multi-turn memory in English and Chinese, and
 * image order. The same seed gives the same bytes; values that the model must
 * repeat (tool results, planted facts) come from the seed.
 *
 * Every case is a plain suite case ("id", "kind", "messages", sampling fields,
 * "expect"); what each "expect" member means and how it is graded is
 * harness/run/expect.h's. What the generator emits per kind:
 *
 * kind "chat" (the 12 strict-JSON tasks): {"json": VALUE}. Each task states
 *   every key and its type in the prompt, so "items" is asked for as an
 *   integer count and cannot be read as a list (docs/cutover.md "Where the
 *   rule comes from": the failures reported were an ambiguous prompt). Sampling:
 *   temperature 1.0, top_p 1.0, repeat 3, reasoning_effort "low".
 *
 * kind "tool_call": the request carries "tools"; the model must call them.
 *   {"tool_call": {"name", "arguments"}, "tool_result": TEXT,
 *   "final_contains": [S, ...]}: each S is a value that appears only in TEXT,
 *   never in the prompt, so it proves the model read the tool result.
 *   Parallel calls: {"tool_calls": [{"name", "arguments", "tool_result"}, ...],
 *   "final_contains": [...]}. No call allowed: {"no_tool_call": true, "json":
 *   VALUE}, with tools the question does not need.
 *
 * kind "multi_turn": "messages" is a scripted conversation (user and
 *   assistant turns) whose early user turns plant facts and whose last user
 *   turn asks for them back as strict JSON. One request, so the prompt is
 *   fixed and auditable. {"json": VALUE, "recall": [{"key": K, "message":
 *   I}, ...]}: I is the turn that planted (or last corrected) K. A
 *   "superseded" member, when present, is the index of an earlier turn whose
 *   value was later corrected: the answer must hold the corrected one.
 *
 * kind "image_order": one user message whose content is two image parts
 *   (PNG data URLs from generators/image.h) followed by one text part; the
 *   text speaks of "the first image" and "the second image", never of
 *   interleaved labels, because vLLM moves image placeholders of string-content
 *   templates to the front (docs/protocol.md "Message content").
 *   {"json": {"first": {"colour": C, "shape": S[, "number": N]}, "second":
 *   {...}}, "image_order": {"objects": ["red circle", "blue square"], "twin":
 *   ID}}: "objects" lists what the images show, in request order; "twin" is
 *   the id of the case with the same two images swapped, whose expectation is
 *   this one reversed. A model that ignores the images, or their order,
 *   cannot pass both twins.
 */
#ifndef NEEDLE_CASES_H
#define NEEDLE_CASES_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "base/err.h"

/* Which kinds to generate; bits for cases_suite. */
enum {
	CASES_JSON = 1,       /* the 12 strict-JSON tasks */
	CASES_TOOL = 2,       /* tool calls: single, parallel, none */
	CASES_MULTITURN = 4,  /* English and Chinese memory scripts */
	CASES_IMAGE = 8,      /* image-order pairs with swapped twins */
	CASES_ALL = 15
};

#define CASES_JSON_TASKS 12
#define CASES_IMAGE_SIZE 256 /* pixels per side of image-order pictures */

/* One strict-JSON task as generated, before it becomes a suite case. */
struct cases_task {
	char id[32];
	char *prompt;       /* owned, NUL-terminated UTF-8 */
	cJSON *expected;    /* owned: the exact answer */
	const char *types;  /* static JSON type spec of the answer, see
			     * cases_types_match */
};

/*
 * Parses a --kind value: "json", "tool", "multiturn", "image" or "all", or a
 * comma-separated list of them, into CASES_* bits. ERR_USAGE names the word.
 */
enum err cases_parse_kinds(const char *s, unsigned *kinds, struct diag *d);

/*
 * Builds strict-JSON task `i` (0..CASES_JSON_TASKS-1) for `seed` into `t`,
 * which the caller releases with cases_task_release (also after a failure).
 * Tasks 0..2 are the seed-report examples and do not depend on the seed.
 */
enum err cases_json_task(uint64_t seed, int i, struct cases_task *t,
			 struct diag *d);
/* Frees what `t` owns and zeroes it. Accepts NULL. */
void cases_task_release(struct cases_task *t);

/*
 * Whether `value` has the types of `types`, a JSON spec: "integer",
 * "number", "string", "boolean", "null", "T|null" (T or null), [T] (array of
 * T), or {"k": T, ...} (an object with exactly these keys). On a mismatch
 * returns 0 and writes a reason such as "key 'items': expected integer, got
 * array" into `why` (n bytes). Returns -1 when `types` is not a valid spec.
 */
int cases_types_match(const cJSON *value, const cJSON *types, char *why,
		      size_t n);

/*
 * A new, complete suite object {"suite", "description", "defaults", "cases"}
 * with the kinds in `kinds`, owned by the caller (cJSON_Delete). `name` and
 * `description` are copied.
 */
enum err cases_suite(uint64_t seed, unsigned kinds, const char *name,
		     const char *description, cJSON **out, struct diag *d);

#endif
