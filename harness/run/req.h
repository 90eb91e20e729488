/*
 * req — the JSON request body for one attempt.
 *
 * Chat cases go to /v1/chat/completions, raw "prompt" cases to
 * /v1/completions. Every body streams with usage: "stream": true and
 * "stream_options": {"include_usage": true} (docs/protocol.md "Usage": the usage
 * chunk with empty choices arrives just before [DONE]). The sampling fields and
 * the vLLM/SGLang extras (ignore_eos, min_tokens, chat_template_kwargs,
 * reasoning_effort; docs/protocol.md "Request fields passed through") are passed through unchanged when the
 * case sets them; nothing else is added, so server defaults stay in force.
 *
 * Images: an image_url whose url is not a data:/http(s): URL is read as a file
 * (relative to the suite's folder) and sent inline as a base64 data URL.
 */
#ifndef NEEDLE_REQ_H
#define NEEDLE_REQ_H

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/io.h"
#include "suite.h"

#define REQ_IMAGE_MAX ((size_t)64 << 20) /* bytes of one image file */

enum req_endpoint { REQ_CHAT = 0, REQ_COMPLETIONS };

struct req {
	enum req_endpoint endpoint;
	const char *path;               /* "/v1/chat/completions" or "/v1/completions" */
	struct buf body;                /* owned JSON text */
	char sha256[IO_SHA256_HEX];     /* of body */
	int whole;                      /* set by the caller before req_build: ask
					 * for a non-streamed answer (stream: false,
					 * no stream_options), 0 after req_init */
};

/* Sets up an empty request. Allocates nothing. */
void req_init(struct req *r);
/* Frees the body. Accepts NULL. */
void req_release(struct req *r);

/*
 * Builds the body for case `c` with `messages` (borrowed; the case's own or a
 * generated haystack's; NULL for a "prompt" case) and `model`. `base_dir` is
 * the folder image file paths are relative to. ERR_IO names an unreadable
 * image; ERR_NOMEM.
 */
enum err req_build(struct req *r, const struct suite_case *c,
		   const cJSON *messages, const char *model,
		   const char *base_dir, struct diag *d);

#endif
