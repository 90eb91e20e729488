/*
 * tpl_server — vLLM or SGLang; see tpl_server.h.
 */
#include "tpl_server.h"

#include <string.h>

const char *tpl_server_name(enum tpl_server s)
{
	return s == TPL_SERVER_SGLANG ? "sglang" : "vllm";
}

enum err tpl_server_parse(const char *name, enum tpl_server *out, struct diag *d)
{
	if (!strcmp(name, "vllm"))
		*out = TPL_SERVER_VLLM;
	else if (!strcmp(name, "sglang"))
		*out = TPL_SERVER_SGLANG;
	else
		return diag_fail(d, ERR_USAGE, "unknown server '%s': expected vllm or sglang", name);
	return ERR_OK;
}
