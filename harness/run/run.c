/* run — see run.h. */
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "audit.h"
#include "base/buf.h"
#include "net/endpoint.h"
#include "grade.h"
#include "generators/haystack.h"
#include "net/http.h"
#include "base/io.h"
#include "base/jget.h"
#include "base/json.h"
#include "load/loadclient.h"
#include "generators/loadgen.h"
#include "load/loadplan.h"
#include "doccache.h"
#include "base/mem.h"
#include "net/metrics.h"
#include "net/probe.h"
#include "record.h"
#include "recprobe.h"
#include "req.h"
#include "results.h"
#include "run.h"
#include "shard.h"
#include "load/arrival.h"
#include "net/stream.h"
#include "suite.h"
#include "tok/tok.h"
#include "toolturn.h"
#include "tpl/tpl_model.h"

#define RAW_MAX ((size_t)512 << 20)
#define RUN_DIR_TRIES 100 /* default folders of one millisecond */

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
	struct cursor dcur;        /* those of the cases run during load case `dl` */
	const struct suite_case *dl;
	long lfinished;            /* counted requests of `lc` ended so far (not its pre-check) */
	struct attempt **slots;
	size_t nslots;
	/* the shard: mine[first[ci] + ri * seeds + si] for a selected case */
	size_t *first;
	unsigned char *mine;
	size_t in_shard;
	struct loadspec *lshares;  /* owned, per case: a load case's part of a shard */
	/* the load case in progress (run.c "load cases") */
	const struct suite_case *lc;
	struct loadplan plan;
	cJSON *ljson;              /* owned: its fields with the fixed length */
	struct loadgen_prompt *lprompts; /* owned: the prompts of the round */
	long nlprompts;
	struct metrics mbefore;    /* --metrics: the snapshot before the level */
	int mlevel;                /* its level, -1 = none */
	double wake_ms;            /* open loop: the next due time, 0 = none */
	char lstop[STREAM_MSG_MAX]; /* why the load case stopped at its pre-check */
	struct loadclient_round lround; /* the round's CPU window (loadclient.h) */
	int lround_on;
	struct loadclient_mark started; /* run_go's start: the run's CPU share */
	char nonce[RECPROBE_NONCE_MAX]; /* cache probes' NONCE.SESSION (recprobe.h) */
	struct held held[RECPROBE_CACHE_STEPS - 1];
	int nheld;
	struct doccache docs;      /* recall documents kept for their next repeats */
};

/* ---- the attempt cursor ---- */

static int seeds_of(const struct suite_case *c)
{
	return c->kind == SUITE_RECALL ? c->recall.nseeds * recprobe_steps(&c->recall) : 1;
}

static long repeats_of(const struct run *r, const struct suite_case *c)
{
	return r->o->repeat > 0 ? r->o->repeat : c->repeat;
}

static int selected(const struct run *r, const struct suite_case *c)
{
	int i;

	for (i = 0; i < r->o->ncase_globs; i++)
		if (!fnmatch(r->o->case_globs[i], c->id, 0))
			return 1;
	return r->o->ncase_globs == 0;
}

/* The plan of load case `c` this process runs: the case's own, or its part
 * of a shard (shard_load_share). */
static const struct loadspec *spec_of(const struct run *r, const struct suite_case *c)
{
	return r->lshares ? &r->lshares[c - r->suite->cases] : &c->load;
}

static void key_seed(const struct suite_case *c, int si, int *has, long *seed)
{
	if (c->kind == SUITE_RECALL) {
		*has = 1;
		*seed = c->recall.seeds[si / recprobe_steps(&c->recall)];
	} else {
		*has = c->has_seed;
		*seed = c->seed;
	}
}

static int busy(const struct run *r);

/* The step of a recall case at seed index `si` (recprobe.h), 0 otherwise. */
static int step_of(const struct suite_case *c, int si)
{
	return c->kind == SUITE_RECALL ? si % recprobe_steps(&c->recall) : 0;
}

/* The key of the attempt (case `k`, step, repeat, seed). */
static void attempt_key(const struct suite_case *k, int step, long repeat,
			int has_seed, long seed, char *key, size_t cap)
{
	char id[RECORD_KEY_MAX];

	if (k->kind == SUITE_RECALL)
		recprobe_step_id(k->id, &k->recall, step, id, sizeof(id));
	else
		snprintf(id, sizeof(id), "%s", k->id);
	record_key(id, repeat, has_seed, seed, key, cap);
}

/* 1 when a cursor skips case `k`: `dl` is the load case whose "during"
 * cases it walks, NULL for the suite's own cursor (which skips those). */
static int skips(const struct run *r, const struct suite_case *dl,
		 const struct suite_case *k)
{
	if (!selected(r, k))
		return 1;
	if (!dl)
		return k->during != NULL;
	return !k->during || strcmp(k->during, dl->id);
}

/* Advances cursor `u` to the next attempt not yet recorded; 0 when none is
 * left, 2 when the next case is a load case (*c; the cursor stays on it), 3
 * when the next attempt must wait for those in flight (a warm cache step). */
static int next_attempt(struct run *r, struct cursor *u, const struct suite_case *dl,
			const struct suite_case **c, long *repeat, int *has_seed,
			long *seed, int *step)
{
	char key[RECORD_KEY_MAX];

	for (; u->ci < r->suite->ncases; u->ci++, u->ri = 0, u->si = 0) {
		const struct suite_case *k = &r->suite->cases[u->ci];
		if (skips(r, dl, k))
			continue;
		if (k->kind == SUITE_LOAD) {
			*c = k;
			return 2;
		}
		for (; u->ri < repeats_of(r, k); u->ri++, u->si = 0) {
			for (; u->si < seeds_of(k); u->si++) {
				if (r->mine && !r->mine[r->first[u->ci] +
							(size_t)u->ri * (size_t)seeds_of(k) + (size_t)u->si])
					continue;
				key_seed(k, u->si, has_seed, seed);
				*step = step_of(k, u->si);
				attempt_key(k, *step, u->ri + 1, *has_seed, *seed, key, sizeof(key));
				if (results_has(r->res, key))
					continue;
				if (k->kind == SUITE_RECALL &&
				    recprobe_waits(&k->recall, *step) && busy(r))
					return 3;
				*c = k;
				*repeat = u->ri + 1;
				u->si++;
				return 1;
			}
		}
	}
	return 0;
}

/* Bytes of the strings in `v`, its keys included (no allocation). */
static double text_bytes(const cJSON *v)
{
	const cJSON *it;
	double n = v->string ? (double)strlen(v->string) : 0;

	if (cJSON_IsString(v))
		return n + (double)strlen(v->valuestring);
	cJSON_ArrayForEach(it, v)
		n += text_bytes(it);
	return n;
}

/* An attempt's weight for the ETA (run.h): about its prompt tokens. */
static double case_weight(const struct suite_case *c)
{
	double prompt = c->kind == SUITE_RECALL ? (double)c->recall.tokens
						: (c->json ? text_bytes(c->json) / 4 : 0);

	return prompt + RUN_WEIGHT_BASE;
}

/* The attempts left on cursor `u` (a copy) over the cases of `dl` (as
 * next_attempt), counting each load case with its own "during" cases. */
static size_t count_todo(struct run *r, struct cursor u, const struct suite_case *dl)
{
	const struct suite_case *c;
	long repeat, seed;
	int has, step, more;
	size_t n = 0;

	while ((more = next_attempt(r, &u, dl, &c, &repeat, &has, &seed, &step))) {
		if (more == 2) {
			struct cursor d0 = {0, 0, 0};
			n += (size_t)loadplan_total(spec_of(r, c)) + count_todo(r, d0, c);
			r->n.weight_total += (double)loadplan_total(spec_of(r, c)) * case_weight(c);
			u.ci++;
			continue;
		}
		n++;
		r->n.weight_total += case_weight(c);
	}
	return n;
}

/* Every attempt the options select, recorded or not, as "planned" in the
 * manifest (record_manifest_plan). */
static enum err add_plan(struct run *r, struct diag *d)
{
	struct json_build jb;
	cJSON *keys;
	char key[RECORD_KEY_MAX];
	size_t ci;
	long ri, seed;
	int si, has;

	json_build_init(&jb);
	keys = json_new_arr(&jb);
	for (ci = 0; ci < r->suite->ncases && !jb.code; ci++) {
		const struct suite_case *k = &r->suite->cases[ci];
		if (!selected(r, k))
			continue;
		/* a load case: each of its requests (load_seq numbers them) */
		for (ri = 1; k->kind == SUITE_LOAD && ri <= loadplan_total(spec_of(r, k)); ri++) {
			record_key(k->id, ri, r->lshares != NULL, spec_of(r, k)->seed, key, sizeof(key));
			json_add_str(&jb, keys, NULL, key);
		}
		for (ri = 0; k->kind != SUITE_LOAD && ri < repeats_of(r, k); ri++)
			for (si = 0; si < seeds_of(k); si++) {
				if (r->mine && !r->mine[r->first[ci] + (size_t)ri * (size_t)seeds_of(k) +
							(size_t)si])
					continue;
				key_seed(k, si, &has, &seed);
				attempt_key(k, step_of(k, si), ri + 1, has, seed, key, sizeof(key));
				json_add_str(&jb, keys, NULL, key);
			}
	}
	if (json_build_end(&jb, &keys, "the plan", d))
		return d->code;
	return record_manifest_plan(r->manifest, keys, d);
}

/* ---- preparing one attempt ---- */

/* Keeps the asked needles of `h` for grading. */
static void keep_needles(struct attempt *a, const struct haystack *h)
{
	int i;

	for (i = 0; i < h->nneedles && a->nneedles < HAYSTACK_MAX_NEEDLES; i++) {
		int k = a->nneedles;
		if (!h->needle[i].asked)
			continue;
		snprintf(a->projects[k], sizeof(a->projects[k]), "%s", h->needle[i].project);
		snprintf(a->codes[k], sizeof(a->codes[k]), "%s", h->needle[i].code);
		a->needles[k].project = a->projects[k];
		a->needles[k].code = a->codes[k];
		a->needles[k].depth = h->needle[i].depth;
		a->nneedles++;
	}
}

