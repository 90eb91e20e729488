/*
 * config — see config.h.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/io.h"
#include "base/hint.h"
#include "base/json.h"

#define CONFIG_PATH_MAX 4096

/* The file, parsed once and kept: the options' values point into it. */
static cJSON *loaded;
static char loaded_path[CONFIG_PATH_MAX];
static char *merged[2 * CLI_ARGS_MAX + 1];

static int is_file(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode);
}

/* The file's path into out (config.h's order); 0 when there is none. */
static int find_path(char *out, size_t cap)
{
	const char *v;

	if ((v = getenv("NEEDLE_CONFIG")) && *v)
		return snprintf(out, cap, "%s", v) < (int)cap;
	if (snprintf(out, cap, "needle.json") < (int)cap && is_file(out))
		return 1;
	if ((v = getenv("XDG_CONFIG_HOME")) && *v) /* set, it is the only place (XDG) */
		return snprintf(out, cap, "%s/needle/config.json", v) < (int)cap && is_file(out);
	return (v = getenv("HOME")) && *v &&
	       snprintf(out, cap, "%s/.config/needle/config.json", v) < (int)cap && is_file(out);
}

static enum err load(struct diag *d)
{
	struct buf b;
	enum err e;

	if (loaded || !find_path(loaded_path, sizeof(loaded_path)))
		return ERR_OK;
	buf_init(&b, 1 << 20);
	e = io_read_file(loaded_path, &b, d);
	if (!e)
		e = json_parse(b.data, b.len, &loaded, "the config", d);
	if (!e && !cJSON_IsObject(loaded))
		e = diag_fail(d, ERR_INPUT, "the config is not a JSON object");
	buf_release(&b);
	if (e)
		diag_prefix(d, "config '%s'", loaded_path);
	return e;
}

/* Whether option `o` is on the command line (before any "--"). */
static int given(const struct cli_opt *o, int argc, char **argv)
{
	size_t n = strlen(o->name);
	int i;

	for (i = 0; i < argc && strcmp(argv[i], "--"); i++) {
		const char *a = argv[i];
		if ((a[0] == '-' && a[1] == '-' && !strncmp(a + 2, o->name, n) &&
		     (!a[2 + n] || a[2 + n] == '=')) ||
		    (o->short_name && a[0] == '-' && a[1] == o->short_name && !a[2]))
			return 1;
	}
	return 0;
}

/* Appends option `o` (the command's `slot`-th) with the file's value `v` to
 * merged[*n]. */
static enum err add(const struct cli_opt *o, size_t slot, const cJSON *v, int *n,
		    struct diag *d)
{
	static char dashes[CLI_OPTS_MAX][HINT_NAME_MAX + 3], numbers[CLI_OPTS_MAX][32];
	const cJSON *s, *arr = cJSON_IsArray(v) ? v : NULL;
	int bad = 0, count = arr ? cJSON_GetArraySize(arr) : 1;

	if (slot >= CLI_OPTS_MAX || *n + 2 * count > CLI_ARGS_MAX)
		return diag_fail(d, ERR_USAGE, "too many options");
	snprintf(dashes[slot], sizeof(dashes[slot]), "--%s", o->name);
	if (o->kind == CLI_FLAG && cJSON_IsBool(v)) {
		if (cJSON_IsTrue(v))
			merged[(*n)++] = dashes[slot];
		return ERR_OK;
	}
	cJSON_ArrayForEach(s, arr)
		bad += !cJSON_IsString(s);
	if (o->kind == CLI_LIST && arr && !bad) {
		cJSON_ArrayForEach(s, v) {
			merged[(*n)++] = dashes[slot];
			merged[(*n)++] = s->valuestring;
		}
		return ERR_OK;
	}
	if (o->kind == CLI_FLAG || !(cJSON_IsString(v) || cJSON_IsNumber(v)))
		return diag_fail(d, ERR_INPUT, "'%s' wants %s", o->name,
				 o->kind == CLI_FLAG ? "true or false"
				 : o->kind == CLI_LIST ? "a string, a number or an array of strings"
				 : "a string or a number");
	snprintf(numbers[slot], sizeof(numbers[slot]), "%.17g", v->valuedouble);
	merged[(*n)++] = dashes[slot];
	merged[(*n)++] = cJSON_IsString(v) ? v->valuestring : numbers[slot];
	return ERR_OK;
}

enum err config_args(const struct cli_cmd *cmd, int *argc, char ***argv, struct diag *d)
{
	const cJSON *sect;
	int n = 0;
	size_t i;
	enum err e;

	if ((e = load(d)) || !loaded)
		return e;
	sect = cJSON_GetObjectItemCaseSensitive(loaded, cmd->name);
	for (i = 0; !e && i < cmd->nopts; i++) {
		const struct cli_opt *o = &cmd->opts[i];
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(sect, o->name);
		if (!v)
			v = cJSON_GetObjectItemCaseSensitive(loaded, o->name);
		if (v && !given(o, *argc, *argv))
			e = add(o, i, v, &n, d);
	}
	if (!e && n && n + *argc > 2 * CLI_ARGS_MAX)
		e = diag_fail(d, ERR_USAGE, "too many arguments");
	if (e) {
		diag_prefix(d, "config '%s'", loaded_path);
		return e;
	}
	if (n) {
		memcpy(merged + n, *argv, (size_t)*argc * sizeof(*merged));
		merged[n + *argc] = NULL;
		*argv = merged;
		*argc += n;
	}
	return ERR_OK;
}
