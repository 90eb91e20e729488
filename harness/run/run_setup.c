/* run_setup — run_open and run_free of the run engine (run_int.h): the
 * suite, the tokenizer and template, the endpoints, the results folder, the
 * shard, the manifest. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/jget.h"
#include "base/json.h"
#include "base/mem.h"
#include "net/probe.h"
#include "run_int.h"
#include "shard.h"
#include "tok/tok.h"
#include "tpl/tpl_model.h"
#include "tpl/tpl_setup.h"

#define RUN_DIR_TRIES 100 /* default folders of one millisecond */
#define RUN_READY_POLL_S 5 /* --wait-ready: seconds between polls */

/* ---- set-up ---- */

static enum err check_inputs(struct run *r, struct diag *d)
{
	size_t i, n = 0;

	for (i = 0; i < r->suite->ncases; i++) {
		const struct suite_case *c = &r->suite->cases[i];
		if (!run_selected(r, c))
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
	e = tpl_setup(r->o->tokenizer, r->o->template_name, &r->tok, &r->tpl, &r->warnings, d);
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

static enum err set_bases(struct run *r, struct diag *d)
{
	enum err e = ERR_OK;
	int i;

	r->tls.cacert = r->o->cacert;
	r->tls.insecure = r->o->insecure;
	r->tls.capath = r->o->capath;
	r->neps = r->o->nbase_urls;
	for (i = 0; i < r->neps; i++)
		endpoint_init(&r->eps[i]);
	for (i = 0; !e && i < r->neps; i++)
		e = endpoint_set_base(&r->eps[i], r->o->base_urls[i], d);
	return e;
}

/* Whether a selected case sends /v1/completions prompts. */
static int sends_completions(const struct run *r)
{
	size_t i;

	for (i = 0; i < r->suite->ncases; i++) {
		const struct suite_case *c = &r->suite->cases[i];

		if (run_selected(r, c) && (c->prompt || (c->kind == SUITE_LOAD && c->load.endpoint == LOADGEN_COMPLETIONS)))
			return 1;
	}
	return 0;
}

/* POSTs the JSON object `more` with "model" and "prompt": BOS_PROBE_TEXT
 * added to `path` of the first replica: the answer's number at k1 (or
 * k1.k2), or -1 with why[cap] saying why there is none. */
#define BOS_PROBE_TEXT "The capital of Norway is"
static double ask_count(struct run *r, const char *path, const char *more, const char *k1,
			const char *k2, char *why, size_t cap)
{
	char url[ENDPOINT_URL_MAX + 32], *body = NULL;
	struct json_build jb;
	struct buf resp;
	struct diag pd;
	long status = 0;
	cJSON *q, *j = NULL;
	const cJSON *n;
	double v = -1;

	snprintf(url, sizeof(url), "%s%s", r->eps[0].base, path);
	json_build_init(&jb);
	q = cJSON_Parse(more); /* needle's own text: NULL only out of memory */
	json_add_str(&jb, q, "model", r->eps[0].model);
	json_add_str(&jb, q, "prompt", BOS_PROBE_TEXT);
	if (!json_build_end(&jb, NULL, "the BOS question", NULL))
		body = cJSON_PrintUnformatted(q);
	cJSON_Delete(q);
	buf_init(&resp, (size_t)1 << 20);
	diag_init(&pd);
	if (!body)
		snprintf(why, cap, "out of memory");
	else if (http_post(url, body, strlen(body), r->o->api_key, 60, &r->tls, &resp, &status, NULL, &pd))
		snprintf(why, cap, "%.160s", pd.msg);
	else if (status != 200)
		snprintf(why, cap, "%s answered %ld", path, status);
	else if (json_parse(resp.data, resp.len, &j, "the answer", &pd) ||
		 !cJSON_IsNumber(n = k2 ? jget2(j, k1, k2) : jget(j, k1)))
		snprintf(why, cap, "%s gave no count", path);
	else
		v = n->valuedouble;
	cJSON_free(body);
	cJSON_Delete(j);
	buf_release(&resp);
	return v;
}

/*
 * The BOS question (docs/protocol.md "Prompt token accounting"): a tokenizer
 * whose tokenizer_config.json sets add_bos_token has a BOS added to a
 * /v1/completions prompt beyond tokenizer.json's own post-processor by servers
 * on transformers 4, and by none on transformers 5; /version does not tell
 * them apart. So the server is asked, once, before anything is counted: its
 * /tokenize of a short prompt (vLLM, SGLang), else a one-token completion of
 * it, gives the count with that BOS or without it. The audit and the load
 * prompts' exact lengths then count as the server does; the answer goes into
 * the manifest. A server that answers neither leaves the BOS counted, and
 * the manifest says so.
 */
static enum err ask_bos(struct run *r, struct diag *d)
{
	uint32_t *ids = NULL;
	size_t n = 0, cap = 0, with;
	char why[200] = "", how[64] = "its /tokenize";
	double got;
	enum err e;

	if (r->audit.bos_id < 0 || !sends_completions(r))
		return ERR_OK;
	if ((e = tok_encode(r->tok, BOS_PROBE_TEXT, strlen(BOS_PROBE_TEXT), 1, &ids, &n, &cap, d)))
		return e;
	with = n && ids[0] == (uint32_t)r->audit.bos_id ? n : n + 1;
	mem_free(ids);
	if (with == n) /* tokenizer.json's post-processor adds it: nothing to ask */
		return ERR_OK;
	got = ask_count(r, "/tokenize", "{\"add_special_tokens\": true}", "count", NULL, why, sizeof(why));
	if (got < 0) {
		snprintf(how, sizeof(how), "a one-token completion");
		got = ask_count(r, "/v1/completions", "{\"max_tokens\": 1, \"temperature\": 0, \"stream\": false}",
				"usage", "prompt_tokens", why, sizeof(why));
	}
	if (got < 0)
		snprintf(r->bos_answer, sizeof(r->bos_answer), "not known (%s): counted with it", why);
	else if (got == (double)with)
		snprintf(r->bos_answer, sizeof(r->bos_answer), "added (%s: %zu tokens, the count with it)", how, with);
	else if (got == (double)n)
		snprintf(r->bos_answer, sizeof(r->bos_answer), "not added (%s: %zu tokens, the count without it)", how, n);
	else
		snprintf(r->bos_answer, sizeof(r->bos_answer), "not known (%s: %.0f tokens, neither %zu nor %zu): "
			 "counted with it", how, got, with, n);
	if (got == (double)n)
		r->audit.bos_id = -1;
	return ERR_OK;
}

/* --wait-ready: each replica in turn, once the local inputs have been
 * checked (a typo in the suite must not cost the whole wait) and before
 * anything is sent; a stop signal ends the wait at once. */
static enum err wait_ready(struct run *r, struct diag *d)
{
	enum err e = ERR_OK;
	int i;

	for (i = 0; !e && r->o->wait_ready_s > 0 && i < r->neps; i++)
		e = probe_wait_ready(r->eps[i].base, r->o->api_key, &r->tls, r->o->wait_ready_s,
				     RUN_READY_POLL_S, r->o->stop, r->o->ready_wait, r->o->progress_ctx, d);
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
		if (run_selected(r, &r->suite->cases[i]))
			e = recprobe_check_fit(&r->suite->cases[i], run_context_room(r),
					       r->eps[0].max_model_len, r->suite->path, d);
		if (e || r->suite->cases[i].kind != SUITE_LOAD)
			continue;
		snprintf(path, sizeof(path), "cases[%zu].load", r->suite->cases[i].index);
		e = loadspec_check_fit(&r->suite->cases[i].load, (long)r->eps[0].max_model_len,
				       r->suite->path, path, d);
	}
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
		if (!run_selected(r, c) || c->kind == SUITE_LOAD)
			continue;
		at += (size_t)run_repeats(r, c) * (size_t)run_seeds(c);
		for (ri = 0; ri < (recall ? 1 : run_repeats(r, c)); ri++)
			for (si = 0; si < run_seeds(c); si++, n++) {
				run_key_seed(c, si, &has, &seed);
				record_key(c->id, ri + 1, has, seed, key, sizeof(key));
				if (!(keys[n] = mem_strndup(key, strlen(key))))
					return diag_fail(d, ERR_NOMEM, "out of memory");
				u[n].key = keys[n];
				u[n].weight = recall ? w * (uint64_t)run_repeats(r, c) : w;
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
		int recall = c->kind == SUITE_RECALL, seeds = run_seeds(c);
		if (!run_selected(r, c) || c->kind == SUITE_LOAD)
			continue;
		for (ri = 0; ri < (recall ? 1 : run_repeats(r, c)); ri++)
			for (si = 0; si < seeds; si++, n++) {
				if (u[n].shard != r->o->shard.index)
					continue;
				for (rj = recall ? 0 : ri; rj < (recall ? run_repeats(r, c) : ri + 1); rj++) {
					r->mine[r->first[ci] + (size_t)rj * (size_t)seeds + (size_t)si] = 1;
					r->in_shard++;
				}
			}
	}
}

/* The split's number of attempts and digest (run_int.h): every unit's key
 * and shard, one line each, in the suite's order. */
static enum err split_digest(struct run *r, const struct shard_unit *u, size_t n,
			     struct diag *d)
{
	struct buf b;
	size_t i, ci;
	enum err e = ERR_OK;