/* The most tokens prompt + max_tokens may take on the server: vLLM allows
 * prompt + max_tokens <= max_model_len, SGLang only < context_len
 * (PROTOCOL.md §1.10, §8 1b); -1 when max_model_len is unknown. */
static long long context_room(const struct run *r)
{
	if (r->eps[0].max_model_len < 0)
		return -1;
	return r->eps[0].max_model_len - (r->eps[0].server == TPL_SERVER_SGLANG);
}

/* The prompt size of recall case `c`: its "tokens", or for "max" the
 * server's room (context_room) minus max_tokens. */
static enum err recall_tokens(const struct run *r, const struct suite_case *c,
			      long *out, struct diag *d)
{
	long long room;

	*out = c->recall.tokens;
	if (c->recall.tokens != SUITE_TOKENS_MAX)
		return ERR_OK;
	if (context_room(r) < 0)
		return diag_fail(d, ERR_INPUT, "recall \"tokens\": \"max\" needs the server's "
				 "max_model_len, and /v1/models did not give one");
	room = context_room(r) - (c->max_tokens > 0 ? c->max_tokens : 1);
	if (room < 64)
		return diag_fail(d, ERR_INPUT, "recall \"tokens\": \"max\": max_model_len %lld "
				 "leaves %lld prompt tokens after max_tokens (at least 64 needed)",
				 r->eps[0].max_model_len, room);
	*out = (long)room;
	return ERR_OK;
}

/* The document of `a` (haystack.h): kept from an earlier repeat, or built
 * now and kept for the repeats after it (doccache.h). *own holds a document
 * built and not kept. */
static enum err recall_doc(struct run *r, struct attempt *a, const char *key,
			   const char *preface, struct haystack *own,
			   const struct haystack **out, struct diag *d)
{
	const struct suite_recall *rc = &a->c->recall;
	struct haystack_opts ho;
	struct tpl_render_opts ro = {0};
	int i;
	enum err e;

	if ((*out = doccache_get(&r->docs, key)))
		return ERR_OK;
	memset(&ho, 0, sizeof(ho));
	ro.server = r->eps[0].server;
	ro.reasoning_effort = cJSON_GetObjectItemCaseSensitive(a->c->json, "reasoning_effort");
	ho.tok = r->tok;
	ho.tpl = r->tpl;
	ho.kwargs = a->c->kwargs;
	ho.render = &ro;
	ho.tokens = a->recall_tokens;
	ho.seed = (uint64_t)a->seed;
	ho.preface = preface;
	ho.code_shift = recprobe_code_shift(rc, a->step);
	ho.ask_reversed = recprobe_reversed(rc, a->step);
	for (i = 0; i < rc->ndepths; i++)
		ho.depths[i] = rc->depths[i];
	ho.ndepths = rc->ndepths;
	ho.needles = rc->needles;
	ho.filler = rc->filler;
	ho.distractors = rc->distractors;
	e = haystack_build(&ho, own, d);
	/* a cache probe's document is its repeat's own (the preface): kept for none */
	if (!e && !(*out = doccache_put(&r->docs, key, own,
					*preface ? 1 : repeats_of(r, a->c) - a->repeat + 1)))
		*out = own;
	return e;
}

static enum err build_recall(struct run *r, struct attempt *a, struct diag *d)
{
	const struct haystack *h = NULL;
	struct haystack own;
	char key[DOCCACHE_KEY_MAX], preface[128];
	enum err e;

	memset(&own, 0, sizeof(own));
	e = recall_tokens(r, a->c, &a->recall_tokens, d);
	if (e) {
		diag_prefix(d, "case '%s'", a->c->id);
		return e;
	}
	/* every parameter of the document that differs between attempts */
	recprobe_preface(&a->c->recall, r->nonce, r->suite->cases[a->c->index].id, a->repeat,
			 a->seed, preface, sizeof(preface));
	snprintf(key, sizeof(key), "%s\x1f%ld\x1f%d\x1f%ld\x1f%s", a->c->id, a->seed, a->step,
		 a->recall_tokens, preface);
	e = recall_doc(r, a, key, preface, &own, &h, d);
	if (!e)
		e = req_build(&a->req, a->c, h->messages, r->eps[0].model, r->suite_dir, d);
	if (!e) {
		a->count.local_tokens = (long long)h->prompt_tokens;
		memcpy(a->prompt_sha256, h->prompt_sha256, IO_SHA256_HEX);
		keep_needles(a, h);
	}
	if (e)
		diag_prefix(d, "case '%s' seed %ld", a->c->id, a->seed);
	doccache_done(&r->docs, key);
	haystack_release(&own);
	return e;
}

/* Default timeouts scale with the prompt (a 1M-token prefill takes minutes:
 * seed report 002 §7 measured ~97 s to the first token). */
static void timeouts(const struct run *r, const struct attempt *a,
		     struct http_req *hr)
{
	double tokens = a->count.local_tokens >= 0 ? (double)a->count.local_tokens
						   : (double)a->req.body.len / 3.0;
	double first = 60.0 + tokens / 1000.0 * 0.5;
	double maxt = a->c->max_tokens ? (double)a->c->max_tokens : 4096.0;

	hr->first_byte_s = first;
	hr->timeout_s = first + maxt * 0.1;
	hr->idle_s = 120.0;
	hr->tls = &r->tls;
	if (r->o->timeout > 0) {
		hr->timeout_s = r->o->timeout;
		hr->first_byte_s = r->o->timeout;
	}
	if (r->o->idle_timeout > 0)
		hr->idle_s = r->o->idle_timeout;
}

static int on_data(void *ctx, const char *bytes, size_t n, double now_ms)
{
	struct attempt *a = ctx;
	struct diag d;
	enum err e;

	if (a->feed_failed)
		return 1;
	diag_init(&d);
	e = buf_append(&a->raw, bytes, n);
	if (e == ERR_LIMIT) {
		a->feed_failed = 2; /* needle's cap, not the server's failure */
		snprintf(a->feed_msg, sizeof(a->feed_msg),
			 "the response body exceeds needle's cap of %zu bytes", a->raw.max);
		return 1;
	}
	if (e || stream_feed(&a->st, bytes, n, now_ms, &d)) {
		a->feed_failed = d.code == ERR_LIMIT ? 2 : 1;
		snprintf(a->feed_msg, sizeof(a->feed_msg), "%s",
			 d.code ? d.msg : "out of memory keeping the response");
		return 1;
	}
	return 0;
}

static void attempt_free(struct attempt *a)
{
	if (!a)
		return;
	req_release(&a->req);
	stream_release(&a->st);
	buf_release(&a->raw);
	grade_release(&a->g);
	loadgen_release(&a->lp);
	cJSON_Delete(a->round1);
	cJSON_Delete(a->calls1);
	mem_free(a);
}

/* Starts (or restarts, for round 2) the HTTP request of `a` with a fresh
 * stream and raw buffer. */
static enum err send_attempt(struct run *r, struct attempt *a, struct diag *d)
{
	struct http_req hr;

	snprintf(a->url, sizeof(a->url), "%s%s", r->eps[a->replica].base, a->req.path);
	record_utc_now(a->started_at, sizeof(a->started_at));
	a->start_ms = io_now_ms();
	stream_release(&a->st);
	stream_init(&a->st, a->req.endpoint == REQ_COMPLETIONS ? STREAM_COMPLETIONS
							       : STREAM_CHAT, a->start_ms);
	buf_reset(&a->raw);
	a->feed_failed = 0;
	a->feed_msg[0] = '\0';
	memset(&hr, 0, sizeof(hr));
	hr.url = a->url;
	hr.body = a->req.body.data;
	hr.body_len = a->req.body.len;
	hr.api_key = r->o->api_key;
	hr.on_data = on_data;
	hr.ctx = a;
	hr.user = a;
	timeouts(r, a, &hr);
	return http_multi_add(r->multi, &hr, d);
}

static enum err journal(struct run *r, struct attempt *a, const struct http_done *dn,
			const struct stream_checks *ck, const char *raw_name,
			struct diag *d);

/* Pre-flight (vLLM's rule, PROTOCOL.md §1.10): whether the local prompt count
 * plus max_tokens exceeds the server's max_model_len; the reason in `why`.
 * Without a local count or a max_model_len nothing is known: 0. */
static int cannot_fit(const struct run *r, const struct attempt *a, char *why,
		      size_t cap)
{
	long long n = context_room(r), p = a->count.local_tokens;
	long m = a->c->max_tokens;

	if (n < 0 || p < 0 || p + (m > 0 ? m : 1) <= n)
		return 0;
	if (m > 0)
		snprintf(why, cap, "not sent: the prompt (%lld tokens, counted locally) plus "
			 "max_tokens %ld is %lld tokens, over the server's max_model_len %lld",
			 p, m, p + m, r->eps[0].max_model_len);
	else
		snprintf(why, cap, "not sent: the prompt (%lld tokens, counted locally) "
			 "leaves no room in the server's max_model_len %lld", p,
			 r->eps[0].max_model_len);
	return 1;
}

/* Records attempt `a` as failed with `code` (context_overflow, not_sent)
 * without sending it; it stays in every count. */
static enum err not_sent(struct run *r, struct attempt *a, enum stream_fail code,
			 const char *why, struct diag *d)
{
	struct http_done dn;
	struct stream_checks ck;
	char raw_name[256];

	memset(&dn, 0, sizeof(dn));
	memset(&ck, 0, sizeof(ck));
	dn.start_ms = dn.end_ms = io_now_ms();
	dn.first_byte_ms = -1;
	ck.n = 1;
	ck.f[0].code = code;
	snprintf(ck.f[0].msg, sizeof(ck.f[0].msg), "%s", why);
	stream_end(&a->st, dn.end_ms);
	grade_fail(&a->g, "not graded: the request was not sent");
	record_utc_now(a->started_at, sizeof(a->started_at));
	results_raw_name(a->c->id, a->repeat, a->has_seed, a->seed, raw_name, sizeof(raw_name));
	return journal(r, a, &dn, &ck, raw_name, d);
}

/* The replica for a new attempt: the fewest requests in flight, ties in
 * turn. */
static int pick_replica(struct run *r)
{
	int i, k, best = r->turn % r->neps;

	for (i = 1; i < r->neps; i++) {
		k = (r->turn + i) % r->neps;
		if (r->inflight[k] < r->inflight[best])
			best = k;
	}
	r->turn = best + 1;
	return best;
}

