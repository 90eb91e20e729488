/*
 * mem — the allocation entry points every module uses.
 *
 * They behave like malloc/calloc/realloc/free, plus one testing hook taken from
 * SQLite: when the environment variable NEEDLE_FAIL_ALLOC=N is set (N >= 1), the
 * Nth allocation of the process and every one after it fail, so tests can show
 * that each out-of-memory path returns ERR_NOMEM cleanly instead of crashing.
 */
#ifndef NEEDLE_MEM_H
#define NEEDLE_MEM_H

#include <stddef.h>

/* Returns new memory the caller owns and frees with mem_free, or NULL. */
void *mem_alloc(size_t n);
/* Like mem_alloc, zero-filled; n * size overflow returns NULL. */
void *mem_calloc(size_t n, size_t size);
/* Resizes `p` (which may be NULL); on failure `p` is left untouched. */
void *mem_realloc(void *p, size_t n);
/* Grows the array `p` of `*cap` items of `size` bytes to twice as many
 * (`first` when it has none): returns the moved array and sets *cap, or NULL
 * with `p` and *cap untouched (out of memory, or a size that overflows).
 *	if (v->n == v->cap && !(p = mem_grow(v->item, &v->cap, sizeof(*p), 16)))
 *		return ERR_NOMEM;
 *	v->item = p; */
void *mem_grow(void *p, size_t *cap, size_t size, size_t first);
/* Copies `n` bytes of `s` and a NUL into new memory the caller owns. */
char *mem_strndup(const char *s, size_t n);
/* Accepts NULL. */
void mem_free(void *p);

/* Zero-filled memory for a large table (`n` bytes) that is probed at random:
 * mapped apart and, where the kernel allows, backed by 2 MiB pages (fewer
 * page faults and TLB misses). The caller frees it with mem_free_big and the
 * same `n`. Obeys NEEDLE_FAIL_ALLOC like the others. */
void *mem_calloc_big(size_t n);
/* Accepts NULL. */
void mem_free_big(void *p, size_t n);
/* Has the kernel back the memory p[0..n) (zero-filled, about to be read
 * and written at random) with pages now, one call instead of two faults a
 * page; only a hint: on an older kernel nothing happens. Accepts NULL. */
void mem_prefault(void *p, size_t n);

#endif
