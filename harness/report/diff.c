/*
 * diff — see diff.h.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "keys.h"
#include "base/ctl.h"
#include "base/jget.h"
#include "base/json.h"
#include "load/loadcells.h"
#include "load/loadclient.h"
#include "net/metrics.h"
#include "base/json.h"
#include "base/md.h"
#include "probesum.h"
#include "why.h"
#include "base/mem.h"
#include "run/record.h"
#include "run/recprobe.h"
#include "run/results.h"
#include "base/stats.h"

/* ---- matching ---- */

/* What a failed or fingerprinted attempt adds to its keyed entry (owned;
 * most attempts have none of it). */
struct keyed_more {
	char *failures;     /* JSON of transport.failures (failed only), or NULL */
	char *reason;       /* first reason (failed only), or NULL */
	char *sha;          /* recall.prompt_sha256 or a probe's document, or NULL */
};

/* What matching needs of one record, kept instead of its tree: 64 bytes an
 * attempt on a 64-bit machine (an index holds one per record of the journal),
 * with what a failed attempt adds apart. */
struct keyed {
	const char *key;    /* record_key, then a NUL and the case id at key +
			       id_at, in index.keys (set once indexed) */
	long repeat;
	double seed;
	double delta;       /* audit.usage_delta */
	struct keyed_more *more; /* NULL when it has none */
	uint32_t key_at;    /* key's offset in index.keys */
	uint32_t idx;       /* position in the journal: equal keys keep file order */
	int ep;             /* the replica that served it: index.eps[ep], or -1 */
	uint16_t id_at;     /* the case id's offset from key */
	unsigned char has_seed, pass, has_delta;
	unsigned char audit; /* the usage audit: 0 not judged, 1 passed, 2 failed */
	unsigned char is_load; /* a load request: compared per cell, not here */
	unsigned char sampled; /* sent at temperature > 0: a sample of a pass rate */
	unsigned char hard;    /* failed in transport or the usage audit: never
				  a sample's failure */
	unsigned char is_recall;
};

/* key_at is an offset in index.keys, and idx counts records, each of which
 * adds at least a byte to it */
_Static_assert(BUF_MAX_DEFAULT <= UINT32_MAX, "keyed.key_at and keyed.idx fit in 32 bits");
_Static_assert(RECORD_KEY_MAX <= UINT16_MAX, "keyed.id_at holds a key's length");

/* The index of one run (grown by results_each's callback). */
struct index {
	struct keyed *k;
	size_t n, cap;
	struct buf keys;    /* every attempt's key and case id: one allocation
			       where one each cost more than the rest */
	char **eps;         /* owned base URLs, first-seen order */
	size_t neps, capeps;
	const struct report_run *run; /* borrowed: its records' run (report_keeps) */
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

static void index_free(struct index *ix)
{
	size_t i;

	buf_release(&ix->keys);
	for (i = 0; i < ix->n; i++)
		if (ix->k[i].more) {
			mem_free(ix->k[i].more->sha);
			mem_free(ix->k[i].more->failures);
			mem_free(ix->k[i].more->reason);
			mem_free(ix->k[i].more);
		}
	mem_free(ix->k);
	for (i = 0; i < ix->neps; i++)
		mem_free(ix->eps[i]);
	mem_free(ix->eps);
}

/* The index of base URL `url` in ix->eps, added when new; -1 when out of
 * memory. */
static int endpoint_of(struct index *ix, const char *url)
{
	size_t i;

	for (i = 0; i < ix->neps; i++)
		if (!strcmp(ix->eps[i], url))
			return (int)i;
	if (ix->neps == ix->capeps) {
		size_t cap = ix->capeps ? ix->capeps * 2 : 4;
		char **n = mem_realloc(ix->eps, cap * sizeof(*n));
		if (!n)
			return -1;
		ix->eps = n;
		ix->capeps = cap;
	}
	if (!(ix->eps[ix->neps] = mem_strndup(url, strlen(url))))
		return -1;
	return (int)ix->neps++;
}

/* The reason a failed record gives first: its first grade reason, else the
 * usage audit's numbers; NULL when it gives none. Owned. */
static char *reason_of(const struct record_view *v)
{
	const cJSON *r = cJSON_GetArrayItem(v->f[RF_GR_REASONS], 0);
	char msg[128];

	if (cJSON_IsString(r))
		return mem_strndup(r->valuestring, strlen(r->valuestring));
	if (!cJSON_IsFalse(v->f[RF_AU_OK]))
		return NULL;
	snprintf(msg, sizeof(msg), "usage audit: usage_delta %.0f, tolerance %.0f",
		 jget_numv(v->f[RF_AU_USAGE_DELTA]), jget_numv(v->f[RF_AU_TOLERANCE]));
	return mem_strndup(msg, strlen(msg));
}

/* k's owned extras, made on first use; NULL when out of memory. */
static struct keyed_more *more_of(struct keyed *k)
{
	return k->more ? k->more : (k->more = mem_calloc(1, sizeof(*k->more)));
}

/* Fills `k` from the record `v` views (its replica kept in ix); 0 when out
 * of memory. */
static int keyed_of(struct index *ix, const struct record_view *v, struct keyed *k)
{
	const cJSON *seed = v->f[RF_SEED], *dl = v->f[RF_AU_USAGE_DELTA];
	const cJSON *sha = v->f[RF_RE_PROMPT_SHA256], *f, *url = v->f[RF_BASE_URL];
	const char *id = v->f[RF_CASE]->valuestring, *doc;
	char key[RECORD_KEY_MAX], probe[RECPROBE_DOC_ID];
	size_t kn;

	memset(k, 0, sizeof(*k));
	k->ep = -1;
	record_view_key(v, key, sizeof(key));
	kn = strlen(key) + 1;
	k->repeat = (long)jget_numv(v->f[RF_REPEAT]);
	k->has_seed = jget_type(seed) == cJSON_Number;
	k->seed = k->has_seed ? seed->valuedouble : 0;
	k->pass = record_view_passed(v);
	k->is_load = jget_type(v->f[RF_LOAD]) == cJSON_Object;
	k->sampled = jget_type(v->f[RF_TEMPERATURE]) == cJSON_Number && v->f[RF_TEMPERATURE]->valuedouble > 0;
	k->is_recall = jget_type(v->f[RF_KIND]) == cJSON_String && !strcmp(v->f[RF_KIND]->valuestring, "recall");
	k->has_delta = jget_type(dl) == cJSON_Number;
	k->delta = k->has_delta ? dl->valuedouble : 0;
	k->audit = jget_type(v->f[RF_AU_ENABLED]) == cJSON_True
		? (jget_type(v->f[RF_AU_OK]) == cJSON_True ? 1 : 2) : 0;
	/* a cache-probe step's prompt holds its run's nonce: compare its document */
	doc = v->f[RF_PROBE] && recprobe_document_id(v->rec, probe)
		? (probe[0] ? probe : NULL)
		: (jget_type(sha) == cJSON_String ? sha->valuestring : NULL);
	if (doc && (!more_of(k) || !(k->more->sha = mem_strndup(doc, strlen(doc)))))
		return 0;
	k->key_at = (uint32_t)ix->keys.len;
	k->id_at = (uint16_t)kn;
	if (buf_append(&ix->keys, key, kn) || buf_append(&ix->keys, id, strlen(id) + 1))
		return 0;
	if (jget_type(url) == cJSON_String && (k->ep = endpoint_of(ix, url->valuestring)) < 0)
		return 0;
	if (k->pass)
		return 1;
	k->hard = jget_type(v->f[RF_TR_OK]) == cJSON_False || k->audit == 2;
	if (!more_of(k))
		return 0;
	if ((f = v->f[RF_TR_FAILURES]) && !(k->more->failures = cJSON_PrintUnformatted(f)))
		return 0;
	k->more->reason = reason_of(v);
	return 1;
}

/* results_each's callback: one record into the index. */
static enum err index_one(void *ctx, const struct record_view *v, struct diag *d)
{
	struct index *ix = ctx;

