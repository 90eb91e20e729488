/*
 * record — the formats of a run folder's contents (docs/runs.md "The files of a run folder"), written and
 * read here only: the results.jsonl record of one attempt, the round summary
 * of a tool conversation, and manifest.json. results.h keeps the files (the
 * journal's lines, durability, the raw bytes); report and diff read records
 * through results_each, which accepts a line only when record_problem
 * does.
 *
 * A record (one JSON object): case, kind, repeat, seed (number or null),
 * verdict ("pass" or "fail"), transport {ok, failures, messages}, audit {ok,
 * enabled, [note], local_prompt_tokens, server_prompt_tokens, usage_delta,
 * tolerance}, grade {ok, reasons, [needles]}, http_status, timing
 * {first_byte_ms, ttft_ms, ttfc_ms, e2e_ms, tpot_ms}, usage, finish_reason,
 * content, reasoning, tool_calls, request_sha256, endpoint, model,
 * started_at, started_unix_ms (the same moment to the millisecond: the
 * Unix epoch's, CLOCK_REALTIME), raw ("raw/NAME.sse"), response_bytes, and for recall cases
 * recall {tokens, depths, filler, prompt_sha256}, for a two-round tool case
 * rounds [round 1's summary], and temperature (the case's sampling
 * temperature as sent, or null when the request left it to the server:
 * diff's functional gates judge attempts at temperature > 0 as samples of a
 * pass rate, fungate.h), "replica" and "base_url" (which of several
 * --base-url served it), and when they apply "load" (a load request's level,
 * place and times on its round's clock: struct record_load), "during" (a
 * case run during a load case) and "probe" (a recall case's probing step:
 * struct record_probe). verdict is "pass" only when transport, audit and
 * grade all passed.
 *
 * An attempt is keyed by (case id, repeat, seed): record_key.
 *
 * A record keeps at most RECORD_TEXT_MAX bytes of content, of reasoning and
 * of each tool call's arguments (cut at a character boundary); a cut text
 * says so in "content_cut" / "reasoning_cut" / the function's
 * "arguments_cut" {bytes: the whole length, kept}, and the whole answer stays
 * in raw/ (grading always sees all of it; round 2 gets the whole arguments).
 */
#ifndef NEEDLE_RECORD_H
#define NEEDLE_RECORD_H

#include <stdalign.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "audit.h"
#include "base/err.h"
#include "grade.h"
#include "base/keyset.h"
#include "load/loadcells.h"
#include "net/endpoint.h"
#include "net/stream.h"
#include "suite.h"
#include "tok/tok.h"
#include "tpl/tpl.h"

#define RECORD_TEXT_MAX ((size_t)1 << 20) /* bytes of content, of reasoning, of arguments */

/* A load request's record "load": rate (open loop) or concurrency, level,
 * round (-1 the pre-check, 0 a warm-up), index, warmup, precheck,
 * scheduled_ms and sent_ms (on the round's clock), input_tokens,
 * output_tokens, itl_ms (the gaps between token chunks, to the
 * microsecond; absent without any), round_started_unix (a sharded run's),
 * slo {ttft_ms, tpot_ms, e2e_ms: those set}. */
struct record_load {
	int open_loop;
	double rate;                 /* open loop */
	long concurrency;            /* closed loop */
	int level;
	long round, index;
	int warmup, precheck;
	double scheduled_ms, sent_ms;
	long input_tokens, output_tokens;
	const double *gaps_ms;       /* borrowed, ngaps of them */
	size_t ngaps;
	int has_round_wall;
	double round_started_unix;
	double slo_ttft_ms, slo_tpot_ms, slo_e2e_ms; /* > 0: a bound */
};

/* A recall case's probing step, its record "probe" (recprobe.h): a cache
 * step {step, nonce, cached_tokens (null: not reported), ttft_ms} or a
 * length step {tokens, offset, mod2, mod4, mod8}. */
struct record_probe {
	int cache;
	const char *step, *nonce;    /* cache */
	long long cached_tokens;     /* cache; < 0: not reported */
	double ttft_ms;              /* cache */
	long tokens;                 /* length */
	int offset;                  /* length */
};

