/*
 * redact — keeps secrets out of everything needle stores or prints. The
 * secrets of a run are the API key and the credentials of the base URL
 * (http://USER:PASSWORD@host: "USER:PASSWORD", its base64 as HTTP Basic
 * authentication sends it, and PASSWORD alone). Each
 * occurrence in a record, the manifest, raw/ bytes or a message is replaced
 * by REDACT_MARK, wherever the server echoed it; "://USER:PASSWORD@" (the URL
 * as needle writes it in messages) becomes "://" whatever its length. A
 * secret shorter than REDACT_MIN bytes is not searched for alone (it would
 * match ordinary text).
 */
#ifndef NEEDLE_REDACT_H
#define NEEDLE_REDACT_H

#include <stddef.h>

#define REDACT_MARK "***"
#define REDACT_MIN 4 /* bytes; never below sizeof(REDACT_MARK) - 1 */
#define REDACT_MAX 5 /* secrets kept */

/* The secrets (borrowed from the strings given to redact_init, but for the
 * URL form, kept here). */
struct redact {
	const char *s[REDACT_MAX];
	size_t len[REDACT_MAX];
	const char *mark[REDACT_MAX]; /* what replaces it: never longer */
	char url_form[2048];          /* "://USERINFO@" */
	char basic[2048];             /* base64 of USERINFO */
	int n;
};

/* Collects the secrets of `api_key` and `base_url` (either may be NULL; both
 * borrowed and must outlive `r`). Allocates nothing. */
void redact_init(struct redact *r, const char *api_key, const char *base_url);
/* Whether any secret occurs in the `len` bytes at `p` (r may be NULL). */
int redact_found(const struct redact *r, const char *p, size_t len);
/* Replaces every secret in the `len` bytes at `p`, in place (the text only
 * shrinks); returns the new length. `r` may be NULL (no secrets). */
size_t redact_bytes(const struct redact *r, char *p, size_t len);
/* The same for NUL-terminated `s`; returns the number of secrets replaced. */
size_t redact_str(const struct redact *r, char *s);

#endif
