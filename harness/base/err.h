/*
 * err — the one project-wide error enum and the diagnostic that goes with it.
 *
 * Every fallible function in needle returns an `enum err` (ERR_OK == 0) and, when
 * it fails, fills a caller-owned `struct diag` at the deepest point that knows
 * what went wrong: which file, which position, which reason. Only the CLI layer
 * prints a diagnostic and maps the code to an exit status (err_exit_status).
 *
 * Message style (git's): lower-case, no full stop, what failed first, the subject
 * in quotes: "cannot read suite 'x.json': no such file".
 */
#ifndef NEEDLE_ERR_H
#define NEEDLE_ERR_H

#include <stddef.h>

enum err {
	ERR_OK = 0,
	ERR_USAGE,       /* bad command line: flag, value, argument */
	ERR_NOMEM,       /* allocation failed */
	ERR_LIMIT,       /* a named size cap was reached */
	ERR_IO,          /* reading or writing a local file failed */
	ERR_INPUT,       /* malformed input: flag, suite, tokenizer, text, stream */
	ERR_UNSUPPORTED, /* well-formed input that needle does not implement */
	ERR_ENDPOINT,    /* the endpoint could not be used at all */
	ERR_INTERNAL,    /* a bug: an invariant did not hold */
	ERR_LOADER,      /* a library loaded at run time (libcrypto) is missing */
	ERR_INTERRUPTED  /* a signal (SIGINT/SIGTERM) stopped it before the end */
};

/* Exit statuses documented in every --help. */
enum {
	EXIT_PASS = 0,    /* all passed */
	EXIT_FAIL = 1,    /* something failed a check or a gate */
	EXIT_USAGE = 2,   /* usage or input error */
	EXIT_ENDPOINT = 3, /* the endpoint could not be used at all */
	EXIT_UNDERPOWERED = 4, /* needle diff: nothing failed, but a gate could
				  not tell a regression from the runs' noise */
	EXIT_INTERRUPTED = 5, /* needle run: stopped by SIGINT/SIGTERM before
				 its end (a scheduler retries it: --resume) */
	EXIT_LOADER = 127  /* ERR_LOADER: the dynamic loader's status for a missing
			    * library, which it would have been had it been linked */
};

#define DIAG_MSG_MAX 1024

/* A caller-owned diagnostic. `code` is ERR_OK until something fails; `msg` is
 * always NUL-terminated. The first failure recorded wins (sticky). */
struct diag {
	enum err code;
	char msg[DIAG_MSG_MAX];
};

/* Empties `d`. Allocates nothing. */
void diag_init(struct diag *d);

/* Records a failure unless one is already recorded, and returns `code` so that a
 * caller can write `return diag_fail(d, ERR_INPUT, "bad '%s'", name);`.
 * `d` may be NULL, in which case only the code is returned. */
enum err diag_fail(struct diag *d, enum err code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prefixes the recorded message with "CONTEXT: " (e.g. a file name), keeping
 * the code; does nothing when no failure is recorded. */
void diag_prefix(struct diag *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Short stable name of a code ("input", "nomem", ...). */
const char *err_name(enum err code);

/* The documented exit status for a failure with this code. */
int err_exit_status(enum err code);

#endif
