/*
 * embed — read-only data files compiled into the binary, so an installed needle
 * needs nothing beside it. The build embeds every file under
 * fixtures/templates/ (as "templates/NAME.json"), generators/data/ (as
 * "data/NAME") and the pages of docs/ (under their paths: the help topics of
 * harness/cli/topics.h); see the Makefile rule for build/gen/embedded.c.
 */
#ifndef NEEDLE_EMBED_H
#define NEEDLE_EMBED_H

#include <stddef.h>

struct embed_file {
	const char *name;          /* e.g. "templates/qwen3.json" */
	const unsigned char *data; /* static bytes, NUL-terminated */
	size_t len;                /* NUL excluded */
};

/* The embedded file called `name`, or NULL. Borrowed, static. */
const struct embed_file *embed_find(const char *name);

/* All embedded files, in name order; `*n` receives the count. */
const struct embed_file *embed_all(size_t *n);

#endif
