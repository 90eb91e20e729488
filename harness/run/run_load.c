/* run_load — the load side of the run engine (run_int.h): load cases, their
 * part of a shard, --metrics around their levels, --warmup.
 *
 * A load case runs alone: it starts when every attempt before it has ended,
 * and the cases after it wait for its last request. Its requests come from
 * loadplan (the pre-check, levels, warm-up, rounds, closed-loop caps,
 * open-loop due times; after a failed pre-check, requests to record as not
 * sent);
 * each is a fixed-length request with a generated prompt (loadgen.h) and is
 * judged and journalled like any attempt, with "load" in its record
 * (loadcells.h). Its key's repeat is the request's place in the case. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/jget.h"
#include "base/json.h"
#include "base/keyset.h"
#include "base/mem.h"
#include "net/probe.h"
#include "run_int.h"
#include "shard.h"

const struct loadspec *run_load_spec(const struct run *r, const struct suite_case *c)
{
	return r->load.shares ? &r->load.shares[c - r->suite->cases] : &c->load;
}

enum err run_load_share(struct run *r, struct diag *d)
{
	size_t ci;
	enum err e = ERR_OK;

	if (!(r->load.shares = mem_calloc(r->suite->ncases, sizeof(*r->load.shares))))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	for (ci = 0; !e && ci < r->suite->ncases; ci++) {
		const struct suite_case *c = &r->suite->cases[ci];
		if (c->kind != SUITE_LOAD || !run_selected(r, c))
			continue;
		e = shard_load_share(&c->load, &r->o->shard, c->id, &r->load.shares[ci], d);
		/* the shards of a split run keep one plan: no self-sizing */
		r->load.shares[ci].max_rounds = r->load.shares[ci].rounds;
		r->in_shard += e ? 0 : (size_t)loadplan_total(&r->load.shares[ci]);
	}
	return e;
}

/* The 1-based place of request `it` in its case (loadplan_seq). */
static long load_seq(const struct loadspec *s, const struct loadplan_item *it)
{
	return loadplan_seq(s, it->level, it->round, it->index);
}

/* The fields of load case `c` as each of its requests sends them (owned by
 * the caller): the fixed length (max_tokens = min_tokens = output_tokens,
 * ignore_eos). NULL when out of memory. */
