/* Placeholder until the chat templates land. */
#include "tpl.h"

enum err tpl_load(const char *name_or_path, struct tpl **out, struct diag *d)
{
	*out = NULL;
	return diag_fail(d, ERR_UNSUPPORTED, "cannot load template '%s': not implemented yet", name_or_path);
}

void tpl_free(struct tpl *t)
{
	(void)t;
}

enum err tpl_render(const struct tpl *t, const cJSON *messages,
		    const cJSON *tools, const cJSON *kwargs,
		    int add_generation_prompt, struct buf *out, struct diag *d)
{
	(void)t, (void)messages, (void)tools, (void)kwargs, (void)add_generation_prompt, (void)out;
	return diag_fail(d, ERR_UNSUPPORTED, "not implemented yet");
}

const char *tpl_name(const struct tpl *t)
{
	(void)t;
	return "";
}

const char *tpl_sha256(const struct tpl *t)
{
	(void)t;
	return "";
}
