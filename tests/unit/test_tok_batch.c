/*
 * Batched counting (bpe_count_many, tok_bpe.h) against the plain path: the
 * count of a text (scanners, batches, the L0 and count caches, the
 * whole-token filter) equals the number of ids its encoding gives (one
 * model run per pre-token, no cache), on the four real tokenizers and on
 * the fuzz corpus's tokenizers; and bpe_count_many over random batches
 * (repeated pieces, pieces ending at the text's end, pieces too long for
 * either cache) equals the sum of the pieces' own encodings. Texts: a mixed
 * text, natural Chinese (fortunes-zh, from tests/setup.sh) and the bench
 * corpora when a bench run has left them in build/bench. Run from the
 * repository root; also under ASan, on shorter texts.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/io.h"
#include "base/mem.h"
#include "tok/tok_bpe.h"
#include "tok/tok_hf.h"
#include "tok/tok_int.h"
#include "t.h"

#define REAL "hf/%s/tokenizer.json" /* t_fixture names */
#define FUZZ_DIR "tests/fuzz/corpus/tok"
#ifdef __SANITIZE_ADDRESS__
#define TEXT_MAX ((size_t)256 << 10)
#else
#define TEXT_MAX ((size_t)64 << 20)
#endif

static const char *const REALS[] = {"deepseek_v3", "qwen3", "llama3", "gpt4o"};
static const char *const TEXTS[] = {"/usr/share/games/fortunes/chinese", "build/bench/english.txt",
				    "build/bench/chinese.txt"};

static const char mixed_line[] =
	"It's 2024: the model's ids (1234567) don't change.\n"
	"int main(void) { return x->y[3] /* \xe4\xb8\xad */; }\n"
	"  indented line\twith tabs\n\n\nTriple newline above\r\n"
	"\xe4\xb8\xad\xe6\x96\x87\xe5\x8f\xa5\xe5\xad\x90\xe3\x80\x82 antidisestablishmentarianism\n"
	"caf\xc3\xa9 na\xc3\xafve \xce\x95\xce\xbb\xce\xbb\xce\xac\xce\xb4\xce\xb1 \xf0\x9f\x98\x80\n"
	"URL http://x.org/a/b?q=1&r=2 ---------------------------------------- end\n"
	"abc123def 4x4 v2.0.1 \xe4\xb8\xad" "3\xe6\x96\x87 x\xe4\xb8\xad" "x 12345678901\n";

static struct tok_hf *load(const char *path)
{
	struct tok_hf *h = NULL;
	struct buf b;
	struct diag d;

	diag_init(&d);
	buf_init(&b, BUF_MAX_DEFAULT);
	if (io_read_file(path, &b, &d) || tok_hf_load(path, b.data, b.len, &h, &d))
		h = NULL;
	buf_release(&b);
	return h;
}

/* The count of s[0..n) equals the number of its ids. */
static void check_count(const struct tok_hf *h, const char *tok, const char *name,
			const char *s, size_t n)
{
	uint32_t *ids = NULL;
	size_t nids = 0, cap = 0, c = 0;
	struct diag d;

	diag_init(&d);
	CHECK(tok_hf_count(h, s, n, &c, &d) == ERR_OK);
	CHECK(tok_hf_encode(h, s, n, 0, &ids, &nids, &cap, &d) == ERR_OK);
	if (c != nids)
		fprintf(stderr, "  %s on %s: count %zu, %zu ids\n", tok, name, c, nids);
	CHECK(c == nids);
	CHECK(nids > 0);
	mem_free(ids);
}

/* The pieces' own encodings, one model run each. */
static size_t encoded(const struct bpe *b, const char *s, const size_t *ms, const size_t *me,
		      size_t k)
{
	struct bpe_work *w = NULL;
	uint32_t *ids = NULL;
	size_t nids = 0, cap = 0, i;
	enum err e = bpe_work_new(&w);

	for (i = 0; !e && i < k; i++)
		e = bpe_encode(b, w, s + ms[i], me[i] - ms[i], &ids, &nids, &cap);
	CHECK(e == ERR_OK);
	bpe_work_free(w);
	mem_free(ids);
	return nids;
}

/* Random batches of pieces of s[0..n) (valid UTF-8 cut at character
 * starts) through one work, so later batches meet cached pieces. */