/* Prepares and starts one attempt. ERR_INPUT etc. for a case that cannot be
 * built (the run stops: the suite or tokenizer is wrong). An attempt that
 * cannot fit the context is journalled at once and *out stays NULL. */
static enum err start_attempt(struct run *r, const struct suite_case *c,
			      long repeat, int has_seed, long seed, int step,
			      struct attempt **out, struct diag *d)
{
	struct attempt *a = mem_calloc(1, sizeof(*a));
	char why[STREAM_MSG_MAX];
	enum err e;

	*out = NULL;
	if (!a)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	a->c = c, a->repeat = repeat, a->has_seed = has_seed, a->seed = seed;
	a->round = 1;
	a->replica = pick_replica(r);
	a->idle = c->during && !r->lc; /* fill_during starts these after the load */
	if (c->kind == SUITE_RECALL && recprobe_steps(&c->recall) > 1) {
		/* the step is a case of its own id */
		a->step = step;
		recprobe_step_id(c->id, &c->recall, step, a->step_id, sizeof(a->step_id));
		a->lcase = *c;
		a->lcase.id = a->step_id;
		a->lcase.recall.tokens = recprobe_tokens(&c->recall, step);
		a->c = &a->lcase;
	}
	grade_init(&a->g);
	stream_init(&a->st, STREAM_CHAT, io_now_ms());
	req_init(&a->req);
	buf_init(&a->raw, RAW_MAX);
	a->count.local_tokens = -1;
	if (c->kind == SUITE_RECALL) {
		e = build_recall(r, a, d);
	} else {
		e = req_build(&a->req, c, c->messages, r->eps[0].model, r->suite_dir, d);
		if (!e)
			e = audit_count_case(&r->audit, c, c->messages, &a->count, d);
		if (e)
			diag_prefix(d, "case '%s'", c->id);
	}
	if (!e && cannot_fit(r, a, why, sizeof(why))) {
		e = not_sent(r, a, STREAM_F_CONTEXT_OVERFLOW, why, d);
		attempt_free(a);
		return e;
	}
	if (!e)
		e = send_attempt(r, a, d);
	if (!e) {
		r->inflight[a->replica]++;
		*out = a;
		return ERR_OK;
	}
	attempt_free(a);
	return e;
}

static double wall_s(void);

/* ---- load cases ----
 *
 * A load case runs alone: it starts when every attempt before it has ended,
 * and the cases after it wait for its last request. Its requests come from
 * loadplan (the pre-check, levels, warm-up, rounds, closed-loop caps,
 * open-loop due times; after a failed pre-check, requests to record as not
 * sent);
 * each is a fixed-length request with a generated prompt (loadgen.h) and is
 * judged and journalled like any attempt, with "load" in its record
 * (loadcells.h). Its key's repeat is the request's place in the case. */

/* The 1-based place of a request in its case: the pre-check, then levels in
 * order, each with its warm-up then its rounds. */
static long load_seq(const struct loadspec *s, const struct loadplan_item *it)
{
	long n = 1;
	int i;

	if (it->round == LOADPLAN_PRECHECK)
		return 1;
	for (i = 0; i < it->level; i++)
		n += loadspec_warmup(s, i) + s->rounds * s->requests[i];
	if (it->round > 0)
		n += loadspec_warmup(s, it->level) + (it->round - 1) * s->requests[it->level];
	return n + it->index + 1;
}

/* The case's fields as each of its requests sends them: the fixed length
 * (max_tokens = min_tokens = output_tokens, ignore_eos). */
static enum err load_begin(struct run *r, const struct suite_case *c, struct diag *d)
{
	cJSON *j = cJSON_Duplicate(c->json, 1);

	if (!j)
		goto nomem;
	cJSON_DeleteItemFromObjectCaseSensitive(j, "max_tokens");
	cJSON_DeleteItemFromObjectCaseSensitive(j, "min_tokens");
	cJSON_DeleteItemFromObjectCaseSensitive(j, "ignore_eos");
	if (!cJSON_AddNumberToObject(j, "max_tokens", (double)c->load.output_tokens) ||
	    !cJSON_AddNumberToObject(j, "min_tokens", (double)c->load.output_tokens) ||
	    !cJSON_AddBoolToObject(j, "ignore_eos", 1))
		goto nomem;
	r->ljson = j;
	r->lc = c;
	r->dl = c;
	r->lfinished = 0;
	memset(&r->dcur, 0, sizeof(r->dcur));
	r->wake_ms = 0;
	r->mlevel = -1;
	loadplan_init(&r->plan, spec_of(r, c), (uint64_t)spec_of(r, c)->seed);
	if (r->lshares)
		loadplan_interleave(&r->plan, (double)r->o->shard.index / (double)r->o->shard.count);
	return ERR_OK;
nomem:
	cJSON_Delete(j);
	return diag_fail(d, ERR_NOMEM, "out of memory starting load case '%s'", c->id);
}

static enum err load_prompt(struct run *r, const struct loadplan_item *it,
			    struct loadgen_prompt *out, struct diag *d)
{
	const struct loadspec *s = spec_of(r, r->lc);
	struct loadgen_opts o = {0};
	struct tpl_render_opts ro = {0};

	ro.server = r->eps[0].server;
	o.endpoint = s->endpoint;
	o.tok = r->tok;
	o.tpl = r->tpl;
	o.kwargs = r->lc->kwargs;
	o.render = &ro;
	o.input_tokens = s->input_tokens;
	o.bos_tokens = r->audit.bos_id >= 0 ? 1 : 0;
	o.filler = s->filler;
	return loadgen_build(&o, loadgen_seed(loadgen_case_seed((uint64_t)s->seed, r->lc->id),
					      (unsigned)it->level,
					      (unsigned)it->round, (unsigned)it->index),
			     out, d);
}

static void free_prompts(struct run *r)
{
	long i;

	for (i = 0; i < r->nlprompts; i++)
		loadgen_release(&r->lprompts[i]);
	mem_free(r->lprompts);
	r->lprompts = NULL;
	r->nlprompts = 0;
}

/* Builds every prompt of the round in `it` (index = its size) before its
 * clock starts: prompt building never delays a send. */
static enum err load_prepare(struct run *r, const struct loadplan_item *it, struct diag *d)
{
	struct loadplan_item one = *it;
	enum err e = ERR_OK;

	free_prompts(r);
	if (!(r->lprompts = mem_calloc((size_t)it->index, sizeof(*r->lprompts))))
		return diag_fail(d, ERR_NOMEM, "out of memory preparing load case '%s'", r->lc->id);
	r->nlprompts = it->index;
	for (one.index = 0; !e && one.index < it->index; one.index++)
		e = load_prompt(r, &one, &r->lprompts[one.index], d);
	if (e)
		diag_prefix(d, "load case '%s'", r->lc->id);
	return e;
}

/* A new attempt for request `it` of the load case in progress (nothing sent),
 * or NULL when out of memory. */
static struct attempt *load_attempt(struct run *r, const struct loadplan_item *it)
{
	struct attempt *a = mem_calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->is_load = 1;
	a->replica = pick_replica(r);
	a->li = *it;
	a->lcase = *r->lc;
	a->lcase.json = r->ljson;
	a->lcase.max_tokens = r->lc->load.output_tokens;
	a->lcase.ignore_eos = 1;
	a->c = &a->lcase;
	a->repeat = load_seq(spec_of(r, r->lc), it);
	a->has_seed = r->lshares != NULL;
	a->seed = spec_of(r, r->lc)->seed;
	a->round_wall_s = wall_s() - (io_now_ms() - it->round_start_ms) / 1000.0;
	a->round = 1;
	a->count.local_tokens = -1;
	grade_init(&a->g);
	stream_init(&a->st, STREAM_CHAT, io_now_ms());
	req_init(&a->req);
	buf_init(&a->raw, RAW_MAX);
	return a;
}

/* Records request `it` as not sent: the case stopped at its pre-check. */
static enum err skip_load(struct run *r, const struct loadplan_item *it, struct diag *d)
{
	struct attempt *a = load_attempt(r, it);
	char why[STREAM_MSG_MAX];
	enum err e;

	if (!a)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	a->start_ms = io_now_ms();
	snprintf(why, sizeof(why), "not sent: load case '%.120s' stopped at its fixed-length pre-check: %.300s",
		 r->lc->id, r->lstop);
	e = not_sent(r, a, STREAM_F_NOT_SENT, why, d);
	attempt_free(a);
	return e;
}

/* Prepares and starts the request `it` of the load case in progress. */
static enum err start_load(struct run *r, const struct loadplan_item *it,
			   struct attempt **out, struct diag *d)
{
	struct attempt *a = load_attempt(r, it);
	enum err e;

	*out = NULL;
	if (!a)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	e = it->index < r->nlprompts ? ERR_OK
		: diag_fail(d, ERR_INTERNAL, "load request %ld was not prepared", it->index);
	if (!e) {
		a->lp = r->lprompts[it->index];
		memset(&r->lprompts[it->index], 0, sizeof(a->lp));
		a->lcase.prompt = a->lp.prompt;
		a->count.local_tokens = (long long)a->lp.tokens;
		memcpy(a->prompt_sha256, a->lp.sha256, IO_SHA256_HEX);
		e = req_build(&a->req, &a->lcase, a->lp.messages, r->eps[0].model, r->suite_dir, d);
	}
	if (!e)
		e = send_attempt(r, a, d);
	if (!e)
		r->inflight[a->replica]++;
	if (e) {
		diag_prefix(d, "load case '%s'", r->lc->id);
		attempt_free(a);
		return e;
	}
	*out = a;
	return ERR_OK;
}

static struct attempt **free_slot(struct run *r)
{
	size_t i;

	for (i = 0; i < r->nslots; i++)
		if (!r->slots[i])
			return &r->slots[i];
	return NULL;
}

/* ---- --metrics: the server's view of each level ---- */

static void view_num(struct json_build *jb, cJSON *o, const char *k, double v)
{
	if (isfinite(v))
		json_add_num(jb, o, k, v);
	else
		json_add_null(jb, o, k);
}

/* Adds {"dialect", "prompt_tokens", ...} of metrics_view to `to` under
 * `key`, NaN as null. */
