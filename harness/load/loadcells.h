/*
 * loadcells — the "load" part of a run's summary, from its records: one cell
 * per (case, level) of a load case, with the figures of loadstat.h.
 *
 * A load record (record.h) carries "load": {"concurrency": C or "rate": R,
 * "level": i, "round": k (-1 = the pre-check, 0 = warm-up), "index": j,
 * "precheck", "scheduled_ms", "sent_ms" (both from the round's start), "slo":
 * {...} when set}, and the usual verdict, timing {ttft_ms, ttfc_ms, tpot_ms,
 * e2e_ms} and usage {completion_tokens}. The journal's reader turns each
 * counted request (round >= 1) into a struct loadcells_req
 * (record_load_request, run/record.h) and keeps them in a struct
 * loadcells_reqs; pre-check and warm-up records are left out of every
 * figure. The cells are built from those, never from the records. TTFT is the field reports' (docs/cutover.md "Where the rule comes from"): to the
 * first non-empty generated fragment, reasoning included; TPOT runs from that
 * same fragment to the last one, so TTFT + (n - 1) x TPOT never exceeds E2E;
 * TTFC, to the first content or tool call, is its own figure.
 *
 * A cell: case, concurrency or rate, rounds_total, rounds_valid, requests,
 * succeeded (both over the counted rounds), success_rate, and each figure as
 * its median over valid rounds with _min and _max (null without a valid
 * round): output_tps, ttft_p50_ms, ttft_p95_ms, ttft_p99_ms, ttfc_p50_ms,
 * ttfc_p95_ms, tpot_p50_ms, tpot_p95_ms, e2e_p50_ms, e2e_p95_ms,
 * achieved_rate, lag_p99_ms; itl_p50_ms, itl_p95_ms, itl_p99_ms (each round's
 * inter-token latencies, "itl_ms" of its successful requests, pooled; over
 * the valid rounds that have them); over all rounds slo_attainment and goodput_rps (with an SLO); lag_max_ms; and
 * "rounds": [{round, valid, requests, succeeded, output_tps, ttft_p50_ms,
 * ttft_p95_ms, ttfc_p50_ms, tpot_p95_ms, e2e_p50_ms, achieved_rate (rates),
 * slo_attainment and goodput_rps (rates, or with an SLO), lag_p99_ms}].
 */
#ifndef NEEDLE_LOADCELLS_H
#define NEEDLE_LOADCELLS_H

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/err.h"
#include "loadci.h"
#include "loadstat.h"

/* The member names of the load part, named here only: the writer above,
 * loadview.h, the diff, the gates, the pictures and the exports spell them
 * through these. A cell's figures and counts and its rounds' (a figure's
 * range adds "_min" and "_max" to its key), then the load part's own, a
 * cell's level, its rounds' and its sizing's, then the manifest's. */
#define LC_OUTPUT_TPS "output_tps"
#define LC_TTFT_P50_MS "ttft_p50_ms"
#define LC_TTFT_P95_MS "ttft_p95_ms"
#define LC_TTFT_P99_MS "ttft_p99_ms"
#define LC_TTFC_P50_MS "ttfc_p50_ms"
#define LC_TTFC_P95_MS "ttfc_p95_ms"
#define LC_TPOT_P50_MS "tpot_p50_ms"
#define LC_TPOT_P95_MS "tpot_p95_ms"
#define LC_E2E_P50_MS "e2e_p50_ms"
#define LC_E2E_P95_MS "e2e_p95_ms"
#define LC_ITL_P50_MS "itl_p50_ms"
#define LC_ITL_P95_MS "itl_p95_ms"
#define LC_ITL_P99_MS "itl_p99_ms"
#define LC_ACHIEVED_RATE "achieved_rate"
#define LC_SLO_ATTAINMENT "slo_attainment"
#define LC_GOODPUT_RPS "goodput_rps"
#define LC_LAG_P99_MS "lag_p99_ms"
#define LC_LAG_MAX_MS "lag_max_ms"
#define LC_SUCCESS_RATE "success_rate"
#define LC_ROUNDS_VALID "rounds_valid"
#define LC_ROUNDS_TOTAL "rounds_total"
#define LC_LOAD "load"         /* the summary's member that holds the load part */
#define LC_CELLS "cells"       /* the load part's array of cells */
#define LC_CASE "case"
#define LC_CONCURRENCY "concurrency"
#define LC_RATE "rate"
#define LC_REQUESTS "requests"
#define LC_SUCCEEDED "succeeded"
#define LC_ROUNDS "rounds"
#define LC_ROUND "round"
#define LC_VALID "valid"
#define LC_WALL_MS "wall_ms"
#define LC_SIZING "sizing"      /* loadcells_sizing: {min_rounds, max_rounds, rounds, stopped} */
#define LC_MIN_ROUNDS "min_rounds"
#define LC_MAX_ROUNDS "max_rounds"
#define LC_STOPPED "stopped"
#define LC_SERVER "server"      /* loadview.h: the server's own figures */
#define LC_CLIENT "client"
#define LC_CLIENT_CPU_SHARE "client_cpu_share"
#define LC_CLIENT_CPU_SHARE_MAX "client_cpu_share_max"
#define LC_CLIENT_PROBE_MS "client_probe_ms"
#define LC_WARNINGS "warnings"
#define LC_LEVEL "level"
/* The manifest's members the load stage writes (loadclient.h, loadsize.h's
 * decisions as run_load writes them) and reads back: entries of case, level,
 * concurrency or rate with these. */
