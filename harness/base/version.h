/*
 * version — which build this is. The Makefile writes build/gen/version.c
 * from `git describe --always --dirty` of the tree it builds (a commit such
 * as "e11121b", "-dirty" when the tree had uncommitted changes), or from the
 * version number (NEEDLE_VERSION) when the tree is not a git checkout; it is
 * rewritten only when that changes. `needle --version` prints it and every
 * manifest records it (harness.commit), so two builds can be told apart.
 */
#ifndef NEEDLE_VERSION_H
#define NEEDLE_VERSION_H

/* The build's `git describe`, or the version number; static, never empty. */
extern const char version_describe[];

#endif
