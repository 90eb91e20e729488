/*
 * probesum — the report's view of the probing recall steps (recprobe.h):
 * recall by prompt-length residue (mod 2, 4, 8) over the jitter steps, and
 * each cache step with its verdict, cached_tokens and TTFT, naming the
 * needles whose warm answer changed.
 */
#ifndef NEEDLE_PROBESUM_H
#define NEEDLE_PROBESUM_H

#include <cjson/cJSON.h>

#include "buf.h"
#include "err.h"

/* Builds {"residue": {...}, "cache": {...}} from the records (borrowed) into
 * *out (owned), or leaves *out NULL when no record has a "probe" object.
 * ERR_NOMEM only. */
enum err probesum_build(const cJSON *records, cJSON **out, struct diag *d);

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
