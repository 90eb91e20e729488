/*
 * filler — seeded text that reads like real text, for needle documents:
 * English prose, Chinese prose, source code (commented functions in C, Python,
 * Go, JavaScript and Rust) or a mix, expanded from the grammars and word lists
 * in generators/data/ (embedded: data/en.grammar, data/zh.grammar,
 * data/code.grammar; project names in data/projects.txt).
 *
 * Invariants of everything a filler emits:
 * - it is deterministic in (kind, seed, stream) and the sequence of calls;
 * - no sentence, comment or function is emitted twice by one filler (a 64-bit
 *   hash set rejects repeats and the grammar is expanded again);
 * - no access-code-like string: prose has no digits at all, code only the
 *   single literals 0 and 1 away from capitals and hyphens (filler_check);
 * - no project name, as a word or inside one: the grammars are checked when
 *   the filler is created, and filler_check scans any text;
 * - a paragraph (filler_paragraph) starts with a non-space character and ends
 *   with exactly "\n\n", so paragraphs join without merging across the join in
 *   byte-level BPE pre-tokenizers (the "\n\n" is its own pre-token or ends the
 *   one before it, and the next paragraph starts a new one).
 */
#ifndef NEEDLE_FILLER_H
#define NEEDLE_FILLER_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "prng.h"

enum filler_kind { FILLER_PROSE, FILLER_CODE, FILLER_ZH, FILLER_MIXED };

/* Languages of a sentence (filler_piece). */
enum filler_lang { FILLER_LANG_EN, FILLER_LANG_ZH, FILLER_LANG_COMMENT };

#define FILLER_MAX_DEPTH 40 /* grammar recursion limit */

struct filler;

/* Parses "prose", "code", "zh" or "mixed". ERR_INPUT naming the kind
 * otherwise. */
enum err filler_kind_parse(const char *name, enum filler_kind *out,
			   struct diag *d);
/* The name of a kind ("prose", ...). Static. */
const char *filler_kind_name(enum filler_kind k);

/* Creates a filler of `kind` whose output depends only on (seed, stream) and
 * the calls made; the caller frees it with filler_free. Fails with
 * ERR_INTERNAL when an embedded grammar is malformed or names a project. */
enum err filler_new(enum filler_kind kind, uint64_t seed, uint64_t stream,
		    struct filler **out, struct diag *d);
/* Accepts NULL. */
void filler_free(struct filler *f);
/* Makes `f` emit what a new filler of its kind with (seed, stream) would,
 * keeping its loaded grammars (filler_new's cost): the PRNG restarted, no
 * unit seen, no binding. Allocates nothing. */
void filler_reseed(struct filler *f, uint64_t seed, uint64_t stream);
/* The kind `f` was created with. */
enum filler_kind filler_kind_of(const struct filler *f);

/* Appends one paragraph (a run of sentences, or one function for code) that
 * ends with "\n\n". For FILLER_MIXED the language is drawn per paragraph. */
enum err filler_paragraph(struct filler *f, struct buf *out, struct diag *d);

/* The language used to build paragraphs sentence by sentence (for exact
 * fitting): English for prose and mixed, Chinese for zh, comments for code. */
enum filler_lang filler_tail_lang(const struct filler *f);

/* Appends one new sentence in `lang`: preceded by the paragraph opener when
 * `first` ("" for prose, "// " for comments), else by the separator (" ",
 * "", "\n// "). `brief` picks short sentences. The caller ends the paragraph
 * with "\n\n". */
enum err filler_piece(struct filler *f, enum filler_lang lang, int first,
		      int brief, struct buf *out, struct diag *d);

/* Appends one short English word (rule "word"), capitalised and alone when
 * `first`, else after a space. Words may repeat: this is the last resort of
 * exact fitting, for tokenizers whose shortest sentence is too long. */
enum err filler_word(struct filler *f, int first, struct buf *out,
		     struct diag *d);

/* Project names (data/projects.txt), in file order. Borrowed, static for the
 * life of `f`. */
size_t filler_nprojects(const struct filler *f);
const char *filler_project(const struct filler *f, size_t i);

/* Checks `len` bytes of filler text: ERR_INPUT (with the byte offset and the
 * string) for anything that looks like an access code (two digits in a row, or
 * a digit next to a capital letter or a hyphen) or contains a project name,
 * case-insensitively, inside any run of ASCII letters. `extra` (may be NULL,
 * `nextra` entries) adds names to look for, e.g. near-miss distractors. */
enum err filler_check(const struct filler *f, const char *text, size_t len,
		      const char *const *extra, size_t nextra, struct diag *d);

#endif