static cJSON *fixed_json(const struct suite_case *c)
{
	cJSON *j = cJSON_Duplicate(c->json, 1);

	if (!j)
		return NULL;
	cJSON_DeleteItemFromObjectCaseSensitive(j, "max_tokens");
	cJSON_DeleteItemFromObjectCaseSensitive(j, "min_tokens");
	cJSON_DeleteItemFromObjectCaseSensitive(j, "ignore_eos");
	if (!cJSON_AddNumberToObject(j, "max_tokens", (double)c->load.output_tokens) ||
	    !cJSON_AddNumberToObject(j, "min_tokens", (double)c->load.output_tokens) ||
	    !cJSON_AddBoolToObject(j, "ignore_eos", 1)) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

enum err run_load_begin(struct run *r, const struct suite_case *c, struct diag *d)
{
	cJSON *j = fixed_json(c);
	const cJSON *e;

	if (!j)
		return diag_fail(d, ERR_NOMEM, "out of memory starting load case '%s'", c->id);
	r->load.json = j;
	r->load.c = c;
	r->load.during = c;
	r->load.finished = 0;
	memset(&r->load.dcur, 0, sizeof(r->load.dcur));
	r->load.wake_ms = 0;
	r->load.mlevel = -1;
	loadplan_init(&r->load.plan, run_load_spec(r, c), (uint64_t)run_load_spec(r, c)->seed);
	if (r->o->metrics) /* a level's /metrics window: its rounds back to back */
		loadplan_level_major(&r->load.plan);
	loadsize_init(&r->load.size, run_load_spec(r, c), io_now_ms());
	cJSON_ArrayForEach(e, jget(r->manifest, LC_LOAD_SIZING))
		if (cJSON_IsString(jget(e, LC_CASE)) && !strcmp(jget(e, LC_CASE)->valuestring, c->id))
			loadsize_preset(&r->load.size, (int)jget_num(e, LC_LEVEL), (long)jget_num(e, LC_ROUNDS));
	if (r->load.shares)
		loadplan_interleave(&r->load.plan, (double)r->o->shard.index / (double)r->o->shard.count);
	return ERR_OK;
}

/* The generated prompt of request `it` of load case `c`. */
static enum err load_prompt(struct run *r, const struct suite_case *c,
			    const struct loadplan_item *it, struct loadgen_prompt *out,
			    struct diag *d)
{
	const struct loadspec *s = run_load_spec(r, c);
	struct loadgen_opts o = {0};
	struct tpl_render_opts ro = {0};

	ro.server = r->eps[0].server;
	o.endpoint = s->endpoint;
	o.tok = r->tok;
	o.tpl = r->tpl;
	o.kwargs = c->kwargs;
	o.render = &ro;
	o.input_tokens = s->input_tokens;
	o.bos_tokens = r->audit.bos_id >= 0 ? 1 : 0;
	o.filler = s->filler;
	o.cache = &r->load.gen;
	return loadgen_build(&o, loadgen_seed(loadgen_case_seed((uint64_t)s->seed, c->id),
					      (unsigned)it->level,
					      (unsigned)it->round, (unsigned)it->index),
			     out, d);
}

static void free_prompts(struct run_load *l)
{
	long i;

	for (i = 0; i < l->nprompts; i++)
		loadgen_release(&l->prompts[i]);
	mem_free(l->prompts);
	l->prompts = NULL;
	l->nprompts = 0;
}

/* Builds every prompt of the round in `it` (index = its size) before its
 * clock starts: prompt building never delays a send. */
static enum err load_prepare(struct run *r, const struct loadplan_item *it, struct diag *d)
{
	struct loadplan_item one = *it;
	enum err e = ERR_OK;

	free_prompts(&r->load);
	if (!(r->load.prompts = mem_calloc((size_t)it->index, sizeof(*r->load.prompts))))
		return diag_fail(d, ERR_NOMEM, "out of memory preparing load case '%s'", r->load.c->id);
	r->load.nprompts = it->index;
	for (one.index = 0; !e && one.index < it->index; one.index++)
		e = load_prompt(r, r->load.c, &one, &r->load.prompts[one.index], d);
	if (e)
		diag_prefix(d, "load case '%s'", r->load.c->id);
	return e;
}

/* A new attempt for request `it` of the load case in progress (nothing sent),
 * or NULL when out of memory. */
static struct attempt *load_attempt(struct run *r, const struct loadplan_item *it)
{
	struct attempt *a = run_attempt_new(r);

	if (!a)
		return NULL;
	a->is_load = 1;
	a->li = *it;
	a->lcase = *r->load.c;
	a->lcase.json = r->load.json;
	a->lcase.max_tokens = r->load.c->load.output_tokens;
	a->lcase.ignore_eos = 1;
	a->c = &a->lcase;
	a->repeat = load_seq(run_load_spec(r, r->load.c), it);
	a->has_seed = r->load.shares != NULL;
	a->seed = run_load_spec(r, r->load.c)->seed;
	a->round_wall_s = run_wall_s() - (io_now_ms() - it->round_start_ms) / 1000.0;
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
		 r->load.c->id, r->load.stop);
	e = run_not_sent(r, a, STREAM_F_NOT_SENT, why, d);
	run_attempt_free(a);
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
	e = it->index < r->load.nprompts ? ERR_OK
		: diag_fail(d, ERR_INTERNAL, "load request %ld was not prepared", it->index);
	if (!e) {
		a->lp = r->load.prompts[it->index];
		memset(&r->load.prompts[it->index], 0, sizeof(a->lp));
		a->lcase.prompt = a->lp.prompt;
		a->count.local_tokens = (long long)a->lp.tokens;
		memcpy(a->prompt_sha256, a->lp.sha256, IO_SHA256_HEX);
		e = req_build(&a->req, &a->lcase, a->lp.messages, r->eps[0].model, r->suite_dir, d);
	}
	if (!e)
		e = run_send(r, a, d);
	if (!e)
		r->inflight[a->replica]++;
	if (e) {
		diag_prefix(d, "load case '%s'", r->load.c->id);
		run_attempt_free(a);
		return e;
	}
	*out = a;
	return ERR_OK;
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
		json_add_str(jb, o, MV_DIALECT, v->dialect);
	else
		json_add_null(jb, o, MV_DIALECT);
	view_num(jb, o, MV_PROMPT_TOKENS, v->prompt_tokens);
	view_num(jb, o, MV_GENERATION_TOKENS, v->generation_tokens);
	view_num(jb, o, MV_REQUESTS, v->requests);
	view_num(jb, o, MV_TTFT_MEAN_S, v->ttft_mean_s);
	view_num(jb, o, MV_TTFT_P50_S, v->ttft_p50_s);
	view_num(jb, o, MV_TTFT_P95_S, v->ttft_p95_s);
	view_num(jb, o, MV_ITL_MEAN_S, v->itl_mean_s);
	view_num(jb, o, MV_ITL_P95_S, v->itl_p95_s);
	view_num(jb, o, MV_PREFIX_HITS, v->prefix_hits);
	view_num(jb, o, MV_PREFIX_QUERIES, v->prefix_queries);
	view_num(jb, o, MV_CACHE_HIT_RATE, v->cache_hit_rate);
	view_num(jb, o, MV_CACHE_HIT_RATE_MAX, v->cache_hit_rate_max);
	view_num(jb, o, MV_RUNNING, v->running);
	view_num(jb, o, MV_WAITING, v->waiting);
	view_num(jb, o, MV_KV_USAGE, v->kv_usage);
	view_num(jb, o, MV_KV_USAGE_MAX, v->kv_usage_max);
	view_num(jb, o, MV_ENGINES, v->engines);
	view_num(jb, o, MV_SPEC_ACCEPT_RATE, v->spec_accept_rate);
	view_num(jb, o, MV_SPEC_ACCEPT_LENGTH, v->spec_accept_length);
	view_num(jb, o, MV_SPEC_DRAFTS, v->spec_drafts);
	view_num(jb, o, MV_SPEC_DRAFT_TOKENS, v->spec_draft_tokens);
	view_num(jb, o, MV_SPEC_ACCEPTED, v->spec_accepted);
	if (v->spec_npos) {
		cJSON *pos = json_add_arr(jb, o, MV_SPEC_ACCEPT_BY_POS);
		int i;

		for (i = 0; i < v->spec_npos; i++)
			view_num(jb, pos, NULL, v->spec_pos[i]);
	}
}

