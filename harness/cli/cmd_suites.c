/*
 * needle suites — the suites that ship with needle (harness/cli/shipped.h finds
 * them), one line each: name, cases, description. `needle run NAME` runs one.
 */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "cli.h"
#include "cmd.h"
#include "base/io.h"
#include "base/mem.h"
#include "shipped.h"

/* Largest suite file read for its description. */
#define SUITES_FILE_MAX ((size_t)16 << 20)
/* Most shipped suites listed. */
#define SUITES_MAX 256

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Prints the first sentence of `s`, cut with "..." to at most `width`
 * columns (UTF-8 sequences are never split), and a newline. */
static void print_cut(const char *s, size_t width)
{
	size_t n = strcspn(s, "\n"), cols = 0, i, end = 0;
	const char *stop = strstr(s, ". ");

	if (stop && (size_t)(stop - s) < n)
		n = (size_t)(stop - s);
	for (i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xC0) != 0x80 && ++cols > width - 3)
			break;
	if (i == n) {
		printf("%.*s\n", (int)n, s);
		return;
	}
	for (end = i; end > 0 && s[end] != ' '; end--)
		;
	printf("%.*s...\n", (int)(end ? end : i), s);
}

/* Prints one suite's line; a file that is no suite is listed as such. */
static enum err print_suite(const char *dir, const char *file, struct diag *d)
{
	struct buf path, text;
	cJSON *root = NULL, *cases, *desc;
	enum err e;
	int n = (int)strlen(file) - 5; /* the name without ".json" */

	buf_init(&path, 8192);
	buf_init(&text, SUITES_FILE_MAX);
	e = buf_printf(&path, "%s/%s", dir, file) ?
		diag_fail(d, ERR_NOMEM, "out of memory") : ERR_OK;
	if (!e)
		e = io_read_file(path.data, &text, d);
	if (!e && !(root = cJSON_ParseWithLength(text.data, text.len))) {
		printf("  %-18.*s (not a suite: invalid JSON)\n", n, file);
		goto out;
	}
	if (!e) {
		cases = cJSON_GetObjectItemCaseSensitive(root, "cases");
		desc = cJSON_GetObjectItemCaseSensitive(root, "description");
		int ncases = cJSON_IsArray(cases) ? cJSON_GetArraySize(cases) : 0;

		printf("  %-18.*s %3d case%s  ", n, file, ncases, ncases == 1 ? " " : "s");
		print_cut(cJSON_IsString(desc) ? desc->valuestring : "",
			  CLI_HELP_WIDTH - 2 - 18 - 1 - 3 - 8);
	}
out:
	cJSON_Delete(root);
	buf_release(&text);
	buf_release(&path);
	return e;
}

static enum err list(struct diag *d)
{
	char *names[SUITES_MAX];
	struct buf dir;
	struct dirent *ent;
	size_t n = 0, i;
	DIR *dp = NULL;
	enum err e;

	buf_init(&dir, 8192);
	e = shipped_dir(&dir, d);
	if (!e && !(dp = opendir(dir.data)))
		e = diag_fail(d, ERR_IO, "cannot list '%s'", dir.data);
	while (!e && n < SUITES_MAX && (ent = readdir(dp))) {
		size_t len = strlen(ent->d_name);

		if (len <= 5 || strcmp(ent->d_name + len - 5, ".json"))
			continue;
		if (!(names[n] = mem_strndup(ent->d_name, len)))
			e = diag_fail(d, ERR_NOMEM, "out of memory");
		else
			n++;
	}
	if (!e) {
		qsort(names, n, sizeof(names[0]), by_name);
		printf("Suites in %s (run one with 'needle run NAME'):\n", dir.data);
	}
	for (i = 0; !e && i < n; i++)
		e = print_suite(dir.data, names[i], d);
	for (i = 0; i < n; i++)
		mem_free(names[i]);
	if (dp)
		closedir(dp);
	buf_release(&dir);
	return e;
}

int cmd_suites(int argc, char **argv)
{
	static const char examples[] =
		"  needle suites\n"
		"  needle run smoke --base-url http://127.0.0.1:8000\n";
	const struct cli_cmd cmd = {
		"suites", "",
		"List the suites that ship with needle: name, number of cases and\n"
		"description. A bare name given to 'needle run' (e.g. 'smoke') runs the\n"
		"shipped suite of that name. They are found next to the binary\n"
		"(" SHIPPED_INSTALLED_DIR " or " SHIPPED_BUILD_DIR "), or in\n"
		"NEEDLE_SUITES_DIR.",
		NULL, 0, examples, 0, 0, CLI_EXIT_PASS | CLI_EXIT_USAGE};
	const char *args[CLI_ARGS_MAX];
	int nargs, outcome;
	struct diag d;

	diag_init(&d);
	outcome = cli_start(&cmd, argc, argv, args, &nargs, &d);
	if (outcome == CLI_HELP_SHOWN)
		return EXIT_PASS;
	if (outcome == CLI_RUN && !list(&d))
		return EXIT_PASS;
	return cli_report("suites", &d);
}
