/*
 * tpl_model — a model folder as vLLM reads it, and the template file that
 * --template names (tpl_setup.h reads both for a command).
 *
 * A model folder (`--tokenizer DIR`) holds:
 *   tokenizer.json, else tokenizer.model (sentencepiece): the tokenizer;
 *   tokenizer_config.json: bos_token / eos_token (strings or AddedToken
 *     objects {"content": ...}), add_bos_token, and chat_template: a string,
 *     or a list of {"name", "template"} where "default" serves requests
 *     without tools and "tool_use" (else "default") requests with tools;
 *   chat_template.jinja: the tokenizer's template file, which transformers
 *     prefers to tokenizer_config.json's chat_template;
 *   chat_template.json: a processor's template ({"chat_template": ...}).
 * The template of a request is chosen in vLLM's order
 * (chat_utils.resolve_hf_chat_template): the processor's template, but only
 * when the request has no tools; then the tokenizer's (chat_template.jinja,
 * else tokenizer_config.json's). So one folder can hold two templates: one
 * for requests without tools, one for requests with them.
 */
#ifndef NEEDLE_TPL_MODEL_H
#define NEEDLE_TPL_MODEL_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/io.h"

/* One chat template text and where it came from; every member owned. */
struct tpl_text {
	char *path;                /* the file, NULL when there is no template */
	char *text;                /* the template, NUL-terminated */
	size_t len;
	char sha[IO_SHA256_HEX];   /* SHA-256 of the text */
	char *why;                 /* one sentence: why this file (for --explain) */
};

struct tpl_model {
	char *dir;                 /* the folder */
	char *tokenizer;           /* tokenizer.json or tokenizer.model inside it */
	struct tpl_text plain;     /* the template of requests without tools */
	struct tpl_text tools;     /* the template of requests with tools */
	char *bos, *eos;           /* special tokens, NULL when not given */
	int add_bos;               /* add_bos_token: 1, 0, or -1 when absent */
	cJSON *specials;           /* {"bos_token": "<s>", ...}: every *_token given as a
				    * string or AddedToken, and additional_special_tokens,
				    * as transformers hands them to a template; NULL if none */
};

/* Whether `path` names a directory. */
int tpl_model_is_dir(const char *path);

/* Reads the model folder `dir` into `m` (zeroed first). ERR_INPUT for a
 * folder with neither tokenizer file and for a malformed
 * tokenizer_config.json or chat_template.json (file and JSON path named);
 * a folder without any template is not an error here (m->plain.text is
 * NULL). Release `m` with tpl_model_release even on failure. */
enum err tpl_model_open(struct tpl_model *m, const char *dir, struct diag *d);
/* Frees what `m` holds and zeroes it; accepts a zeroed one. */
void tpl_model_release(struct tpl_model *m);

/* Reads the template that --template names when it is a file: a .jinja file
 * (the whole text), or a tokenizer_config.json (its chat_template, the named
 * one for `tools` as above). ERR_INPUT when the file holds no template. */
enum err tpl_model_template_file(struct tpl_text *t, const char *path, int tools,
				 struct diag *d);
/* Frees what `t` holds and zeroes it. */
void tpl_text_release(struct tpl_text *t);

#endif
