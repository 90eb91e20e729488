/*
 * md — see md.h.
 */
#include "md.h"

#include <stdio.h>

#include "ctl.h"

enum err md_render(const cJSON *doc, const md_section *sections, size_t n,
		   const char *what, struct buf *out, struct diag *d)
{
	enum err e = ERR_OK;
	size_t i, from = out->len;

	for (i = 0; !e && i < n; i++)
		e = sections[i](doc, out);
	if (!e) /* a server's or a record's text is shown, not obeyed */
		e = ctl_escape_from(out, from);
	if (e == ERR_NOMEM)
		return diag_fail(d, e, "out of memory rendering the %s", what);
	if (e)
		return diag_fail(d, e, "cannot render the %s: %s", what,
				 e == ERR_NOMEM ? "out of memory" : err_name(e));
	return ERR_OK;
}

enum err md_cell(struct buf *out, const char *s)
{
	enum err e = ERR_OK;

	for (; !e && *s; s++)
		e = *s == '|' ? buf_puts(out, "\\|")
			      : buf_putc(out, *s == '\n' || *s == '\r' ? ' ' : *s);
	return e;
}

const char *md_num(int has, double v, const char *fmt, char *tmp, size_t cap)
{
	if (!has)
		return "-";
	snprintf(tmp, cap, fmt, v);
	return tmp;
}

const char *md_number(const cJSON *v, const char *fmt, char *tmp, size_t cap)
{
	return md_num(cJSON_IsNumber(v), cJSON_IsNumber(v) ? v->valuedouble : 0, fmt, tmp, cap);
}

const char *md_value(const cJSON *v, char *tmp, size_t cap)
{
	if (cJSON_IsString(v))
		return v->valuestring;
	if (cJSON_IsNumber(v))
		return md_number(v, "%.15g", tmp, cap);
	if (cJSON_IsBool(v))
		return cJSON_IsTrue(v) ? "true" : "false";
	return "-";
}