static void view_json(struct json_build *jb, cJSON *to, const char *key,
		      const struct metrics_view *v)
{
	cJSON *o = json_add_obj(jb, to, key);

	if (v->dialect)
		json_add_str(jb, o, "dialect", v->dialect);
	else
		json_add_null(jb, o, "dialect");
	view_num(jb, o, "prompt_tokens", v->prompt_tokens);
	view_num(jb, o, "generation_tokens", v->generation_tokens);
	view_num(jb, o, "requests", v->requests);
	view_num(jb, o, "ttft_mean_s", v->ttft_mean_s);
	view_num(jb, o, "ttft_p50_s", v->ttft_p50_s);
	view_num(jb, o, "ttft_p95_s", v->ttft_p95_s);
	view_num(jb, o, "itl_mean_s", v->itl_mean_s);
	view_num(jb, o, "itl_p95_s", v->itl_p95_s);
	view_num(jb, o, "prefix_hits", v->prefix_hits);
	view_num(jb, o, "prefix_queries", v->prefix_queries);
	view_num(jb, o, "cache_hit_rate", v->cache_hit_rate);
	view_num(jb, o, "running", v->running);
	view_num(jb, o, "waiting", v->waiting);
	view_num(jb, o, "kv_usage", v->kv_usage);
}

/* "metrics-CASE-c8" / "metrics-CASE-r0.3" + suffix (metrics.h). */
static void metrics_name(const struct run *r, int level, const char *suffix, char *out,
			 size_t cap)
{
	const struct loadspec *s = &r->lc->load;

	metrics_file_name(r->lc->id, s->open_loop,
			  s->open_loop ? s->rate[level] : (double)s->concurrency[level], suffix, out, cap);
}

/* Writes DIR/raw/NAME.json: the delta's view (or why there is none). */
static enum err metrics_write(struct run *r, int level, const struct metrics *after,
			      const char *why, struct diag *d)
{
	struct metrics delta;
	struct metrics_view v;
	struct json_build jb;
	struct diag md;
	struct buf txt;
	char name[512];
	cJSON *o;
	enum err e;

	metrics_init(&delta);
	diag_init(&md);
	json_build_init(&jb);
	buf_init(&txt, BUF_MAX_DEFAULT);
	metrics_name(r, level, ".json", name, sizeof(name));
	o = json_new_obj(&jb);
	if (!why && !metrics_delta(&r->mbefore, after, &delta, &md)) {
		metrics_view(&delta, after, &v);
		view_json(&jb, o, "server", &v);
	} else {
		json_add_str(&jb, o, "error", why ? why : md.msg);
	}
	e = json_build_end(&jb, &o, name, d);
	if (!e)
		e = json_print(o, JSON_PRETTY, &txt, name, d);
	if (!e)
		e = results_queue_raw(r->res, name, &txt, d);
	buf_release(&txt);
	cJSON_Delete(o);
	metrics_release(&delta);
	return e;
}

/* Scrapes /metrics at the start (`before`) or end of `level`; the snapshot
 * goes to DIR/raw/metrics-CASE-LEVEL-{before,after}.prom. A server without
 * /metrics is noted in the level's .json, never a failed run. */
static enum err scrape(struct run *r, int level, int before, struct diag *d)
{
	struct metrics m;
	struct buf text;
	struct diag sd;
	char name[512];
	enum err e = ERR_OK, se;

	if (!r->o->metrics)
		return ERR_OK;
	metrics_init(&m);
	buf_init(&text, PROBE_METRICS_MAX);
	diag_init(&sd);
	se = probe_metrics(r->eps[0].base, r->o->api_key, &r->tls, 30, &text, &m, &sd);
	metrics_name(r, level, before ? "-before.prom" : "-after.prom", name, sizeof(name));
	if (text.len)
		e = results_queue_raw(r->res, name, &text, d);
	if (!e && before) {
		metrics_release(&r->mbefore);
		r->mbefore = m;
		metrics_init(&m);
		r->mlevel = se ? -1 : level;
	} else if (!e) {
		e = metrics_write(r, level, &m, se ? sd.msg : r->mlevel != level ? "no snapshot before the level" : NULL, d);
		r->mlevel = -1;
	}
	metrics_release(&m);
	buf_release(&text);
	return e;
}

/* --metrics around levels: after the previous level when a new one starts
 * (its warm-up round, else its first), before it at its first counted round. */
static enum err level_edges(struct run *r, const struct loadplan_item *it, struct diag *d)
{
	int first = it->round == 0 || (it->round == 1 && loadspec_warmup(spec_of(r, r->lc), it->level) == 0);
	enum err e = ERR_OK;

	if (!r->o->metrics)
		return ERR_OK;
	if (first && it->level > 0)
		e = scrape(r, it->level - 1, 0, d);
	if (!e && it->round == 1)
		e = scrape(r, it->level, 1, d);
	return e;
}

/* Closes the CPU window of the round in progress (loadclient.h), if any, and
 * with `it` opens one for the round it starts (NULL: the case ended). */
static enum err round_window(struct run *r, const struct loadplan_item *it, struct diag *d)
{
	const struct loadspec *s = &r->lc->load;
	enum err e = ERR_OK;

	if (r->lround_on)
		e = loadclient_note(r->manifest, &r->lround, d);
	r->lround_on = it != NULL;
	if (!it)
		return e;
	r->lround.case_id = r->lc->id;
	r->lround.open_loop = s->open_loop;
	r->lround.level_value = s->open_loop ? s->rate[it->level] : (double)s->concurrency[it->level];
	r->lround.level = it->level;
	r->lround.round = it->round;
	loadclient_now(&r->lround.from);
	return e;
}

/* Starts what the plan says is due; done with the case when it says so. */
static enum err fill_load(struct run *r, struct diag *d)
{
	struct loadplan_item it;
	struct attempt **slot;
	char key[RECORD_KEY_MAX];
	double until = 0;
	enum loadplan_step st;
	enum err e = ERR_OK;

	r->wake_ms = 0;
	while (!e && (slot = free_slot(r))) {
		st = loadplan_next(&r->plan, io_now_ms(), &it, &until);
		if (st == LOADPLAN_PREPARE) {
			e = round_window(r, NULL, d);
			if (!e)
				e = level_edges(r, &it, d);
			if (!e)
				e = load_prepare(r, &it, d);
			if (!e)
				e = round_window(r, &it, d);
			continue;
		}
		if (st == LOADPLAN_WAIT)
			r->wake_ms = until;
		if (st == LOADPLAN_SKIP) {
			record_key(r->lc->id, load_seq(&r->lc->load, &it), 0, 0, key, sizeof(key));
			if (!results_has(r->res, key))
				e = skip_load(r, &it, d);
			continue;
		}
		if (st == LOADPLAN_DONE) {
			e = round_window(r, NULL, d);
			if (!e && r->o->metrics)
				e = scrape(r, r->lc->load.nlevels - 1, 0, d);
			free_prompts(r);
			cJSON_Delete(r->ljson);
			r->ljson = NULL;
			r->lc = NULL;
			r->cur.ci++;
		}
		if (st != LOADPLAN_START)
			break;
		record_key(r->lc->id, load_seq(spec_of(r, r->lc), &it), r->lshares != NULL,
			   spec_of(r, r->lc)->seed, key, sizeof(key));
		if (results_has(r->res, key))
			loadplan_finished(&r->plan); /* recorded before (--resume) */
		else
			e = start_load(r, &it, slot, d);
	}
	return e;
}

