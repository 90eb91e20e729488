/*
 * Unit tests of mem_grow: the first size, doubling with the items kept, and
 * the sizes that would overflow (NULL, the array and its capacity untouched);
 * and of mem_prefault: the bytes of the block and those around it unchanged.
 */
#include <stdint.h>

#include "base/mem.h"
#include "t.h"

static void test_grow(void)
{
	size_t cap = 0, big, i;
	long *v = mem_grow(NULL, &cap, sizeof(*v), 4), *w;

	CHECK(v != NULL && cap == 4);
	for (i = 0; i < 4; i++)
		v[i] = (long)i * 10;
	w = mem_grow(v, &cap, sizeof(*v), 4);
	CHECK(w != NULL && cap == 8);
	if (w) {
		v = w;
		CHECK(v[0] == 0 && v[3] == 30);
	}
	big = SIZE_MAX / 2 + 1; /* doubling this overflows */
	CHECK(mem_grow(v, &big, sizeof(*v), 4) == NULL && big == SIZE_MAX / 2 + 1);
	big = SIZE_MAX / sizeof(*v) / 2 + 1; /* twice this many longs overflow */
	CHECK(mem_grow(v, &big, sizeof(*v), 4) == NULL && big == SIZE_MAX / sizeof(*v) / 2 + 1);
	CHECK(cap == 8 && v[3] == 30); /* still whole after the refusals */
	cap = 0;
	CHECK(mem_grow(NULL, &cap, sizeof(*v), 0) == NULL && cap == 0);
	mem_free(v);
}

/* mem_prefault on a block that is neither page-aligned nor a whole number
 * of pages, with bytes written before it, in it and after it. */
static void test_prefault(void)
{
	size_t n = 5 * 4096 + 123, i, bad = 0;
	unsigned char *p = mem_alloc(n);

	CHECK(p != NULL);
	if (!p)
		return;
	for (i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 7 + 1);
	mem_prefault(p + 100, n - 300);
	mem_prefault(NULL, 4096);
	for (i = 0; i < n; i++)
		bad += p[i] != (unsigned char)(i * 7 + 1);
	CHECK(bad == 0);
	mem_free(p);
}

int main(void)
{
	T_RUN(test_grow);
	T_RUN(test_prefault);
	return T_DONE();
}
