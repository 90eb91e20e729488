/*
 * tok_pat — a tokenizer.json pattern ({"Regex": r} or {"String": s}) compiled
 * for PCRE2 (through rx.h) or for a hand-written scanner (tok_scan.h), and
 * the pieces it cuts a subject into, as HF's Pattern::find_matches gives
 * them: matches and the gaps between them, in order, covering the subject.
 *
 * A Regex is an Oniguruma pattern rewritten with HF's Unicode tables
 * (uni_rewrite_pattern, the `exact` form); where the rewrite can also spell
 * the classes as explicit ranges (uni_rewrite_pattern_ranges, equally exact)
 * that `ascii` form serves subjects with at most 4 % non-ASCII bytes, where
 * it is faster (break-even at 2-5 %, uni.h). A String is escaped as HF
 * escapes it (regex::escape).
 * A compiled pattern is read-only and may be shared by threads.
 */
#ifndef NEEDLE_TOK_PAT_H
#define NEEDLE_TOK_PAT_H

#include <stddef.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/rx.h"
#include "tok_scan.h"

struct tok_pat {
	struct rx *exact;     /* owned; NULL until compiled, and with a scanner */
	struct rx *ascii;     /* owned; the ranges form, NULL when there is none */
	enum scan_kind scan;  /* a hand-written matcher replaces both, or SCAN_NONE */
};

/* One piece of a subject: bytes [a, b); `match` says it was matched (or,
 * after a Split behaviour is applied, that it is to be dropped). */
struct tok_item {
	size_t a, b;
	int match;
};

/* The pieces of one subject, and a buffer for a transformed subject (a
 * prefix space, Metaspace's replacement) owned by the same stage. */
struct tok_pieces {
	struct buf s;
	struct tok_item *it;  /* owned */
	size_t n, cap;
};

/* Compiles pattern `pat` (n bytes; a String when `literal`, else a Regex)
 * into `out` (zeroed by the caller). A pattern with a scanner makes sure
 * `*tab` holds the scanners' class table (built once, owned by the caller).
 * Messages name the pattern but not the file. Free with tok_pat_release. */
enum err tok_pat_compile(struct tok_pat *out, const char *pat, size_t n,
			 int literal, struct scan_tab **tab, struct diag *d);
/* Frees what `p` owns; accepts a zeroed pattern. */
void tok_pat_release(struct tok_pat *p);

/* Empties `ps` (no allocation). */
void tok_pieces_init(struct tok_pieces *ps);
/* Frees what `ps` owns. */
void tok_pieces_release(struct tok_pieces *ps);
/* Appends piece [a, b); ERR_NOMEM (without a message) on failure. */
enum err tok_pieces_push(struct tok_pieces *ps, size_t a, size_t b, int match);

/* Replaces the pieces of `ps` with those `p` cuts valid UTF-8 s[0..n) into
 * (`match` negated when `invert`), as the onig crate's find_iter: an empty
 * match right after the previous match is skipped by advancing one
 * character. `m` is the caller's match state; `tab` the class table. */
enum err tok_pat_split(const struct tok_pat *p, const struct scan_tab *tab,
		       struct rx_match *m, const char *s, size_t n, int invert,
		       struct tok_pieces *ps, struct diag *d);

/* Bytes of the UTF-8 character at s[0] (s non-empty), at most n. */
size_t tok_pat_char_len(const char *s, size_t n);

#endif
