/*
 * format — see format.h.
 */
#include "format.h"

#include <string.h>

#include "html.h"
#include "junit.h"
#include "prom.h"
#include "rows.h"
#include "vbench.h"

static enum err write_md(const struct report_run *r, const struct report_files *f,
			 struct buf *out, struct diag *d)
{
	(void)r, (void)d;
	return buf_append(out, f->md.data, f->md.len);
}

static enum err write_json(const struct report_run *r, const struct report_files *f,
			   struct buf *out, struct diag *d)
{
	(void)r, (void)d;
	return buf_append(out, f->json.data, f->json.len);
}

static enum err write_csv(const struct report_run *r, const struct report_files *f,
			  struct buf *out, struct diag *d)
{
	(void)r, (void)d;
	return buf_append(out, f->csv.data, f->csv.len);
}

/* The rows were appended to `out` as the journal was read. */
static enum err write_folded(const struct report_run *r, const struct report_files *f,
			     struct buf *out, struct diag *d)
{
	(void)r, (void)f, (void)out, (void)d;
	return ERR_OK;
}

static enum err fold_junit(struct buf *out, struct report_also *also, struct diag *d)
{
	return junit_fold(out, also, d);
}

static enum err write_junit(const struct report_run *r, const struct report_files *f,
			    struct buf *out, struct diag *d)
{
	(void)f;
	return junit_write(r, out, d);
}

static enum err write_prom(const struct report_run *r, const struct report_files *f,
			   struct buf *out, struct diag *d)
{
	(void)r;
	return prom_write(&f->summary, out, d);
}

static enum err fold_vbench(struct buf *out, struct report_also *also, struct diag *d)
{
	(void)out;
	return vbench_fold(also, d);
}

static enum err write_vbench(const struct report_run *r, const struct report_files *f,
			     struct buf *out, struct diag *d)
{
	(void)f;
	return vbench_write(r, out, d);
}

static enum err write_html(const struct report_run *r, const struct report_files *f,
			   struct buf *out, struct diag *d)
{
	(void)r;
	return html_write(f, out, d);
}

const struct report_format report_formats[REPORT_NFORMATS] = {
	{"md", NULL, write_md},
	{"json", NULL, write_json},
	{"csv", NULL, write_csv},
	{"jsonl", rows_fold_jsonl, write_folded},
	{"junit", fold_junit, write_junit},
	{"prom", NULL, write_prom},
	{"vllm-bench", fold_vbench, write_vbench},
	{"html", NULL, write_html},
};

const struct report_format *report_format_named(const char *name)
{
	size_t i;

	for (i = 0; i < REPORT_NFORMATS; i++)
		if (!strcmp(report_formats[i].name, name))
			return &report_formats[i];
	return NULL;
}