static void check_batches(const struct bpe *b, const char *tok, const char *s, size_t n)
{
	static size_t ms[BPE_BATCH_MAX], me[BPE_BATCH_MAX];
	struct bpe_work *w = NULL;
	unsigned seed = 7;
	size_t round, i, k, sum;

	CHECK(bpe_work_new(&w) == ERR_OK);
	for (round = 0; w && round < 40; round++) {
		k = 1 + (size_t)rand_r(&seed) % BPE_BATCH_MAX;
		for (i = 0; i < k; i++) {
			size_t at, len;

			if (i && rand_r(&seed) % 4 == 0) { /* a piece again */
				at = (size_t)rand_r(&seed) % i;
				ms[i] = ms[at], me[i] = me[at];
				continue;
			}
			len = 1 + (size_t)rand_r(&seed) % (rand_r(&seed) % 8 ? 20 : 400);
			at = rand_r(&seed) % 8 ? (size_t)rand_r(&seed) % n : n - 1 - (size_t)rand_r(&seed) % 20;
			while (at && ((unsigned char)s[at] & 0xC0) == 0x80)
				at--;
			len = len > n - at ? n - at : len;
			while (at + len < n && ((unsigned char)s[at + len] & 0xC0) == 0x80)
				len++;
			ms[i] = at, me[i] = at + len;
		}
		sum = 0;
		CHECK(bpe_count_many(b, w, s, n, ms, me, k, &sum) == ERR_OK);
		if (sum != encoded(b, s, ms, me, k))
			fprintf(stderr, "  %s: batch %zu of %zu pieces: %zu tokens, encoded %zu\n", tok,
				round, k, sum, encoded(b, s, ms, me, k));
		CHECK(sum == encoded(b, s, ms, me, k));
	}
	bpe_work_free(w);
}

static void test_real(void)
{
	struct buf mixed, text;
	struct diag d;
	size_t i, j;

	buf_init(&mixed, BUF_MAX_DEFAULT);
	buf_init(&text, BUF_MAX_DEFAULT);
	for (i = 0; i < 100; i++)
		buf_append(&mixed, mixed_line, sizeof(mixed_line) - 1);
	for (i = 0; i < sizeof(REALS) / sizeof(REALS[0]); i++) {
		char name[256];
		struct tok_hf *h;

		snprintf(name, sizeof(name), REAL, REALS[i]);
		CHECK((h = load(t_fixture(name))) != NULL);
		if (!h)
			continue;
		check_count(h, REALS[i], "mixed", mixed.data, mixed.len);
		check_batches(h->bpe, REALS[i], mixed.data, mixed.len);
		for (j = 0; j < sizeof(TEXTS) / sizeof(TEXTS[0]); j++) {
			diag_init(&d);
			buf_reset(&text);
			if (io_read_file(TEXTS[j], &text, &d)) {
				CHECK(j > 0); /* fortunes-zh is installed; the bench corpora may be absent */
				if (!i)
					fprintf(stderr, "  (no %s: a bench run leaves it)\n", TEXTS[j]);
				continue;
			}
			while (text.len > TEXT_MAX || (text.len && text.data[text.len - 1] != '\n'))
				text.len--; /* whole lines: valid UTF-8 */
			check_count(h, REALS[i], TEXTS[j], text.data, text.len);
		}
		tok_hf_free(h);
	}
	buf_release(&mixed);
	buf_release(&text);
}

/* The fuzz corpus's tokenizers (each a different model or pre-tokenizer
 * set-up) on the mixed text. */
static void test_fuzz_corpus(void)
{
	DIR *dir = opendir(FUZZ_DIR);
	struct dirent *e;
	int loaded = 0;

	CHECK(dir != NULL);
	while (dir && (e = readdir(dir))) {
		char path[512];
		struct tok_hf *h;

		if (!strstr(e->d_name, ".json"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", FUZZ_DIR, e->d_name);
		if (!(h = load(path)))
			continue;
		loaded++;
		check_count(h, e->d_name, "mixed", mixed_line, sizeof(mixed_line) - 1);
		check_batches(h->bpe, e->d_name, mixed_line, sizeof(mixed_line) - 1);
		tok_hf_free(h);
	}
	if (dir)
		closedir(dir);
	CHECK(loaded >= 5);
}

int main(void)
{
	T_RUN(test_real);
	T_RUN(test_fuzz_corpus);
	return T_DONE();
}
