/*
 * topics — docs/ pages as help topics and manual sections. See topics.h.
 */
#include <stdio.h>
#include <string.h>

#include "topics.h"
#include "base/embed.h"

#define PREFIX "docs/"

/* The section of `page` under the heading "## `title`", up to the next
 * heading of level 1 or 2; its text in [*at, *at + *len). 0, else -1. */
static int section(const struct embed_file *page, const char *title,
		   const char **at, size_t *len)
{
	const char *p = (const char *)page->data, *end = p + page->len, *nl, *start = NULL;
	size_t tl = strlen(title);

	for (; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		if (start && (!strncmp(p, "# ", 2) || !strncmp(p, "## ", 3))) {
			*at = start;
			*len = (size_t)(p - start);
			return 0;
		}
		if (!start && !strncmp(p, "## ", 3) && (size_t)(nl - p) == tl + 3 &&
		    !memcmp(p + 3, title, tl))
			start = nl < end ? nl + 1 : end;
		if (nl == end)
			break;
	}
	if (!start)
		return -1;
	*at = start;
	*len = (size_t)(end - start);
	return 0;
}

static const struct embed_file *page(const char *name)
{
	char path[128];

	if (strlen(name) > 64 || strchr(name, '/'))
		return NULL;
	snprintf(path, sizeof(path), PREFIX "%s.md", name);
	return embed_find(path);
}

int topics_print(const char *name, FILE *out)
{
	const struct embed_file *f;
	const char *at;
	size_t len;

	if (!strcmp(name, "exit-status")) {
		f = page("cutover");
		if (!f || section(f, "Exit statuses", &at, &len))
			return -1;
		fputs("Exit statuses\n", out);
		fwrite(at, 1, len, out);
		return 0;
	}
	f = page(name);
	if (!f)
		return -1;
	fwrite(f->data, 1, f->len, out);
	return 0;
}

void topics_list(FILE *out)
{
	const struct embed_file *all;
	size_t n, i, nl;

	all = embed_all(&n);
	fprintf(out, "%-14s %s\n", "exit-status", "the exit statuses of every command");
	for (i = 0; i < n; i++) {
		const char *name = all[i].name, *d = (const char *)all[i].data;
		size_t l = strlen(name);

		if (strncmp(name, PREFIX, strlen(PREFIX)) || l < strlen(PREFIX) + 4 ||
		    strcmp(name + l - 3, ".md"))
			continue;
		nl = strcspn(d, "\n");
		if (nl >= 2 && d[0] == '#' && d[1] == ' ')
			fprintf(out, "%-14.*s %.*s\n", (int)(l - strlen(PREFIX) - 3),
				name + strlen(PREFIX), (int)(nl - 2), d + 2);
	}
}

/* Writes `s` (`len` bytes) as man(7) text: a backslash doubled, a '-' as
 * "\-", backquotes dropped, and a line that would start with '.' or '\''
 * escaped. */
static void roff(FILE *out, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (s[i] == '`')
			continue;
		if ((i == 0 || s[i - 1] == '\n') && (s[i] == '.' || s[i] == '\''))
			fputs("\\&", out);
		if (s[i] == '\\')
			fputs("\\e", out);
		else if (s[i] == '-')
			fputs("\\-", out);
		else
			fputc(s[i], out);
	}
}

int topics_man_exit_status(FILE *out)
{
	const struct embed_file *f = page("cutover");
	const char *at, *end, *p, *nl, *code, *tick;
	size_t len;
	int items = 0;

	if (!f || section(f, "Exit statuses", &at, &len))
		return -1;
	end = at + len;
	/* Items are "- `N` text" with continuation lines indented by two. */
	for (p = at; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		if (!strncmp(p, "- `", 3) && (tick = memchr(p + 3, '`', (size_t)(nl - p - 3)))) {
			code = p + 3;
			fputs(".TP\n.B ", out);
			roff(out, code, (size_t)(tick - code));
			fputc('\n', out);
			p = tick + 1 + (tick + 1 < nl && tick[1] == ' ');
			roff(out, p, (size_t)(nl - p));
			fputc('\n', out);
			items++;
		} else if (items && !strncmp(p, "  ", 2) && nl > p + 2) {
			roff(out, p + 2, (size_t)(nl - p - 2));
			fputc('\n', out);
		} else if (items && nl == p) {
			break; /* the list ends at its first blank line */
		}
		if (nl == end)
			break;
	}
	return items ? 0 : -1;
}
