/* The tokenizer front: picks the implementation from the file, validates
 * UTF-8 once, and keeps the file's SHA-256. */
#include "tok.h"

#include <string.h>

#include "base/buf.h"
#include "base/mem.h"
#include "spm.h"
#include "tok_hf.h"
#include "base/utf8.h"

/* The SHA-256 is computed on first use (hashing an 8 MB file is a tenth of
 * a count's time): `sha` lives in memory of its own so that the const
 * accessor may fill it. */
struct tok_sha {
	char hex[IO_SHA256_HEX]; /* "" until computed */
	char *path;              /* owned */
};

struct tok {
	struct tok_hf *hf;  /* exactly one of hf and spm is set */
	struct spm *spm;
	struct tok_sha *sha;
};

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

enum err tok_load(const char *path, struct tok **out, struct diag *d)
{
	struct tok *t = mem_calloc(1, sizeof(*t));
	struct buf raw;
	const char *map;
	size_t map_len = 0;
	enum err e;

	*out = NULL;
	if (!t)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	buf_init(&raw, BUF_MAX_DEFAULT);
	t->sha = mem_calloc(1, sizeof(*t->sha));
	if (t->sha)
		t->sha->path = mem_strndup(path, strlen(path));
	if (!t->sha || !t->sha->path)
		e = diag_fail(d, ERR_NOMEM, "out of memory");
	else if (ends_with(path, ".model"))
		e = spm_load(path, &t->spm, d);
	else if ((e = tok_hf_load_known(path, &t->hf, d)) || t->hf)
		; /* from the cache, the JSON unread */
	else if (io_map_file(path, 0, BUF_MAX_DEFAULT, &map, &map_len)) {
		e = tok_hf_load(path, map, map_len, &t->hf, d);
		io_unmap_file(map, map_len);
	} else if (!(e = io_read_file(path, &raw, d))) {
		e = tok_hf_load(path, raw.data, raw.len, &t->hf, d);
	}
	buf_release(&raw);
	if (e) {
		tok_free(t);
		return e;
	}
	*out = t;
	return ERR_OK;
}

void tok_free(struct tok *t)
{
	if (!t)
		return;
	tok_hf_free(t->hf);
	spm_free(t->spm);
	if (t->sha)
		mem_free(t->sha->path);
	mem_free(t->sha);
	mem_free(t);
}

enum err tok_count(const struct tok *t, const char *text, size_t len,
		   size_t *count, struct diag *d)
{
	uint32_t *ids = NULL;
	size_t n = 0, cap = 0;
	enum err e = utf8_check(text, len, d);

	*count = 0;
	if (e)
		return e;
	if (t->hf)
		return tok_hf_count(t->hf, text, len, count, d);
	e = spm_encode(t->spm, text, len, &ids, &n, &cap, d);
	*count = n;
	mem_free(ids);
	return e;
}

enum err tok_encode(const struct tok *t, const char *text, size_t len,
		    int add_special, uint32_t **ids, size_t *n, size_t *cap,
		    struct diag *d)
{
	enum err e = utf8_check(text, len, d);
	int bos;

	if (e)
		return e;
	if (t->hf)
		return tok_hf_encode(t->hf, text, len, add_special, ids, n, cap, d);
	bos = spm_bos_id(t->spm);
	if (add_special && bos >= 0) {
		if (*n == *cap) {
			uint32_t *p = mem_grow(*ids, cap, sizeof(*p), 256);

			if (!p)
				return diag_fail(d, ERR_NOMEM, "out of memory");
			*ids = p;
		}
		(*ids)[(*n)++] = (uint32_t)bos;
	}
	return spm_encode(t->spm, text, len, ids, n, cap, d);
}

const char *tok_sha256(const struct tok *t)
{
	struct diag d;

	diag_init(&d);
	if (!t->sha->hex[0] && t->hf)
		memcpy(t->sha->hex, tok_hf_sha256(t->hf), IO_SHA256_HEX);
	if (!t->sha->hex[0] && io_sha256_file(t->sha->path, t->sha->hex, &d))
		t->sha->hex[0] = '\0';
	return t->sha->hex;
}

const char *tok_kind(const struct tok *t)
{
	return t->hf ? "hf-bpe" : "sentencepiece";
}
