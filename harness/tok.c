/* Placeholder until the tokenizer lands (tok_hf.c, spm.cc). */
#include "tok.h"

enum err tok_load(const char *path, struct tok **out, struct diag *d)
{
	*out = NULL;
	return diag_fail(d, ERR_UNSUPPORTED, "cannot load tokenizer '%s': not implemented yet", path);
}

void tok_free(struct tok *t)
{
	(void)t;
}

enum err tok_count(const struct tok *t, const char *text, size_t len,
		   size_t *count, struct diag *d)
{
	(void)t, (void)text, (void)len, (void)count;
	return diag_fail(d, ERR_UNSUPPORTED, "not implemented yet");
}

enum err tok_encode(const struct tok *t, const char *text, size_t len,
		    int add_special, uint32_t **ids, size_t *n, size_t *cap,
		    struct diag *d)
{
	(void)t, (void)text, (void)len, (void)add_special, (void)ids, (void)n, (void)cap;
	return diag_fail(d, ERR_UNSUPPORTED, "not implemented yet");
}

const char *tok_sha256(const struct tok *t)
{
	(void)t;
	return "";
}

const char *tok_kind(const struct tok *t)
{
	(void)t;
	return "";
}

enum err tok_check_utf8(const char *text, size_t len, struct diag *d)
{
	(void)text, (void)len;
	return diag_fail(d, ERR_UNSUPPORTED, "not implemented yet");
}