	if (ix->run && !report_keeps(ix->run, v))
		return ERR_OK; /* diff_load's pass hands over kept records only */
	if (ix->n == ix->cap) {
		struct keyed *nk = mem_grow(ix->k, &ix->cap, sizeof(*nk), 256);
		if (!nk)
			return diag_fail(d, ERR_NOMEM, "out of memory comparing runs");
		ix->k = nk;
	}
	if (!keyed_of(ix, v, &ix->k[ix->n])) {
		ix->n++; /* its owned parts are freed with the index */
		return diag_fail(d, ERR_NOMEM, "out of memory comparing runs");
	}
	ix->k[ix->n].idx = (uint32_t)ix->n;
	ix->n++;
	return ERR_OK;
}

/* An attempt as index_sort orders it: its key's first 8 bytes as a number
 * (zeros after a shorter key's end: big-endian, so numbers compare as
 * strcmp compares those bytes), and its position. */
struct sort_item {
	uint64_t pre;
	size_t i;
};

static uint64_t key_prefix(const char *key)
{
	uint64_t v = 0;
	int j;

	for (j = 0; j < 8 && key[j]; j++)
		v |= (uint64_t)(unsigned char)key[j] << (56 - 8 * j);
	return v;
}

/* Whether item a sorts before item b (their keys, the rest after equal
 * prefixes: a prefix that ends in a zero byte is a whole key). */
static inline int sort_before(const struct sort_item *a, const struct sort_item *b,
			      const struct keyed *k)
{
	if (a->pre != b->pre)
		return a->pre < b->pre;
	return (a->pre & 0xFF) && strcmp(k[a->i].key + 8, k[b->i].key + 8) < 0;
}

/* Sorts `n` items stably (equal keys keep file order), `tmp` as large:
 * merges of runs doubling in length, from one array to the other. Returns
 * the array that holds the result. */
static struct sort_item *sort_items(struct sort_item *v, struct sort_item *tmp, size_t n,
				    const struct keyed *k)
{
	size_t w, lo, a, b, mid, hi, o;
	struct sort_item *t;

	for (w = 1; w < n; w *= 2) {
		for (lo = 0; lo < n; lo += 2 * w) {
			mid = lo + w < n ? lo + w : n;
			hi = lo + 2 * w < n ? lo + 2 * w : n;
			for (a = lo, b = mid, o = lo; a < mid && b < hi;)
				tmp[o++] = sort_before(&v[b], &v[a], k) ? v[b++] : v[a++];
			while (a < mid)
				tmp[o++] = v[a++];
			while (b < hi)
				tmp[o++] = v[b++];
		}
		t = v, v = tmp, tmp = t;
	}
	return v;
}

/* Puts ix->k in the order of `v` (v[j].i: the attempt that goes to j), a
 * cycle at a time in place; v is spent. */
static void apply_order(struct index *ix, struct sort_item *v)
{
	size_t s, j, next;
	struct keyed hold;

	for (s = 0; s < ix->n; s++) {
		if (v[s].i == s)
			continue;
		hold = ix->k[s];
		for (j = s; v[j].i != s; j = next) {
			next = v[j].i;
			ix->k[j] = ix->k[next];
			v[j].i = j;
		}
		ix->k[j] = hold;
		v[j].i = j;
	}
}

/* Points the attempts at their keys (index.keys no longer grows) and sorts
 * them (equal keys in file order): by their keys' first bytes as numbers,
 * which settle most compares without strcmp, or by qsort when there is no
 * memory for that. */
static void index_sort(struct index *ix)
{
	struct sort_item *v, *tmp;
	size_t i;

	for (i = 0; i < ix->n; i++)
		ix->k[i].key = ix->keys.data + ix->k[i].key_at;
	if (!ix->n) /* an empty journal has no array to sort (ix->k NULL) */
		return;
	v = mem_alloc(ix->n * sizeof(*v));
	tmp = v ? mem_alloc(ix->n * sizeof(*tmp)) : NULL;
	if (!tmp) {
		mem_free(v);
		qsort(ix->k, ix->n, sizeof(*ix->k), cmp_keyed);
		return;
	}
	for (i = 0; i < ix->n; i++)
		v[i] = (struct sort_item){key_prefix(ix->k[i].key), i};
	apply_order(ix, sort_items(v, tmp, ix->n, ix->k));
	mem_free(v);
	mem_free(tmp);
}

/* The records of run `r`'s journal, keyed and sorted. */
static enum err index_of(const struct report_run *r, struct index *ix, struct diag *d)
{
	struct results_scan sc;
	enum err e;

	ix->run = r;
	/* sized for the records report_load counted: no growth, no slack */
	if (r->records && !(ix->k = mem_alloc(r->records * sizeof(*ix->k))))
		return diag_fail(d, ERR_NOMEM, "out of memory comparing runs");
	ix->cap = r->records;
	buf_init(&ix->keys, BUF_MAX_DEFAULT);
	e = results_each(r->dir, index_one, ix, &sc, d);
	if (!e)
		index_sort(ix);
	return e;
}

/* report_also's drop of diff_load's index. */
static void index_drop(void *ctx)
{
	if (ctx)
		index_free(ctx);
	mem_free(ctx);
}

enum err diff_load(const char *dir, const char *const *globs, size_t nglobs,
		   struct report_run **out, struct diag *d)
{
	struct report_also also = {NULL, index_one, mem_calloc(1, sizeof(struct index)), index_drop};

	*out = NULL;
	if (!also.ctx)
		return diag_fail(d, ERR_NOMEM, "out of memory comparing runs");
	buf_init(&((struct index *)also.ctx)->keys, BUF_MAX_DEFAULT);
	return report_load_cases(dir, globs, nglobs, &also, out, d);
}

/* Run r's index: the one diff_load built while loading (taken from the
 * run), else built by reading its journal again; sorted. */
static enum err index_take(struct report_run *r, struct index *ix, struct diag *d)
{
	struct index *built = r->also.take == index_one ? r->also.ctx : NULL;

