// Placeholder until the sentencepiece shim lands.
extern "C" {
#include "spm.h"
}

extern "C" enum err spm_load(const char *path, struct spm **out, struct diag *d)
{
	*out = nullptr;
	return diag_fail(d, ERR_UNSUPPORTED, "cannot load '%s': sentencepiece is not implemented yet", path);
}

extern "C" void spm_free(struct spm *s)
{
	(void)s;
}

extern "C" enum err spm_encode(const struct spm *s, const char *text, size_t len,
			       uint32_t **ids, size_t *n, size_t *cap, struct diag *d)
{
	(void)s, (void)text, (void)len, (void)ids, (void)n, (void)cap;
	return diag_fail(d, ERR_UNSUPPORTED, "sentencepiece is not implemented yet");
}

extern "C" int spm_bos_id(const struct spm *s)
{
	(void)s;
	return -1;
}
