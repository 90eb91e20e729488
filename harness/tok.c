/* The tokenizer front: picks the implementation from the file, validates
 * UTF-8 once, and keeps the file's SHA-256. */
#include "tok.h"

#include <string.h>

#include "buf.h"
#include "mem.h"
#include "spm.h"
#include "tok_hf.h"

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
	else if (io_map_file(path, BUF_MAX_DEFAULT, &map, &map_len)) {
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
	enum err e = tok_check_utf8(text, len, d);

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
	enum err e = tok_check_utf8(text, len, d);
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

/* The end of the run of valid 3-byte characters from s[i] whose lead byte
 * puts no bound on the second byte (E1..EC, EE..EF: most of CJK), each a
 * lead then two continuation bytes. */
static size_t skip_3byte(const unsigned char *s, size_t len, size_t i)
{
	while (i + 3 <= len) {
		uint32_t w = s[i] | (uint32_t)s[i + 1] << 8 | (uint32_t)s[i + 2] << 16;

		if ((w & 0xC0C0F0) != 0x8080E0 || (w & 0x0F) == 0 || (w & 0x0F) == 0x0D)
			break;
		i += 3;
	}
	return i;
}

/* RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF. */
enum err tok_check_utf8(const char *text, size_t len, struct diag *d)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t i = 0;

	while (i < len) {
		unsigned char c = s[i];
		size_t n, k;
		unsigned lo = 0x80, hi = 0xBF;
		uint64_t v;

		if (i + 8 <= len) {
			memcpy(&v, s + i, 8);
			if (!(v & 0x8080808080808080ULL)) {
				i += 8;
				continue;
			}
		}
		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xE1 && c != 0xED && c <= 0xEF) {
			if ((i = skip_3byte(s, len, i)) >= len)
				break;
			if ((c = s[i]) < 0x80)
				continue;
		}
		if (c >= 0xC2 && c <= 0xDF)
			n = 2;
		else if (c >= 0xE0 && c <= 0xEF)
			n = 3;
		else if (c >= 0xF0 && c <= 0xF4)
			n = 4;
		else
			goto bad;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
		else if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
		if (i + n > len)
			goto bad;
		if (s[i + 1] < lo || s[i + 1] > hi)
			goto bad_at_next;
		for (k = 2; k < n; k++) {
			if ((s[i + k] & 0xC0) != 0x80) {
				i += k;
				goto bad;
			}
		}
		i += n;
	}
	return ERR_OK;
bad_at_next:
	i++;
bad:
	return diag_fail(d, ERR_INPUT, "invalid UTF-8 at byte %zu", i);
}