	if (!built)
		return index_of(r, ix, d);
	*ix = *built;
	mem_free(built);
	r->also.ctx = NULL;
	index_sort(ix);
	return ERR_OK;
}

/* The first attempt of `ix` keyed `key`, or NULL: a walk from *at, which
 * only moves forward (keys asked in increasing order, as both indexes are
 * sorted: one walk of each matches them, where a search per key cost some
 * 14 compares). */
static const struct keyed *find(const struct index *ix, size_t *at, const char *key)
{
	int c = 1;

	while (*at < ix->n && (c = strcmp(ix->k[*at].key, key)) < 0)
		++*at;
	return *at < ix->n && !c ? &ix->k[*at] : NULL;
}

/* A new {case, repeat, seed} object for `k` (with its failures and first
 * reason when `why`); NULL on failure. */
static cJSON *attempt_ref(struct json_build *jb, const struct index *ix,
			  const struct keyed *k, int why)
{
	cJSON *o = json_new_obj(jb);

	json_add_str(jb, o, RK_CASE, k->key + k->id_at);
	json_add_num(jb, o, RK_REPEAT, (double)k->repeat);
	json_add_item(jb, o, RK_SEED, k->has_seed ? cJSON_CreateNumber(k->seed) : cJSON_CreateNull());
	if (!why)
		return o;
	if (k->ep >= 0)
		json_add_str(jb, o, RK_BASE_URL, ix->eps[k->ep]);
	if (k->more && k->more->failures)
		json_add_item(jb, o, RK_FAILURES, cJSON_Parse(k->more->failures));
	if (k->more && k->more->reason)
		json_add_str(jb, o, SK_REASON, k->more->reason);
	else
		json_add_null(jb, o, SK_REASON);
	return o;
}

/* Counts a matched attempt of case `id` in res->cases (first-matched
 * order); slot[i] is the entry of B's case i, or -1. 0 when out of memory. */
static int case_tally(struct diff_result *res, long *slot, const struct keyed *ka,
		      const struct keyed *kb)
{
	const char *id = kb->key + kb->id_at;
	int pa = ka->pass, pb = kb->pass;
	const struct casetab_case *c = casetab_find(&res->b.cases, id);
	struct diff_case *dc;
	size_t bi;

	if (!c)
		return 1; /* B's summary read the same journal: not reached */
	bi = (size_t)(c - res->b.cases.c);
	if (slot[bi] < 0) {
		if (res->ncases == res->capcases) {
			size_t cap = res->capcases ? res->capcases * 2 : 16;
			struct diff_case *n = mem_realloc(res->cases, cap * sizeof(*n));
			if (!n)
				return 0;
			res->cases = n;
			res->capcases = cap;
		}
		res->cases[res->ncases] = (struct diff_case){bi, 0, 0, 0, 0, 0, 0};
		slot[bi] = (long)res->ncases++;
	}
	dc = &res->cases[slot[bi]];
	dc->total++;
	dc->a_pass += (size_t)pa;
	dc->b_pass += (size_t)pb;
	if (ka->sampled && kb->sampled && !ka->hard && !kb->hard) {
		dc->s_total++;
		dc->s_a_pass += (size_t)pa;
		dc->s_b_pass += (size_t)pb;
	}
	return 1;
}

static cJSON *delta_or_null(const struct keyed *k)
{
	return k->has_delta ? cJSON_CreateNumber(k->delta) : cJSON_CreateNull();
}

static void usage_change(struct json_build *jb, cJSON *arr, const struct keyed *ka,
			 const struct keyed *kb)
{
	cJSON *o;

	if ((ka->has_delta && kb->has_delta && ka->delta == kb->delta) ||
	    (!ka->has_delta && !kb->has_delta))
		return;
	o = attempt_ref(jb, NULL, kb, 0);
	json_add_item(jb, o, DK_A, delta_or_null(ka));
	json_add_item(jb, o, DK_B, delta_or_null(kb));
	json_add_item(jb, arr, NULL, o);
}

struct match {
	size_t matched, a_pass, b_pass, only_a, only_b, only_b_failed;
	size_t prompt_differs; /* matched recall attempts whose documents differ */
	size_t audit_broke;    /* matched attempts that passed the audit in A, not in B */
	size_t audit_same;     /* of them, those off by audit_delta */
	double audit_delta;    /* the first one's usage_delta in B */
	size_t lacking;        /* of only_a, those that are not load requests */
	char lacking_ids[200]; /* the first of their case ids, ", "-separated */
	int lacking_cut;       /* more case ids than lacking_ids holds */
	size_t *ep_flips;      /* owned: pass->fail, fail->pass flips per replica of
				  B (2 per index.eps entry of B) */
	size_t recall, recall_sampled; /* recall attempts of both runs; of them,
				  those sent at temperature > 0 */
};

/* Counts the recall attempts of `ix` into m. */
static void recall_count(const struct index *ix, struct match *m)
{
	size_t i;

	for (i = 0; i < ix->n; i++) {
		m->recall += ix->k[i].is_recall;
		m->recall_sampled += ix->k[i].is_recall && ix->k[i].sampled;
	}
}

/* Counts an attempt of case `id` that A has and B lacks, naming the case
 * while there is room. */
static void lacking(struct match *m, const char *id)
{
	size_t n = strlen(m->lacking_ids), k = strlen(id);
	const char *at = m->lacking_ids;

	m->lacking++;
	while ((at = strstr(at, id)) && !((at == m->lacking_ids || at[-1] == ' ') &&
					   (at[k] == ',' || !at[k])))
		at += k;
	if (!at && n + k + 8 >= sizeof(m->lacking_ids))
		m->lacking_cut = 1;
	if (at || n + k + 8 >= sizeof(m->lacking_ids))
		return;
	snprintf(m->lacking_ids + n, sizeof(m->lacking_ids) - n, "%s%s", n ? ", " : "", id);
}

/* Walks B's attempts against A's index; fills flips, cases, usage changes.
 * Stops at the first failed add (a case may then lack its fields). */
static void match_runs(struct json_build *jb, const struct index *ia,
		       const struct index *ib, struct diff_result *res, struct match *m)
{
	cJSON *diff = res->diff;
	cJSON *flips = json_add_obj(jb, diff, DK_FLIPS);
	cJSON *pf = json_add_arr(jb, flips, DK_PASS_TO_FAIL);
	cJSON *fp = json_add_arr(jb, flips, DK_FAIL_TO_PASS);
	cJSON *usage, *onlyb;
	long *slot = mem_alloc((res->b.cases.n + 1) * sizeof(*slot));
	size_t i, at = 0;

	json_add_arr(jb, diff, DK_CASES); /* stands for res->cases */
	usage = json_add_arr(jb, diff, DK_USAGE_CHANGES);
	onlyb = json_add_arr(jb, diff, DK_ONLY_B_FAILED);
	if (!slot && !jb->code)
		jb->code = ERR_NOMEM;
	for (i = 0; slot && i < res->b.cases.n; i++)
		slot[i] = -1;
	for (i = 0; !jb->code && i < ib->n; i++) {
		const struct keyed *ra, *rb = &ib->k[i];
		if (i && !strcmp(rb->key, ib->k[i - 1].key))
			continue;
		if (!(ra = find(ia, &at, rb->key))) {
			m->only_b++;
			if (!rb->pass) {
				m->only_b_failed++;
				json_add_item(jb, onlyb, NULL, attempt_ref(jb, ib, rb, 1));
			}
			continue;
		}
		m->matched++;
		m->a_pass += ra->pass;
		m->b_pass += rb->pass;
		if (ra->pass && !rb->pass) {
			cJSON *flip = attempt_ref(jb, ib, rb, 1);
			if (ra->sampled && rb->sampled && !rb->hard)
				json_add_bool(jb, flip, DK_SAMPLED, 1);
			json_add_item(jb, pf, NULL, flip);
		}
		else if (!ra->pass && rb->pass)
			json_add_item(jb, fp, NULL, attempt_ref(jb, ib, rb, 0));
		if (ra->pass != rb->pass && rb->ep >= 0)
			m->ep_flips[2 * (size_t)rb->ep + rb->pass]++;
		if (!case_tally(res, slot, ra, rb))
			jb->code = ERR_NOMEM;
		usage_change(jb, usage, ra, rb);
		if (ra->audit == 1 && rb->audit == 2) {
			m->audit_delta = m->audit_broke++ ? m->audit_delta : rb->delta;
			m->audit_same += rb->delta == m->audit_delta;
		}
		m->prompt_differs += ra->more && rb->more && ra->more->sha && rb->more->sha &&
				     strcmp(ra->more->sha, rb->more->sha);
	}
	mem_free(slot);
	recall_count(ia, m);
	recall_count(ib, m);
	for (i = 0, at = 0; i < ia->n; i++)
		if (!(i && !strcmp(ia->k[i].key, ia->k[i - 1].key)) && !find(ib, &at, ia->k[i].key)) {
			m->only_a++;
			if (!ia->k[i].is_load)
				lacking(m, ia->k[i].key + ia->k[i].id_at);
		}
}

/* ---- the comparison ---- */

static void warn_if_differs(struct json_build *jb, cJSON *warn, const cJSON *sa,
			    const cJSON *sb, const char *key, const char *what)
{
	const cJSON *a = jget2(sa, SK_RUN, key), *b = jget2(sb, SK_RUN, key);
	const char *x = cJSON_IsString(a) ? a->valuestring : "(none)";
	const char *y = cJSON_IsString(b) ? b->valuestring : "(none)";
	size_t same = 0;
	char msg[400];

	if (!cJSON_IsString(a) && !cJSON_IsString(b))
		return;
	if (cJSON_IsString(a) && cJSON_IsString(b) && !strcmp(x, y))
		return;
	/* long names that differ late are quoted from shortly before the
	 * difference (on a character boundary), or they would read the same */
	while (x[same] && x[same] == y[same])
		same++;
	same = same > 60 ? same - 40 : 0;
	while (same && (x[same] & 0xC0) == 0x80)
		same--;
	snprintf(msg, sizeof(msg), "%s differs: '%s%.80s' in A, '%s%.80s' in B", what, same ? "..." : "",
		 x + same, same ? "..." : "", y + same);
	json_add_str(jb, warn, NULL, msg);
}

/* A new {pass, total, rate} object (rate null without a total); NULL on failure. */
static cJSON *rate3(struct json_build *jb, double pass, double total)
{
	cJSON *o = json_new_obj(jb);
	double rate;

	json_add_num(jb, o, SK_PASS, pass);
	json_add_num(jb, o, SK_TOTAL, total);
	json_add_item(jb, o, SK_RATE, stats_rate(pass, total, &rate) ? cJSON_CreateNumber(rate)
								    : cJSON_CreateNull());
	return o;
}

/* A new number b.rate - a.rate, or null when either is missing; NULL on failure. */
static cJSON *delta_of(const cJSON *a, const cJSON *b)
{
	const cJSON *ra = jget(a, SK_RATE), *rb = jget(b, SK_RATE);

	return cJSON_IsNumber(ra) && cJSON_IsNumber(rb)
		? cJSON_CreateNumber(rb->valuedouble - ra->valuedouble) : cJSON_CreateNull();
}

/* Adds {delta, a, b} to `o`, consuming a and b. */
static void add_ab(struct json_build *jb, cJSON *o, cJSON *a, cJSON *b)
{
	json_add_item(jb, o, DK_DELTA, delta_of(a, b));
	json_add_item(jb, o, DK_A, a);
	json_add_item(jb, o, DK_B, b);
}

static void add_overall(struct json_build *jb, cJSON *diff, const cJSON *sa,
			const cJSON *sb, const struct match *m)
{
	cJSON *o = json_add_obj(jb, diff, DK_OVERALL), *ma, *mb;
	const cJSON *aa = jget(sa, SK_ATTEMPTS), *ab = jget(sb, SK_ATTEMPTS);

	json_add_item(jb, o, DK_A, rate3(jb, jget_num(aa, SK_PASS), jget_num(aa, SK_TOTAL)));
	json_add_item(jb, o, DK_B, rate3(jb, jget_num(ab, SK_PASS), jget_num(ab, SK_TOTAL)));
	ma = rate3(jb, (double)m->a_pass, (double)m->matched);
	mb = rate3(jb, (double)m->b_pass, (double)m->matched);
	json_add_item(jb, o, DK_MATCHED_DELTA, delta_of(ma, mb));
	json_add_item(jb, o, DK_MATCHED_A, ma);
	json_add_item(jb, o, DK_MATCHED_B, mb);
	json_add_num(jb, o, DK_MATCHED, (double)m->matched);
	json_add_num(jb, o, DK_ONLY_A, (double)m->only_a);
	json_add_num(jb, o, DK_ONLY_B, (double)m->only_b);
	json_add_num(jb, o, DK_ONLY_B_FAILED, (double)m->only_b_failed);
	json_add_num(jb, o, DK_RECALL_PROMPT_DIFFERS, (double)m->prompt_differs);
	json_add_bool(jb, o, DK_RECALL_SAMPLED, m->recall && m->recall == m->recall_sampled);
	if (m->prompt_differs) {
		char msg[200];
		snprintf(msg, sizeof(msg),
			 "%zu matched recall attempts were sent different documents (recall.prompt_sha256, or a cache-probe step's needles: its nonce differs by design): not like for like",
			 m->prompt_differs);
		json_add_str(jb, cJSON_GetObjectItemCaseSensitive(diff, DK_WARNINGS), NULL, msg);
	}
}

/* diff["advice"]: what to do about what broke between A and B (why.h). */
static void add_advice(struct json_build *jb, cJSON *diff, const cJSON *sa,
		       const cJSON *sb, const struct match *m)
{
	cJSON *arr = json_add_arr(jb, diff, DK_ADVICE);
	const cJSON *ta = jget2(sa, SK_RUN, SK_TOKENIZER_SHA256), *tb = jget2(sb, SK_RUN, SK_TOKENIZER_SHA256);
	const cJSON *pa = jget2(sa, SK_RUN, SK_TEMPLATE_SHA256), *pb = jget2(sb, SK_RUN, SK_TEMPLATE_SHA256);
	char msg[512];

	why_audit_diff(m->audit_broke, m->audit_delta, m->audit_same == m->audit_broke,
		       cJSON_IsString(ta) && cJSON_IsString(tb) && !strcmp(ta->valuestring, tb->valuestring) &&
		       cJSON_IsString(pa) && cJSON_IsString(pb) && !strcmp(pa->valuestring, pb->valuestring),
		       msg, sizeof(msg));
	if (msg[0])
		json_add_str(jb, arr, NULL, msg);
}

/* One case of the comparison as its JSON object: {id, total, a_pass, b_pass,
 * delta, a, b}; NULL when out of memory. */
static cJSON *diff_case_json(const struct diff_result *res, size_t i)
{
	const struct diff_case *c = &res->cases[i];
	struct json_build jb;
	cJSON *o;

	json_build_init(&jb);
	o = json_new_obj(&jb);
	json_add_str(&jb, o, SK_ID, res->b.cases.c[c->b_case].id);
	json_add_num(&jb, o, SK_TOTAL, (double)c->total);
	json_add_num(&jb, o, DK_A_PASS, (double)c->a_pass);
	json_add_num(&jb, o, DK_B_PASS, (double)c->b_pass);
	add_ab(&jb, o, rate3(&jb, (double)c->a_pass, (double)c->total),
	       rate3(&jb, (double)c->b_pass, (double)c->total));
	if (c->s_total) {
		cJSON *sm = json_add_obj(&jb, o, DK_SAMPLED);
		json_add_num(&jb, sm, SK_TOTAL, (double)c->s_total);
		json_add_num(&jb, sm, DK_A_PASS, (double)c->s_a_pass);
		json_add_num(&jb, sm, DK_B_PASS, (double)c->s_b_pass);
	}
	return json_build_end(&jb, &o, "a case", NULL) ? NULL : o;
}

/* The endpoint of summary `s` whose base URL is `url`, or NULL. */
static const cJSON *endpoint_in(const cJSON *s, const char *url)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, jget(s, SK_ENDPOINTS))
		if (!strcmp(jget(e, RK_BASE_URL)->valuestring, url))
			return e;
	return NULL;
}

