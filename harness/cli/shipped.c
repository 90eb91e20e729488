#include "shipped.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The folder of the running binary, from /proc/self/exe (Linux). */
static enum err exe_dir(struct buf *out, struct diag *d)
{
	char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	char *slash;

	if (n <= 0 || (size_t)n >= sizeof(path) - 1)
		return diag_fail(d, ERR_IO, "cannot find the needle binary's folder");
	path[n] = '\0';
	slash = strrchr(path, '/');
	if (slash)
		*slash = '\0';
	buf_reset(out);
	if (buf_puts(out, path))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	return ERR_OK;
}

/* Replaces `path` by its canonical form ("build/../suites" -> "suites"). */
static enum err canonical(struct buf *path, struct diag *d)
{
	char *real = realpath(path->data, NULL);
	enum err e = ERR_OK;

	if (!real)
		return ERR_OK; /* keep the path as it is: it exists */
	buf_reset(path);
	if (buf_puts(path, real))
		e = diag_fail(d, ERR_NOMEM, "out of memory");
	free(real);
	return e;
}

enum err shipped_dir(struct buf *out, struct diag *d)
{
	static const char *const rel[] = {SHIPPED_INSTALLED_DIR, SHIPPED_BUILD_DIR};
	const char *env = getenv("NEEDLE_SUITES_DIR");
	struct buf base;
	enum err e;
	size_t i;

	buf_reset(out);
	if (env && *env) {
		if (buf_puts(out, env))
			return diag_fail(d, ERR_NOMEM, "out of memory");
		return is_dir(env) ? ERR_OK :
			diag_fail(d, ERR_IO, "NEEDLE_SUITES_DIR '%s' is not a folder", env);
	}
	buf_init(&base, 4096);
	e = exe_dir(&base, d);
	for (i = 0; !e && i < sizeof(rel) / sizeof(rel[0]); i++) {
		buf_reset(out);
		if (buf_printf(out, "%s/%s", base.data, rel[i])) {
			e = diag_fail(d, ERR_NOMEM, "out of memory");
			break;
		}
		if (is_dir(out->data))
			goto found;
	}
	if (!e)
		e = diag_fail(d, ERR_IO, "no shipped suites: neither '%s/%s' nor '%s/%s' "
			      "is a folder (set NEEDLE_SUITES_DIR)", base.data,
			      rel[0], base.data, rel[1]);
	goto out;
found:
	e = canonical(out, d);
out:
	buf_release(&base);
	return e;
}

enum err shipped_resolve(const char *arg, struct buf *out, struct diag *d)
{
	size_t n = strlen(arg);
	const char *ext = n > 5 && !strcmp(arg + n - 5, ".json") ? "" : ".json";
	enum err e;

	buf_reset(out);
	if (strchr(arg, '/') || access(arg, F_OK) == 0 || !n) {
		if (buf_puts(out, arg))
			return diag_fail(d, ERR_NOMEM, "out of memory");
		return ERR_OK;
	}
	e = shipped_dir(out, d);
	if (e == ERR_NOMEM)
		return e;
	if (!e && buf_printf(out, "/%s%s", arg, ext))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	if (e || access(out->data, F_OK) != 0) {
		/* Not shipped either: open what was typed, so the error names it. */
		diag_init(d);
		buf_reset(out);
		if (buf_puts(out, arg))
			return diag_fail(d, ERR_NOMEM, "out of memory");
	}
	return ERR_OK;
}
