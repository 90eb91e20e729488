/*
 * progress — the live progress line of `needle run` on a terminal:
 *
 *	12/40  pass 11  fail 1  elapsed 1:05  eta 3:47  slowest json-3#2 0:41
 *
 * (done/planned, the counts, the time since the start, the estimated time
 * left, and the attempt in flight the longest). The estimate weighs attempts
 * by their prompt size (run.h's weights), not by count: a 1M-token recall
 * attempt is not worth one 20-token chat. This module formats, fits and paces
 * it; only the CLI layer writes it, after "\r\033[K", cut to one column less
 * than the terminal's width so that it never wraps.
 *
 * Off a terminal (a CI log, `> log 2>&1`) the same line is written whole,
 * once every PROGRESS_LOG_EVERY_S seconds (NEEDLE_PROGRESS_SECONDS sets
 * another), so a long run shows it is alive without flooding the log.
 */
#ifndef NEEDLE_PROGRESS_H
#define NEEDLE_PROGRESS_H

#include <stddef.h>

#define PROGRESS_EVERY_MS 250.0 /* at most one line per this */
#define PROGRESS_LOG_EVERY_S 30.0 /* off a terminal: one line per this */

/* What one line shows. */
struct progress_state {
	size_t done, total, pass, fail;
	double elapsed_s;
	const char *slow_id;    /* the attempt in flight longest, or NULL */
	long slow_repeat;
	double slow_s;
	double weight_done, weight_total; /* the ETA's measure; 0, 0: by count */
};

/* The pacing of the line. Zero-initialise. */
struct progress {
	double last_ms;
	double every_ms;        /* 0: PROGRESS_EVERY_MS */
};

/* Sets `p` up for a run that starts at `now_ms`: on a terminal (`tty`) a
 * line every PROGRESS_EVERY_MS from the start; else the first after
 * progress_log_every_ms, and so on. */
void progress_start(struct progress *p, int tty, double now_ms);

/* Whether a line is due at `now_ms` (always when `force`): `every_ms` (or
 * PROGRESS_EVERY_MS) since the last; marks it shown. */
int progress_due(struct progress *p, double now_ms, int force);


/* Seconds as "M:SS", or "H:MM:SS" from one hour, rounded. */
void progress_duration(double s, char *out, size_t cap);

/* Unix seconds `s` as RFC 3339 UTC to the second ("2026-12-01T14:00:00Z")
 * into `out` (`cap` bytes, 21 are enough). */
void progress_utc(double s, char *out, size_t cap);

/* The line for `st` (no control characters) into `out` (`cap` bytes). */
void progress_line(const struct progress_state *st, char *out, size_t cap);

/* Cuts `line` in place to at most `cols` - 1 terminal columns (a UTF-8
 * character of U+1100 and above counts as two), at a character boundary. */
void progress_fit(char *line, int cols);

/* The width of the terminal on file descriptor `fd` (TIOCGWINSZ), else
 * $COLUMNS, else 80. */
int progress_columns(int fd);

#endif
