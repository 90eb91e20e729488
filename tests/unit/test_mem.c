/*
 * Unit tests of mem_grow: the first size, doubling with the items kept, and
 * the sizes that would overflow (NULL, the array and its capacity untouched).
 */
#include <stdint.h>

#include "mem.h"
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

int main(void)
{
	T_RUN(test_grow);
	return T_DONE();
}
