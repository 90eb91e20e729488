/*
 * buf — the one growable byte buffer, with a size cap (after curl's dynbuf).
 *
 * Invariants: `data` is always NUL-terminated (an empty buffer points at a
 * static ""), `len` never counts the NUL, and `len <= max`. A failed append
 * leaves the buffer exactly as it was, still valid. All growable bytes in needle
 * go through this type.
 *
 *	struct buf b;
 *	buf_init(&b, BUF_MAX_DEFAULT);
 *	if (buf_printf(&b, "%d tokens", n)) goto out;
 *	...
 *	out: buf_release(&b);
 */
#ifndef NEEDLE_BUF_H
#define NEEDLE_BUF_H

#include <stdarg.h>
#include <stddef.h>

#include "err.h"

/* Default cap: 1 GiB, larger than any prompt needle builds (2M tokens ~ 10 MB). */
#define BUF_MAX_DEFAULT ((size_t)1 << 30)

struct buf {
	char *data; /* owned bytes + NUL; static "" while cap == 0 */
	size_t len; /* bytes used, NUL excluded */
	size_t cap; /* bytes allocated, 0 when none */
	size_t max; /* cap on len, fixed at init */
};

/* Sets up an empty buffer that may grow to `max` bytes. Allocates nothing. */
void buf_init(struct buf *b, size_t max);
/* Frees the bytes and re-initialises with the same cap. Accepts NULL. */
void buf_release(struct buf *b);
/* Empties the buffer, keeping its memory. */
void buf_reset(struct buf *b);
/* Hands the bytes to the caller (who frees them with mem_free) and empties the
 * buffer; never NULL on success. `len` may be NULL. Returns NULL on ERR_NOMEM. */
char *buf_take(struct buf *b, size_t *len);

/* Makes room for `n` more bytes (and the NUL). ERR_LIMIT past the cap,
 * ERR_NOMEM. Writing in place (as git's strbuf_grow/strbuf_setlen and redis's
 * sdsMakeRoomFor/sdsIncrLen): after a reserve, up to buf_avail(b) bytes may be
 * written at b->data + b->len and then counted with buf_commit; nothing else
 * writes `len` or the terminator.
 *
 *	if (buf_reserve(b, 4096)) goto out;
 *	n = read(fd, b->data + b->len, buf_avail(b));
 *	if (n > 0) buf_commit(b, (size_t)n);
 */
enum err buf_reserve(struct buf *b, size_t n);
/* Bytes that may be written at b->data + b->len before a buf_commit, within
 * both the memory held and the cap; 0 before the first reserve. */
size_t buf_avail(const struct buf *b);
/* Counts `n` bytes written at b->data + b->len and terminates them. `n` must
 * not exceed buf_avail(b); a larger `n` is cut to it so the invariants hold. */
void buf_commit(struct buf *b, size_t n);
enum err buf_append(struct buf *b, const void *p, size_t n);
enum err buf_puts(struct buf *b, const char *s);
enum err buf_putc(struct buf *b, char c);
enum err buf_printf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
enum err buf_vprintf(struct buf *b, const char *fmt, va_list ap);
/* Appends the base64 of `n` bytes at `p` (RFC 4648 section 4: the standard
 * alphabet, '=' padding, no line breaks), 4 * ceil(n / 3) characters. */
enum err buf_base64(struct buf *b, const void *p, size_t n);
/* Shortens to `len` bytes (no-op if already shorter). */
void buf_truncate(struct buf *b, size_t len);

#endif
