/*
 * run_int — what the four files of the run engine (run.h) share. Private:
 * only harness/run/run*.c include it.
 *
 *   run.c        the attempt loop: the cursor over (case, repeat, seed),
 *                preparing, sending, judging and journalling attempts, the
 *                cases run during a load case, --start-at, run_go and the
 *                inspectors
 *   run_load.c   the load side (struct run_load): load cases, their part of
 *                a shard, --metrics around their levels, --warmup
 *   run_setup.c  run_open and run_free: suite, tokenizer and template,
 *                endpoints, the results folder, the shard, the manifest
 *   run_keys.c   which attempts a case has (repeats, seeds, steps) and
 *                their record keys
 *
 * One struct run holds a run; its load side is one member, `load`, that
 * run_load.c writes (run.c and run_setup.c only read it, but for the
 * "during" cursor run.c walks).
 */
#ifndef NEEDLE_RUN_INT_H
#define NEEDLE_RUN_INT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "audit.h"
#include "base/buf.h"
#include "base/err.h"
#include "base/io.h"
#include "doccache.h"
#include "generators/haystack.h"
#include "generators/loadgen.h"
#include "grade.h"
#include "load/loadclient.h"
#include "load/loadplan.h"
#include "load/loadsize.h"
#include "net/endpoint.h"
#include "net/http.h"
#include "net/metrics.h"
#include "net/stream.h"
#include "record.h"
#include "recprobe.h"
#include "req.h"
#include "results.h"
#include "run.h"
#include "suite.h"

/* One attempt in flight. */
struct attempt {
	const struct suite_case *c;
	long repeat;
	int has_seed;              /* key seed: recall seed, else sampling seed */
	long seed;
	struct req req;
	struct stream st;
	struct buf raw;            /* the raw response bytes */
	char url[ENDPOINT_URL_MAX];
	int replica;               /* index into run.eps */
	struct grade_needle needles[HAYSTACK_MAX_NEEDLES];
	char projects[HAYSTACK_MAX_NEEDLES][64];
	char codes[HAYSTACK_MAX_NEEDLES][32];
	int nneedles;
	struct audit_count count;  /* the local prompt count */
	char prompt_sha256[IO_SHA256_HEX]; /* recall: of the rendered prompt */
	long recall_tokens;        /* recall: the prompt size built */
	double start_ms;
	char started_at[32];
	long long started_unix_ms;
	int feed_failed;            /* 1: reading stopped; 2: at one of needle's caps */
	char feed_msg[DIAG_MSG_MAX];
	int round;                 /* 1; 2 = the answer after a tool result */
	struct grade g;            /* accumulates over both rounds */
	cJSON *round1;             /* owned summary of round 1 when round == 2 */
	cJSON *calls1;             /* owned tool calls of round 1 */
	struct audit_result audit1;/* the audit of round 1 when round == 2 */
	int is_load;               /* a request of a load case: */
	struct suite_case lcase;   /* the case as this request sends it */
	struct loadgen_prompt lp;  /* its generated prompt (owned) */
	struct loadplan_item li;   /* its level, round, index and due time */
	double round_wall_s;       /* sharded: its round's start, Unix seconds */
	int passed;                /* journalled with verdict "pass" */
	int step;                  /* a probing recall case (recprobe.h): its step, */
	char step_id[RECORD_KEY_MAX]; /* whose id lcase.id borrows */
	int idle;                  /* a "during" case's attempt started after its
				    * load case ended: it fails, not under load */
	int parity;                /* 1 while round 1's non-streamed twin is in
				    * flight (parity.h); round 1 waits in `first` */
	struct {
		struct stream st;
		struct buf raw;
		struct http_done dn;
		double start_ms;
		char started_at[32];
		long long started_unix_ms;
		char sha256[IO_SHA256_HEX]; /* of its request */
	} first;
};

/* A record of a cache group's step waiting for the group's last step (the
 * group is journalled whole or not at all: recprobe.h). */
struct held {
	cJSON *rec;                /* owned */
	struct record_verdict v;
	struct stream_checks ck;
	long status;
	double weight;
};

/* A cursor over (case, repeat, seed index). */
struct cursor {
	size_t ci;
	long ri;
	int si;
};

/* The load side of a run. A load case runs alone: it starts when every
 * attempt before it has ended, and the cases after it wait for its last
 * request; the cases run "during" it start once its load is under way. */
struct run_load {
	struct loadspec *shares;   /* owned, per case: a load case's part of a
				    * shard (shard_load_share); NULL: the run is whole */
	const struct suite_case *c; /* the load case in progress, or NULL (run.c reads) */
	struct loadplan plan;      /* its requests (loadplan.h) */
	struct loadsize size;      /* its self-sizing (loadsize.h) */
	cJSON *json;               /* owned: its fields with the fixed length */
	struct loadgen_prompt *prompts; /* owned: the prompts of the round */
	struct loadgen_cache gen;  /* owned: what building them keeps (loadgen.h) */
	long nprompts;
	long finished;             /* counted requests of `c` ended so far, not
				    * its pre-check (run.c reads) */
	char stop[STREAM_MSG_MAX]; /* why `c` stopped at its pre-check */
	double wake_ms;            /* open loop: the next due time, 0 = none (run.c reads) */
	struct loadclient_round round; /* the round's CPU window (loadclient.h) */
	int round_on;
	struct metrics before;     /* --metrics: the snapshot before the level */
	int mlevel;                /* its level, -1 = none */
	const struct suite_case *during; /* the load case whose "during" cases
				    * are still to run, or NULL (run.c clears it) */
	struct cursor dcur;        /* their attempts (run.c walks it) */
};

