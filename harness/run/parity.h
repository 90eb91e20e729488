/*
 * parity — a case's answer asked for twice, streamed and not ("parity":
 * true, temperature 0): the non-streamed twin gets the transport checks of a
 * stream (stream.h, stream_init_whole), then both must say the same thing:
 * content and reasoning byte for byte, the same tool calls in order (names,
 * and arguments equal as JSON), the same finish_reason, prompt_tokens and
 * completion_tokens. Engines have parsed tool calls and reasoning
 * differently on the two paths; an upgrade that breaks one of them reaches
 * only the clients that use it. Each difference is a reason of the grade,
 * "parity: ...", and fails the attempt.
 */
#ifndef NEEDLE_PARITY_H
#define NEEDLE_PARITY_H

#include "grade.h"
#include "net/stream.h"

/* Judges the non-streamed twin `whole` (its checks `ck`) against the
 * streamed answer `streamed`, into `g`. */
void parity_judge(const struct stream *streamed, const struct stream *whole,
		  const struct stream_checks *ck, struct grade *g);

#endif
