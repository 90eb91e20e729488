/*
 * tpl_setup — the one call commands use to get their tokenizer and chat
 * template from --tokenizer (a file, or a model folder: tpl_model.h) and
 * --template (tpl.h's tpl_open).
 */
#ifndef NEEDLE_TPL_SETUP_H
#define NEEDLE_TPL_SETUP_H

#include "base/buf.h"
#include "base/err.h"

struct tok;
struct tpl;

/* What a command loads from its --tokenizer and --template (either may be
 * NULL): *tok when `tok` is not NULL and a tokenizer is named (a file, or a
 * folder's tokenizer), *tpl when `tpl` is not NULL and a template is named or
 * the folder has one (tpl_open). Lines for the user (one "warning: ..." per
 * line: the deployment's template differs from the descriptor named, the
 * tokenizer lacks special tokens of the template) are appended to `warn`.
 * On failure nothing is returned (*tok and *tpl NULL). */
enum err tpl_setup(const char *tokenizer_arg, const char *template_arg, struct tok **tok,
		   struct tpl **tpl, struct buf *warn, struct diag *d);

#endif