/* What one attempt's record is made of (all borrowed). */
struct record_attempt {
	const struct suite_case *c;
	long repeat;
	int has_seed;
	long seed;
	const struct stream *st;          /* the (last round's) response */
	const struct stream_checks *ck;   /* its transport checks */
	const char *transport_msg;        /* said under transport.messages
					     unless a check said it; or NULL */
	long http_status;
	const struct audit_result *audit;
	const struct grade *g;            /* NULL in a round summary */
	const cJSON *tool_calls;          /* NULL: the calls of `st` */
	const cJSON *round1;              /* round 1's summary, or NULL */
	const char *request_sha256;
	const char *endpoint;             /* request path */
	const char *model;
	const char *started_at;
	long long started_unix_ms;        /* the same moment, ms since the epoch */
	const char *raw_name;             /* file name under raw/ */
	size_t response_bytes;
	const char *prompt_sha256;        /* recall: of the rendered prompt */
	long recall_tokens;               /* recall: the prompt size asked for
					     ("tokens": "max" resolved) */
	int replica;                      /* its index in --base-url order */
	const char *base_url;             /* its base URL, redacted; NULL: no
					     replica is named */
	const struct record_load *load;   /* a load request's, or NULL */
	const char *during;               /* the load case it ran during, or NULL */
	int under_load;                   /* with `during`: it started under load */
	const struct record_probe *probe; /* a probing step's, or NULL */
};

/* How the verdict was reached. */
struct record_verdict {
	int transport_ok, audit_ok, grade_ok;
};

/* A buffer that holds any attempt key whole: ids (at most SUITE_ID_MAX
 * bytes, suite.h) are never cut, so two ids that differ only in their last
 * byte are two cases. */
#define RECORD_KEY_MAX (SUITE_ID_MAX + 64)

/* The attempt key "ID\x1fREPEAT\x1fSEED" (SEED "null" when has_seed is 0),
 * written into `out` (`cap` bytes, RECORD_KEY_MAX holds any key of an id of
 * at most SUITE_ID_MAX bytes). */
void record_key(const char *id, long repeat, int has_seed, long seed,
		char *out, size_t cap);
/* The key of parsed record `rec` into `out`; 0 when "case", "repeat" or
 * "seed" is missing or not a string, an integer below 2^53, a number or null,
 * when the case id is longer than SUITE_ID_MAX, or when the key does not fit
 * in `cap`. */
int record_key_of(const cJSON *rec, char *out, size_t cap);
/* The names of the members of a record its readers consult (enum
 * record_field), spelled here only: record_new writes them, the views below
 * find them, and a reader that names one uses these. "ok" is the member of
 * transport, audit and grade alike. */
#define RK_CASE "case"
#define RK_KIND "kind"
#define RK_REPEAT "repeat"
#define RK_SEED "seed"
#define RK_VERDICT "verdict"
#define RK_TRANSPORT "transport"
#define RK_AUDIT "audit"
#define RK_GRADE "grade"
#define RK_HTTP_STATUS "http_status"
#define RK_TIMING "timing"
#define RK_USAGE "usage"
#define RK_FINISH_REASON "finish_reason"
#define RK_MODEL "model"
#define RK_STARTED_AT "started_at"
#define RK_STARTED_UNIX_MS "started_unix_ms"
#define RK_RAW "raw"
#define RK_RECALL "recall"
#define RK_LOAD "load"
#define RK_PROBE "probe"
#define RK_REPLICA "replica"
#define RK_BASE_URL "base_url"
#define RK_TEMPERATURE "temperature"
#define RK_FAILURES "failures"                         /* transport. */
#define RK_MESSAGES "messages"
#define RK_ENABLED "enabled"                           /* audit. */
#define RK_USAGE_DELTA "usage_delta"
#define RK_LOCAL_PROMPT_TOKENS "local_prompt_tokens"
#define RK_SERVER_PROMPT_TOKENS "server_prompt_tokens"
#define RK_TOLERANCE "tolerance"
#define RK_HINT "hint"
#define RK_REASONS "reasons"                           /* grade. */
#define RK_NEEDLES "needles"                         /* its entries' members: grade.h */
#define RK_FIRST_BYTE_MS "first_byte_ms"               /* timing. */
#define RK_TTFT_MS "ttft_ms"
#define RK_TTFC_MS "ttfc_ms"
#define RK_E2E_MS "e2e_ms"
#define RK_TPOT_MS "tpot_ms"
#define RK_PROMPT_TOKENS "prompt_tokens"               /* usage. */
#define RK_COMPLETION_TOKENS "completion_tokens"
#define RK_TOKENS "tokens"                             /* recall. */
#define RK_DEPTHS "depths"
#define RK_PROMPT_SHA256 "prompt_sha256"
#define RK_LEVEL "level"                               /* load. */
#define RK_ROUND "round"
#define RK_INDEX "index"
#define RK_WARMUP "warmup"
#define RK_PRECHECK "precheck"
#define RK_CONCURRENCY "concurrency"
#define RK_RATE "rate"
#define RK_SCHEDULED_MS "scheduled_ms"                 /* load., also read by merge */
#define RK_SENT_MS "sent_ms"
#define RK_INPUT_TOKENS "input_tokens"
#define RK_OUTPUT_TOKENS "output_tokens"
#define RK_ITL_MS "itl_ms"
#define RK_ROUND_STARTED_UNIX "round_started_unix"     /* load. of a shard's record */
#define RK_SLO "slo"                                   /* load., its members the timing's
							  RK_TTFT_MS, RK_TPOT_MS, RK_E2E_MS */
