// spm — the extern "C" shim over the sentencepiece library (spm.h). This is the
// only C++ file in needle: no exception and no util::Status leaves it; each
// becomes an enum err plus a diagnostic naming the model file.
//
// The model is read with io_read_file and handed to LoadFromSerializedProto, so
// a missing file gets the same message as everywhere else in needle and a
// corrupt one is reported by sentencepiece's own parser ("cannot parse model").
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include <sentencepiece_processor.h>

extern "C" {
#include "base/buf.h"
#include "base/io.h"
#include "base/mem.h"
#include "spm.h"
}

struct spm {
	sentencepiece::SentencePieceProcessor proc;
	std::string path;
};

// Maps a sentencepiece status code to needle's: a model the library rejects is
// bad input; anything else is the library failing. (A protobuf that does not
// parse comes back as kInternal and is caught by name in spm_load_bytes.)
static enum err spm_code(sentencepiece::util::StatusCode c)
{
	using sentencepiece::util::StatusCode;
	switch (c) {
	case StatusCode::kInvalidArgument:
	case StatusCode::kDataLoss:
	case StatusCode::kOutOfRange:
	case StatusCode::kFailedPrecondition:
	case StatusCode::kNotFound:
		return ERR_INPUT;
	case StatusCode::kUnimplemented:
		return ERR_UNSUPPORTED;
	case StatusCode::kResourceExhausted:
		return ERR_NOMEM;
	default:
		return ERR_INTERNAL;
	}
}

static enum err spm_status(const sentencepiece::util::Status &st, const char *what,
			   const char *path, struct diag *d)
{
	return diag_fail(d, spm_code(st.code()), "cannot %s '%s': sentencepiece: %s",
			 what, path, st.error_message());
}

static enum err spm_load_bytes(struct spm *s, const struct buf *raw,
			       const char *path, struct diag *d)
{
	sentencepiece::util::Status st;

	if (raw->len == 0)
		return diag_fail(d, ERR_INPUT, "cannot load sentencepiece model '%s': empty file", path);
	st = s->proc.LoadFromSerializedProto(std::string_view(raw->data, raw->len));
	if (!st.ok() && strstr(st.error_message(), "ParseFromArray"))
		return diag_fail(d, ERR_INPUT,
				 "cannot load sentencepiece model '%s': not a valid model file "
				 "(the protobuf does not parse; truncated or corrupt?)", path);
	if (!st.ok())
		return spm_status(st, "load sentencepiece model", path, d);
	if (s->proc.GetPieceSize() <= 0)
		return diag_fail(d, ERR_INPUT, "cannot load sentencepiece model '%s': no pieces", path);
	return ERR_OK;
}

extern "C" enum err spm_load(const char *path, struct spm **out, struct diag *d)
{
	struct spm *s = nullptr;
	struct buf raw;
	enum err e;

	*out = nullptr;
	buf_init(&raw, BUF_MAX_DEFAULT);
	e = io_read_file(path, &raw, d);
	if (e)
		goto out;
	try {
		s = new struct spm;
		s->path = path;
		e = spm_load_bytes(s, &raw, path, d);
	} catch (const std::bad_alloc &) {
		e = diag_fail(d, ERR_NOMEM, "cannot load sentencepiece model '%s': out of memory", path);
	} catch (const std::exception &x) {
		e = diag_fail(d, ERR_INPUT, "cannot load sentencepiece model '%s': %s", path, x.what());
	} catch (...) {
		e = diag_fail(d, ERR_INTERNAL, "cannot load sentencepiece model '%s': unknown exception", path);
	}
	if (!e) {
		*out = s;
		s = nullptr;
	}
out:
	delete s;
	buf_release(&raw);
	return e;
}

extern "C" void spm_free(struct spm *s)
{
	delete s;
}

// Appends `v` to the caller's id array, growing it geometrically.
static enum err spm_append(const std::vector<int> &v, uint32_t **ids, size_t *n,
			   size_t *cap, struct diag *d)
{
	if (*n + v.size() > *cap) {
		size_t want = *cap ? *cap : 64;
		uint32_t *p;

		while (want < *n + v.size())
			want *= 2;
		p = static_cast<uint32_t *>(mem_realloc(*ids, want * sizeof **ids));
		if (!p)
			return diag_fail(d, ERR_NOMEM, "cannot store %zu token ids: out of memory", *n + v.size());
		*ids = p;
		*cap = want;
	}
	for (int id : v)
		(*ids)[(*n)++] = static_cast<uint32_t>(id);
	return ERR_OK;
}

// One Encode over the whole text (docs/tokenizers.md "sentencepiece"):
// sentencepiece's Encode grows super-linearly, but splitting
// the text changes counts for identity-normalised models with no whitespace
// collapsing, so needle keeps whole-text encoding: exact first, fast second.
extern "C" enum err spm_encode(const struct spm *s, const char *text, size_t len,
			       uint32_t **ids, size_t *n, size_t *cap, struct diag *d)
{
	try {
		std::vector<int> v;
		sentencepiece::util::Status st =
			s->proc.Encode(std::string_view(text, len), &v);

		if (!st.ok())
			return spm_status(st, "encode with", s->path.c_str(), d);
		return spm_append(v, ids, n, cap, d);
	} catch (const std::bad_alloc &) {
		return diag_fail(d, ERR_NOMEM, "cannot encode with '%s': out of memory", s->path.c_str());
	} catch (const std::exception &x) {
		return diag_fail(d, ERR_INTERNAL, "cannot encode with '%s': %s", s->path.c_str(), x.what());
	} catch (...) {
		return diag_fail(d, ERR_INTERNAL, "cannot encode with '%s': unknown exception", s->path.c_str());
	}
}

extern "C" int spm_bos_id(const struct spm *s)
{
	try {
		int id = s->proc.bos_id();

		return id >= 0 && id < s->proc.GetPieceSize() ? id : -1;
	} catch (...) {
		return -1;
	}
}
