/*
 * hint — "did you mean" for names typed by a person: suite keys, subcommands,
 * options. A pure function over borrowed strings; allocates nothing.
 */
#ifndef NEEDLE_HINT_H
#define NEEDLE_HINT_H

/* Names longer than this are never suggested nor matched (distance 9). */
#define HINT_NAME_MAX 62

/* The closest of the NULL-terminated `names` to `s` when it is plausibly a
 * typo (case-insensitive Levenshtein distance at most 1 for names of up to 4
 * bytes, else at most 2), or NULL. Returns one of `names` (borrowed). */
const char *hint_closest(const char *s, const char *const *names);

#endif