#define RK_STEP "step"                                 /* probe. */
#define RK_CACHED_TOKENS "cached_tokens"
#define RK_NONCE "nonce"                               /* probe. (and the manifest's
							  cache_probe, recprobe.h) */
/* The members looked up in view.rec for the few records a report quotes (a
 * failure's answer and where it was sent). */
#define RK_ENDPOINT "endpoint"
#define RK_CONTENT "content"
#define RK_REASONING "reasoning"
#define RK_TOOL_CALLS "tool_calls"

/* The members of a record its readers consult, each found once: one walk of
 * the record's members and of those of its objects transport, audit, grade,
 * timing, usage, recall and load, the first of duplicate names winning (as
 * jget reads them). A reader of a journal of millions of records reads these
 * (a report consults some 60 a record) instead of looking names up; what
 * only a few records are read for (the answer quoted of a failure) is
 * looked up in view.rec. */
enum record_field {
	RF_CASE, RF_KIND, RF_REPEAT, RF_SEED, RF_VERDICT, RF_TRANSPORT, RF_AUDIT,
	RF_GRADE, RF_HTTP_STATUS, RF_TIMING, RF_USAGE, RF_FINISH_REASON,
	RF_MODEL, RF_STARTED_AT, RF_STARTED_UNIX_MS,
	RF_RAW, RF_RECALL, RF_LOAD, RF_PROBE, RF_REPLICA, RF_BASE_URL, RF_TEMPERATURE,
	RF_TR_OK, RF_TR_FAILURES, RF_TR_MESSAGES,                   /* transport. */
	RF_AU_OK, RF_AU_ENABLED, RF_AU_USAGE_DELTA, RF_AU_LOCAL_PROMPT_TOKENS,
	RF_AU_SERVER_PROMPT_TOKENS, RF_AU_TOLERANCE, RF_AU_HINT,  /* audit. */
	RF_GR_OK, RF_GR_REASONS, RF_GR_NEEDLES,                     /* grade. */
	RF_TI_FIRST_BYTE_MS, RF_TI_TTFT_MS, RF_TI_TTFC_MS, RF_TI_E2E_MS,
	RF_TI_TPOT_MS,                                              /* timing. */
	RF_US_PROMPT_TOKENS, RF_US_COMPLETION_TOKENS,               /* usage. */
	RF_RE_TOKENS, RF_RE_DEPTHS, RF_RE_PROMPT_SHA256,            /* recall. */
	RF_LO_LEVEL, RF_LO_ROUND, RF_LO_WARMUP, RF_LO_PRECHECK,
	RF_LO_CONCURRENCY, RF_LO_RATE,                              /* load. */
	RF_COUNT
};