#define LC_LOAD_SIZING "load_sizing"  /* [{..., rounds, min_rounds, max_rounds, stopped}] */
#define LC_LOAD_CLIENT "load_client"  /* [{..., round, cpu_ms, wall_ms, probe_ms}] */
#define LC_PROBE_MS "probe_ms"
#define LC_CPU_MS "cpu_ms"            /* and "client" {cpu_ms, wall_ms, cpu_share} */
#define LC_CPU_SHARE "cpu_share"

/* One counted request of a load case (a load record of round >= 1), as the
 * journal's reader hands it over; everything borrowed from the record. */
struct loadcells_req {
	const char *case_id;
	long level, round;      /* the level's index, the round (>= 1) */
	int open_loop;          /* the level is a rate, not a concurrency */
	double level_value;     /* its rate (requests/s) or concurrency */
	int has_slo;            /* the record has "slo" */
	struct loadstat_slo slo;
	struct loadstat_req q;  /* on its round's clock (loadstat.h) */
	const cJSON *itl_ms;    /* the gaps between its token chunks, or NULL */
};

/* The counted requests of a run's load cases, in journal order, each with
 * its own copy of what it borrowed (case ids once per case; gaps pooled). */
struct loadcells_kept;
struct loadcells_reqs {
	struct loadcells_kept *r;
	size_t n, cap;
	char **ids;             /* the case ids, one copy each */
	size_t nids, cids;
	double *itl;            /* the successful requests' gaps, pooled */
	size_t nitl, citl;
};

/* Appends request `q` to `s` (zeroed at first). ERR_NOMEM only. */
enum err loadcells_reqs_add(struct loadcells_reqs *s, const struct loadcells_req *q,
			    struct diag *d);
/* Frees what `s` holds and zeroes it. */
void loadcells_reqs_free(struct loadcells_reqs *s);

/* A figure of a cell (struct loadstat_cell's), in the order the summary
 * writes them. Each is a loadstat_fig (median, min and max over rounds; n 0:
 * null); achieved_rate is written for rates only, slo_attainment and
 * goodput_rps for rates and cells with an SLO; the round figures are a
 * subset (loadcells_round_fig). */
enum loadcells_fig {
	LCF_OUTPUT_TPS, LCF_TTFT_P50_MS, LCF_TTFT_P95_MS, LCF_TTFT_P99_MS, LCF_TTFC_P50_MS,
	LCF_TTFC_P95_MS, LCF_TPOT_P50_MS, LCF_TPOT_P95_MS, LCF_E2E_P50_MS, LCF_E2E_P95_MS,
	LCF_ITL_P50_MS, LCF_ITL_P95_MS, LCF_ITL_P99_MS, LCF_ACHIEVED_RATE, LCF_SLO_ATTAINMENT,
	LCF_GOODPUT_RPS, LCF_LAG_P99_MS, LCF_COUNT
};

/* One counted round of a cell. */
struct loadcells_round {
	long round;
	struct loadstat_round s;
};

/* One cell: a load case at one level, its figures over its counted rounds,
 * and what loadview_attach and loadcells_sizing add. */
