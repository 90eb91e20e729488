/*
 * tpl_server — which server's request handling a render reproduces (vLLM or
 * SGLang), on its own so that a module that only names the server (the
 * endpoint's detection, the command line) needs not the whole of tpl.h.
 */
#ifndef NEEDLE_TPL_SERVER_H
#define NEEDLE_TPL_SERVER_H

#include "base/err.h"

/* The zero value is vLLM. */
enum tpl_server { TPL_SERVER_VLLM = 0, TPL_SERVER_SGLANG = 1 };

/* "vllm" or "sglang". Static. */
const char *tpl_server_name(enum tpl_server s);
/* Parses "vllm" or "sglang"; ERR_USAGE names the accepted values. */
enum err tpl_server_parse(const char *name, enum tpl_server *out,
			  struct diag *d);

#endif
