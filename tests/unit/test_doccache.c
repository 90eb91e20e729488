/* Unit tests for doccache.c: a kept document is served to its later takes and
 * freed by the last; one take, a key kept already and a full cache keep
 * nothing (the caller keeps its document). */
#include <string.h>

#include "run/doccache.h"
#include "base/mem.h"
#include "t.h"

static void doc(struct haystack *h, size_t len)
{
	memset(h, 0, sizeof(*h));
	h->document = mem_calloc(len + 1, 1);
	memset(h->document, 'a', len);
	h->document_len = len;
	h->prompt_tokens = len / 4;
}

static void test_takes(void)
{
	struct doccache c;
	struct haystack h;
	const struct haystack *k;

	doccache_init(&c, 1 << 20);
	CHECK(doccache_get(&c, "a") == NULL);
	doc(&h, 1000);
	k = doccache_put(&c, "a", &h, 3);
	CHECK(k != NULL && h.document == NULL && k->prompt_tokens == 250);
	doccache_done(&c, "a");
	CHECK(doccache_get(&c, "b") == NULL);
	k = doccache_get(&c, "a");
	CHECK(k != NULL && k->document_len == 1000);
	doccache_done(&c, "a");
	CHECK(doccache_get(&c, "a") != NULL);
	doccache_done(&c, "a");
	CHECK(doccache_get(&c, "a") == NULL);
	CHECK(c.n == 0 && c.bytes == 0 && c.hits == 2 && c.builds == 1);
	doc(&h, 10);
	CHECK(doccache_put(&c, "one", &h, 1) == NULL && h.document != NULL);
	haystack_release(&h);
	doccache_release(&c);
}

static void test_cap(void)
{
	struct doccache c;
	struct haystack h;

	doccache_init(&c, 3 * 4096 + 3 * 2000);
	doc(&h, 1000);
	CHECK(doccache_put(&c, "a", &h, 2) != NULL);
	doc(&h, 1000);
	CHECK(doccache_put(&c, "a", &h, 2) == NULL);
	CHECK(doccache_put(&c, "b", &h, 2) != NULL);
	doc(&h, 1000);
	CHECK(doccache_put(&c, "c", &h, 2) != NULL);
	doc(&h, 1000);
	CHECK(doccache_put(&c, "d", &h, 2) == NULL && h.document != NULL);
	haystack_release(&h);
	doccache_done(&c, "b");
	doccache_done(&c, "b");
	doc(&h, 1000);
	CHECK(doccache_put(&c, "d", &h, 2) != NULL);
	CHECK(doccache_get(&c, "a") != NULL && doccache_get(&c, "c") != NULL);
	doccache_release(&c);
	CHECK(c.n == 0 && c.e == NULL);
}

int main(void)
{
	T_RUN(test_takes);
	T_RUN(test_cap);
	return T_DONE();
}