/* The record's "load" object: the level, place and times on the round's clock. */
static cJSON *load_json(const struct attempt *a)
{
	const struct loadspec *s = &a->c->load;
	cJSON *o = cJSON_CreateObject(), *slo;
	int ok = o != NULL;

	if (s->open_loop)
		ok = ok && cJSON_AddNumberToObject(o, "rate", s->rate[a->li.level]);
	else
		ok = ok && cJSON_AddNumberToObject(o, "concurrency", (double)s->concurrency[a->li.level]);
	ok = ok && cJSON_AddNumberToObject(o, "level", a->li.level) &&
	     cJSON_AddNumberToObject(o, "round", (double)a->li.round) &&
	     cJSON_AddNumberToObject(o, "index", (double)a->li.index) &&
	     cJSON_AddBoolToObject(o, "warmup", a->li.round == 0) &&
	     cJSON_AddBoolToObject(o, "precheck", a->li.round == LOADPLAN_PRECHECK) &&
	     cJSON_AddNumberToObject(o, "scheduled_ms", a->li.scheduled_ms - a->li.round_start_ms) &&
	     cJSON_AddNumberToObject(o, "sent_ms", a->start_ms - a->li.round_start_ms) &&
	     cJSON_AddNumberToObject(o, "input_tokens", (double)s->input_tokens) &&
	     cJSON_AddNumberToObject(o, "output_tokens", (double)s->output_tokens);
	if (ok && a->has_seed) /* sharded: for needle merge's common-start check */
		ok = cJSON_AddNumberToObject(o, "round_started_unix", a->round_wall_s) != NULL;
	if (ok && (s->slo.ttft_ms > 0 || s->slo.tpot_ms > 0 || s->slo.e2e_ms > 0)) {
		ok = (slo = cJSON_AddObjectToObject(o, "slo")) != NULL;
		ok = ok && (!(s->slo.ttft_ms > 0) || cJSON_AddNumberToObject(slo, "ttft_ms", s->slo.ttft_ms));
		ok = ok && (!(s->slo.tpot_ms > 0) || cJSON_AddNumberToObject(slo, "tpot_ms", s->slo.tpot_ms));
		ok = ok && (!(s->slo.e2e_ms > 0) || cJSON_AddNumberToObject(slo, "e2e_ms", s->slo.e2e_ms));
	}
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* ---- judging and recording ---- */

/* The record's view of attempt `a` after request `dn`. */
static void record_view(const struct run *r, const struct attempt *a,
			const struct http_done *dn, const struct stream_checks *ck,
			const struct audit_result *au, const char *raw_name,
			struct record_attempt *v)
{
	memset(v, 0, sizeof(*v));
	v->c = a->c, v->repeat = a->repeat, v->has_seed = a->has_seed, v->seed = a->seed;
	v->st = &a->st, v->ck = ck, v->http_status = dn->status, v->audit = au;
	v->g = &a->g;
	v->tool_calls = a->calls1;
	v->round1 = a->round1;
	v->request_sha256 = a->req.sha256;
	v->endpoint = a->req.path;
	v->model = r->eps[0].model;
	v->started_at = a->started_at;
	v->raw_name = raw_name;
	v->response_bytes = a->raw.len;
	v->prompt_sha256 = a->prompt_sha256;
	v->recall_tokens = a->recall_tokens;
}

static void judge_audit(const struct run *r, const struct attempt *a,
			struct audit_result *out)
{
	audit_judge(&a->count, r->tok && r->tpl, &a->st.usage, a->c->usage_tolerance, out);
}

/* What an attempt adds to the counts once its record is durable: the note
 * queued with the record (results_collect hands it back). */
struct done_note {
	struct record_verdict v;
	int refused;     /* the server could not be reached or refused the key */
	double weight;   /* case_weight */
};
_Static_assert(sizeof(struct done_note) <= JOURNAL_NOTE_MAX, "a note the journal keeps whole");

static void note_of(const struct record_verdict *v, const struct stream_checks *ck,
		    long status, double weight, struct done_note *n)
{
	memset(n, 0, sizeof(*n));
	n->v = *v;
	n->refused = stream_checks_has(ck, STREAM_F_CONNECT) ||
		     (stream_checks_has(ck, STREAM_F_HTTP_STATUS) && (status == 401 || status == 403));
	n->weight = weight;
}

/* results_collect's callback: counts an attempt whose record is durable. */
static enum err tally(void *ctx, const void *note, struct diag *d)
{
	struct run *r = ctx;
	struct done_note n;
	const struct record_verdict *v = &n.v;

	(void)d;
	memcpy(&n, note, sizeof(n));
	r->n.done++;
	r->n.weight_done += n.weight;
	if (v->transport_ok && v->audit_ok && v->grade_ok) {
		r->n.pass++;
		return ERR_OK;
	}
	r->n.fail++;
	r->n.fail_transport += !v->transport_ok;
	r->n.fail_audit += v->transport_ok && !v->audit_ok;
	r->n.fail_grade += v->transport_ok && v->audit_ok && !v->grade_ok;
	r->n.refused += n.refused != 0;
	return ERR_OK;
}

/* Keeps what round 1 of a tool case showed, writes its raw bytes, and sends
 * round 2: the tool results, for the final answer. */
static enum err start_round2(struct run *r, struct attempt *a,
			     const struct http_done *dn,
			     const struct stream_checks *ck, const char *raw_name,
			     struct diag *d)
{
	char name1[300];
	struct record_attempt v;
	cJSON *msgs = NULL;
	size_t n = strlen(raw_name);
	enum err e = ERR_OK;

	snprintf(name1, sizeof(name1), "%.*s-round1.sse", (int)(n > 4 ? n - 4 : n), raw_name);
	judge_audit(r, a, &a->audit1);
	a->calls1 = record_tool_calls(&a->st);
	record_view(r, a, dn, ck, &a->audit1, name1, &v);
	a->round1 = a->calls1 ? record_round(&v) : NULL;
	if (a->round1)
		msgs = toolturn_messages(a->c, &a->st, a->calls1);
	if (!msgs)
		e = diag_fail(d, ERR_NOMEM, "out of memory preparing a tool result");
	if (!e)
		e = results_queue_raw(r->res, name1, &a->raw, d);
	if (!e)
		e = req_build(&a->req, a->c, msgs, r->eps[0].model, r->suite_dir, d);
	cJSON_Delete(msgs);
	a->round = 2;
	if (!e)
		e = send_attempt(r, a, d);
	return e;
}

/* Grades the round of `a` that just ended. */
static enum err grade_round(struct attempt *a, struct diag *d)
{
	const struct stream *s = &a->st;

	if (a->round == 2)
		return grade_final(&a->c->expect, s->content.data, s->content.len,
				   &a->g, d);
	if (a->c->kind == SUITE_RECALL)
		return grade_recall(a->needles, a->nneedles, s->content.data,
				    s->content.len, &a->g, d);
	return grade_answer(&a->c->expect, s, cJSON_GetArraySize(a->c->messages), &a->g, d);
}

/* Adds which replica served `a` to its record: "replica" (its index in
 * --base-url order) and "base_url" (redacted). ERR_NOMEM. */
static enum err name_replica(const struct run *r, const struct attempt *a, cJSON *rec)
{
	char base[ENDPOINT_URL_MAX];
	struct json_build jb;

	endpoint_redact(r->eps[a->replica].base, base, sizeof(base));
	json_build_init(&jb);
	json_add_int(&jb, rec, "replica", a->replica);
	json_add_str(&jb, rec, "base_url", base);
	return json_build_end(&jb, NULL, "a record", NULL);
}

/* Adds "during" {"load_case", "under_load"} to the record of an attempt of a
 * case run during a load case. ERR_NOMEM. */
static enum err during_json(const struct attempt *a, cJSON *rec)
{
	struct json_build jb;
	cJSON *o;

	json_build_init(&jb);
	o = json_add_obj(&jb, rec, "during");
	json_add_str(&jb, o, "load_case", a->c->during);
	json_add_bool(&jb, o, "under_load", !a->idle);
	return json_build_end(&jb, NULL, "a record", NULL);
}

/* Queues record `rec` (taken); it counts once durable (tally). */
static enum err append(struct run *r, cJSON *rec, const struct record_verdict *v,
		       const struct stream_checks *ck, long status, double weight,
		       struct diag *d)
{
	struct done_note note;
	enum err e;

	note_of(v, ck, status, weight, &note);
	e = results_queue(r->res, rec, &note, sizeof(note), d);
	cJSON_Delete(rec);
	return e;
}

/* Journals the record `rec` (taken) of attempt `a`, or holds it when `a` is
 * a cache step before its group's last: then the group's records go in
 * together, so an interruption leaves none of a group (recprobe.h). */
static enum err commit(struct run *r, const struct attempt *a, cJSON *rec,
		       const struct record_verdict *v, const struct stream_checks *ck,
		       long status, struct diag *d)
{
	const struct suite_recall *rc = &a->c->recall;
	enum err e = ERR_OK;
	struct held *h;
	int i;

	if (a->c == &a->lcase && !a->is_load && !recprobe_group_ends(rc, a->step)) {
		if (r->nheld == RECPROBE_CACHE_STEPS - 1) {
			cJSON_Delete(rec);
			return diag_fail(d, ERR_INTERNAL, "a cache group overlaps another");
		}
		h = &r->held[r->nheld++];
		h->rec = rec, h->v = *v, h->ck = *ck, h->status = status;
		h->weight = case_weight(a->c);
		return ERR_OK;
	}
	for (i = 0; i < r->nheld; i++) {
		h = &r->held[i];
		if (!e)
			e = append(r, h->rec, &h->v, &h->ck, h->status, h->weight, d);
		else
			cJSON_Delete(h->rec);
		h->rec = NULL;
	}
	r->nheld = 0;
	if (e) {
		cJSON_Delete(rec);
		return e;
	}
	return append(r, rec, v, ck, status, case_weight(a->c), d);
}

/* Journals attempt `a`: raw bytes first, then the record (so a record never
 * points at missing raw bytes); it counts once durable (tally). */
static enum err journal(struct run *r, struct attempt *a, const struct http_done *dn,
			const struct stream_checks *ck, const char *raw_name,
			struct diag *d)
{
	struct record_attempt v;
	struct record_verdict verdict;
	struct audit_result au;
	cJSON *rec;
	enum err e;

	if (a->round1)
		au = a->audit1;
	else
		judge_audit(r, a, &au);
	record_view(r, a, dn, ck, &au, raw_name, &v);
	v.transport_msg = dn->fail ? dn->msg : a->feed_msg;
	rec = record_new(&v, &verdict);
	if (rec && name_replica(r, a, rec))
		cJSON_Delete(rec), rec = NULL;
	if (rec && a->is_load && !cJSON_AddItemToObject(rec, "load", load_json(a))) {
		cJSON_Delete(rec);
		rec = NULL;
	}
	if (rec && a->c->during && during_json(a, rec)) {
		cJSON_Delete(rec);
		rec = NULL;
	}
	if (rec && a->c == &a->lcase && !a->is_load &&
	    !cJSON_AddItemToObject(rec, "probe", recprobe_json(&r->suite->cases[a->c->index].recall,
							       a->step, r->nonce, &a->st))) {
		cJSON_Delete(rec);
		rec = NULL;
	}
	if (!rec)
		return diag_fail(d, ERR_NOMEM, "out of memory writing a result");
	a->passed = verdict.transport_ok && verdict.audit_ok && verdict.grade_ok;
	if ((e = results_queue_raw(r->res, raw_name, &a->raw, d))) {
		cJSON_Delete(rec);
		return e;
	}
	return commit(r, a, rec, &verdict, ck, dn->status, d);
}

/* Judges a finished request of `a`. A tool case whose round 1 passed goes on
 * to round 2 (`*again` = 1, the attempt stays in flight); otherwise the record
 * is journalled. */
static enum err finish_attempt(struct run *r, struct attempt *a,
			       const struct http_done *dn, int *again,
			       struct diag *d)
{
	struct stream_transport tr = {dn->status, dn->fail, dn->msg};
	struct stream_expect x = {1, a->c->ignore_eos ? a->c->max_tokens : -1,
				  a->c->max_tokens};
	struct stream_checks ck;
	char raw_name[256];
	enum err e;

	*again = 0;
	if (a->feed_failed && tr.fail == HTTP_FAIL_NONE) {
		tr.fail = HTTP_FAIL_OTHER;
		tr.msg = a->feed_msg;
		tr.too_large = a->feed_failed == 2;
	}
	stream_end(&a->st, dn->end_ms);
	stream_check(&a->st, &tr, &x, &ck);
	results_raw_name(a->c->id, a->repeat, a->has_seed, a->seed, raw_name, sizeof(raw_name));
	e = grade_round(a, d);
	if (!e && a->round == 1 && a->c->expect.round2) {
		if (ck.n == 0 && a->g.ok) {
			*again = 1;
			return start_round2(r, a, dn, &ck, raw_name, d);
		}
		grade_fail(&a->g, "final answer not requested: round 1 failed");
		if (a->g.nomem)
			e = diag_fail(d, ERR_NOMEM, "out of memory grading an answer");
	}
	if (!e && a->idle) {
		grade_fail(&a->g, "not under load: load case '%s' had ended when this attempt started",
			   a->c->during);
		if (a->g.nomem)
			e = diag_fail(d, ERR_NOMEM, "out of memory grading an answer");
	}
	return e ? e : journal(r, a, dn, &ck, raw_name, d);
}

/* The pre-check request ended: the case goes on only when it passed every
 * strict check (exact input and output lengths included); otherwise why. */
static void precheck_done(struct run *r, const struct attempt *a, const struct http_done *dn)
{
	const struct stream_usage *u = &a->st.usage;
	const struct loadspec *s = &r->lc->load;

	loadplan_precheck(&r->plan, a->passed);
	if (a->passed)
		return;
	if (dn->fail)
		snprintf(r->lstop, sizeof(r->lstop), "its first request failed at transport: %.400s", dn->msg);
	else if (u->prompt_tokens != s->input_tokens || u->completion_tokens != s->output_tokens)
		snprintf(r->lstop, sizeof(r->lstop),
			 "its first request got prompt_tokens %lld and completion_tokens %lld, "
			 "not exactly %ld and %ld", u->prompt_tokens, u->completion_tokens,
			 s->input_tokens, s->output_tokens);
	else
		snprintf(r->lstop, sizeof(r->lstop),
			 "its first request had exactly %ld and %ld tokens but failed a strict check (see its record)",
			 s->input_tokens, s->output_tokens);
}

/* ---- the loop ---- */

static int busy(const struct run *r)
{
	size_t i;

	for (i = 0; i < r->nslots; i++)
		if (r->slots[i])
			return 1;
	return 0;
}

/* Starts the attempts of the cases run during load case `dl` once its load
 * is under way (a first request after its pre-check has ended); those left
 * when it ends run after it. */
static enum err fill_during(struct run *r, struct diag *d)
{
	struct attempt **slot;
	enum err e = ERR_OK;

	if (!r->dl || (r->lc && r->lfinished < 1))
		return ERR_OK;
	while (!e && (slot = free_slot(r))) {
		const struct suite_case *c;
		long repeat, seed;
		int has, step;
		int next = next_attempt(r, &r->dcur, r->dl, &c, &repeat, &has, &seed, &step);

		if (!next)
			r->dl = NULL;
		if (next != 1)
			break;
		e = start_attempt(r, c, repeat, has, seed, step, slot, d);
	}
	return e;
}

static enum err fill_slots(struct run *r, struct diag *d)
{
	size_t i;
	enum err e;

	if (r->lc || r->dl) {
		if (r->lc && (e = fill_load(r, d)))
			return e;
		if ((e = fill_during(r, d)) || r->lc || r->dl)
			return e;
	}
	for (i = 0; i < r->nslots; i++) {
		const struct suite_case *c;
		long repeat, seed;
		int has, next, step;

		if (r->slots[i])
			continue;
		next = next_attempt(r, &r->cur, NULL, &c, &repeat, &has, &seed, &step);
		if (!next || next == 3)
			return ERR_OK;
		if (next == 2) { /* a load case: alone, once the slots are empty */
			if (busy(r))
				return ERR_OK;
			if ((e = load_begin(r, c, d)) || (e = fill_load(r, d)) || r->lc ||
			    r->dl)
				return e;
			i = (size_t)-1; /* it finished at once (all recorded): go on */
			continue;
		}
		e = start_attempt(r, c, repeat, has, seed, step, &r->slots[i], d);
		if (e)
			return e;
		if (!r->slots[i]) /* judged before sending (preflight): fill it again */
			i--;
	}
	return ERR_OK;
}

static void drop_slot(struct run *r, struct attempt *a)
{
	size_t i;

	for (i = 0; i < r->nslots; i++)
		if (r->slots[i] == a)
			r->slots[i] = NULL;
	r->inflight[a->replica]--;
	attempt_free(a);
}

static void progress(const struct run *r, int force)
{
	if (r->o->progress)
		r->o->progress(r->o->progress_ctx, r, force);
}

/* How long to poll: the progress interval, or less when an open-loop
 * request falls due sooner. */
static int poll_wait(const struct run *r)
{
	int ms = r->o->poll_ms > 0 ? r->o->poll_ms : 1000;
	double left;

	if (!r->wake_ms)
		return ms;
	left = r->wake_ms - io_now_ms();
	return left <= 0 ? 0 : left < ms ? (int)ceil(left) : ms;
}

static int stopped(const struct run *r)
{
	return r->o->stop && *r->o->stop;
}

static enum err loop(struct run *r, struct diag *d)
{
	struct http_done dn;
	enum err e = fill_slots(r, d);

	while (!e && (http_multi_pending(r->multi) || r->lc || r->dl) && !stopped(r)) {
		if (http_multi_pending(r->multi))
			e = http_multi_poll(r->multi, poll_wait(r), d);
		else
			arrival_sleep_until_ms(r->wake_ms);
		/* due open-loop sends go first: judging and queueing records
		 * must not delay them */
		if (!e && r->lc && !stopped(r))
			e = fill_load(r, d);
		while (!e && http_multi_next(r->multi, &dn)) {
			struct attempt *a = dn.user;
			int again = 0;
			e = finish_attempt(r, a, &dn, &again, d);
			if (!e && a->is_load && !again && a->li.round == LOADPLAN_PRECHECK)
				precheck_done(r, a, &dn);
			if (a->is_load && !again) {
				loadplan_finished(&r->plan);
				r->lfinished += a->li.round != LOADPLAN_PRECHECK;
			}
			if (!again || e)
				drop_slot(r, a);
			if (!e && r->lc && !stopped(r))
				e = fill_load(r, d);
		}
		if (!e)
			e = results_collect(r->res, 0, tally, r, d);
		progress(r, 0);
		if (!e && !stopped(r))
			e = fill_slots(r, d);
	}
	r->n.interrupted = stopped(r);
	if (!e) /* what finished is durable, and counted, before the end */
		e = results_collect(r->res, 1, tally, r, d);
	return e;
}

/* --start-at: waits for the common instant, then records how late this
 * process began ("start_lag_ms"; negative never: a start already past
 * begins at once and records its lateness). */
static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static enum err wait_start(struct run *r, struct diag *d)
{
	struct json_build jb;
	double now = wall_s(), want = r->o->start_at;

	if (want <= 0)
		return ERR_OK;
	while (now < want) {
		double left = want - now;
		struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
		nanosleep(&ts, NULL);
		now = wall_s();
	}
	json_build_init(&jb);
	json_add_num(&jb, r->manifest, "start_lag_ms", (now - want) * 1000.0);
	return json_build_end(&jb, NULL, "the manifest", d);
}

/* ---- --warmup ---- */

/* The warm-up request: the first selected chat or load case as it would be
 * sent (a load case with a prompt of its own seed stream). */
static enum err warm_body(struct run *r, struct req *q, struct loadgen_prompt *lp,
			  struct diag *d)
{
	size_t i;

	for (i = 0; i < r->suite->ncases; i++) {
		const struct suite_case *c = &r->suite->cases[i];
		struct loadplan_item it = {0, 0xffff, 0, 0, 0};
		struct suite_case k;

		if (!selected(r, c) || c->kind == SUITE_RECALL)
			continue;
		if (c->kind != SUITE_LOAD)
			return req_build(q, c, c->messages, r->eps[0].model, r->suite_dir, d);
		if (load_begin(r, c, d) || load_prompt(r, &it, lp, d))
			return d->code;
		k = *c;
		k.json = r->ljson;
		k.prompt = lp->prompt;
		return req_build(q, &k, lp->messages, r->eps[0].model, r->suite_dir, d);
	}
	return diag_fail(d, ERR_USAGE, "'--warmup' needs a chat or load case to send (recall cases are not used)");
}

/* --warmup N: N uncounted requests, up to the slots at once, before anything
 * is counted (seed 000: the first requests meet JIT compilation); their
 * outcome is neither judged nor recorded. */
static enum err warm_up(struct run *r, struct diag *d)
{
	struct loadgen_prompt lp;
	struct http_req hr;
	struct http_done dn;
	struct req q;
	char url[ENDPOINT_URL_MAX];
	long sent = 0;
	enum err e;

	memset(&lp, 0, sizeof(lp));
	req_init(&q);
	e = warm_body(r, &q, &lp, d);
	cJSON_Delete(r->ljson);
	r->ljson = NULL;
	r->lc = NULL;
	snprintf(url, sizeof(url), "%s%s", r->eps[0].base, q.path);
	memset(&hr, 0, sizeof(hr));
	hr.url = url;
	hr.body = q.body.data;
	hr.body_len = q.body.len;
	hr.api_key = r->o->api_key;
	hr.timeout_s = r->o->timeout > 0 ? r->o->timeout : 600;
	while (!e && (sent < r->o->warmup || http_multi_pending(r->multi))) {
		while (!e && sent < r->o->warmup && http_multi_pending(r->multi) < r->nslots && ++sent)
			e = http_multi_add(r->multi, &hr, d);
		if (!e)
			e = http_multi_poll(r->multi, 1000, d);
		while (!e && http_multi_next(r->multi, &dn))
			;
	}
	req_release(&q);
	loadgen_release(&lp);
	return e;
}

enum err run_go(struct run *r, struct diag *d)
{
	enum err e = ERR_OK;

	loadclient_now(&r->started);
	progress(r, 1);
	if (r->o->warmup > 0)
		e = warm_up(r, d);
	if (!e)
		e = wait_start(r, d);
	if (!e)
		e = loop(r, d);
	if (!e)
		e = record_manifest_end(r->manifest, r->n.total, r->n.done, r->n.pass, r->n.fail,
					r->n.prior_pass + r->n.prior_fail, d);
	if (!e)
		e = loadclient_total(r->manifest, &r->started, d);
	/* report.h reads it: the run's summary says INCOMPLETE */
	if (!e && r->n.interrupted && !cJSON_AddBoolToObject(r->manifest, "interrupted", 1))
		e = diag_fail(d, ERR_NOMEM, "out of memory");
	if (!e)
		e = results_write_manifest(r->res, r->manifest, d);
	return e;
}

/* ---- set-up ---- */

static enum err check_inputs(struct run *r, struct diag *d)
{
	size_t i, n = 0;

	for (i = 0; i < r->suite->ncases; i++) {
		const struct suite_case *c = &r->suite->cases[i];
		if (!selected(r, c))
			continue;
		n++;
		if (c->kind == SUITE_RECALL && (!r->o->tokenizer ||
						 (!r->o->template_name && !tpl_model_is_dir(r->o->tokenizer))))
			return diag_fail(d, ERR_USAGE,
					 "recall case '%s' needs '--tokenizer' and '--template' to build its documents",
					 c->id);
		if (c->kind == SUITE_LOAD && (!r->o->tokenizer ||
		    (c->load.endpoint == LOADGEN_CHAT && !r->o->template_name)))
			return diag_fail(d, ERR_USAGE,
					 "load case '%s' needs '--tokenizer'%s to build prompts of exactly %ld tokens",
					 c->id, c->load.endpoint == LOADGEN_CHAT ? " and '--template'" : "",
					 c->load.input_tokens);
	}
	if (!n)
		return diag_fail(d, ERR_USAGE, "no case of '%s' matches '--case %s'%s",
				 r->suite->path, r->o->case_globs[0],
				 r->o->ncase_globs > 1 ? " or the other --case patterns" : "");
	if (!!r->o->tokenizer != (r->o->template_name || tpl_model_is_dir(r->o->tokenizer)))
		return diag_fail(d, ERR_USAGE,
				 "the token audit needs both '--tokenizer' and '--template'");
	return ERR_OK;
}

static void folders(struct run *r)
{
	const char *slash = strrchr(r->suite->path, '/');

	if (slash)
		snprintf(r->suite_dir, sizeof(r->suite_dir), "%.*s",
			 (int)(slash - r->suite->path), r->suite->path);
	else
		snprintf(r->suite_dir, sizeof(r->suite_dir), ".");
}

/* `s` with every byte outside [A-Za-z0-9._-] as '_', cut to cap - 1. */
static void safe_name(const char *s, char *out, size_t cap)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < cap; i++)
		out[i] = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
				s[i]) ? s[i] : '_';
	out[i] = '\0';
}