static cJSON *endpoint_side(struct json_build *jb, const cJSON *e)
{
	return e ? rate3(jb, jget_num(e, SK_PASS), jget_num(e, SK_TOTAL)) : cJSON_CreateNull();
}

/* diff["by_endpoint"], when either run used several replicas: per base URL
 * (A's order, then B's new ones) its replica number (B's, else A's), each
 * run's pass rate over all its attempts there, and the flips of matched
 * attempts B's replica served. */
static void add_endpoints(struct json_build *jb, cJSON *diff, const cJSON *sa,
			  const cJSON *sb, const struct index *ib, const struct match *m)
{
	const cJSON *sides[2] = {sa, sb}, *e;
	cJSON *arr, *o;
	int side;
	size_t i;

	if (cJSON_GetArraySize(jget(sa, SK_ENDPOINTS)) < 2 &&
	    cJSON_GetArraySize(jget(sb, SK_ENDPOINTS)) < 2)
		return;
	arr = json_add_arr(jb, diff, DK_BY_ENDPOINT);
	for (side = 0; side < 2; side++)
		cJSON_ArrayForEach(e, jget(sides[side], SK_ENDPOINTS)) {
			const char *url = jget(e, RK_BASE_URL)->valuestring;
			const cJSON *a = endpoint_in(sa, url), *b = endpoint_in(sb, url);
			if (side && a)
				continue;
			for (i = 0; i < ib->neps && strcmp(ib->eps[i], url); i++)
				;
			o = json_add_obj(jb, arr, NULL);
			json_add_str(jb, o, RK_BASE_URL, url);
			json_add_dup(jb, o, RK_REPLICA, jget(b ? b : a, RK_REPLICA));
			add_ab(jb, o, endpoint_side(jb, a), endpoint_side(jb, b));
			json_add_num(jb, o, DK_PASS_TO_FAIL, i < ib->neps ? (double)m->ep_flips[2 * i] : 0);
			json_add_num(jb, o, DK_FAIL_TO_PASS, i < ib->neps ? (double)m->ep_flips[2 * i + 1] : 0);
		}
}

/* One side's "INCOMPLETE: done/planned" into `out` when its summary says the
 * run is incomplete; returns whether it did. */
static int incomplete(const cJSON *summary, const char *side, char *out, size_t cap)
{
	const cJSON *a = jget(summary, SK_ATTEMPTS);
	char note[160];

	if (!cJSON_IsFalse(jget(a, SK_COMPLETE)))
		return 0;
	snprintf(out, cap, "run %s is INCOMPLETE: %.0f/%.0f planned attempts recorded%s", side,
		 jget_num(a, SK_PLANNED_DONE), jget_num(a, SK_PLANNED),
		 report_plan_note(a, note, sizeof(note)));
	return 1;
}

/* diff["incomplete"]: why no gate may pass on these runs, or null. */
static void add_incomplete(struct json_build *jb, cJSON *diff, const cJSON *sa,
			   const cJSON *sb, const struct loadcells *la, const struct loadcells *lb,
			   const struct match *m)
{
	char a[320] = "", b[320] = "", why[700];

	incomplete(sa, "A", a, sizeof(a));
	incomplete(sb, "B", b, sizeof(b));
	if (a[0] || b[0])
		snprintf(why, sizeof(why), "%s%s%s", a, a[0] && b[0] ? "; " : "", b);
	else if (!m->matched && !(la->n && lb->n))
		snprintf(why, sizeof(why), "no attempt of B matched one of A (same case, repeat, seed)%s",
			 !m->only_a && !m->only_b ? ": neither run has a record (empty results.jsonl)"
			 : !m->only_a ? ": A has no record (an empty results.jsonl)"
			 : !m->only_b ? ": B has no record (an empty results.jsonl)" : "");
	else
		why[0] = '\0';
	json_add_item(jb, diff, DK_INCOMPLETE, why[0] ? cJSON_CreateString(why) : cJSON_CreateNull());
}

/* The cells of `lc` that `other` lacks, as "x/c32, y/r0.3" into out;
 * returns how many. */
static size_t cells_lacking(const struct loadcells *lc, const struct loadcells *other, char *out,
			    size_t cap)
{
	char name[320];
	size_t n = 0, len, i;

	out[0] = '\0';
	for (i = 0; i < lc->n; i++) {
		loadcells_name(&lc->c[i], name, sizeof(name));
		if (loadcells_find(other, name))
			continue;
		len = strlen(out);
		if (len + strlen(name) + 8 < cap) {
			if (snprintf(out + len, cap - len, "%s%s", n ? ", " : "", name) < 0)
				out[len] = '\0';
		} else if (len + 6 < cap && !strstr(out, "...")) {
			snprintf(out + len, cap - len, ", ...");
		}
		n++;
	}
	return n;
}

/* diff["missing"]: what A has that B lacks (attempts other than load
 * requests, load cells), or null. */
static void add_missing(struct json_build *jb, cJSON *diff, const struct loadcells *la,
			const struct loadcells *lb, const struct match *m)
{
	char cells[240], what[700] = "";
	size_t nc = cells_lacking(la, lb, cells, sizeof(cells));

	if (m->lacking)
		snprintf(what, sizeof(what), "B lacks %zu of A's attempts (case%s %s%s)", m->lacking,
			 strchr(m->lacking_ids, ',') ? "s" : "", m->lacking_ids, m->lacking_cut ? ", ..." : "");
	if (nc)
		snprintf(what + strlen(what), sizeof(what) - strlen(what), "%sB lacks %zu of A's load cells (%s)",
			 what[0] ? "; " : "", nc, cells);
	json_add_item(jb, diff, DK_MISSING, what[0] ? cJSON_CreateString(what) : cJSON_CreateNull());
}

const enum loadcells_fig diff_figs[DIFF_FIGS] = {LCF_OUTPUT_TPS, LCF_TTFT_P50_MS, LCF_TTFT_P95_MS,
						LCF_TPOT_P95_MS};

/* The server's speculative decoding figure `k` of cell `c`, or NULL. */
static const cJSON *spec_of(const struct loadcells_cell *c, const char *k)
{
	const cJSON *v = c ? jget(c->server, k) : NULL;

	return cJSON_IsNumber(v) ? v : NULL;
}

/* Load cell `c` of either run as the comparison's next cell. */
static void load_cell(struct diff_result *res, const struct loadcells_cell *c)
{
	struct diff_cell *dc = &res->cells[res->ncells++];
	const cJSON *sa, *sb;
	char name[320];
	double va, vb;
	size_t i;

	memset(dc, 0, sizeof(*dc));
	loadcells_name(c, name, sizeof(name));
	dc->a = loadcells_find(&res->a.load, name);
	dc->b = loadcells_find(&res->b.load, name);
	dc->named = c;
	for (i = 0; i < DIFF_FIGS; i++)
		dc->has_ratio[i] = loadcells_median(dc->a, diff_figs[i], &va) &&
				   loadcells_median(dc->b, diff_figs[i], &vb) &&
				   stats_ratio(vb, va, &dc->ratio[i]);
	dc->has_spec_ratio = (sa = spec_of(dc->a, MV_SPEC_ACCEPT_RATE)) && (sb = spec_of(dc->b, MV_SPEC_ACCEPT_RATE)) &&
			     stats_ratio(sb->valuedouble, sa->valuedouble, &dc->spec_ratio);
}

