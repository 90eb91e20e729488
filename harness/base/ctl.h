/*
 * ctl — text quoted from a server or a record (answers, error bodies, model
 * and case ids) made inert for a terminal and a Markdown viewer: the one
 * escaper of what needle prints and of its Markdown, as xml.h is of its XML
 * and HTML. A hostile endpoint's ESC[2J, ESC]0;...BEL or cursor moves are
 * shown, not obeyed.
 *
 * Escaped: the C0 controls but tab and line feed, DEL and a byte that is not
 * part of valid UTF-8 as \xHH (1B becomes \x1b); the C1 controls (U+0080 to
 * U+009F, which some terminals obey as ESC sequences) as \u0080..\u009f.
 * Everything else, backslashes included, is kept as it is.
 */
#ifndef NEEDLE_CTL_H
#define NEEDLE_CTL_H

#include <stddef.h>

#include "buf.h"
#include "err.h"

/* Appends the `n` bytes at `s` escaped. ERR_NOMEM, ERR_LIMIT. */
enum err ctl_escape(struct buf *out, const char *s, size_t n);

/* Escapes out's bytes from offset `from` on in place (a document rendered
 * whole, then made inert); leaves them alone when nothing needs it.
 * ERR_NOMEM, ERR_LIMIT (the bytes before `from` kept). */
enum err ctl_escape_from(struct buf *out, size_t from);

/* The offset of the first byte of s[0..n) ctl_escape would change, or n. */
size_t ctl_first(const char *s, size_t n);

#endif