	for (ci = 0; ci < r->suite->ncases; ci++)
		if (run_selected(r, &r->suite->cases[ci]) && r->suite->cases[ci].kind != SUITE_LOAD)
			r->split_total += (size_t)run_repeats(r, &r->suite->cases[ci]) *
					  (size_t)run_seeds(&r->suite->cases[ci]);
	buf_init(&b, BUF_MAX_DEFAULT);
	for (i = 0; !e && i < n; i++)
		e = buf_printf(&b, "%s\t%ld\n", u[i].key, u[i].shard);
	if (e)
		e = diag_fail(d, e, "cannot list the split: %s", err_name(e));
	else
		e = io_sha256_hex(b.data, b.len, r->split_sha256, d);
	buf_release(&b);
	return e;
}

static enum err plan_shard(struct run *r, struct diag *d)
{
	size_t ci, total = 0, nunits = 0, i;
	struct shard_unit *u = NULL;
	char **keys = NULL;
	enum err e;

	for (ci = 0; ci < r->suite->ncases; ci++)
		if (run_selected(r, &r->suite->cases[ci]))
			total += (size_t)run_repeats(r, &r->suite->cases[ci]) *
				 (size_t)run_seeds(&r->suite->cases[ci]);
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
	r->split_mine = r->in_shard;
	if (!e)
		e = split_digest(r, u, nunits, d);
	if (!e)
		e = run_load_share(r, d);
	for (i = 0; keys && i < total; i++)
		mem_free(keys[i]);
	mem_free(keys);
	mem_free(u);
	return e;
}

/* ---- the manifest ---- */

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
		if (!run_selected(r, k))
			continue;
		/* a load case: each request it may send (loadplan_seq numbers
		 * them); rounds that self-sizing did not need leave the plan when
		 * the case ends (run_load_sizing) */
		for (ri = 1; k->kind == SUITE_LOAD && ri <= loadplan_total(run_load_spec(r, k)); ri++) {
			record_key(k->id, ri, r->load.shares != NULL, run_load_spec(r, k)->seed, key,
				   sizeof(key));
			json_add_str(&jb, keys, NULL, key);
		}
		for (ri = 0; k->kind != SUITE_LOAD && ri < run_repeats(r, k); ri++)
			for (si = 0; si < run_seeds(k); si++) {
				if (r->mine && !r->mine[r->first[ci] + (size_t)ri * (size_t)run_seeds(k) +
							(size_t)si])
					continue;
				run_key_seed(k, si, &has, &seed);
				run_attempt_key(k, run_step(k, si), ri + 1, has, seed, key, sizeof(key));
				json_add_str(&jb, keys, NULL, key);
			}
	}
	if (json_build_end(&jb, &keys, "the plan", d))
		return d->code;
	return record_manifest_plan(r->manifest, keys, d);
}

