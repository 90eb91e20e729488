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
#include "base/hint.h"
#include "base/json.h"
#include "tpl/tpl_hub.h"

#define CONFIG_PATH_MAX 4096

/* The file, parsed once and kept: the options' values point into it. */
static cJSON *loaded;
static char loaded_path[CONFIG_PATH_MAX];
static struct config_used used;
static char *merged[2 * CLI_ARGS_MAX + 1];

/* Every command's options and the sections (a command's name): the keys a
 * file may hold. tests/cli/config_file.sh checks it against every command's
 * --help=words. */
static const char *const known_keys[] = {
	"add-special", "allow-incomplete", "allow-missing", "allow-partial", "api-key-env",
	"ask", "base-url", "cacert", "case", "concurrency", "count", "date", "depths",
	"distractors", "endpoints", "explain", "filler", "force", "format", "gate",
	"idle-timeout", "ids", "insecure", "json", "jsonl", "kind", "kwargs", "max-skew",
	"messages", "metrics", "model", "needles", "numbers", "objects", "out", "plot",
	"print-prompt", "question", "reasoning-effort", "repeat", "resume", "revision",
	"seed", "server", "shard", "size", "start-at", "suite", "template", "timeout",
	"tokenizer", "tokens", "tools", "wait-ready", "warmup",
	/* sections */
	"run", "report", "diff", "merge", "suites", "templates", "gen haystack",
	"gen image", "gen cases", NULL};
#define FIRST_SECTION "run"

/* The keys only a named file may set, and what they choose. */
static const struct {
	const char *key, *what;
} guarded[] = {
	{"base-url", "where requests go"},
	{"endpoints", "where requests go"},
	{"api-key-env", "which secret requests carry"},
	{"cacert", "which servers are trusted"},
	{"insecure", "whether servers are verified"},
};

static int is_file(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode);
}

/* The file's path into out (config.h's order), `named` set for --config
 * and NEEDLE_CONFIG; 0 when there is none. */
static int find_path(const char *flag, char *out, size_t cap, int *named)
{
	const char *v;

	*named = 1;
	if (flag)
		return snprintf(out, cap, "%s", flag) < (int)cap;
	if ((v = getenv("NEEDLE_CONFIG")) && *v)
		return snprintf(out, cap, "%s", v) < (int)cap;
	*named = 0;
	if (snprintf(out, cap, "needle.json") < (int)cap && is_file(out))
		return 1;
	if ((v = getenv("XDG_CONFIG_HOME")) && *v) /* set, it is the only place (XDG) */
		return snprintf(out, cap, "%s/needle/config.json", v) < (int)cap && is_file(out);
	return (v = getenv("HOME")) && *v &&
	       snprintf(out, cap, "%s/.config/needle/config.json", v) < (int)cap && is_file(out);
}

static int is_section(const char *key)
{
	const char *const *k;

	for (k = known_keys; strcmp(*k, FIRST_SECTION); k++)
		;
	for (; *k; k++)
		if (!strcmp(*k, key))
			return 1;
	return 0;
}

static int is_known(const char *key)
{
	const char *const *k;

	for (k = known_keys; *k; k++)
		if (!strcmp(*k, key))
			return 1;
	return 0;
}

/* One key of the file (`section` NULL at the top level): known, and not
 * one a found file may not set. */
static enum err check_key(const cJSON *item, const char *section, struct diag *d)
{
	const char *k = item->string, *near;
	char where[96] = "";
	size_t i;

	if (section)
		snprintf(where, sizeof(where), " (in section '%s')", section);
	if (!is_known(k) || (section && is_section(k) && strcmp(k, "count"))) { /* count: both */
		near = hint_closest(k, known_keys);
		return near ? diag_fail(d, ERR_INPUT, "unknown key '%s'%s (did you mean '%s'?)", k, where, near)
			    : diag_fail(d, ERR_INPUT, "unknown key '%s'%s: not an option of any command nor a command's section", k, where);
	}
	for (i = 0; !used.named && i < sizeof(guarded) / sizeof(guarded[0]); i++)
		if (!strcmp(k, guarded[i].key))
			return diag_fail(d, ERR_INPUT, "key '%s'%s chooses %s, and this file was found, not named: name it to use it (--config %s, or NEEDLE_CONFIG=%s)",
					 k, where, guarded[i].what, loaded_path, loaded_path);
	return ERR_OK;
}

/* Every key of the file, sections' included. */
static enum err check_keys(struct diag *d)
{
	const cJSON *k, *s;
	enum err e = ERR_OK;

	cJSON_ArrayForEach(k, loaded) {
		if (is_section(k->string) && !cJSON_IsObject(k) && strcmp(k->string, "count"))
			return diag_fail(d, ERR_INPUT, "section '%s' wants an object of options", k->string);
		if ((e = check_key(k, NULL, d)))
			return e;
		if (is_section(k->string) && cJSON_IsObject(k))
			cJSON_ArrayForEach(s, k)
				if ((e = check_key(s, k->string, d)))
					return e;
	}
	return e;
}

enum err config_load_text(const char *path, int named, const char *text, size_t len,
			  struct diag *d)
{
	enum err e;

	cJSON_Delete(loaded);
	loaded = NULL;
	memset(&used, 0, sizeof(used));
	if (path != loaded_path)
		snprintf(loaded_path, sizeof(loaded_path), "%s", path);
	used.path = loaded_path;
	used.named = named;
	e = io_sha256_hex(text, len, used.sha256, d);
	if (!e)
		e = json_parse(text, len, &loaded, "the config", d);
	if (!e && !cJSON_IsObject(loaded))
		e = diag_fail(d, ERR_INPUT, "the config is not a JSON object");
	if (!e)
		e = check_keys(d);
	if (e) {
		diag_prefix(d, "config '%s'", loaded_path);
		cJSON_Delete(loaded);
		loaded = NULL;
	}
	return e;
}