/* o->out, else a new folder results/SUITE-MODEL-YYYYMMDDTHHMMSS.mmmZ[-N]
 * (run.h), created here so that two runs in a loop never share one. */
static enum err results_dir(struct run *r, struct diag *d)
{
	struct timespec ts;
	struct tm tm;
	char stamp[32], suite[96], model[96];
	int i, n;
	enum err e;

	if (r->o->out) {
		snprintf(r->dir, sizeof(r->dir), "%s", r->o->out);
		return ERR_OK;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	safe_name(r->suite->name, suite, sizeof(suite));
	safe_name(r->eps[0].model, model, sizeof(model));
	if ((e = io_mkdirs("results", d)))
		return e;
	for (i = 1; i <= RUN_DIR_TRIES; i++) {
		n = snprintf(r->dir, sizeof(r->dir), "results/%s-%s-%s.%03ldZ", suite, model, stamp,
			     ts.tv_nsec / 1000000);
		if (i > 1 && n > 0 && (size_t)n < sizeof(r->dir))
			snprintf(r->dir + n, sizeof(r->dir) - (size_t)n, "-%d", i);
		if (mkdir(r->dir, 0777) == 0)
			return ERR_OK;
		if (errno != EEXIST)
			return diag_fail(d, ERR_IO, "cannot create '%s': %s", r->dir, strerror(errno));
	}
	return diag_fail(d, ERR_IO, "cannot create a results folder: '%s' and %d more exist",
			 r->dir, RUN_DIR_TRIES - 1);
}

static enum err load_locals(struct run *r, struct diag *d)
{
	enum err e = ERR_OK;

