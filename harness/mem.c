#include "mem.h"

#include <stdlib.h>
#include <string.h>

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

void *mem_alloc(size_t n)
{
	if (should_fail())
		return NULL;
	return malloc(n ? n : 1);
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
	return realloc(p, n ? n : 1);
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
