/*
 * test_spm — the sentencepiece shim against the library's own command-line
 * encoder: every line of fixtures/spm/corpus.txt must get exactly the ids that
 * `spm_encode --output_format=id` prints, for each committed model (BPE with a
 * user-defined symbol and byte fallback, unigram, identity-normalised BPE).
 * Bad models (corrupt, truncated, empty, missing) must fail with ERR_INPUT or
 * ERR_IO and a message naming the file. Run from the repository root.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/io.h"
#include "base/mem.h"
#include "tok/spm.h"
#include "t.h"

#define CORPUS t_fixture("spm/corpus.txt")

/* t_fixture names */
static const char *const models[] = {
	"spm/bpe.model",
	"spm/unigram.model",
	"spm/identity.model",
};

/* The ids `spm_encode` prints for `line` (the reference), as text. */
static int reference_ids(FILE *ref, struct buf *line)
{
	int c;

	buf_reset(line);
	while ((c = fgetc(ref)) != EOF && c != '\n')
		if (buf_putc(line, (char)c))
			return -1;
	return c == EOF && line->len == 0 ? -1 : 0;
}

/* Our ids for `text`, formatted the way spm_encode prints them. */
static int shim_ids(const struct spm *s, const char *text, size_t len,
		    struct buf *out)
{
	uint32_t *ids = NULL;
	size_t n = 0, cap = 0, i;
	struct diag d;
	enum err e;

	diag_init(&d);
	buf_reset(out);
	e = spm_encode(s, text, len, &ids, &n, &cap, &d);
	if (e)
		fprintf(stderr, "spm_encode: %s\n", d.msg);
	for (i = 0; !e && i < n; i++)
		e = buf_printf(out, i ? " %u" : "%u", ids[i]);
	mem_free(ids);
	return e ? -1 : 0;
}

static void check_model_against_spm_encode(const char *model)
{
	struct buf corpus, cmd, want, got;
	struct spm *s = NULL;
	struct diag d;
	size_t pos = 0, lines = 0;
	FILE *ref = NULL;

	diag_init(&d);
	buf_init(&corpus, BUF_MAX_DEFAULT);
	buf_init(&cmd, 4096);
	buf_init(&want, BUF_MAX_DEFAULT);
	buf_init(&got, BUF_MAX_DEFAULT);
	CHECK(io_read_file(CORPUS, &corpus, &d) == ERR_OK);
	CHECK(spm_load(model, &s, &d) == ERR_OK);
	if (d.code) {
		fprintf(stderr, "%s\n", d.msg);
		goto out;
	}
	CHECK(buf_printf(&cmd, "spm_encode --model=%s --output_format=id < %s",
			 model, CORPUS) == ERR_OK);
	ref = popen(cmd.data, "r");
	CHECK(ref != NULL);
	while (ref && pos < corpus.len) {
		char *nl = memchr(corpus.data + pos, '\n', corpus.len - pos);
		size_t end = nl ? (size_t)(nl - corpus.data) : corpus.len;

		lines++;
		CHECK(reference_ids(ref, &want) == 0);
		CHECK(shim_ids(s, corpus.data + pos, end - pos, &got) == 0);
		if (strcmp(want.data, got.data))
			fprintf(stderr, "%s line %zu: spm_encode '%s', shim '%s'\n",
				model, lines, want.data, got.data);
		CHECK_STR(got.data, want.data);
		pos = end + 1;
	}
	CHECK(lines >= 20);
out:
	if (ref)
		CHECK(pclose(ref) == 0);
	spm_free(s);
	buf_release(&corpus);
	buf_release(&cmd);
	buf_release(&want);
	buf_release(&got);
}

static void test_against_spm_encode(void)
{
	size_t i;

	for (i = 0; i < sizeof models / sizeof models[0]; i++)
		check_model_against_spm_encode(t_fixture(models[i]));
}

/* Encoding appends: two calls give the concatenation, and `cap` grows. */
static void test_append_and_empty(void)
{
	uint32_t *ids = NULL;
	size_t n = 0, cap = 0, first;
	struct spm *s = NULL;
	struct diag d;

	diag_init(&d);
	CHECK(spm_load(t_fixture(models[0]), &s, &d) == ERR_OK);
	if (!s)
		return;
	CHECK(spm_encode(s, "", 0, &ids, &n, &cap, &d) == ERR_OK);
	CHECK_EQ_LONG(n, 0);
	CHECK(spm_encode(s, "Hello world", 11, &ids, &n, &cap, &d) == ERR_OK);
	first = n;
	CHECK(first > 0);
	CHECK(spm_encode(s, "Hello world", 11, &ids, &n, &cap, &d) == ERR_OK);
	CHECK_EQ_LONG(n, 2 * first);
	CHECK(cap >= n);
	CHECK(n >= 2 && memcmp(ids, ids + first, first * sizeof *ids) == 0);
	/* spm_train's defaults: unk 0, bos 1, eos 2; Encode adds neither. */
	CHECK_EQ_LONG(spm_bos_id(s), 1);
	CHECK(ids[0] != 1);
	mem_free(ids);
	spm_free(s);
	spm_free(NULL);
}

static void expect_load_error(const char *path, enum err code, const char *needle)
{
	struct spm *s = (struct spm *)1;
	struct diag d;

	diag_init(&d);
	CHECK_EQ_LONG(spm_load(path, &s, &d), code);
	CHECK(s == NULL);
	CHECK(strstr(d.msg, path) != NULL);
	if (needle && !strstr(d.msg, needle))
		fprintf(stderr, "message '%s' lacks '%s'\n", d.msg, needle);
	CHECK(!needle || strstr(d.msg, needle) != NULL);
}

static void write_file(const char *path, const void *p, size_t n)
{
	struct diag d;

	diag_init(&d);
	CHECK(io_write_file(path, p, n, &d) == ERR_OK);
}

static void test_bad_models(void)
{
	char dir[] = "/tmp/needle-spm-XXXXXX";
	struct buf raw, path;
	struct diag d;

	diag_init(&d);
	buf_init(&raw, BUF_MAX_DEFAULT);
	buf_init(&path, 4096);
	CHECK(mkdtemp(dir) != NULL);
	CHECK(io_read_file(t_fixture(models[0]), &raw, &d) == ERR_OK);

	buf_printf(&path, "%s/garbage.model", dir);
	write_file(path.data, "this is not a protobuf\x01\x02\xff", 25);
	expect_load_error(path.data, ERR_INPUT, "sentencepiece");

	buf_reset(&path);
	buf_printf(&path, "%s/truncated.model", dir);
	write_file(path.data, raw.data, raw.len / 2);
	expect_load_error(path.data, ERR_INPUT, "sentencepiece");

	buf_reset(&path);
	buf_printf(&path, "%s/empty.model", dir);
	write_file(path.data, "", 0);
	expect_load_error(path.data, ERR_INPUT, "empty file");

	buf_reset(&path);
	buf_printf(&path, "%s/missing.model", dir);
	expect_load_error(path.data, ERR_IO, NULL);

	buf_reset(&path);
	buf_printf(&path, "rm -rf %s", dir);
	CHECK(system(path.data) == 0);
	buf_release(&raw);
	buf_release(&path);
}

int main(void)
{
	T_RUN(test_against_spm_encode);
	T_RUN(test_append_and_empty);
	T_RUN(test_bad_models);
	return T_DONE();
}