struct loadcells_cell {
	char *case_id;          /* owned */
	int open_loop;          /* the level is a rate, not a concurrency */
	double level_value;     /* its rate (requests/s) or concurrency */
	int has_slo;            /* its requests carry an SLO */
	struct loadstat_cell s;
	struct loadcells_round *rounds; /* owned, by round */
	size_t nrounds;
	int has_client;         /* the client's CPU share is known (loadview.h) */
	double client_cpu_share, client_cpu_share_max;
	int has_probe;          /* the machine's probe is known (loadclient.h) */
	double client_probe_ms; /* its median over the case's counted rounds */
	cJSON *server;          /* owned: the server's view (loadview.h), or NULL */
	int has_sizing;         /* the manifest said how its rounds were sized */
	long min_rounds, max_rounds, sized_rounds;
	char *stopped;          /* owned, with has_sizing */
};

/* The load part of a run's summary: its cells in order of first appearance,
 * the client's whole-run cost and the warnings (loadview.h). n 0: the run
 * has no load case. */
struct loadcells {
	struct loadcells_cell *c; /* owned */
	size_t n;
	cJSON *client;          /* owned copy of the manifest's "client", or NULL */
	char **warnings;        /* owned */
	size_t nwarnings;
};

/* The cells of the requests of `reqs` (borrowed; NULL: none) into `out`
 * (its n 0 when there are none). ERR_NOMEM only, `out` then empty. */
enum err loadcells_build(const struct loadcells_reqs *reqs, struct loadcells *out, struct diag *d);
/* Frees what `lc` holds and zeroes it. */
void loadcells_free(struct loadcells *lc);

/* Adds to each cell of `lc` how its rounds were sized, from the manifest's
 * "load_sizing" (loadsize.h): min_rounds, max_rounds, rounds, stopped; a
 * cell without an entry (a run from before self-sizing, a shard) gets none.
 * ERR_NOMEM only. */
enum err loadcells_sizing(struct loadcells *lc, const cJSON *manifest, struct diag *d);

/* The summary's "load" object for `lc` (n > 0): {"cells": [...], "client",
 * "warnings"}, each cell as the header describes it, then
 * "client_cpu_share", "client_cpu_share_max", "client_probe_ms", "server"
 * and "sizing" where
 * it has them. ERR_NOMEM only. */
enum err loadcells_json(const struct loadcells *lc, cJSON **out, struct diag *d);

/* The summary's key of figure `f`. */
const char *loadcells_fig_key(enum loadcells_fig f);
/* The figure whose key is `key`, or -1. */
int loadcells_fig_named(const char *key);
/* Figure `f` of cell `c`, or NULL when the cell's summary does not hold it
 * (achieved_rate of a concurrency, ...); its n is 0 when it is null. */
const struct loadstat_fig *loadcells_fig(const struct loadcells_cell *c, enum loadcells_fig f);
/* Figure `f`'s median of cell `c` (may be NULL) into *v; 0 when the cell
 * has none (no cell, not held, or null). */
int loadcells_median(const struct loadcells_cell *c, enum loadcells_fig f, double *v);
/* B's over A's machine probe (client_probe_ms, loadview.h) into *m; 0 when
 * either cell (may be NULL) lacks one. */
int loadcells_machine_ratio(const struct loadcells_cell *a, const struct loadcells_cell *b, double *m);
/* Figure `f` of round `r` of cell `c` into *v; 0 when the round's summary
 * does not hold it. */
int loadcells_round_fig(const struct loadcells_cell *c, const struct loadcells_round *r,
			enum loadcells_fig f, double *v);

/* Fills `out` (reset first) with the samples of kind `k` of cell `cell`'s
 * requests in `reqs` (both borrowed; reqs NULL: none): the requests of its
 * case and level value (concurrency or rate, whatever the level's index or
 * shard), one group per valid round. ERR_NOMEM only. */
enum err loadcells_samples(const struct loadcells_reqs *reqs, const struct loadcells_cell *cell,
			   enum loadstat_kind k, struct loadci_set *out, struct diag *d);

/* A cell's name as gates and warnings give it: "CASE/c32" or "CASE/r0.3". */
void loadcells_name(const struct loadcells_cell *c, char *out, size_t cap);
/* Its level alone: "c32" or "r0.3". */
void loadcells_level(const struct loadcells_cell *c, char *out, size_t cap);

/* The cell of `lc` whose name is `name`, or NULL. */
const struct loadcells_cell *loadcells_find(const struct loadcells *lc, const char *name);

/* Appends the Markdown table of the cells of `lc` (nothing without any),
 * for report_markdown. ERR_NOMEM or ERR_LIMIT. */
enum err loadcells_markdown(const struct loadcells *lc, struct buf *out);

#endif
