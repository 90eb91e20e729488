/* tpl_setup — a command's tokenizer and template (see tpl_setup.h). */
#include "tpl_setup.h"

#include <string.h>

#include "tok/tok.h"
#include "tpl.h"
#include "tpl_model.h"

/* A warning line for each special token of the template that the tokenizer
 * does not hold as one token. */
static enum err check_tokens(struct tpl *t, const struct tok *k, struct buf *warn,
			     struct diag *d)
{
	struct buf marks, missing;
	size_t pos, n;
	enum err e;

	buf_init(&marks, BUF_MAX_DEFAULT);
	buf_init(&missing, BUF_MAX_DEFAULT);
	e = tpl_special_tokens(t, &marks);
	for (pos = 0; !e && pos < marks.len; pos += strlen(marks.data + pos) + 1) {
		const char *s = marks.data + pos;

		if (tok_count(k, s, strlen(s), &n, NULL) || n != 1)
			e = buf_printf(&missing, "%s'%s'", missing.len ? ", " : "", s);
	}
	if (!e && missing.len)
		tpl_note(t, TPL_NOTE_SPECIALS);
	if (!e && missing.len)
		e = buf_printf(warn, "warning: the tokenizer lacks special tokens of template '%s': %s "
			       "(the counts will not match the server's)\n", tpl_name(t), missing.data);
	buf_release(&marks);
	buf_release(&missing);
	return e ? diag_fail(d, e, "out of memory") : ERR_OK;
}

enum err tpl_setup(const char *tokenizer_arg, const char *template_arg, struct tok **tok,
		   struct tpl **tpl, struct buf *warn, struct diag *d)
{
	struct tpl_model m;
	int dir = tpl_model_is_dir(tokenizer_arg);
	struct tok *k = NULL;
	struct tpl *t = NULL;
	enum err e = dir ? tpl_model_open(&m, tokenizer_arg, d) : ERR_OK;

	if (!dir)
		memset(&m, 0, sizeof m);
	if (!e && tok && tokenizer_arg)
		e = tok_load(dir ? m.tokenizer : tokenizer_arg, &k, d);
	if (!e && k && *tok_cache_distrust() &&
	    buf_printf(warn, "warning: %s\n", tok_cache_distrust()))
		e = diag_fail(d, ERR_NOMEM, "out of memory");
	if (!e && tpl && (template_arg || dir))
		e = tpl_open(template_arg, dir ? &m : NULL, &t, warn, d);
	if (!e && k && t)
		e = check_tokens(t, k, warn, d);
	tpl_model_release(&m);
	if (e) {
		tok_free(k);
		tpl_free(t);
		k = NULL;
		t = NULL;
	}
	if (tok)
		*tok = k;
	if (tpl)
		*tpl = t;
	return e;
}
