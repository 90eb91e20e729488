/*
 * probesum — the report's view of the probing recall steps (recprobe.h):
 * recall by prompt-length residue (mod 2, 4, 8) over the jitter steps, and
 * each cache step with its verdict, cached_tokens and TTFT, naming the
 * needles whose warm answer changed.
 */
#ifndef NEEDLE_PROBESUM_H
#define NEEDLE_PROBESUM_H

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/json.h"
#include "run/record.h"

/* The probe summary being built from a run's records, one at a time. */
struct probesum {
	struct json_build jb; /* its adds' sticky error */
	cJSON *s;             /* owned; NULL until a record has a "probe" */
};

/* Empties `p`. Allocates nothing. */
void probesum_init(struct probesum *p);
/* Frees what `p` holds; it is empty after. */
void probesum_release(struct probesum *p);
/* Folds the record `v` views (borrowed, not kept) in when it has a "probe"
 * object: a jitter step into its residue rows, a cache step as a row of its
 * own. Errors stay in p->jb. */
void probesum_take(struct probesum *p, const struct record_view *v);
/* Moves {"residue": {...}, "cache": [...]} into *out (owned), or leaves *out
 * NULL when no record had a "probe" object; `p` is empty after. ERR_NOMEM
 * (a failed take's included). */
enum err probesum_end(struct probesum *p, cJSON **out, struct diag *d);

/* The Markdown sections of summary["probes"] (none when absent); an
 * md_section (md.h). */
enum err probesum_markdown(const cJSON *summary, struct buf *out);

/* Parses "M:R" into *m, *r: 1 when M is 2, 4 or 8 and 0 <= R < M. */
int probesum_residue_arg(const char *arg, int *m, int *r);

/* The needle recall (found/needles, 0..1) in summary["probes"] at the prompt
 * lengths with residue R mod M, `arg` = "M:R" (the diff gate
 * recall_residue@M:R). 0 when `arg` does not parse or the summary has no
 * such row. */
int probesum_residue(const cJSON *summary, const char *arg, double *v);

#endif