	r->audit.bos_id = -1;
	e = tpl_model_load(r->o->tokenizer, r->o->template_name, &r->tok, &r->tpl,
			   &r->warnings, d);
	if (!e && r->tok)
		r->audit.bos_id = audit_bos_id(r->tok, r->o->tokenizer);
	r->audit.tok = r->tok;
	r->audit.tpl = r->tpl;
	return e;
}

/* Discovers every replica; they must serve the same model. */
static enum err discover(struct run *r, struct diag *d)
{
	struct endpoint_opts eo = {0};
	enum err e = ERR_OK;
	int i;

	eo.model = r->o->model;
	eo.api_key = r->o->api_key;
	eo.api_key_env = r->o->api_key_env;
	eo.timeout = r->o->timeout;
	eo.server_forced = r->o->server_forced;
	eo.server = r->o->server;
	r->tls.cacert = r->o->cacert;
	r->tls.insecure = r->o->insecure;
	eo.tls = &r->tls;
	eo.cacert_from = r->o->cacert_from;
	for (i = 0; !e && i < r->neps; i++) {
		e = endpoint_discover(&r->eps[i], &eo, d);
		if (!e && strcmp(r->eps[i].model, r->eps[0].model))
			e = diag_fail(d, ERR_USAGE,
				      "endpoint '%s' serves '%s', not '%s' as '%s' does: pass '--model NAME'",
				      r->eps[i].base, r->eps[i].model, r->eps[0].model, r->eps[0].base);
	}
	r->audit.server = r->eps[0].server;
	return e;
}

/* ---- the shard ---- */

/* Estimated prompt tokens of one attempt of `c` (about 4 bytes a token). */
static uint64_t weight_of(const struct suite_case *c)
{
	char *text;
	uint64_t n;

	if (c->kind == SUITE_RECALL)
		return (uint64_t)c->recall.tokens;
	if (c->prompt)
		return strlen(c->prompt) / 4 + 1;
	text = c->messages ? cJSON_PrintUnformatted(c->messages) : NULL;
	n = text ? strlen(text) / 4 + 1 : 1;
	cJSON_free(text);
	return n;
}

/* Numbers the attempts of the selected cases (r->first) and lists the units
 * shard.h assigns: a recall case's seed with all its repeats, else one
 * attempt. `u` and `keys` get room for every attempt. */
static enum err list_units(struct run *r, struct shard_unit *u, char **keys,
			   size_t *nunits, struct diag *d)
{
	size_t ci, n = 0, at = 0;
	long ri;
	int si, has;
	long seed;
	char key[RECORD_KEY_MAX];

	for (ci = 0; ci < r->suite->ncases; ci++) {
		const struct suite_case *c = &r->suite->cases[ci];
		int recall = c->kind == SUITE_RECALL;
		uint64_t w = weight_of(c);
		r->first[ci] = at;
		if (!selected(r, c) || c->kind == SUITE_LOAD)
			continue;
		at += (size_t)repeats_of(r, c) * (size_t)seeds_of(c);
		for (ri = 0; ri < (recall ? 1 : repeats_of(r, c)); ri++)
			for (si = 0; si < seeds_of(c); si++, n++) {
				key_seed(c, si, &has, &seed);
				record_key(c->id, ri + 1, has, seed, key, sizeof(key));
				if (!(keys[n] = mem_strndup(key, strlen(key))))
					return diag_fail(d, ERR_NOMEM, "out of memory");
				u[n].key = keys[n];
				u[n].weight = recall ? w * (uint64_t)repeats_of(r, c) : w;
			}
	}
	*nunits = n;
	return ERR_OK;
}

/* Marks the attempts of the units that went to this shard. */
static void mark_mine(struct run *r, const struct shard_unit *u)
{
	size_t ci, n = 0;
	long ri, rj;
	int si;

	for (ci = 0; ci < r->suite->ncases; ci++) {
		const struct suite_case *c = &r->suite->cases[ci];
		int recall = c->kind == SUITE_RECALL, seeds = seeds_of(c);
		if (!selected(r, c) || c->kind == SUITE_LOAD)
			continue;
		for (ri = 0; ri < (recall ? 1 : repeats_of(r, c)); ri++)
			for (si = 0; si < seeds; si++, n++) {
				if (u[n].shard != r->o->shard.index)
					continue;
				for (rj = recall ? 0 : ri; rj < (recall ? repeats_of(r, c) : ri + 1); rj++) {
					r->mine[r->first[ci] + (size_t)rj * (size_t)seeds + (size_t)si] = 1;
					r->in_shard++;
				}
			}
	}
}

/* Every selected load case runs on every shard, each with its part of the
 * rate or concurrency (shard_load_share); its requests count as planned. */
static enum err share_load(struct run *r, struct diag *d)
{
	size_t ci;
	enum err e = ERR_OK;

	if (!(r->lshares = mem_calloc(r->suite->ncases, sizeof(*r->lshares))))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	for (ci = 0; !e && ci < r->suite->ncases; ci++) {
		const struct suite_case *c = &r->suite->cases[ci];
		if (c->kind != SUITE_LOAD || !selected(r, c))
			continue;
		e = shard_load_share(&c->load, &r->o->shard, c->id, &r->lshares[ci], d);
		r->in_shard += e ? 0 : (size_t)loadplan_total(&r->lshares[ci]);
	}
	return e;
}

static enum err plan_shard(struct run *r, struct diag *d)
{
	size_t ci, total = 0, nunits = 0, i;
	struct shard_unit *u = NULL;
	char **keys = NULL;
	enum err e;

	for (ci = 0; ci < r->suite->ncases; ci++)
		if (selected(r, &r->suite->cases[ci]))
			total += (size_t)repeats_of(r, &r->suite->cases[ci]) *
				 (size_t)seeds_of(&r->suite->cases[ci]);
	r->first = mem_calloc(r->suite->ncases, sizeof(*r->first));
	r->mine = mem_calloc(total ? total : 1, 1);
	u = mem_calloc(total ? total : 1, sizeof(*u));
	keys = mem_calloc(total ? total : 1, sizeof(*keys));
	if (!r->first || !r->mine || !u || !keys)
		e = diag_fail(d, ERR_NOMEM, "out of memory");
	else
		e = list_units(r, u, keys, &nunits, d);
	if (!e)
		e = shard_assign(u, nunits, r->o->shard.count, d);
	if (!e)
		mark_mine(r, u);
	if (!e)
		e = share_load(r, d);
	for (i = 0; keys && i < total; i++)
		mem_free(keys[i]);
	mem_free(keys);
	mem_free(u);
	return e;
}

/* ---- the manifest ---- */

/* The manifest's "shard" {index, count, from, rule, attempts} (null when the
 * run is whole) and "endpoints" [{base_url, served_model, server_version}],
 * one per replica. */
static enum err manifest_extras(struct run *r, struct diag *d)
{
	struct json_build jb;
	cJSON *sh, *eps, *one;
	char base[ENDPOINT_URL_MAX];
	int i;