/* The comparison's load cells, when either run has any: A's cells, then B's
 * new ones; diff["load"] stands for them. */
static enum err add_load(struct json_build *jb, cJSON *diff, struct diff_result *res, struct diag *d)
{
	const struct loadcells *la = &res->a.load, *lb = &res->b.load;
	char name[320];
	size_t i;

	if (!la->n && !lb->n)
		return ERR_OK;
	if (!(res->cells = mem_calloc(la->n + lb->n, sizeof(*res->cells))))
		return diag_fail(d, ERR_NOMEM, "out of memory comparing runs");
	json_add_arr(jb, diff, DK_LOAD); /* stands for res->cells (diff_print_json) */
	for (i = 0; i < la->n; i++)
		load_cell(res, &la->c[i]);
	for (i = 0; i < lb->n; i++) {
		loadcells_name(&lb->c[i], name, sizeof(name));
		if (!loadcells_find(la, name))
			load_cell(res, &lb->c[i]);
	}
	return ERR_OK;
}

/* One run's figures of a load cell, or null without the cell. */
static cJSON *load_side(struct json_build *jb, const struct loadcells_cell *c)
{
	static const char *const spec[] = {MV_SPEC_ACCEPT_RATE, MV_SPEC_ACCEPT_LENGTH};
	const struct loadstat_fig *g;
	const cJSON *v;
	char k[64];
	size_t i;
	cJSON *o;

	if (!c)
		return cJSON_CreateNull();
	o = json_new_obj(jb);
	json_add_num(jb, o, LC_ROUNDS_VALID, (double)c->s.rounds_valid);
	json_add_num(jb, o, LC_REQUESTS, (double)c->s.requests);
	json_add_num(jb, o, LC_SUCCESS_RATE, c->s.success_rate);
	for (i = 0; i < DIFF_FIGS; i++) {
		const char *key = loadcells_fig_key(diff_figs[i]);
		g = loadcells_fig(c, diff_figs[i]);
		json_add_item(jb, o, key, g->n ? cJSON_CreateNumber(g->median) : cJSON_CreateNull());
		snprintf(k, sizeof(k), "%s_min", key);
		json_add_item(jb, o, k, g->n ? cJSON_CreateNumber(g->min) : cJSON_CreateNull());
		snprintf(k, sizeof(k), "%s_max", key);
		json_add_item(jb, o, k, g->n ? cJSON_CreateNumber(g->max) : cJSON_CreateNull());
	}
	if (c->has_probe)
		json_add_num(jb, o, LC_CLIENT_PROBE_MS, c->client_probe_ms);
	/* the server's speculative decoding, only where it has some */
	for (i = 0; i < sizeof(spec) / sizeof(spec[0]); i++)
		if ((v = spec_of(c, spec[i])))
			json_add_num(jb, o, spec[i], v->valuedouble);
	return o;
}

static cJSON *finite_or_null(double v)
{
	return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

/* An entry of diff["load"]: {case, level, concurrency or rate, a, b, ratio,
 * gates, verdict} (the header). */
static cJSON *load_item(void *ctx, size_t i)
{
	const struct diff_result *res = ctx;
	const struct diff_cell *c = &res->cells[i];
	const struct diff_judgement *j;
	struct json_build jb;
	char level[64];
	cJSON *o, *ratio, *gates, *it;
	double m;
	size_t k;

	json_build_init(&jb);
	loadcells_level(c->named, level, sizeof(level));
	o = json_new_obj(&jb);
	json_add_str(&jb, o, LC_CASE, c->named->case_id);
	json_add_str(&jb, o, DK_LEVEL, level);
	json_add_num(&jb, o, c->named->open_loop ? LC_RATE : LC_CONCURRENCY, c->named->level_value);
	json_add_item(&jb, o, DK_A, load_side(&jb, c->a));
	json_add_item(&jb, o, DK_B, load_side(&jb, c->b));
	ratio = json_add_obj(&jb, o, DK_RATIO);
	for (k = 0; k < DIFF_FIGS; k++)
		json_add_item(&jb, ratio, loadcells_fig_key(diff_figs[k]),
			      c->has_ratio[k] ? cJSON_CreateNumber(c->ratio[k]) : cJSON_CreateNull());
	if (c->has_spec_ratio)
		json_add_num(&jb, ratio, MV_SPEC_ACCEPT_RATE, c->spec_ratio);
	if (loadcells_machine_ratio(c->a, c->b, &m))
		json_add_num(&jb, ratio, LC_CLIENT_PROBE_MS, m);
	gates = json_add_arr(&jb, o, DK_GATES);
	for (k = 0; k < c->ngates; k++) {
		j = &c->gates[k];
		it = json_add_obj(&jb, gates, NULL);
		json_add_str(&jb, it, DK_GATE, j->gate);
		json_add_str(&jb, it, DK_VERDICT, gate_verdict_name(j->v));
		json_add_item(&jb, it, DK_VALUE, j->have ? finite_or_null(j->value) : cJSON_CreateNull());
		json_add_num(&jb, it, DK_THRESHOLD, j->threshold);
		json_add_item(&jb, it, DK_CI_LOW, finite_or_null(j->lo));
		json_add_item(&jb, it, DK_CI_HIGH, finite_or_null(j->hi));
		json_add_item(&jb, it, DK_MDE, finite_or_null(j->mde));
		json_add_str(&jb, it, DK_ADVICE, j->advice);
	}
	json_add_item(&jb, o, DK_VERDICT, c->judged ? cJSON_CreateString(gate_verdict_name(c->verdict))
						    : cJSON_CreateNull());
	return json_build_end(&jb, &o, "a load cell", NULL) ? NULL : o;
}

static const cJSON *depth_row(const cJSON *s, double depth)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, jget2(s, SK_RECALL, SK_BY_DEPTH))
		if (jget_num(it, SK_DEPTH) == depth)
			return it;
	return NULL;
}

static cJSON *recall_side(struct json_build *jb, const cJSON *row)
{
	return row ? rate3(jb, jget_num(row, SK_FOUND), jget_num(row, SK_TOTAL)) : cJSON_CreateNull();
}

static void add_recall(struct json_build *jb, cJSON *diff, const cJSON *sa, const cJSON *sb)
{
	cJSON *arr = json_add_arr(jb, diff, DK_RECALL_BY_DEPTH), *o;
	const cJSON *it;
	const cJSON *sides[2] = {sa, sb};
	int s;

	for (s = 0; s < 2; s++)
		cJSON_ArrayForEach(it, jget2(sides[s], SK_RECALL, SK_BY_DEPTH)) {
			double dep = jget_num(it, SK_DEPTH);
			const cJSON *have;
			int dup = 0;
			cJSON_ArrayForEach(have, arr)
				dup |= jget_num(have, SK_DEPTH) == dep;
			if (dup)
				continue;
			o = json_add_obj(jb, arr, NULL);
			json_add_num(jb, o, SK_DEPTH, dep);
			add_ab(jb, o, recall_side(jb, depth_row(sa, dep)),
			       recall_side(jb, depth_row(sb, dep)));
		}
}

static void add_latency(struct json_build *jb, cJSON *diff, const cJSON *sa, const cJSON *sb)
{
	static const char *const ps[] = {SK_P50, SK_P90, SK_P99};
	cJSON *lat = json_add_obj(jb, diff, DK_LATENCY), *o, *ratio;
	const cJSON *it;
	size_t i;

	cJSON_ArrayForEach(it, jget(sb, SK_LATENCY)) {
		const cJSON *a = jget2(sa, SK_LATENCY, it->string);
		o = json_add_obj(jb, lat, it->string);
		json_add_item(jb, o, DK_A, a ? cJSON_Duplicate(a, 1) : cJSON_CreateNull());
		json_add_dup(jb, o, DK_B, it);
		ratio = json_add_obj(jb, o, DK_RATIO);
		for (i = 0; i < 3; i++) {
			const cJSON *va = jget(a, ps[i]), *vb = jget(it, ps[i]);
			double r;
			json_add_item(jb, ratio, ps[i],
				      cJSON_IsNumber(va) && cJSON_IsNumber(vb) &&
				      stats_ratio(vb->valuedouble, va->valuedouble, &r)
					      ? cJSON_CreateNumber(r) : cJSON_CreateNull());
		}
	}
}