/* One record as its readers see it (all borrowed from `rec`). */
#define RECORD_VIEW_TYPES 64 /* RF_COUNT rounded up to 16 */
struct record_view {
	const cJSON *rec;          /* the record */
	const cJSON *f[RF_COUNT];  /* each member, or NULL when absent (an
				      object's members when it is one) */
	int jtree;                 /* 1: `rec` is a jtree's (jscan.h's tree mode), whose
				      nodes say more (jtree_number_text) */
	alignas(16) unsigned char type[RECORD_VIEW_TYPES]; /* each member's cJSON
				      type, 0 when absent: record_view_edited
				      checks them all at once */
};

/* The name of field `k` (< RF_COUNT): its member's, an RK_ name. */
const char *record_field_name(enum record_field k);
/* The object field whose member field `k` is, or RF_COUNT for a member of
 * the record itself. */
enum record_field record_field_parent(enum record_field k);

/* Fills *v from record `rec` (borrowed; may be NULL or not an object: then
 * every member is NULL). */
void record_view_of(const cJSON *rec, struct record_view *v);
/* record_view_of of a record a jtree parsed (NULL, or every node a jtree
 * node: the names' lengths are read, not counted), with v->jtree set: the
 * same members found. */
void record_view_of_jtree(const cJSON *rec, struct record_view *v);
/* Whether the record `v` views has verdict "pass" (read inline: every
 * reader asks it of every record). */
static inline int record_view_passed(const struct record_view *v)
{
	const cJSON *s = v->f[RF_VERDICT];
	const char *p = s && (s->type & 0xFF) == cJSON_String ? s->valuestring : "";

	return p[0] == 'p' && p[1] == 'a' && p[2] == 's' && p[3] == 's' && !p[4];
}
/* The counted load request of the record `v` views (a record with "load"
 * of round >= 1 and a "case" string) into *out, borrowing from the record:
 * its case, level, round and level value, its SLO, its times on its round's
 * clock (first = sent_ms + ttft_ms, the first fragment of any kind;
 * first_content = sent_ms + ttfc_ms; last = first + tpot_ms x
 * (completion_tokens - 1), the last fragment: tpot_ms is timed from the same
 * first fragment, stream.h; done = sent_ms + e2e_ms; ok = verdict "pass")
 * and its gaps ("itl_ms"). Returns 1; 0 for a pre-check (round -1), a
 * warm-up (round 0) or a record that is not a load request, leaving *out
 * alone. */
int record_load_request(const struct record_view *v, struct loadcells_req *out);
/* record_key_of and record_problem of the record `v` views. */
int record_view_key(const struct record_view *v, char *out, size_t cap);
const char *record_view_problem(const struct record_view *v);
/* Why the record `v` views is not one needle wrote (it was edited or
 * forged), or NULL; the reason is written into `out` (`cap` bytes) when it
 * is not a fixed one. In this order:
 *  - a verdict "pass" beside a check that failed (transport, audit or grade
 *    "ok": false);
 *  - the first member (in the record's order) a reader consults with a type
 *    record_new never gives it, e.g. 'member "timing"."ttft_ms" is a string,
 *    not a number or null'; what the server sent ("usage"'s members) is not
 *    judged;
 *  - the first member needle has written in every record since the journal's
 *    first format that is absent, e.g. 'member "transport"."ok" is missing'
 *    (for a load record also "load" with "level", "round" and "warmup"; for
 *    a recall record "recall" with "tokens" and "depths"). Members added
 *    later may be absent: an older needle's records lack them.
 * Readers refuse such a record rather than trust its verdict or read a
 * figure of it as 0 or null. */
const char *record_view_edited(const struct record_view *v, char *out, size_t cap);

/* Why `rec` (NULL for a line that is not JSON) is not a record, e.g. "no
 * \"verdict\" string"; NULL when it is one. */
const char *record_problem(const cJSON *rec);
/* Whether record `rec` has verdict "pass". */
int record_passed(const cJSON *rec);

/* The current UTC time as "YYYY-MM-DDTHH:MM:SSZ", the form of every
 * timestamp in a run folder. */
void record_utc_now(char *out, size_t cap);

