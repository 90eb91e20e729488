/*
 * Repeated top-level members of a tokenizer.json (found by tests/fuzz/fuzz_tok:
 * a second "normalizer" leaked the first). The tokenizers crate's visitor
 * keeps the last occurrence, and so must the count; a repeated model or
 * pre_tokenizer is refused. Run under ASan as well, which checks the leak.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/io.h"
#include "tok/tok.h"
#include "t.h"

#define FIX t_fixture("tokenizers/prepend_replace.json")

/* FIX with `extra` inserted before its first "key": member. */
static int write_variant(const char *key, const char *extra, const char *path)
{
	struct buf b;
	struct diag d;
	char *at;
	int ok = 0;

	diag_init(&d);
	buf_init(&b, BUF_MAX_DEFAULT);
	if (!io_read_file(FIX, &b, &d) && (at = strstr(b.data, key))) {
		FILE *f = fopen(path, "wb");

		if (f) {
			ok = fwrite(b.data, 1, (size_t)(at - b.data), f) == (size_t)(at - b.data) &&
			     fputs(extra, f) >= 0 && fputs(at, f) >= 0;
			ok = !fclose(f) && ok;
		}
	}
	buf_release(&b);
	return ok;
}

static long count_with(const char *path, enum err *e)
{
	struct tok *t = NULL;
	struct diag d;
	size_t n = 0;

	diag_init(&d);
	*e = tok_load(path, &t, &d);
	if (!*e)
		*e = tok_count(t, "ab cd", 5, &n, &d);
	tok_free(t);
	return *e ? -1 : (long)n;
}

static void test_repeats(void)
{
	char path[] = "/tmp/needle-tok-repeat-XXXXXX";
	int fd = mkstemp(path);
	enum err e;
	long want;

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	want = count_with(FIX, &e);
	CHECK(!e && want > 0);
	/* The first normalizer would prepend "ZZ": it must lose to the second. */
	CHECK(write_variant("\"normalizer\"",
			    "\"normalizer\": {\"type\": \"Prepend\", \"prepend\": \"ZZ\"},\n", path));
	CHECK_EQ_LONG(count_with(path, &e), want);
	CHECK(write_variant("\"post_processor\"", "\"post_processor\": null,\n", path));
	CHECK_EQ_LONG(count_with(path, &e), want);
	CHECK(write_variant("\"pre_tokenizer\"", "\"pre_tokenizer\": null,\n", path));
	CHECK_EQ_LONG(count_with(path, &e), -1);
	CHECK_EQ_LONG(e, ERR_UNSUPPORTED);
	/* Before the pre_tokenizer, where the first model is only skipped. */
	CHECK(write_variant("\"version\"", "\"model\": null,\n", path));
	CHECK_EQ_LONG(count_with(path, &e), -1);
	CHECK_EQ_LONG(e, ERR_UNSUPPORTED);
	remove(path);
	close(fd);
}

int main(void)
{
	T_RUN(test_repeats);
	return T_DONE();
}
