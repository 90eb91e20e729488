/*
 * shipped — the suites that ship with needle, found from wherever the binary
 * runs: an installed binary (PREFIX/bin/needle) reads PREFIX/share/needle/suites,
 * a binary in the build tree (build/needle) reads the checkout's suites/, and
 * NEEDLE_SUITES_DIR, when set, overrides both.
 */
#ifndef NEEDLE_SHIPPED_H
#define NEEDLE_SHIPPED_H

#include "base/buf.h"
#include "base/err.h"

/* Where an installed binary's suites live, relative to its own folder. */
#define SHIPPED_INSTALLED_DIR "../share/needle/suites"
/* Where the build tree's binary finds them, relative to its own folder. */
#define SHIPPED_BUILD_DIR "../suites"

/* Sets `out` to the folder holding the shipped suites (the first of
 * NEEDLE_SUITES_DIR, the installed and the build-tree folder that exists).
 * ERR_IO when none does, naming the places looked in. */
enum err shipped_dir(struct buf *out, struct diag *d);

/* Resolves a suite argument: a path that exists is kept as it is; a bare name
 * such as "smoke" or "smoke.json" with no '/' that is no file here becomes
 * the shipped suite of that name, when there is one. Otherwise `out` is `arg`
 * itself, so that opening it reports the error under the name typed. */
enum err shipped_resolve(const char *arg, struct buf *out, struct diag *d);

#endif