/* The manifest's "shard" {index, count, from, rule, attempts, split
 * {attempts, mine, sha256}: the whole split but load requests} (null when the
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
		sh = json_add_obj(&jb, r->manifest, MK_SHARD);
		json_add_int(&jb, sh, MK_INDEX, r->o->shard.index);
		json_add_int(&jb, sh, MK_COUNT, r->o->shard.count);
		json_add_str(&jb, sh, MK_FROM, r->o->shard.from);
		json_add_str(&jb, sh, MK_RULE, SHARD_RULE);
		json_add_int(&jb, sh, MK_ATTEMPTS, (long long)r->in_shard);
		one = json_add_obj(&jb, sh, MK_SPLIT);
		json_add_int(&jb, one, MK_ATTEMPTS, (long long)r->split_total);
		json_add_int(&jb, one, MK_MINE, (long long)r->split_mine);
		json_add_str(&jb, one, MK_SHA256, r->split_sha256);
		for (i = 0; r->load.shares && i < (int)r->suite->ncases; i++)
			if (r->suite->cases[i].kind == SUITE_LOAD && run_selected(r, &r->suite->cases[i]))
				shard_load_json(&jb, sh, r->suite->cases[i].id, &r->load.shares[i]);
	} else {
		json_add_null(&jb, r->manifest, MK_SHARD);
	}
	if (r->o->start_at > 0)
		json_add_num(&jb, r->manifest, "start_at", r->o->start_at);
	eps = json_add_arr(&jb, r->manifest, "endpoints");
	for (i = 0; i < r->neps; i++) {
		const cJSON *info = i ? r->eps[i].json : jget(r->manifest, MK_ENDPOINT);
		const cJSON *ver = jget2(info, EP_SERVER, EP_VERSION);
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
	const cJSON *sh = cJSON_GetObjectItemCaseSensitive(old, MK_SHARD);
	const cJSON *i = cJSON_GetObjectItemCaseSensitive(sh, MK_INDEX);
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(sh, MK_COUNT);
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
	m.bos_answer = r->bos_answer[0] ? r->bos_answer : NULL;
	m.tpl = r->tpl, m.server = r->eps[0].server, m.server_from = r->eps[0].server_source;
	m.opts.concurrency = r->o->concurrency, m.opts.repeat = r->o->repeat;
	m.opts.timeout = r->o->timeout, m.opts.idle_timeout = r->o->idle_timeout;
	m.opts.case_globs = r->o->case_globs, m.opts.ncase_globs = r->o->ncase_globs;
	m.opts.api_key_env = r->o->api_key_env;
	m.opts.server = r->o->server_name, m.opts.resume = r->o->resume;
	m.origin = r->o->origin;
	r->eps[0].json = NULL;
	if (!(r->manifest = record_manifest_new(&m)))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	if ((e = add_plan(r, d)) || (e = manifest_extras(r, d)))
		return e;
	if (r->o->resume && !(e = results_read_manifest(r->dir, &old, d)))
		e = record_manifest_resume(r->manifest, old, r->dir, d);
	if (!e && r->o->resume)
		e = same_shard(r, old, d);
	if (!e && jget(old, LC_LOAD_SIZING) &&
	    !cJSON_AddItemToObject(r->manifest, LC_LOAD_SIZING, cJSON_Duplicate(jget(old, LC_LOAD_SIZING), 1)))
		e = diag_fail(d, ERR_NOMEM, "out of memory");
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
		e = wait_ready(r, d);
	if (!e)
		e = http_multi_new(&r->multi, d);
	if (!e)
		e = discover(r, d);
	if (!e)
		e = ask_bos(r, d);
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
		run_count_todo(r);
	return e;
}

void run_free(struct run *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; r->slots && i < r->nslots; i++)
		run_attempt_free(r->slots[i]);
	mem_free(r->slots);
	run_load_release(&r->load);
	http_multi_free(r->multi);
	results_free(r->res);
	cJSON_Delete(r->manifest);
	for (i = 0; i < (size_t)r->nheld; i++)
		cJSON_Delete(r->held[i].rec);
	for (i = 0; i < (size_t)r->neps; i++)
		endpoint_release(&r->eps[i]);
	mem_free(r->first);
	mem_free(r->mine);
	doccache_release(&r->docs);
	buf_release(&r->warnings);
	tok_free(r->tok);
	tpl_free(r->tpl);
	suite_free(r->suite);
	mem_free(r);
}