/* The current time in ms since the Unix epoch (CLOCK_REALTIME). */
long long record_unix_ms(void);

/* A run id names one run everywhere its rows go (two runs in folders of the
 * same name stay apart in one query): a random UUID (RFC 9562 version 4),
 * 36 characters, lower-case hex. */
#define RECORD_RUN_ID_LEN 36

/* The tool calls of `s` as the API shapes them: [{id, type, function: {name,
 * arguments}}]. Caller owns; NULL when out of memory. */
cJSON *record_tool_calls(const struct stream *s);
/* The record of a finished attempt (a->g set); fills *v. Caller owns; NULL
 * when out of memory. */
cJSON *record_new(const struct record_attempt *a, struct record_verdict *v);
/* The summary of round 1 of a tool conversation (a->g unused): transport,
 * http_status, timing, usage, finish_reason, content, reasoning, tool_calls,
 * request_sha256, raw. Caller owns. */
cJSON *record_round(const struct record_attempt *a);

/* The names of the members of manifest.json that are both written and read,
 * spelled here only: record_manifest_*, the run's set-up and merge write
 * them; the report, its exports, merge and --resume read them through these.
 * The endpoint's own members are endpoint.h's (EP_), the load stage's
 * loadcells.h's (LC_LOAD_SIZING, LC_LOAD_CLIENT, LC_CLIENT). A name several
 * objects share is given once, with the objects that have it. */
#define MK_HARNESS "harness"          /* {name, version, commit} */
#define MK_RUN_ID "run_id"
#define MK_SUITE "suite"              /* {name, path, sha256, cases} */
#define MK_ENDPOINT "endpoint"        /* endpoint.h's json, with base_url */
#define MK_TOKENIZER "tokenizer"      /* {path, kind, sha256, ...} or null */
#define MK_TEMPLATE "template"        /* {name, sha256, ..., server} or null */
#define MK_OPTIONS "options"          /* {..., case, repeat, server} */
#define MK_CASE "case"
#define MK_REPEAT "repeat"
#define MK_STARTED_AT "started_at"
#define MK_ENDED_AT "ended_at"
#define MK_START_LAG_MS "start_lag_ms" /* --start-at's lateness */
#define MK_INTERRUPTED "interrupted"
#define MK_ATTEMPTS "attempts"        /* {planned, run, pass, fail, recorded_before};
					 a count in planned, shard and split */
#define MK_PLANNED "planned"          /* {version, attempts, keys}; a count in attempts */
#define MK_KEYS "keys"
#define MK_RUN "run"
#define MK_PASS "pass"
#define MK_FAIL "fail"
#define MK_RECORDED_BEFORE "recorded_before"
#define MK_SHARD "shard"              /* {index, count, from, rule, attempts, split}
					 or null; a merged run's {merged, count, rule} */
#define MK_INDEX "index"
#define MK_COUNT "count"
#define MK_FROM "from"
#define MK_RULE "rule"
#define MK_SPLIT "split"              /* {attempts, mine, sha256} */
#define MK_MINE "mine"
#define MK_MERGED "merged"
#define MK_MERGE "merge"              /* a merged run's {..., note} */
#define MK_NOTE "note"
#define MK_NAME "name"                /* of harness, suite and template */
#define MK_VERSION "version"          /* of harness and planned */
#define MK_COMMIT "commit"
#define MK_PATH "path"                /* of suite and tokenizer */
#define MK_KIND "kind"                /* of tokenizer */
#define MK_SHA256 "sha256"            /* of suite, tokenizer, template and split */
#define MK_SERVER "server"            /* of template and options */
#define MK_CACHE_PROBE "cache_probe"  /* {nonce (RK_NONCE), session}: recprobe.h */
#define MK_SESSION "session"

/* The options a manifest records (strings borrowed, NULL when not given). */
struct record_options {
	long concurrency, repeat;           /* repeat 0: the suite's */
	double timeout, idle_timeout;       /* <= 0: the defaults */
	const char *const *case_globs;      /* --case values, ncase_globs of them */
	int ncase_globs;
	const char *api_key_env, *server;
	int resume;
};

/* Where a run's settings came from besides its command line (strings
 * borrowed, NULL when not given). */