static enum err load(const char *flag, struct diag *d)
{
	struct buf b;
	int named;
	enum err e;

	if (loaded || !find_path(flag, loaded_path, sizeof(loaded_path), &named))
		return ERR_OK;
	buf_init(&b, 1 << 20);
	e = io_read_file(loaded_path, &b, d);
	if (e)
		diag_prefix(d, "config '%s'", loaded_path);
	else
		e = config_load_text(loaded_path, named, b.data, b.len, d);
	buf_release(&b);
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
		return diag_fail(d, ERR_INPUT, "key '%s' wants %s", o->name,
				 o->kind == CLI_FLAG ? "true or false"
				 : o->kind == CLI_LIST ? "a string, a number or an array of strings"
				 : "a string or a number");
	snprintf(numbers[slot], sizeof(numbers[slot]), "%.17g", v->valuedouble);
	merged[(*n)++] = dashes[slot];
	merged[(*n)++] = cJSON_IsString(v) ? v->valuestring : numbers[slot];
	return ERR_OK;
}

/* Takes `--config FILE` / `--config=FILE` (before any "--") out of argv
 * into *flag. */
static enum err take_flag(int *argc, char **argv, const char **flag, struct diag *d)
{
	int i, j;

	*flag = NULL;
	for (i = 0; i < *argc && strcmp(argv[i], "--"); i++) {
		int take = 0;

		if (!strcmp(argv[i], "--config")) {
			if (i + 1 >= *argc)
				return diag_fail(d, ERR_USAGE, "option '--config' needs a value");
			*flag = argv[i + 1], take = 2;
		} else if (!strncmp(argv[i], "--config=", 9)) {
			*flag = argv[i] + 9, take = 1;
		}
		if (take) {
			if (!**flag)
				return diag_fail(d, ERR_USAGE, "option '--config' needs a file");
			for (j = i; j + take <= *argc; j++)
				argv[j] = argv[j + take];
			*argc -= take;
			i--;
		}
	}
	return ERR_OK;
}

void config_say(void)
{
	int i;

	if (!loaded)
		return;
	fprintf(stderr, "needle: using config %s (keys:", used.path);
	for (i = 0; i < used.nkeys; i++)
		fprintf(stderr, "%s %s", i ? "," : "", used.keys[i]);
	fprintf(stderr, "%s)\n", used.nkeys ? "" : " none");
}

enum err config_args(const struct cli_cmd *cmd, int *argc, char ***argv, struct diag *d)
{
	const cJSON *sect;
	const char *flag;
	int n = 0;
	size_t i;
	enum err e;

	if ((e = take_flag(argc, *argv, &flag, d)) || (e = load(flag, d)) || !loaded)
		return e;
	sect = cJSON_GetObjectItemCaseSensitive(loaded, cmd->name);
	if (!cJSON_IsObject(sect))
		sect = NULL;
	if (sect) { /* the command's own section: its options only */
		const cJSON *k;
		cJSON_ArrayForEach(k, sect) {
			for (i = 0; i < cmd->nopts && strcmp(cmd->opts[i].name, k->string); i++)
				;
			if (i == cmd->nopts) {
				const char *names[CLI_OPTS_MAX + 1], *near;
				for (i = 0; i < cmd->nopts && i < CLI_OPTS_MAX; i++)
					names[i] = cmd->opts[i].name;
				names[i] = NULL;
				near = hint_closest(k->string, names);
				e = near ? diag_fail(d, ERR_INPUT, "key '%s' (in section '%s') is not an option of 'needle %s' (did you mean '%s'?)",
						     k->string, cmd->name, cmd->name, near)
					 : diag_fail(d, ERR_INPUT, "key '%s' (in section '%s') is not an option of 'needle %s'",
						     k->string, cmd->name, cmd->name);
				break;
			}
		}
	}
	for (i = 0; !e && i < cmd->nopts; i++) {
		const struct cli_opt *o = &cmd->opts[i];
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(sect, o->name);
		int before = n;

		if (!v)
			v = cJSON_GetObjectItemCaseSensitive(loaded, o->name);
		if (v && !given(o, *argc, *argv) && !(e = add(o, i, v, &n, d)) && n > before)
			used.keys[used.nkeys++] = o->name;
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

const struct config_used *config_used(void)
{
	return used.path ? &used : NULL;
}

const char *config_blame(const char *name, size_t len)
{
	int i;

	for (i = 0; i < used.nkeys; i++)
		if (strlen(used.keys[i]) == len && !memcmp(used.keys[i], name, len))
			return used.path;
	return NULL;
}

void config_origin(struct record_origin *g, const char *tokenizer, const char *hub_path)
{
	memset(g, 0, sizeof(*g));
	if (used.path) {
		g->config_path = used.path, g->config_sha256 = used.sha256;
		g->config_named = used.named;
		g->config_keys = used.keys, g->nconfig_keys = used.nkeys;
	}
	if ((g->tokenizer_from = tpl_hub_from(tokenizer, hub_path))) {
		g->tokenizer_id = tokenizer;
		fprintf(stderr, "needle: tokenizer %s: the %s %s\n", tokenizer, g->tokenizer_from,
			hub_path ? hub_path : tokenizer);
	}
}
