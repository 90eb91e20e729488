/*
 * toolturn — the round-2 messages of a tool conversation (expect.h): the
 * case's messages, then the assistant turn with the calls as the model made
 * them, then one {"role": "tool"} message per call, in the order the model
 * made them, whose content is the tool_result of the expected call it matched
 * (a string as is, an object as compact JSON text, "" when none). The request
 * itself is built by req.h from these messages.
 */
#ifndef NEEDLE_TOOLTURN_H
#define NEEDLE_TOOLTURN_H

#include <cjson/cJSON.h>

#include "net/stream.h"
#include "suite.h"

/* The messages for round 2 of case `c` after response `st`, whose calls
 * `calls` (record_tool_calls) are borrowed. Caller owns; NULL when out of
 * memory. */
cJSON *toolturn_messages(const struct suite_case *c, const struct stream *st,
			 const cJSON *calls);

#endif