struct record_origin {
	const char *config_path;        /* the config file used (config.h), or NULL */
	const char *config_sha256;      /* its SHA-256 */
	int config_named;               /* 1: --config or NEEDLE_CONFIG named it */
	const char *const *config_keys; /* the options it set, nconfig_keys of them */
	int nconfig_keys;
	const char *tokenizer_id;       /* --tokenizer when it has a model id's shape */
	const char *tokenizer_from;     /* then "local folder" or "hugging face cache" */
};

/* What a manifest is made of. */
struct record_manifest {
	const struct suite *suite;
	const char *base_url;          /* already redacted (endpoint_redact) */
	cJSON *endpoint;               /* taken: endpoint.h's json; base_url added */
	const char *tokenizer_path;
	const struct tok *tok;         /* NULL: "tokenizer": null */
	long long bos_id;              /* -1: null */
	const char *bos_answer;        /* whether the server adds it, or NULL:
					* not asked */
	const struct tpl *tpl;         /* NULL: "template": null */
	enum tpl_server server;        /* how the audit prepared messages */
	const char *server_from;
	struct record_options opts;
	struct record_origin origin;
};

/* manifest.json at the start of a run: harness {name, version, commit (the
 * build's git describe, version.h)}, run_id (record_run_id), suite, endpoint,
 * tokenizer (with "id" and "from" for a model id), template, options, config
 * ({path, sha256, named, keys} or null), started_at, ended_at (null). Takes m->endpoint (also on
 * failure). Caller owns; NULL when out of memory. Built through json.h, as is
 * every record: a value returned has every field. */
cJSON *record_manifest_new(struct record_manifest *m);
/* Sets ended_at (now) and "attempts" {planned, run, pass, fail,
 * recorded_before}. ERR_NOMEM. */
enum err record_manifest_end(cJSON *manifest, size_t planned, size_t run, size_t pass,
			     size_t fail, size_t recorded_before, struct diag *d);
/* "planned"."version" of the plans this needle writes: every request of a
 * load case (pre-check, warm-up and counted rounds) is an attempt with a key
 * of its own. A plan without a version (an older needle's) has one key per
 * load case, the one its pre-check's record has. */
#define RECORD_PLAN_VERSION 2

/* Sets "planned" {version, attempts, keys}: every attempt this run's options
 * select, as record_key strings in run order (`keys`, an array of strings,
 * is taken, also on failure). A run is complete when every planned key has
 * a record. ERR_NOMEM. */
enum err record_manifest_plan(cJSON *manifest, cJSON *keys, struct diag *d);

/* Whether case `id` is selected by `globs` (shell globs, fnmatch(3); any
 * one may match); nglobs = 0 selects every case. */
int record_case_selected(const char *const *globs, size_t nglobs, const char *id);

/* How far a journal got through its manifest's plan. */
struct record_plan_count {
	long long planned;  /* attempts planned; -1: the manifest has no plan */
	long long done;     /* of them, those with a record */
	int per_case;       /* the plan predates RECORD_PLAN_VERSION: a load
			       case counts as one attempt in both figures */
};
/* Counts `manifest`'s plan (NULL: none) against the attempt keys
 * `recorded` into *out, over the cases `globs` selects
 * (record_case_selected; nglobs = 0: all). */
void record_plan_done(const cJSON *manifest, const struct keyset *recorded,
		      const char *const *globs, size_t nglobs,
		      struct record_plan_count *out);
/* On --resume: ERR_USAGE, naming the first difference with both values, when
 * the folder `dir`'s manifest `old` (NULL when it had none) differs from
 * `manifest` in what makes the same experiment: suite SHA-256, endpoint base
 * URL, served model, server flavour, tokenizer or template SHA-256, the
 * server the audit renders as, or --server; else keeps old's started_at and
 * run_id (a resumed run is the same run) and
 * makes the plan old's keys followed by the new ones of `manifest` (another
 * --case or --repeat adds attempts, never drops planned ones). ERR_NOMEM. */
enum err record_manifest_resume(cJSON *manifest, const cJSON *old,
				const char *dir, struct diag *d);

#endif