struct run {
	const struct run_opts *o;
	struct suite *suite;
	char suite_dir[4096];
	char dir[4096];
	struct tok *tok;
	struct tpl *tpl;
	struct audit_ctx audit;
	struct results *res;
	struct http_multi *multi;
	struct endpoint eps[RUN_MAX_ENDPOINTS]; /* eps[0] speaks for all */
	int neps;
	size_t inflight[RUN_MAX_ENDPOINTS];
	int turn;                  /* the replica a tie goes to next */
	struct http_tls tls;       /* from o->cacert and o->insecure */
	struct buf warnings;       /* from loading a model folder (tpl_model.h) */
	cJSON *manifest;
	struct run_counts n;
	struct cursor cur;         /* the suite's attempts */
	struct attempt **slots;
	size_t nslots;
	/* the shard: mine[first[ci] + ri * seeds + si] for a selected case */
	size_t *first;
	unsigned char *mine;
	size_t in_shard;
	/* the whole split of the attempts that are not load requests: their
	 * number, how many are this shard's, and a SHA-256 of every unit's key
	 * and shard (what every shard computes alike; merge.h checks it) */
	size_t split_total, split_mine;
	char split_sha256[IO_SHA256_HEX];
	struct run_load load;
	struct loadclient_mark started; /* run_go's start: the run's CPU share */
	char nonce[RECPROBE_NONCE_MAX]; /* cache probes' NONCE.SESSION (recprobe.h) */
	char bos_answer[256];      /* what the server said of the BOS (ask_bos), "" when not asked */
	struct held held[RECPROBE_CACHE_STEPS - 1];
	int nheld;
	struct doccache docs;      /* recall documents kept for their next repeats */
};

/* ---- run_keys.c: which attempts the options select, and their keys ---- */

/* 1 when --case selects `c` (every case without --case). */
int run_selected(const struct run *r, const struct suite_case *c);
/* The repeats of `c`: --repeat, else the case's own. */
long run_repeats(const struct run *r, const struct suite_case *c);
/* The seed indexes of `c` per repeat: a recall case's seeds times its steps
 * (recprobe.h), else 1. */
int run_seeds(const struct suite_case *c);
/* The step of a recall case at seed index `si` (recprobe.h), 0 otherwise. */
int run_step(const struct suite_case *c, int si);
/* The key seed of `c` at seed index `si`: the recall seed, else the
 * sampling seed (*has = 0 when the case has none). */
void run_key_seed(const struct suite_case *c, int si, int *has, long *seed);
/* The record key of an attempt (case `k`, step, repeat, seed) into key[cap]. */
void run_attempt_key(const struct suite_case *k, int step, long repeat,
		     int has_seed, long seed, char *key, size_t cap);

/* ---- run.c: counts ---- */

/* The most tokens prompt + max_tokens may take on the server: vLLM allows
 * prompt + max_tokens <= max_model_len, SGLang only < context_len
 * (docs/protocol.md "Context-length refusals"); -1 when max_model_len is unknown. */
long long run_context_room(const struct run *r);
/* Sets r->n.total and r->n.weight_total to the attempts not yet recorded. */
void run_count_todo(struct run *r);
/* `n` requests of load case `c` that self-sizing did not need leave the
 * counts (the total, the progress weight). */
void run_count_unneeded(struct run *r, const struct suite_case *c, long n);

/* ---- run.c: attempts ---- */

/* A new attempt (owned by the caller: run_attempt_free) on the replica with
 * the fewest requests in flight (ties in turn), round 1, nothing built or
 * sent; NULL when out of memory. */
struct attempt *run_attempt_new(struct run *r);
/* Accepts NULL. */
void run_attempt_free(struct attempt *a);
/* Starts (or restarts, for round 2) the HTTP request of `a` (its req built)
 * with a fresh stream and raw buffer; the caller counts it in r->inflight. */
enum err run_send(struct run *r, struct attempt *a, struct diag *d);
/* Records attempt `a` (borrowed) as failed with `code` (context_overflow,
 * not_sent) and `why` without sending it; it stays in every count. */
enum err run_not_sent(struct run *r, struct attempt *a, enum stream_fail code,
		      const char *why, struct diag *d);
/* A free slot (NULL when all are taken). */
struct attempt **run_empty_slot(struct run *r);
/* Unix time in seconds (CLOCK_REALTIME). */
double run_wall_s(void);

/* ---- run_load.c ---- */

/* The plan of load case `c` this process runs: the case's own, or its part
 * of a shard (shard_load_share). */
const struct loadspec *run_load_spec(const struct run *r, const struct suite_case *c);
/* Every selected load case runs on every shard, each with its part of the
 * rate or concurrency (shard_load_share); its requests count in r->in_shard. */
enum err run_load_share(struct run *r, struct diag *d);
/* Makes `c` the load case in progress (r->load.c) and the one whose "during"
 * cases run next (r->load.during). */
enum err run_load_begin(struct run *r, const struct suite_case *c, struct diag *d);
/* Starts what the plan says is due into the free slots; when the case is
 * done, r->load.c becomes NULL and r->cur moves past it. */
enum err run_load_fill(struct run *r, struct diag *d);
/* Request `a` of the load case in progress ended (`judged`: and was judged
 * and journalled); a pre-check decides whether the case goes on. */
void run_load_ended(struct run *r, const struct attempt *a,
		    const struct http_done *dn, int judged);
/* Request `a`'s place and times on its round's clock, for its record. */
void run_load_view(const struct attempt *a, struct record_load *l);
/* --warmup N: N uncounted requests before anything is counted. */
enum err run_warm_up(struct run *r, struct diag *d);
/* Releases what `l` owns; accepts a zeroed one. */
void run_load_release(struct run_load *l);

#endif
