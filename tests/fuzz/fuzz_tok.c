/*
 * fuzz_tok — the tokenizer.json loader (harness/tok/tok.h, tok_hf.c): arbitrary
 * bytes as a tokenizer file. A tokenizer that loads encodes a fixed text that
 * touches every pre-tokenizer class (letters, digits, spaces, newlines,
 * punctuation, CJK, an emoji, a combining accent) plus the first bytes of the
 * input itself when they are valid UTF-8; the count and the ids must agree.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "base/utf8.h"
#include "tmpfile.h"
#include "tok/tok.h"

static const char text[] =
	"Hello, world! It's 2024-06-01 at 12:30.\n\n  indented\ttab "
	"caf\xc3\xa9 cafe\xcc\x81 \xe4\xbd\xa0\xe5\xa5\xbd\xe4\xb8\x96\xe7\x95\x8c "
	"\xf0\x9f\x98\x80 <|endoftext|> <s> [UNK] ab ba aab bba \xe2\x96\x81x";

static void encode(const struct tok *t, const char *s, size_t len)
{
	uint32_t *ids = NULL;
	size_t n = 0, cap = 0, count = 0;
	struct diag d;

	diag_init(&d);
	if (!tok_count(t, s, len, &count, &d) &&
	    !tok_encode(t, s, len, 0, &ids, &n, &cap, &d) && n != count)
		abort();
	n = 0;
	(void)tok_encode(t, s, len, 1, &ids, &n, &cap, &d);
	mem_free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_tmp_write(data, size, ".json");
	size_t prefix = size < 256 ? size : 256;
	struct tok *t = NULL;
	struct diag d;

	diag_init(&d);
	if (!path)
		abort();
	/* each input would leave a tokenizer cache file behind (tok_cache.h) */
	setenv("NEEDLE_NO_CACHE", "1", 1);
	if (!tok_load(path, &t, &d)) {
		if (strcmp(tok_kind(t), "hf-bpe"))
			abort();
		encode(t, text, sizeof(text) - 1);
		if (!utf8_check((const char *)data, prefix, &d))
			encode(t, (const char *)data, prefix);
	}
	tok_free(t);
	return 0;
}