/* "metrics-CASE-c8" / "metrics-CASE-r0.3" + suffix (metrics.h). */
static void metrics_name(const struct run *r, int level, const char *suffix, char *out,
			 size_t cap)
{
	const struct loadspec *s = &r->load.c->load;

	metrics_file_name(r->load.c->id, s->open_loop,
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
	if (!why && !metrics_delta(&r->load.before, after, &delta, &md)) {
		metrics_view(&delta, after, &v);
		view_json(&jb, o, "server", &v);
	} else {
		json_add_str(&jb, o, MV_ERROR, why ? why : md.msg);
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
		metrics_release(&r->load.before);
		r->load.before = m;
		metrics_init(&m);
		r->load.mlevel = se ? -1 : level;
	} else if (!e) {
		e = metrics_write(r, level, &m, se ? sd.msg : r->load.mlevel != level ? "no snapshot before the level" : NULL, d);
		r->load.mlevel = -1;
	}
	metrics_release(&m);
	buf_release(&text);
	return e;
}

/* --metrics around levels: after the previous level when a new one starts
 * (its warm-up round, else its first), before it at its first counted round. */
static enum err level_edges(struct run *r, const struct loadplan_item *it, struct diag *d)
{
	int first = it->round == 0 || (it->round == 1 && loadspec_warmup(run_load_spec(r, r->load.c), it->level) == 0);
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
	const struct loadspec *s = &r->load.c->load;
	enum err e = ERR_OK;

	if (r->load.round_on)
		e = loadclient_note(r->manifest, &r->load.round, d);
	r->load.round_on = it != NULL;
	if (!it)
		return e;
	r->load.round.case_id = r->load.c->id;
	r->load.round.open_loop = s->open_loop;
	r->load.round.level_value = s->open_loop ? s->rate[it->level] : (double)s->concurrency[it->level];
	r->load.round.level = it->level;
	r->load.round.round = it->round;
	r->load.round.probe_ms = loadclient_probe();
	loadclient_now(&r->load.round.from);
	return e;
}

/* The keys of the rounds of the case in progress that self-sizing did not
 * run, into `drop`. */
static enum err unneeded(struct run *r, struct keyset *drop, struct diag *d)
{
	const struct loadspec *s = run_load_spec(r, r->load.c);
	char key[RECORD_KEY_MAX];
	long rd, ix;
	int li, added;
	enum err e = ERR_OK;

	for (li = 0; !e && li < s->nlevels; li++)
		for (rd = r->load.plan.ran[li] + 1; !e && rd <= s->max_rounds; rd++)
			for (ix = 0; !e && ix < s->requests[li]; ix++) {
				record_key(r->load.c->id, loadplan_seq(s, li, rd, ix), r->load.shares != NULL,
					   s->seed, key, sizeof(key));
				e = keyset_add(drop, key, &added, d);
			}
	if (!e)
		run_count_unneeded(r, r->load.c, (long)drop->n);
	return e;
}

/* The case in progress ended: the manifest's "load_sizing" says per level
 * how many counted rounds ran and why they stopped (loadsize.h), and the
 * rounds it did not need leave the plan, so that a run that stopped early
 * is complete. A later process of the run (--resume) runs as many. */
static enum err sizing_note(struct run *r, struct diag *d)
{
	const struct loadspec *s = run_load_spec(r, r->load.c);
	const cJSON *k, *keys = jget2(r->manifest, MK_PLANNED, MK_KEYS);
	cJSON *arr = (cJSON *)jget(r->manifest, LC_LOAD_SIZING), *o, *kept;
	struct json_build jb;
	struct keyset drop;
	int i, n;
	enum err e;

	loadsize_end(&r->load.size, &r->load.plan);
	json_build_init(&jb);
	if (!arr)
		arr = json_add_arr(&jb, r->manifest, LC_LOAD_SIZING);
	for (n = cJSON_GetArraySize(arr), i = n - 1; arr && i >= 0; i--) {
		const cJSON *c = jget(cJSON_GetArrayItem(arr, i), LC_CASE);
		if (cJSON_IsString(c) && !strcmp(c->valuestring, r->load.c->id))
			cJSON_DeleteItemFromArray(arr, i);
	}
	for (i = 0; arr && i < s->nlevels; i++) {
		o = json_add_obj(&jb, arr, NULL);
		json_add_str(&jb, o, LC_CASE, r->load.c->id);
		json_add_int(&jb, o, LC_LEVEL, i);
		if (s->open_loop)
			json_add_num(&jb, o, LC_RATE, s->rate[i]);
		else
			json_add_int(&jb, o, LC_CONCURRENCY, s->concurrency[i]);
		json_add_int(&jb, o, LC_ROUNDS, r->load.plan.ran[i]);
		json_add_int(&jb, o, LC_MIN_ROUNDS, s->rounds);
		json_add_int(&jb, o, LC_MAX_ROUNDS, s->max_rounds);
		json_add_str(&jb, o, LC_STOPPED, loadsize_stop_name(r->load.size.lv[i].stop));
	}
	if (json_build_end(&jb, NULL, "the manifest", d))
		return d->code;
	if (!cJSON_IsArray(keys) || s->max_rounds <= s->rounds)
		return ERR_OK;
	keyset_init(&drop);
	json_build_init(&jb);
	kept = json_new_arr(&jb);
	if (!(e = unneeded(r, &drop, d)))
		cJSON_ArrayForEach(k, keys)
			if (cJSON_IsString(k) && !keyset_has(&drop, k->valuestring))
				json_add_str(&jb, kept, NULL, k->valuestring);
	keyset_release(&drop);
	if (e) {
		cJSON_Delete(kept);
		return e;
	}
	if (json_build_end(&jb, &kept, "the plan", d))
		return d->code;
	return record_manifest_plan(r->manifest, kept, d);
}

enum err run_load_fill(struct run *r, struct diag *d)
{
	struct loadplan_item it;
	struct attempt **slot;
	char key[RECORD_KEY_MAX];
	double until = 0;
	enum loadplan_step st;
	enum err e = ERR_OK;

	r->load.wake_ms = 0;
	while (!e && (slot = run_empty_slot(r))) {
		st = loadplan_next(&r->load.plan, io_now_ms(), &it, &until);
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
			r->load.wake_ms = until;
		if (st == LOADPLAN_BLOCK) {
			if (!loadsize_block(&r->load.size, &r->load.plan, io_now_ms()))
				e = diag_fail(d, ERR_NOMEM, "out of memory sizing load case '%s'", r->load.c->id);
			continue;
		}
		if (st == LOADPLAN_SKIP) {
			record_key(r->load.c->id, load_seq(&r->load.c->load, &it), 0, 0, key, sizeof(key));
			if (!results_has(r->res, key))
				e = skip_load(r, &it, d);
			continue;
		}
		if (st == LOADPLAN_DONE) {
			e = round_window(r, NULL, d);
			if (!e && r->o->metrics)
				e = scrape(r, r->load.c->load.nlevels - 1, 0, d);
			if (!e)
				e = sizing_note(r, d);
			free_prompts(&r->load);
			cJSON_Delete(r->load.json);
			r->load.json = NULL;
			r->load.c = NULL;
			r->cur.ci++;
		}
		if (st != LOADPLAN_START)
			break;
		record_key(r->load.c->id, load_seq(run_load_spec(r, r->load.c), &it), r->load.shares != NULL,
			   run_load_spec(r, r->load.c)->seed, key, sizeof(key));
		if (results_has(r->res, key))
			loadplan_finished(&r->load.plan); /* recorded before (--resume) */
		else
			e = start_load(r, &it, slot, d);
	}
	return e;
}

void run_load_view(const struct attempt *a, struct record_load *l)
{
	const struct loadspec *s = &a->c->load;

	memset(l, 0, sizeof(*l));
	l->open_loop = s->open_loop;
	if (s->open_loop)
		l->rate = s->rate[a->li.level];
	else
		l->concurrency = s->concurrency[a->li.level];
	l->level = (int)a->li.level;
	l->round = a->li.round;
	l->index = (long)a->li.index;
	l->warmup = a->li.round == 0;
	l->precheck = a->li.round == LOADPLAN_PRECHECK;
	l->scheduled_ms = a->li.scheduled_ms - a->li.round_start_ms;
	l->sent_ms = a->start_ms - a->li.round_start_ms;
	l->input_tokens = s->input_tokens;
	l->output_tokens = s->output_tokens;
	l->gaps_ms = a->st.gaps;
	l->ngaps = a->st.ngaps;
	l->has_round_wall = a->has_seed;
	l->round_started_unix = a->round_wall_s;
	l->slo_ttft_ms = s->slo.ttft_ms;
	l->slo_tpot_ms = s->slo.tpot_ms;
	l->slo_e2e_ms = s->slo.e2e_ms;
}

/* The pre-check request ended: the case goes on only when it passed every
 * strict check (exact input and output lengths included); otherwise why. */
static void precheck_done(struct run *r, const struct attempt *a, const struct http_done *dn)
{
	const struct stream_usage *u = &a->st.usage;
	const struct loadspec *s = &r->load.c->load;

	loadplan_precheck(&r->load.plan, a->passed);
	if (a->passed)
		return;
	if (dn->fail)
		snprintf(r->load.stop, sizeof(r->load.stop), "its first request failed at transport: %.400s", dn->msg);
	else if (u->prompt_tokens != s->input_tokens || u->completion_tokens != s->output_tokens)
		snprintf(r->load.stop, sizeof(r->load.stop),
			 "its first request got prompt_tokens %lld and completion_tokens %lld, "
			 "not exactly %ld and %ld", u->prompt_tokens, u->completion_tokens,
			 s->input_tokens, s->output_tokens);
	else
		snprintf(r->load.stop, sizeof(r->load.stop),
			 "its first request had exactly %ld and %ld tokens but failed a strict check (see its record)",
			 s->input_tokens, s->output_tokens);
}

void run_load_ended(struct run *r, const struct attempt *a,
		    const struct http_done *dn, int judged)
{
	struct stream_timing t;

	if (judged && a->li.round == LOADPLAN_PRECHECK)
		precheck_done(r, a, dn);
	if (judged && a->li.round > 0) {
		stream_timing(&a->st, &t);
		/* out of memory here only leaves a round out of the sizing */
		(void)loadsize_request(&r->load.size, a->li.level, a->li.round, a->li.round_start_ms, a->passed,
				       t.ttft_ms, (long)a->st.usage.completion_tokens, io_now_ms());
	}
	loadplan_finished(&r->load.plan);
	r->load.finished += a->li.round != LOADPLAN_PRECHECK;
}

void run_load_release(struct run_load *l)
{
	free_prompts(l);
	loadgen_cache_release(&l->gen);
	cJSON_Delete(l->json);
	l->json = NULL;
	metrics_release(&l->before);
	loadsize_release(&l->size);
	mem_free(l->shares);
	l->shares = NULL;
}

/* ---- --warmup ---- */

/* The warm-up request: the first selected chat or load case as it would be
 * sent (a load case with a prompt of its own seed stream); it leaves r->load
 * as it was. */
static enum err warm_body(struct run *r, struct req *q, struct loadgen_prompt *lp,
			  struct diag *d)
{
	size_t i;
	cJSON *j;
	enum err e;

	for (i = 0; i < r->suite->ncases; i++) {
		const struct suite_case *c = &r->suite->cases[i];
		struct loadplan_item it = {0, 0xffff, 0, 0, 0};
		struct suite_case k;

		if (!run_selected(r, c) || c->kind == SUITE_RECALL)
			continue;
		if (c->kind != SUITE_LOAD)
			return req_build(q, c, c->messages, r->eps[0].model, r->suite_dir, d);
		if (!(j = fixed_json(c)))
			return diag_fail(d, ERR_NOMEM, "out of memory starting load case '%s'", c->id);
		k = *c;
		k.json = j;
		e = load_prompt(r, c, &it, lp, d);
		k.prompt = lp->prompt;
		if (!e)
			e = req_build(q, &k, lp->messages, r->eps[0].model, r->suite_dir, d);
		cJSON_Delete(j);
		return e;
	}
	return diag_fail(d, ERR_USAGE, "'--warmup' needs a chat or load case to send (recall cases are not used)");
}

/* Up to the slots at once (docs/cutover.md "Where the rule comes from": JIT
 * compilation); their outcome is neither judged nor recorded. */
enum err run_warm_up(struct run *r, struct diag *d)
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
