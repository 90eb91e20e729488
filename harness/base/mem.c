#include "mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* 0: hook not read yet; -1: hook off; otherwise the allocation number to fail. */
static long fail_at;
static long count;

static int should_fail(void)
{
	if (fail_at == 0) {
		const char *s = getenv("NEEDLE_FAIL_ALLOC");
		char *end;
		long v = s ? strtol(s, &end, 10) : 0;

		fail_at = (s && *end == '\0' && v > 0) ? v : -1;
	}
	if (fail_at < 0)
		return 0;
	return ++count >= fail_at;
}

#define HUGE_PAGE ((size_t)2 << 20)
#define SMALL_PAGE ((uintptr_t)4096)

/* A block of at least one huge page comes from its own mapping (glibc maps
 * blocks above its mmap threshold apart, and the threshold never exceeds
 * 32 MiB on 64-bit); advising 2 MiB pages for it makes the kernel fill its
 * aligned 2 MiB stretches one fault at a time instead of 512 (glibc's
 * `glibc.malloc.hugetlb=1` tunable does the same, but only from the
 * environment). Loading a large tokenizer.json fills several such blocks.
 * The advice is a hint: its failure changes nothing. Returns p. */
static void *advise_huge(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
	if (p && n >= HUGE_PAGE) {
		uintptr_t a = (uintptr_t)p & ~(SMALL_PAGE - 1);

		madvise((void *)a, n + ((uintptr_t)p - a), MADV_HUGEPAGE);
	}
#endif
	return p;
}

void *mem_alloc(size_t n)
{
	if (should_fail())
		return NULL;
	return advise_huge(malloc(n ? n : 1), n);
}

void *mem_calloc(size_t n, size_t size)
{
	if (should_fail())
		return NULL;
	return calloc(n ? n : 1, size ? size : 1);
}

void *mem_realloc(void *p, size_t n)
{
	if (should_fail())
		return NULL;
	return advise_huge(realloc(p, n ? n : 1), n);
}

void *mem_grow(void *p, size_t *cap, size_t size, size_t first)
{
	size_t want = *cap ? *cap * 2 : first;
	void *q;

	if (*cap > SIZE_MAX / 2 || !size || !want || want > SIZE_MAX / size)
		return NULL;
	if (!(q = mem_realloc(p, want * size)))
		return NULL;
	*cap = want;
	return q;
}

char *mem_strndup(const char *s, size_t n)
{
	char *p = mem_alloc(n + 1);

	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void mem_free(void *p)
{
	free(p);
}

/* Below one huge page the mapping costs more than it saves. The mapping is
 * padded so that its aligned part holds `n` bytes; the slack before and
 * after is unmapped at once, so only the aligned part stays. */
void *mem_calloc_big(size_t n)
{
	size_t len, head;
	char *p;

	if (n < HUGE_PAGE)
		return mem_calloc(n, 1);
	if (should_fail())
		return NULL;
	len = (n + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
	p = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	head = (HUGE_PAGE - (uintptr_t)p % HUGE_PAGE) % HUGE_PAGE;
	if (head)
		munmap(p, head);
	if (HUGE_PAGE - head)
		munmap(p + head + len, HUGE_PAGE - head);
	p += head;
#ifdef MADV_HUGEPAGE
	madvise(p, len, MADV_HUGEPAGE);
#endif
	return p;
}

void mem_free_big(void *p, size_t n)
{
	if (!p)
		return;
	if (n < HUGE_PAGE) {
		free(p);
		return;
	}
	munmap(p, (n + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE);
}

/* One madvise instead of a read fault (the zero page) then a write fault
 * per page on first touch; whole pages inside p[0..n) only, so nothing
 * outside it is written. */
void mem_prefault(void *p, size_t n)
{
#ifdef MADV_POPULATE_WRITE
	uintptr_t a = ((uintptr_t)p + SMALL_PAGE - 1) & ~(SMALL_PAGE - 1);
	uintptr_t z = ((uintptr_t)p + n) & ~(SMALL_PAGE - 1);

	if (p && z > a)
		madvise((void *)a, z - a, MADV_POPULATE_WRITE);
#else
	(void)p;
	(void)n;
#endif
}
