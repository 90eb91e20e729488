/*
 * expect — a case's "expect" object: validated where the suite file writes it
 * (expect_check, called by suite.h for a case and for "defaults"), then parsed
 * once per case into a typed struct that the grader (grade.h) judges. The
 * members, which generators/cases.h emits:
 *
 *   {"json": VALUE}        the whole answer (reasoning separated, surrounding
 *                          whitespace trimmed) parses as exactly VALUE: the
 *                          same keys (any order), arrays in order, numbers by
 *                          value (34 == 34.0), strings byte-exact
 *   {"schema": SCHEMA}     structured outputs: the whole answer (trimmed)
 *                          parses as JSON valid against SCHEMA (schema.h), or
 *                          "response_format" for the case's own
 *                          request.response_format.json_schema.schema; with
 *                          "json" too, it must also be exactly that value
 *   {"regex": RE}          PCRE2 (UTF) match of the whole answer
 *   {"contains": [S, ...]} every S occurs in the answer (case-sensitive)
 *   {"tool_call": {"name": N, "arguments": {...}?}, "tool_result": TEXT?,
 *    "final_contains": [S, ...]?}
 *                          round 1 holds exactly one call named N whose
 *                          arguments parse as a JSON object equal to
 *                          "arguments" (as for "json"); round 2 sends the
 *                          assistant turn with the call as received and one
 *                          {"role":"tool"} message with TEXT; the final answer
 *                          contains every S
 *   {"tool_calls": [{"name", "arguments"?, "tool_result"?}, ...],
 *    "final_contains": [...]?}
 *                          round 1 holds exactly these calls, matched in any
 *                          order; round 2 answers each call with the result
 *                          of the expected call it matched, in the order the
 *                          model made them
 *   "no_tool_call": true   any tool call fails the case (with one of the
 *                          content members above)
 *   "recall": [{"key": K, "message": I}, ...]
 *                          multi_turn: the index in "messages" of the turn that
 *                          planted fact K, so a failed grade says which fact at
 *                          which distance was lost
 *   "image_order": {...}   image_order: what the images show, for people;
 *                          not graded beyond "json"
 *
 * Exactly one of json, regex, contains, tool_call, tool_calls, schema (schema
 * may come with json). A second round
 * follows a passing first when there is tool_result, tool_calls or
 * final_contains. Everything borrows from the suite's JSON except the arrays,
 * which the struct owns.
 */
#ifndef NEEDLE_EXPECT_H
#define NEEDLE_EXPECT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "base/err.h"
#include "base/jcheck.h"

enum expect_kind {
	EXPECT_NONE = 0,    /* transport and audit only */
	EXPECT_JSON,        /* strict: the whole answer is that JSON value */
	EXPECT_REGEX,       /* PCRE2 match of the whole answer */
	EXPECT_CONTAINS,    /* every string occurs in the answer */
	EXPECT_TOOL_CALLS,  /* tool name + arguments, then final_contains */
	EXPECT_SCHEMA       /* JSON valid against a schema (no "json") */
};

/* One expected tool call. */
struct expect_call {
	const char *name;
	const cJSON *arguments;  /* object, or NULL: any arguments */
	const cJSON *result;     /* tool_result (string or object), or NULL */
};

/* A planted fact of a multi_turn case. */
struct expect_fact {
	const char *key;
	int message;             /* index in "messages" */
};

struct expect {
	enum expect_kind kind;
	const cJSON *json;               /* EXPECT_JSON */
	const cJSON *schema;             /* or NULL; EXPECT_SCHEMA, or beside
					    EXPECT_JSON (suite.h resolves
					    "response_format") */
	const char *regex;               /* EXPECT_REGEX */
	const char **contains;           /* EXPECT_CONTAINS; owned array */
	size_t ncontains;
	struct expect_call *calls;       /* EXPECT_TOOL_CALLS; owned array */
	size_t ncalls;
	int one_call;                    /* "tool_call" (else "tool_calls") */
	const char **final_contains;     /* owned array */
	size_t nfinal;
	int no_tool_call;
	struct expect_fact *facts;       /* owned array */
	size_t nfacts;
	int round2;                      /* a second round follows a passing first */
};

/* Frees the arrays and re-initialises. Accepts NULL. */
void expect_release(struct expect *x);

/* Validates "expect" object `v` at JSON path `p` of c->file: its keys (with
 * "did you mean"), each member's type, exactly one way to grade, a regex that
 * compiles (rx_compile with RX_WHOLE), tool_result and final_contains only with tool
 * calls. ERR_INPUT as jcheck.h shapes it, e.g. "x.json: cases[2].expect.regex:
 * bad regex at offset 3: missing closing parenthesis". */
enum err expect_check(const struct jcheck *c, const cJSON *v, const char *p);

/* Parses `v` (an object expect_check accepted, or NULL for none) into `x`,
 * which borrows from `v`. ERR_NOMEM only; `x` is then left empty. */
enum err expect_parse(const cJSON *v, struct expect *x, struct diag *d);

#endif
