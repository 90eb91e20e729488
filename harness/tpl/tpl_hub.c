/*
 * tpl_hub — see tpl_hub.h.
 */
#include "tpl_hub.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/buf.h"
#include "base/io.h"
#include "base/mem.h"

#define HUB_PATH_MAX 4096

/* Whether `arg` has the shape of a model id: ORG/NAME, each of letters,
 * digits, '-', '_' and '.', not starting with '.'. */
static int tpl_hub_is_id(const char *arg)
{
	const char *s, *slash = arg ? strchr(arg, '/') : NULL;

	if (!slash || slash == arg || !slash[1] || strchr(slash + 1, '/') || arg[0] == '.' ||
	    slash[1] == '.')
		return 0;
	for (s = arg; *s; s++)
		if (s != slash && !isalnum((unsigned char)*s) && !strchr("-_.", *s))
			return 0;
	return 1;
}

static int is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

static int is_file(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode);
}

/* The cache folder into out (tpl_hub.h's order); 0 when no variable names
 * one and there is no HOME. */
static int cache_dir(char *out, size_t cap)
{
	const char *v;

	if ((v = getenv("HF_HUB_CACHE")) && *v)
		return snprintf(out, cap, "%s", v) < (int)cap;
	if ((v = getenv("HF_HOME")) && *v)
		return snprintf(out, cap, "%s/hub", v) < (int)cap;
	if ((v = getenv("XDG_CACHE_HOME")) && *v)
		return snprintf(out, cap, "%s/huggingface/hub", v) < (int)cap;
	if ((v = getenv("HOME")) && *v)
		return snprintf(out, cap, "%s/.cache/huggingface/hub", v) < (int)cap;
	return 0;
}

static int is_commit(const char *rev)
{
	size_t i;

	for (i = 0; rev[i]; i++)
		if (!isxdigit((unsigned char)rev[i]))
			return 0;
	return i == 40;
}

/* The commit revision `rev` names in model folder `repo` into out (41
 * bytes): itself when it is a commit with a snapshot, else refs/REV's. */
static enum err commit_of(const char *repo, const char *rev, char *out, struct diag *d)
{
	char path[HUB_PATH_MAX];
	struct buf b;
	size_t n;
	enum err e;

	if (snprintf(path, sizeof(path), "%s/snapshots/%s", repo, rev) >= (int)sizeof(path))
		return diag_fail(d, ERR_INPUT, "cannot use revision '%.100s': the path is too long", rev);
	if (is_commit(rev) && is_dir(path)) {
		snprintf(out, 41, "%s", rev);
		return ERR_OK;
	}
	if (snprintf(path, sizeof(path), "%s/refs/%s", repo, rev) >= (int)sizeof(path) ||
	    strstr(rev, "..") || !is_file(path))
		return diag_fail(d, ERR_INPUT, "cannot find revision '%s' in the Hugging Face cache: no '%s' (needle reads the cache offline: download that revision first)",
				 rev, path);
	buf_init(&b, 256);
	if ((e = io_read_file(path, &b, d)))
		goto out;
	for (n = b.len; n && isspace((unsigned char)b.data[n - 1]); n--)
		;
	b.data[n] = '\0';
	if (!is_commit(b.data))
		e = diag_fail(d, ERR_INPUT, "cannot use '%s': it holds '%.60s', not a commit", path, b.data);
	else
		snprintf(out, 41, "%s", b.data);
out:
	buf_release(&b);
	return e;
}

enum err tpl_hub_resolve(const char *arg, const char *revision, char **path, struct diag *d)
{
	char cache[HUB_PATH_MAX], repo[HUB_PATH_MAX], snap[HUB_PATH_MAX], commit[41];
	const char *slash = arg ? strchr(arg, '/') : NULL;
	struct stat st;
	enum err e;

	*path = NULL;
	if (!arg || (!stat(arg, &st) && !revision))
		return ERR_OK; /* a path on disk is used as it is */
	if (!tpl_hub_is_id(arg))
		return revision ? diag_fail(d, ERR_USAGE, "option '--revision' needs '--tokenizer ORG/NAME', a model id of the Hugging Face cache; got '%s'",
					    arg)
				: ERR_OK;
	if (!cache_dir(cache, sizeof(cache)))
		return diag_fail(d, ERR_INPUT, "cannot read '%s': no such file or folder, and no Hugging Face cache to look the model up in (set HF_HUB_CACHE or HF_HOME)", arg);
	if (snprintf(repo, sizeof(repo), "%s/models--%.*s--%s", cache, (int)(slash - arg), arg,
		     slash + 1) >= (int)sizeof(repo) || !is_dir(repo))
		return diag_fail(d, ERR_INPUT, "cannot read '%s': no such file or folder, nor a model of that id in the Hugging Face cache '%s' (no '%s'; needle reads the cache offline: download it first, e.g. 'huggingface-cli download %s', or pass the model's folder)",
				 arg, cache, repo, arg);
	if ((e = commit_of(repo, revision ? revision : "main", commit, d)))
		return e;
	if (snprintf(snap, sizeof(snap), "%s/snapshots/%s", repo, commit) >= (int)sizeof(snap) ||
	    !is_dir(snap))
		return diag_fail(d, ERR_INPUT, "cannot find the snapshot of model '%s' in the Hugging Face cache: no '%s'",
				 arg, snap);
	if (!(*path = mem_strndup(snap, strlen(snap))))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	return ERR_OK;
}

const char *tpl_hub_from(const char *arg, const char *path)
{
	if (path)
		return "hugging face cache";
	return tpl_hub_is_id(arg) ? "local folder" : NULL;
}