static void add_sides(struct json_build *jb, cJSON *diff, const cJSON *sa, const cJSON *sb)
{
	cJSON *w = json_add_arr(jb, diff, DK_WARNINGS), *u;

	json_add_dup(jb, diff, DK_A, jget(sa, SK_RUN));
	json_add_dup(jb, diff, DK_B, jget(sb, SK_RUN));
	warn_if_differs(jb, w, sa, sb, SK_SUITE_SHA256, "suite SHA-256");
	warn_if_differs(jb, w, sa, sb, SK_TOKENIZER_SHA256, "tokenizer SHA-256");
	warn_if_differs(jb, w, sa, sb, SK_TEMPLATE_SHA256, "template SHA-256");
	warn_if_differs(jb, w, sa, sb, SK_MODEL, "served model");
	if (jget(sa, SK_ENDPOINTS) && jget(sb, SK_ENDPOINTS)) {
		u = json_add_obj(jb, diff, DK_ENDPOINTS);
		json_add_dup(jb, u, DK_A, jget(sa, SK_ENDPOINTS));
		json_add_dup(jb, u, DK_B, jget(sb, SK_ENDPOINTS));
	}
	u = json_add_obj(jb, diff, DK_USAGE);
	json_add_dup(jb, u, DK_A_MAX_ABS_DELTA, jget2(sa, SK_AUDIT, SK_MAX_ABS_DELTA));
	json_add_dup(jb, u, DK_B_MAX_ABS_DELTA, jget2(sb, SK_AUDIT, SK_MAX_ABS_DELTA));
	json_add_num(jb, u, DK_A_SAMPLES, jget_num(jget(sa, SK_AUDIT), SK_SAMPLES));
	json_add_num(jb, u, DK_B_SAMPLES, jget_num(jget(sb, SK_AUDIT), SK_SAMPLES));
}

void diff_result_release(struct diff_result *res)
{
	size_t i;

	cJSON_Delete(res->diff);
	res->diff = NULL;
	report_sum_release(&res->a);
	report_sum_release(&res->b);
	mem_free(res->cases);
	res->cases = NULL;
	res->ncases = res->capcases = 0;
	for (i = 0; i < res->ncells; i++)
		mem_free(res->cells[i].gates);
	mem_free(res->cells);
	res->cells = NULL;
	res->ncells = 0;
}

/* The comparison of the summaries res->a and res->b, whose trees it takes. */
static enum err compare(const struct index *ia, const struct index *ib, struct match *m,
			struct diff_result *res, struct diag *d)
{
	struct json_build jb;
	const cJSON *sa = res->a.s, *sb = res->b.s;
	cJSON *diff;

	json_build_init(&jb);
	diff = res->diff = json_new_obj(&jb);
	json_add_num(&jb, diff, DK_NEEDLE_DIFF, 1);
	add_sides(&jb, diff, sa, sb);
	match_runs(&jb, ia, ib, res, m);
	add_overall(&jb, diff, sa, sb, m);
	add_advice(&jb, diff, sa, sb, m);
	add_endpoints(&jb, diff, sa, sb, ib, m);
	add_incomplete(&jb, diff, sa, sb, &res->a.load, &res->b.load, m);
	add_missing(&jb, diff, &res->a.load, &res->b.load, m);
	if (add_load(&jb, diff, res, d)) {
		cJSON_Delete(res->diff);
		res->diff = NULL;
		return d->code;
	}
	add_recall(&jb, diff, sa, sb);
	add_latency(&jb, diff, sa, sb);
	json_add_item(&jb, diff, DK_SUMMARY_A, res->a.s);
	json_add_item(&jb, diff, DK_SUMMARY_B, res->b.s);
	res->a.s = res->b.s = NULL;
	json_add_arr(&jb, diff, DK_GATES);
	return json_build_end(&jb, &res->diff, "the comparison", d);
}

enum err diff_runs(struct report_run *a, struct report_run *b,
		   struct diff_result *out, struct diag *d)
{
	struct index ia = {0}, ib = {0};
	struct match m;
	enum err e;

	memset(out, 0, sizeof(*out));
	memset(&m, 0, sizeof(m));
	if ((e = report_summary(a, &out->a, d)) || (e = report_summary(b, &out->b, d)))
		goto out;
	if ((e = index_take(a, &ia, d)) || (e = index_take(b, &ib, d)))
		goto out;
	if (!(m.ep_flips = mem_calloc(2 * ib.neps + 1, sizeof(*m.ep_flips)))) {
		e = diag_fail(d, ERR_NOMEM, "out of memory comparing runs");
		goto out;
	}
	out->reqs_a = &a->load_reqs;
	out->reqs_b = &b->load_reqs;
	e = compare(&ia, &ib, &m, out, d);
out:
	if (e)
		diff_result_release(out);
	index_free(&ia);
	index_free(&ib);
	mem_free(m.ep_flips);
	return e;
}

static cJSON *case_item(void *ctx, size_t i)
{
	return diff_case_json(ctx, i);
}

enum err diff_print_json(const struct diff_result *res, struct buf *out, FILE *f,
			 struct diag *d)
{
	const cJSON *diff = res->diff;
	struct jout_list lists[4] = {
		{jget(diff, DK_CASES), res->ncases, case_item, (void *)res},
		report_cases(&res->a, jget2(diff, DK_SUMMARY_A, SK_CASES)),
		report_cases(&res->b, jget2(diff, DK_SUMMARY_B, SK_CASES)),
		{jget(diff, DK_LOAD), res->ncells, load_item, (void *)res},
	};

	return jout_print(diff, lists, 4, 1, out, f, "the comparison", d);
}

/* ---- Markdown ---- */

#define SIDE_MAX 112 /* "pass/total (rate)" of three md_number texts */

/* "17/20 (0.850)" for a {pass or found, total, rate} object; "-" for none. */
static const char *side_text(const cJSON *r, char out[SIDE_MAX])
{
	const cJSON *p = jget(r, SK_PASS) ? jget(r, SK_PASS) : jget(r, SK_FOUND);
	char t1[32], t2[32], t3[32];

	if (!cJSON_IsObject(r))
		return "-";
	snprintf(out, SIDE_MAX, "%s/%s (%s)", md_number(p, "%.0f", t1, sizeof(t1)),
		 md_number(jget(r, SK_TOTAL), "%.0f", t2, sizeof(t2)),
		 md_number(jget(r, SK_RATE), "%.3f", t3, sizeof(t3)));
	return out;
}

/* The " A | B | change |" cells of a row with "a", "b" and "delta". */
static enum err ab_cells(struct buf *b, const cJSON *row)
{
	char sa[SIDE_MAX], sb[SIDE_MAX], t[32];

	return buf_printf(b, " %s | %s | %s |\n", side_text(jget(row, DK_A), sa),
			  side_text(jget(row, DK_B), sb),
			  md_number(jget(row, DK_DELTA), "%+.3f", t, sizeof(t)));
}

static enum err sec_head(const cJSON *diff, struct buf *b)
{
	const cJSON *w, *o = jget(diff, DK_OVERALL), *ma = jget2(diff, DK_A, SK_MODEL),
		       *mb = jget2(diff, DK_B, SK_MODEL);
	char s1[SIDE_MAX], s2[SIDE_MAX], s3[SIDE_MAX], s4[SIDE_MAX], t[32];
	enum err e = buf_printf(b, "# needle diff\n\nA: %s (model %s)\nB: %s (model %s)\n",
				jget2(diff, DK_A, SK_DIR)->valuestring,
				cJSON_IsString(ma) ? ma->valuestring : "-",
				jget2(diff, DK_B, SK_DIR)->valuestring,
				cJSON_IsString(mb) ? mb->valuestring : "-");

	if (!e && cJSON_IsString(jget(diff, DK_INCOMPLETE)))
		e = buf_printf(b, "\n**INCOMPLETE:** %s; no gate passes.\n",
			       jget(diff, DK_INCOMPLETE)->valuestring);
	if (!e && cJSON_IsString(jget(diff, DK_MISSING)))
		e = buf_printf(b, "\n**MISSING:** %s; no gate passes unless narrowed on purpose.\n",
			       jget(diff, DK_MISSING)->valuestring);
	cJSON_ArrayForEach(w, jget(diff, DK_WARNINGS))
		if (!e)
			e = buf_printf(b, "\n**warning:** %s", w->valuestring);
	if (e)
		return e;
	return buf_printf(b, "\n\n## Pass rate\n\nAll attempts: A %s, B %s.\n"
			  "Matched (same case, repeat, seed): %.0f attempts, A %s, B %s, change %s. "
			  "Only in A: %.0f; only in B: %.0f (%.0f failed).\n",
			  side_text(jget(o, DK_A), s1), side_text(jget(o, DK_B), s2),
			  jget_num(o, DK_MATCHED), side_text(jget(o, DK_MATCHED_A), s3),
			  side_text(jget(o, DK_MATCHED_B), s4),
			  md_number(jget(o, DK_MATCHED_DELTA), "%+.3f", t, sizeof(t)),
			  jget_num(o, DK_ONLY_A), jget_num(o, DK_ONLY_B), jget_num(o, DK_ONLY_B_FAILED));
}

/* Per replica, when either run used several: where the flips were. */
static enum err sec_endpoints(const cJSON *diff, struct buf *b)
{
	const cJSON *arr = jget(diff, DK_BY_ENDPOINT), *r, *flipped = NULL, *failing = NULL;
	double flips = 0, fails = 0;
	int nflipped = 0, nfailing = 0;
	char t[32], d[32], sa[SIDE_MAX], sb[SIDE_MAX];
	enum err e;