	json_build_init(&jb);
	if (r->o->shard.count) {
		sh = json_add_obj(&jb, r->manifest, "shard");
		json_add_int(&jb, sh, "index", r->o->shard.index);
		json_add_int(&jb, sh, "count", r->o->shard.count);
		json_add_str(&jb, sh, "from", r->o->shard.from);
		json_add_str(&jb, sh, "rule", SHARD_RULE);
		json_add_int(&jb, sh, "attempts", (long long)r->in_shard);
		for (i = 0; r->lshares && i < (int)r->suite->ncases; i++)
			if (r->suite->cases[i].kind == SUITE_LOAD && selected(r, &r->suite->cases[i]))
				shard_load_json(&jb, sh, r->suite->cases[i].id, &r->lshares[i]);
	} else {
		json_add_null(&jb, r->manifest, "shard");
	}
	if (r->o->start_at > 0)
		json_add_num(&jb, r->manifest, "start_at", r->o->start_at);
	eps = json_add_arr(&jb, r->manifest, "endpoints");
	for (i = 0; i < r->neps; i++) {
		const cJSON *info = i ? r->eps[i].json : jget(r->manifest, "endpoint");
		const cJSON *ver = jget2(info, "server", "version");
		endpoint_redact(r->eps[i].base, base, sizeof(base));
		one = json_new_obj(&jb);
		json_add_str(&jb, one, "base_url", base);
		json_add_str(&jb, one, "served_model", r->eps[i].model);
		if (cJSON_IsString(ver))
			json_add_str(&jb, one, "server_version", ver->valuestring);
		else
			json_add_null(&jb, one, "server_version");
		json_add_item(&jb, eps, NULL, one);
	}
	return json_build_end(&jb, NULL, "the manifest", d);
}

/* On --resume the folder must hold the same shard. */
static enum err same_shard(const struct run *r, const cJSON *old, struct diag *d)
{
	const cJSON *sh = cJSON_GetObjectItemCaseSensitive(old, "shard");
	const cJSON *i = cJSON_GetObjectItemCaseSensitive(sh, "index");
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(sh, "count");
	long oi = cJSON_IsNumber(i) ? (long)i->valuedouble : 0;
	long on = cJSON_IsNumber(n) ? (long)n->valuedouble : 0;

	if (!old || (oi == r->o->shard.index && on == r->o->shard.count))
		return ERR_OK;
	return diag_fail(d, ERR_USAGE, "'%s' holds shard %ld/%ld, not %ld/%ld: resume it with the same shard",
			 r->dir, oi, on, r->o->shard.index, r->o->shard.count);
}

static enum err write_manifest(struct run *r, struct diag *d)
{
	struct record_manifest m = {0};
	char base[ENDPOINT_URL_MAX];
	cJSON *old = NULL;
	enum err e = ERR_OK;

	endpoint_redact(r->eps[0].base, base, sizeof(base));
	m.suite = r->suite, m.base_url = base, m.endpoint = r->eps[0].json;
	m.tokenizer_path = r->o->tokenizer, m.tok = r->tok, m.bos_id = r->audit.bos_id;
	m.tpl = r->tpl, m.server = r->eps[0].server, m.server_from = r->eps[0].server_source;
	m.opts.concurrency = r->o->concurrency, m.opts.repeat = r->o->repeat;
	m.opts.timeout = r->o->timeout, m.opts.idle_timeout = r->o->idle_timeout;
	m.opts.case_globs = r->o->case_globs, m.opts.ncase_globs = r->o->ncase_globs;
	m.opts.api_key_env = r->o->api_key_env;
	m.opts.server = r->o->server_name, m.opts.resume = r->o->resume;
	r->eps[0].json = NULL;
	if (!(r->manifest = record_manifest_new(&m)))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	if ((e = add_plan(r, d)) || (e = manifest_extras(r, d)))
		return e;
	if (r->o->resume && !(e = results_read_manifest(r->dir, &old, d)))
		e = record_manifest_resume(r->manifest, old, r->dir, d);
	if (!e && r->o->resume)
		e = same_shard(r, old, d);
	if (!e && (e = recprobe_manifest(r->manifest, old, r->suite,
					 ((uint64_t)getpid() << 40) ^ (uint64_t)(io_now_ms() * 1000.0),
					 r->nonce, d)))
		diag_prefix(d, "%s/manifest.json", r->dir);
	cJSON_Delete(old);
	if (!e)
		e = results_open(r->dir, r->o->resume, &r->res, d);
	if (!e) {
		r->res->redact = r->o->redact;
		r->n.prior_pass = r->res->prior_pass;
		r->n.prior_fail = r->res->prior_fail;
		e = results_write_manifest(r->res, r->manifest, d);
	}
	return e;
}

static enum err set_bases(struct run *r, struct diag *d)
{
	enum err e = ERR_OK;
	int i;

	r->neps = r->o->nbase_urls;
	for (i = 0; i < r->neps; i++)
		endpoint_init(&r->eps[i]);
	for (i = 0; !e && i < r->neps; i++)
		e = endpoint_set_base(&r->eps[i], r->o->base_urls[i], d);
	return e;
}

/* Slots for --concurrency and for the load levels (an open loop has no cap:
 * RUN_MAX_CONCURRENCY requests in flight at most). */
static size_t slots_needed(const struct run *r)
{
	size_t n = (size_t)r->o->concurrency, i;
	int k, during = 0;

	for (i = 0; r->suite && i < r->suite->ncases; i++) {
		const struct loadspec *s = &r->suite->cases[i].load;

		during |= r->suite->cases[i].during != NULL;
		if (r->suite->cases[i].kind != SUITE_LOAD)
			continue;
		if (s->open_loop && n < RUN_MAX_CONCURRENCY)
			n = RUN_MAX_CONCURRENCY;
		for (k = 0; !s->open_loop && k < s->nlevels; k++)
			n = (size_t)s->concurrency[k] > n ? (size_t)s->concurrency[k] : n;
	}
	/* the cases run during a load case have slots of their own */
	return during ? n + (size_t)r->o->concurrency : n;
}

/* Load cases and jitter lengths must fit the server's context (refused with
 * the path). */
static enum err check_fit(const struct run *r, struct diag *d)
{
	char path[64];
	size_t i;
	enum err e = ERR_OK;

	for (i = 0; !e && i < r->suite->ncases; i++) {
		if (selected(r, &r->suite->cases[i]))
			e = recprobe_check_fit(&r->suite->cases[i], context_room(r),
					       r->eps[0].max_model_len, r->suite->path, d);
		if (e || r->suite->cases[i].kind != SUITE_LOAD)
			continue;
		snprintf(path, sizeof(path), "cases[%zu].load", r->suite->cases[i].index);
		e = loadspec_check_fit(&r->suite->cases[i].load, (long)r->eps[0].max_model_len,
				       r->suite->path, path, d);
	}
	return e;
}

enum err run_open(const struct run_opts *o, const char *suite_path,
		  struct run **out, struct diag *d)
{
	struct run *r = mem_calloc(1, sizeof(*r));
	enum err e;

	*out = r;
	if (!r)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	r->o = o;
	doccache_init(&r->docs, DOCCACHE_BYTES_DEFAULT);
	buf_init(&r->warnings, 1 << 20);
	e = set_bases(r, d);
	if (!e)
		e = suite_load(suite_path, &r->suite, d);
	if (!e) {
		folders(r);
		e = check_inputs(r, d);
	}
	if (!e && o->shard.count)
		e = plan_shard(r, d);
	if (!e)
		e = load_locals(r, d);
	if (!e)
		e = http_multi_new(&r->multi, d);
	if (!e)
		e = discover(r, d);
	if (!e)
		e = check_fit(r, d);
	if (!e)
		e = results_dir(r, d);
	if (!e)
		e = write_manifest(r, d);
	r->nslots = slots_needed(r);
	if (!e && !(r->slots = mem_calloc(r->nslots, sizeof(*r->slots))))
		e = diag_fail(d, ERR_NOMEM, "out of memory");
	if (!e)
		r->n.total = (r->n.weight_total = 0, count_todo(r, r->cur, NULL));
	return e;
}

struct run_counts run_counts(const struct run *r)
{
	struct run_counts zero = {0};

	return r ? r->n : zero;
}

const char *run_dir(const struct run *r)
{
	return r->dir;
}

const char *run_warnings(const struct run *r)
{
	return r ? r->warnings.data : "";
}

int run_slowest(const struct run *r, const char **id, long *repeat,
		double *start_ms)
{
	const struct attempt *sa = NULL;
	size_t i;

	for (i = 0; r->slots && i < r->nslots; i++)
		if (r->slots[i] && (!sa || r->slots[i]->start_ms < sa->start_ms))
			sa = r->slots[i];
	if (!sa)
		return 0;
	*id = sa->c->id;
	*repeat = sa->repeat;
	*start_ms = sa->start_ms;
	return 1;
}

int run_status(const struct run *r)
{
	if (r->n.done && r->n.refused == r->n.done)
		return EXIT_ENDPOINT;
	if (r->n.fail || r->n.prior_fail)
		return EXIT_FAIL;
	return EXIT_PASS;
}

void run_free(struct run *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; r->slots && i < r->nslots; i++)
		attempt_free(r->slots[i]);
	mem_free(r->slots);
	metrics_release(&r->mbefore);
	cJSON_Delete(r->ljson);
	free_prompts(r);
	http_multi_free(r->multi);
	results_free(r->res);
	cJSON_Delete(r->manifest);
	for (i = 0; i < (size_t)r->nheld; i++)
		cJSON_Delete(r->held[i].rec);
	for (i = 0; i < (size_t)r->neps; i++)
		endpoint_release(&r->eps[i]);
	mem_free(r->first);
	mem_free(r->mine);
	mem_free(r->lshares);
	doccache_release(&r->docs);
	buf_release(&r->warnings);
	tok_free(r->tok);
	tpl_free(r->tpl);
	suite_free(r->suite);
	mem_free(r);
}
