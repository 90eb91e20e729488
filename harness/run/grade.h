/*
 * grade — judge one answer against a case's parsed expectation (expect.h), all
 * of it: the content, the tool calls of round 1 and the final answer of round
 * 2, with reasons a person can read ("key 'items': expected integer 5, got
 * array").
 *
 * The answer is the assembled `content` (the reasoning channel already
 * separated), all of its bytes: a NUL does not end it (contains and regex look
 * past it; json and recall fail on it, since no expected value holds one).
 * Surrounding whitespace is trimmed, nothing else:
 *  - json: the whole answer must parse as exactly the expected value, types
 *    included (number vs string vs boolean vs null vs array vs object; exact
 *    key sets, array lengths and order; numbers by value, so 34 == 34.0). A
 *    fenced or prose-wrapped answer fails, and the reason says so.
 *  - regex: PCRE2 (UTF) match of the whole answer (anchored at both ends).
 *  - contains: every string occurs in the answer (case-sensitive).
 *  - recall: the answer must be a JSON object mapping each asked project to its
 *    code; each needle is judged on its own so the record shows which depth
 *    failed.
 *
 * A grade owns its reasons (a cJSON array of strings) and its per-needle detail;
 * release it with grade_release.
 */
#ifndef NEEDLE_GRADE_H
#define NEEDLE_GRADE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "base/err.h"
#include "expect.h"
#include "net/stream.h"

#define GRADE_MAX_REASONS 32 /* further reasons are summarised as "... and N more" */

struct grade {
	int ok;          /* 1 = pass */
	int nomem;       /* a reason could not be kept: the grading functions
			    then return ERR_NOMEM */
	cJSON *reasons;  /* owned array of strings; empty when ok */
	cJSON *needles;  /* owned array for recall ({depth, project, expected,
			    got, ok}), else NULL */
};

/* The members of a grade's needle entry, which a record keeps as
 * "grade"."needles"[] (record.h's RK_ names, spelled here where they are
 * written; "ok" is a record's every verdict member). */
#define RK_OK "ok"
#define RK_DEPTH "depth"
#define RK_PROJECT "project"
#define RK_EXPECTED "expected"
#define RK_GOT "got"

/* One needle a recall answer must report. Strings are borrowed. */
struct grade_needle {
	const char *project;
	const char *code;
	int depth; /* percent */
};

/* Sets up an empty passing grade. Allocates nothing. */
void grade_init(struct grade *g);
/* Frees what the grade owns and re-initialises it. Accepts NULL. */
void grade_release(struct grade *g);

/* Grades the content `answer` (`len` bytes) against x's json, regex or
 * contains (nothing for the other kinds). ERR_NOMEM only; a wrong answer is a
 * failed grade, not an error. */
enum err grade_content(const struct expect *x, const char *answer, size_t len,
		       struct grade *g, struct diag *d);

/* Grades round 1 of a case that is not recall: for tool calls, exactly the
 * expected call(s) ("tool_calls" in any order, each expected call matched to
 * a distinct made call); otherwise no call when no_tool_call, then the
 * content. When that failed and x has facts, adds the planted turn of each
 * fact the reasons name ("fact 'K' was planted at messages[I], N messages
 * before the question"; `nmessages` is the length of the conversation). */
enum err grade_answer(const struct expect *x, const struct stream *s,
		      int nmessages, struct grade *g, struct diag *d);

/* Round 2: the final answer (`len` bytes) must contain every final_contains
 * string. */
enum err grade_final(const struct expect *x, const char *answer, size_t len,
		     struct grade *g, struct diag *d);

/* Whether made call `t` has `want`'s name and (when given) arguments, adding
 * the differences to `g` (which may be a scratch grade). */
int grade_call_matches(const struct stream_tool_call *t,
		       const struct expect_call *want, struct grade *g);

/* Grades a recall answer: each of the `n` needles must map project → code, and
 * no other key may appear. */
enum err grade_recall(const struct grade_needle *needles, int n,
		      const char *answer, size_t len, struct grade *g,
		      struct diag *d);

/* Adds a failure reason (formatted) and clears g->ok; sets g->nomem when the
 * reason cannot be kept. */
void grade_fail(struct grade *g, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