	if (!cJSON_IsArray(arr))
		return ERR_OK;
	e = buf_puts(b, "\n## Per endpoint\n\n| replica | base URL | A | B | change | pass -> fail | fail -> pass |\n|---|---|---|---|---|---|---|\n");
	cJSON_ArrayForEach(r, arr) {
		double pf = jget_num(r, DK_PASS_TO_FAIL);
		double bf = jget_num(jget(r, DK_B), SK_TOTAL) - jget_num(jget(r, DK_B), SK_PASS);
		if (pf > 0)
			nflipped++, flipped = r, flips += pf;
		if (cJSON_IsObject(jget(r, DK_B)) && bf > 0)
			nfailing++, failing = r, fails += bf;
		if (!e)
			e = buf_printf(b, "| %s | ", md_number(jget(r, RK_REPLICA), "%.0f", t, sizeof(t)));
		if (!e)
			e = md_cell(b, jget(r, RK_BASE_URL)->valuestring);
		if (!e)
			e = buf_printf(b, " | %s | %s | %s | %.0f | %.0f |\n", side_text(jget(r, DK_A), sa),
				       side_text(jget(r, DK_B), sb), md_number(jget(r, DK_DELTA), "%+.3f", d, sizeof(d)),
				       pf, jget_num(r, DK_FAIL_TO_PASS));
	}
	if (!e && nflipped == 1)
		e = buf_printf(b, "\nAll %.0f pass -> fail flips on replica %s (%s).\n", flips,
			       md_number(jget(flipped, RK_REPLICA), "%.0f", t, sizeof(t)),
			       jget(flipped, RK_BASE_URL)->valuestring);
	if (!e && nfailing == 1)
		e = buf_printf(b, "\nAll %.0f failures of B on replica %s (%s).\n", fails,
			       md_number(jget(failing, RK_REPLICA), "%.0f", t, sizeof(t)),
			       jget(failing, RK_BASE_URL)->valuestring);
	return e;
}

/* `v` as "%.0f" writes it: json_g15's digits for a whole number below
 * 10^15 (the same text, without printf), else printf's. */
static enum err put_int0(struct buf *b, double v)
{
	char t[JSON_G15_MAX];

	if (v > -1e15 && v < 1e15 && v == (double)(long long)v)
		return buf_append(b, t, json_g15(v, t));
	return buf_printf(b, "%.0f", v);
}

static enum err flip_list(const cJSON *diff, struct buf *b, const char *key,
			 const char *title)
{
	const cJSON *arr = strcmp(key, DK_ONLY_B_FAILED) ? jget2(diff, DK_FLIPS, key)
							: jget(diff, key), *it, *f;
	enum err e = buf_printf(b, "\n### %s: %d\n\n", title, cJSON_GetArraySize(arr));

	cJSON_ArrayForEach(it, arr) {
		const cJSON *seed = jget(it, RK_SEED);

		/* "- %s repeat %.0f seed %s" a piece at a time: a diff lists
		 * every flip, tens of thousands of lines when a run broke */
		if (!e && !(e = buf_puts(b, "- ")) && !(e = buf_puts(b, jget(it, RK_CASE)->valuestring)) &&
		    !(e = buf_puts(b, " repeat ")) && !(e = put_int0(b, jget_num(it, RK_REPEAT))) &&
		    !(e = buf_puts(b, " seed ")))
			e = cJSON_IsNumber(seed) ? put_int0(b, seed->valuedouble) : buf_puts(b, "-");
		if (!e && cJSON_IsString(jget(it, RK_BASE_URL)) && !(e = buf_puts(b, " on ")))
			e = buf_puts(b, jget(it, RK_BASE_URL)->valuestring);
		cJSON_ArrayForEach(f, jget(it, RK_FAILURES))
			if (!e)
				e = buf_printf(b, " [%s]", f->valuestring);
		if (!e && cJSON_IsString(jget(it, SK_REASON)))
			e = buf_puts(b, ": ");
		if (!e && cJSON_IsString(jget(it, SK_REASON)))
			e = md_cell(b, jget(it, SK_REASON)->valuestring);
		if (!e)
			e = buf_puts(b, "\n");
	}
	return e;
}

/* The per-case table, its rows made one case at a time. */
static enum err sec_cases(const struct diff_result *res, struct buf *b)
{
	enum err e = buf_puts(b, "\n## Per case (matched attempts)\n\n| case | A | B | change |\n|---|---|---|---|\n");
	size_t i;

	for (i = 0; !e && i < res->ncases; i++) {
		cJSON *c = diff_case_json(res, i);
		e = c ? buf_puts(b, "| ") : ERR_NOMEM;
		if (!e)
			e = md_cell(b, jget(c, SK_ID)->valuestring);
		if (!e)
			e = buf_puts(b, " |");
		if (!e)
			e = ab_cells(b, c);
		cJSON_Delete(c);
	}
	return e;
}

static enum err sec_recall(const cJSON *diff, struct buf *b)
{
	const cJSON *r;
	enum err e;

	if (!cJSON_GetArraySize(jget(diff, DK_RECALL_BY_DEPTH)))
		return ERR_OK;
	e = buf_puts(b, "\n## Recall by depth\n\n| depth | A | B | change |\n|---|---|---|---|\n");
	cJSON_ArrayForEach(r, jget(diff, DK_RECALL_BY_DEPTH)) {
		if (!e)
			e = buf_printf(b, "| %.0f%% |", jget_num(r, SK_DEPTH));
		if (!e)
			e = ab_cells(b, r);
	}
	return e;
}

static enum err sec_usage(const cJSON *diff, struct buf *b)
{
	const cJSON *u = jget(diff, DK_USAGE), *it;
	char t1[32], t2[32], t3[32];
	enum err e = buf_printf(b, "\n## Usage audit\n\nmax |usage_delta|: A %s (%.0f samples), B %s (%.0f samples). Changed deltas on matched attempts: %d.\n",
				md_number(jget(u, DK_A_MAX_ABS_DELTA), "%.0f", t1, sizeof(t1)), jget_num(u, DK_A_SAMPLES),
				md_number(jget(u, DK_B_MAX_ABS_DELTA), "%.0f", t2, sizeof(t2)), jget_num(u, DK_B_SAMPLES),
				cJSON_GetArraySize(jget(diff, DK_USAGE_CHANGES)));

	cJSON_ArrayForEach(it, jget(diff, DK_USAGE_CHANGES))
		if (!e)
			e = buf_printf(b, "- %s repeat %.0f seed %s: %s -> %s\n", jget(it, RK_CASE)->valuestring,
				       jget_num(it, RK_REPEAT), md_number(jget(it, RK_SEED), "%.0f", t3, sizeof(t3)),
				       md_number(jget(it, DK_A), "%+.0f", t1, sizeof(t1)),
				       md_number(jget(it, DK_B), "%+.0f", t2, sizeof(t2)));
	cJSON_ArrayForEach(it, jget(diff, DK_ADVICE))
		if (!e)
			e = buf_printf(b, "\n**What to do:** %s\n", it->valuestring);
	return e;
}

static enum err sec_latency(const cJSON *diff, struct buf *b)
{
	static const char *const ps[] = {SK_P50, SK_P90, SK_P99};
	const cJSON *it;
	char t1[32], t2[32], t3[32];
	size_t i;
	enum err e;

	cJSON_ArrayForEach(it, jget(diff, DK_LATENCY))
		if (jget_num(jget(it, DK_A), SK_N) > 0 || jget_num(jget(it, DK_B), SK_N) > 0)
			break;
	if (!it)
		return buf_puts(b, "\n## Latency\n\n" REPORT_UNTIMED);
	e = buf_puts(b, "\n## Latency (ms, nearest rank; load requests are in their cells)\n\n| timing | n A | n B | pct | A | B | B/A |\n|---|---|---|---|---|---|---|\n");

	cJSON_ArrayForEach(it, jget(diff, DK_LATENCY))
		for (i = 0; !e && i < 3; i++)
			e = buf_printf(b, "| %s | %.0f | %.0f | %s | %s | %s | %s |\n", it->string,
				       jget_num(jget(it, DK_A), SK_N), jget_num(jget(it, DK_B), SK_N), ps[i],
				       md_number(jget2(it, DK_A, ps[i]), "%.1f", t1, sizeof(t1)),
				       md_number(jget2(it, DK_B, ps[i]), "%.1f", t2, sizeof(t2)),
				       md_number(jget2(it, DK_RATIO, ps[i]), "%.3f", t3, sizeof(t3)));
	return e;
}

/* "PASS", "FAIL", "UNDERPOWERED"; "-" when no gate judged. */
static const char *verdict_text(const cJSON *v)
{
	if (!cJSON_IsString(v))
		return "-";
	return !strcmp(v->valuestring, "fail") ? "FAIL"
	       : !strcmp(v->valuestring, "underpowered") ? "UNDERPOWERED" : "PASS";
}

/* "PASS", "FAIL", "UNDERPOWERED" of a load cell; "-" when no gate judged. */
static const char *cell_verdict_text(const struct diff_cell *c)
{
	if (!c->judged)
		return "-";
	return c->verdict == GATE_FAIL ? "FAIL" : c->verdict == GATE_UNDERPOWERED ? "UNDERPOWERED" : "PASS";
}

/* " A | B | B/A |" of figure `i` (diff_figs) of load cell `c`. */
static enum err load_fig(struct buf *b, const struct diff_cell *c, size_t i, const char *fmt)
{
	char t1[32], t2[32], t3[32];
	double va = 0, vb = 0;
	int ha = loadcells_median(c->a, diff_figs[i], &va), hb = loadcells_median(c->b, diff_figs[i], &vb);

	return buf_printf(b, " %s | %s | %s |", md_num(ha, va, fmt, t1, sizeof(t1)),
			  md_num(hb, vb, fmt, t2, sizeof(t2)),
			  md_num(c->has_ratio[i], c->ratio[i], "%.3f", t3, sizeof(t3)));
}

/* The verdict cell: the verdict, then each gate that did not pass with its
 * value, threshold and interval or advice. */
static enum err load_verdict(struct buf *b, const struct diff_cell *c)
{
	const struct diff_judgement *j;
	char t1[32], t2[32], t3[32], t4[32];
	enum err e = buf_printf(b, " %s", cell_verdict_text(c));
	size_t i;

	for (i = 0; !e && i < c->ngates; i++) {
		j = &c->gates[i];
		if (j->v == GATE_PASS)
			continue;
		e = buf_printf(b, "; `%s` %s (threshold %s, 90%% interval %s-%s): ", j->gate,
			       md_num(j->have && isfinite(j->value), j->value, "%.3f", t1, sizeof(t1)),
			       md_num(1, j->threshold, "%g", t2, sizeof(t2)),
			       md_num(isfinite(j->lo), j->lo, "%.3f", t3, sizeof(t3)),
			       md_num(isfinite(j->hi), j->hi, "%.3f", t4, sizeof(t4)));
		if (!e)
			e = md_cell(b, j->advice);
	}
	return e ? e : buf_puts(b, " |\n");
}

/* A load cell's "case | level" (its name's two parts). */
static enum err cell_head(struct buf *b, const struct diff_cell *c)
{
	char level[64];
	enum err e = buf_puts(b, "| ");

	loadcells_level(c->named, level, sizeof(level));
	if (!e)
		e = md_cell(b, c->named->case_id);
	return e ? e : buf_printf(b, " | %s |", level);
}

/* The range over the cells of B's over A's machine probe (loadclient.h),
 * as a line under the load table; nothing when no cell has both. */
static enum err machine_line(const struct diff_result *res, struct buf *b)
{
	double lo = INFINITY, hi = -INFINITY, m;
	size_t i;

	for (i = 0; i < res->ncells; i++)
		if (loadcells_machine_ratio(res->cells[i].a, res->cells[i].b, &m))
			lo = fmin(lo, m), hi = fmax(hi, m);
	if (!isfinite(lo))
		return ERR_OK;
	return buf_printf(b, "\nThe measuring machine, B/A of the CPU time of a fixed piece of work timed before "
			  "every round (median over each cell's case): %.3f to %.3f over the cells. Above %.2f (B's slower) a cell "
			  "that fails, below %.2f (B's faster) one that passes is underpowered unless its verdict holds "
			  "with B corrected for the machine.\n", lo, hi, LOADCLIENT_PROBE_TOL, 1 / LOADCLIENT_PROBE_TOL);
}

/* Every load cell of either run, side by side, with its verdict. */
static enum err sec_load(const struct diff_result *res, struct buf *b)
{
	const struct diff_cell *c;
	char t1[32], t2[32];
	size_t i;
	enum err e;

	if (!res->ncells)
		return ERR_OK;
	e = buf_puts(b, "\n## Load cells (A | B | B/A; medians over valid rounds)\n\n"
		     "| case | level | valid rounds A/B | output tok/s A | B | B/A | TTFT P50 ms A | B | B/A "
		     "| TTFT P95 ms A | B | B/A | TPOT P95 ms A | B | B/A | success A | B | verdict |\n"
		     "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (i = 0; !e && i < res->ncells; i++) {
		c = &res->cells[i];
		e = cell_head(b, c);
		if (!e)
			e = buf_printf(b, " %s/%s |",
				       md_num(c->a != NULL, c->a ? (double)c->a->s.rounds_valid : 0, "%.0f", t1, sizeof(t1)),
				       md_num(c->b != NULL, c->b ? (double)c->b->s.rounds_valid : 0, "%.0f", t2, sizeof(t2)));
		if (!e)
			e = load_fig(b, c, 0, "%.1f");
		if (!e)
			e = load_fig(b, c, 1, "%.1f");
		if (!e)
			e = load_fig(b, c, 2, "%.1f");
		if (!e)
			e = load_fig(b, c, 3, "%.2f");
		if (!e)
			e = buf_printf(b, " %s | %s |",
				       md_num(c->a != NULL, c->a ? c->a->s.success_rate : 0, "%.3f", t1, sizeof(t1)),
				       md_num(c->b != NULL, c->b ? c->b->s.success_rate : 0, "%.3f", t2, sizeof(t2)));
		if (!e)
			e = load_verdict(b, c);
	}
	return e ? e : machine_line(res, b);
}

/* `v` (a server's figure, or NULL) by `fmt`, else "-". */
static const char *spec_text(const cJSON *v, const char *fmt, char *tmp, size_t cap)
{
	return md_num(v != NULL, v ? v->valuedouble : 0, fmt, tmp, cap);
}

/* The servers' speculative decoding per load cell, where either run has
 * it (--metrics). */
static enum err sec_spec(const struct diff_result *res, struct buf *b)
{
	const struct diff_cell *c;
	char t[5][32];
	size_t i;
	enum err e;

	for (i = 0; i < res->ncells; i++)
		if (spec_of(res->cells[i].a, MV_SPEC_ACCEPT_RATE) || spec_of(res->cells[i].b, MV_SPEC_ACCEPT_RATE))
			break;
	if (i == res->ncells)
		return ERR_OK;
	e = buf_puts(b, "\n## Speculative decoding (the servers' counters over the counted rounds)\n\n"
		     "| case | level | acceptance A | B | B/A | tokens per step A | B |\n|---|---|---|---|---|---|---|\n");
	for (i = 0; !e && i < res->ncells; i++) {
		c = &res->cells[i];
		if (!spec_of(c->a, MV_SPEC_ACCEPT_RATE) && !spec_of(c->b, MV_SPEC_ACCEPT_RATE))
			continue;
		e = cell_head(b, c);
		if (!e)
			e = buf_printf(b, " %s | %s | %s | %s | %s |\n",
				       spec_text(spec_of(c->a, MV_SPEC_ACCEPT_RATE), "%.3f", t[0], 32),
				       spec_text(spec_of(c->b, MV_SPEC_ACCEPT_RATE), "%.3f", t[1], 32),
				       md_num(c->has_spec_ratio, c->spec_ratio, "%.3f", t[2], 32),
				       spec_text(spec_of(c->a, MV_SPEC_ACCEPT_LENGTH), "%.2f", t[3], 32),
				       spec_text(spec_of(c->b, MV_SPEC_ACCEPT_LENGTH), "%.2f", t[4], 32));
	}
	return e;
}

/* The load sections (typed, not md_sections), made inert as md_render
 * makes its own. */
static enum err load_markdown(const struct diff_result *res, struct buf *out, struct diag *d)
{
	size_t from = out->len;
	enum err e = sec_load(res, out);

	if (!e)
		e = sec_spec(res, out);
	if (!e)
		e = ctl_escape_from(out, from);
	if (e == ERR_NOMEM)
		return diag_fail(d, e, "out of memory rendering the diff");
	return e ? diag_fail(d, e, "cannot render the diff: %s", err_name(e)) : ERR_OK;
}

static enum err sec_gates(const cJSON *diff, struct buf *b)
{
	const cJSON *g;
	enum err e = ERR_OK;

	if (!cJSON_GetArraySize(jget(diff, DK_GATES)))
		return ERR_OK;
	e = buf_puts(b, "\n## Gates\n\n");
	cJSON_ArrayForEach(g, jget(diff, DK_GATES))
		if (!e)
			e = buf_printf(b, "- %s `%s`: %s\n", verdict_text(jget(g, DK_VERDICT)),
				       jget(g, DK_GATE)->valuestring, jget(g, DK_DETAIL)->valuestring);
	return e;
}

static enum err sec_pass_to_fail(const cJSON *diff, struct buf *b)
{
	return flip_list(diff, b, DK_PASS_TO_FAIL, "pass -> fail");
}

static enum err sec_fail_to_pass(const cJSON *diff, struct buf *b)
{
	return flip_list(diff, b, DK_FAIL_TO_PASS, "fail -> pass");
}

static enum err sec_only_b_failed(const cJSON *diff, struct buf *b)
{
	return flip_list(diff, b, DK_ONLY_B_FAILED, "failed, only in B");
}

enum err diff_markdown(const struct diff_result *res, struct buf *out, struct diag *d)
{
	static const md_section head[] = {sec_head, sec_endpoints, sec_pass_to_fail,
					  sec_fail_to_pass, sec_only_b_failed};
	static const md_section tail[] = {sec_recall, sec_usage, sec_latency};
	static const md_section last[] = {sec_gates};
	enum err e = md_render(res->diff, head, sizeof(head) / sizeof(head[0]), "diff", out, d);
	size_t rows = out->len;

	/* the rows md_render does not make are made inert here */
	if (!e && ((e = sec_cases(res, out)) || (e = ctl_escape_from(out, rows))))
		return diag_fail(d, e, "cannot render the diff: %s",
				 e == ERR_NOMEM ? "out of memory" : err_name(e));
	if (!e)
		e = md_render(res->diff, tail, sizeof(tail) / sizeof(tail[0]), "diff", out, d);
	if (!e)
		e = load_markdown(res, out, d);
	return e ? e : md_render(res->diff, last, sizeof(last) / sizeof(last[0]), "diff", out, d);
}
