/* merge — see merge.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/jget.h"
#include "base/json.h"
#include "base/keyset.h"
#include "base/mem.h"
#include "merge.h"
#include "mergeout.h"
#include "mergeread.h"
#include "run/record.h"
#include "run/results.h"
#include "run/shard.h"

#define MERGE_ATTEMPTS_MAX 9007199254740991L /* 2^53 - 1 */

/* Where an attempt key was first recorded. */
struct loc {
	size_t shard;        /* position in dirs */
	off_t off;           /* of its line in that shard's journal */
	size_t len;
};

/* A duplicate line left out of the merged journal. */
struct span {
	off_t off;
	size_t len;
};

/* One shard folder as read. */
struct part {
	struct mergeread rd;
	size_t kept;         /* records not dropped as duplicates */
	size_t pass;         /* of them, verdict "pass" */
	cJSON *load;         /* owned array of its load records */
	struct span *drop;   /* owned, in file order */
	size_t ndrop, capdrop;
	struct keyset plan;  /* its manifest's planned keys (has_plan) */
	int has_plan;
	size_t nplan;
	size_t shared;       /* planned keys an earlier shard planned too */
	size_t shared_with;  /* that shard's position */
	size_t foreign;      /* records whose key its plan does not hold */
	char foreign_id[RECORD_KEY_MAX];
};

struct merge {
	const char *const *dirs;
	size_t n;
	struct part *sh;
	size_t cur;          /* the shard being read */
	long count;
	struct keyset keys;  /* attempt key -> owned struct loc */
	struct keyset planned; /* planned key -> 1 + position of the shard planning it */
	struct buf a, b;     /* a first record read again, to compare */
	struct buf *problems;
	size_t nproblems;
	struct buf differ;   /* attempts recorded differently (listed last) */
	size_t ndiffer;
	struct merge_stats *st;
};

/* The load shards' checks (mergeload.h) over every shard's load records. */
static enum err check_load(struct merge *m, struct diag *d)
{
	const cJSON **recs = mem_calloc(m->n, sizeof(*recs));
	size_t i;
	enum err e;

	if (!recs)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	for (i = 0; i < m->n; i++)
		recs[i] = m->sh[i].load;
	e = mergeload_check(recs, m->dirs, m->n, &m->st->load, m->problems, &m->nproblems, d);
	mem_free(recs);
	return e;
}

static void problem(struct merge *m, const char *fmt, const char *a, const char *b,
		    const char *c)
{
	m->nproblems++;
	buf_printf(m->problems, fmt, a, b, c);
	buf_putc(m->problems, '\n');
}

/* The string at a path of the manifest, "" when absent. */
static const char *fact(const cJSON *man, const char *a, const char *b, const char *c)
{
	const cJSON *v = jget2(man, a, b);

	if (c)
		v = jget(v, c);
	return cJSON_IsString(v) ? v->valuestring : "";
}

/* What must be the same in every shard. */
static void check_same(struct merge *m, size_t i)
{
	static const char *const facts[][4] = {
		{MK_SUITE, MK_SHA256, NULL, "suite SHA-256"},
		{MK_TOKENIZER, MK_SHA256, NULL, "tokenizer SHA-256"},
		{MK_TEMPLATE, MK_SHA256, NULL, "template SHA-256"},
		{MK_ENDPOINT, EP_BASE_URL, NULL, "endpoint"},
		{MK_ENDPOINT, EP_SERVED_MODEL, NULL, "served model"},
		{MK_ENDPOINT, EP_SERVER, EP_VERSION, "server version"},
	};
	const cJSON *a = m->sh[0].rd.manifest, *b = m->sh[i].rd.manifest;
	size_t k;
	char what[256];

	for (k = 0; k < sizeof(facts) / sizeof(facts[0]); k++) {
		const char *x = fact(a, facts[k][0], facts[k][1], facts[k][2]);
		const char *y = fact(b, facts[k][0], facts[k][1], facts[k][2]);
		if (strcmp(x, y)) {
			snprintf(what, sizeof(what), "%s '%s' is not '%s' as in '%s'", facts[k][3], y, x,
				 m->dirs[0]);
			problem(m, "'%s' is a foreign shard: %s%s", m->dirs[i], what, "");
		}
	}
	/* the split depends on these: shards of other options hold other attempts */
	for (k = 0; k < 2; k++) {
		const char *opt = k ? MK_REPEAT : MK_CASE;
		const cJSON *x = jget2(a, MK_OPTIONS, opt), *y = jget2(b, MK_OPTIONS, opt);
		if ((x || y) && !(x && y && cJSON_Compare(x, y, 1)))
			problem(m, "'%s' is a foreign shard: option '--%s' is not as in '%s'",
				m->dirs[i], opt, m->dirs[0]);
	}
}

/* The shard's index and planned attempts; 0 when its manifest has none. */
static int shard_of(const struct merge *m, size_t i, long *index, long *count,
		    size_t *planned)
{
	const cJSON *sh = jget(m->sh[i].rd.manifest, MK_SHARD);
	long n = 0;

	if (!jget_whole(sh, MK_INDEX, -SHARD_MAX, SHARD_MAX, index) ||
	    !jget_whole(sh, MK_COUNT, 1, SHARD_MAX, count))
		return 0;
	jget_whole(sh, MK_ATTEMPTS, 0, MERGE_ATTEMPTS_MAX, &n);
	*planned = (size_t)n;
	return 1;
}

/* Every index 0..N-1 once, one count. */
static enum err check_indexes(struct merge *m, struct diag *d)
{
	char *seen;
	long index, count, k;
	size_t i, planned;
	char num[64], num2[64];

	for (i = 0; i < m->n; i++) {
		if (!shard_of(m, i, &index, &count, &planned))
			problem(m, "'%s' is not a shard: its manifest has no \"shard\" index and count%s%s",
				m->dirs[i], "", "");
		else if (!m->count)
			m->count = count;
		else if (count != m->count) {
			snprintf(num, sizeof(num), "%ld", count);
			snprintf(num2, sizeof(num2), "%ld", m->count);
			problem(m, "'%s' is a foreign shard: one of %s shards, not %s", m->dirs[i], num, num2);
		}
	}
	if (!m->count)
		return ERR_OK;
	if (!(seen = mem_calloc((size_t)m->count, 1)))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	for (i = 0; i < m->n; i++) {
		if (!shard_of(m, i, &index, &count, &planned) || count != m->count)
			continue;
		snprintf(num, sizeof(num), "%ld", index);
		if (index < 0 || index >= m->count)
			problem(m, "'%s': shard index %s is out of range%s", m->dirs[i], num, "");
		else if (seen[index]++)
			problem(m, "shard %s is given twice (again in '%s')%s", num, m->dirs[i], "");
	}
	for (k = 0; k < m->count; k++)
		if (!seen[k]) {
			snprintf(num, sizeof(num), "%ld", k);
			snprintf(num2, sizeof(num2), "%ld", m->count);
			problem(m, "shard %s of %s is missing", num, num2, "");
		}
	mem_free(seen);
	return ERR_OK;
}

/* A shard is complete when its run ended and holds every planned key. */
static void check_complete(struct merge *m, size_t i, int allow_partial)
{
	long index, count;
	size_t planned, have = m->sh[i].rd.records;
	char msg[128];

	if (!shard_of(m, i, &index, &count, &planned))
		return;
	if (have >= planned && cJSON_IsString(jget(m->sh[i].rd.manifest, MK_ENDED_AT)))
		return;
	snprintf(msg, sizeof(msg), "%zu of %zu attempts recorded%s", have, planned,
		 cJSON_IsString(jget(m->sh[i].rd.manifest, MK_ENDED_AT)) ? "" : ", never ended");
	if (allow_partial) {
		m->st->incomplete++;
		return;
	}
	problem(m, "'%s' is incomplete: %s (resume it with 'needle run ... --resume --out %s')",
		m->dirs[i], msg, m->dirs[i]);
}

/* ---- reading ---- */

/* Whether record `rec` is the one first recorded at `first`: the same bytes,
 * or failing that the same JSON. */
static enum err same_record(struct merge *m, const struct loc *first,
			    const struct mergeread_rec *rec, int *same, struct diag *d)
{
	cJSON *x = NULL, *y = NULL;
	enum err e = mergeread_pread(&m->sh[first->shard].rd, first->off, first->len, &m->a, d);

	*same = 0;
	if (e)
		return e;
	if (m->a.len == rec->len && !memcmp(m->a.data, rec->line, rec->len)) {
		*same = 1;
		return ERR_OK;
	}
	buf_reset(&m->b);
	if (buf_append(&m->b, rec->line, rec->len))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	x = cJSON_ParseWithLength(m->a.data, m->a.len);
	y = cJSON_ParseWithLength(m->b.data, m->b.len);
	if (!x || !y)
		e = diag_fail(d, ERR_NOMEM, "out of memory");
	*same = !e && cJSON_Compare(x, y, 1);
	cJSON_Delete(x);
	cJSON_Delete(y);
	return e;
}

/* A key recorded again: dropped when identical, else a problem (listed after
 * the others, as it means something only for shards that belong together). */
static enum err again(struct merge *m, const struct loc *first, struct mergeread_rec *rec,
		      struct diag *d)
{
	struct part *s = &m->sh[m->cur];
	struct span *p;
	int same;
	enum err e = same_record(m, first, rec, &same, d);
	char id[RECORD_KEY_MAX];

	if (e)
		return e;
	if (same) {
		if (s->ndrop == s->capdrop) {
			if (!(p = mem_grow(s->drop, &s->capdrop, sizeof(*p), 16)))
				return diag_fail(d, ERR_NOMEM, "out of memory");
			s->drop = p;
		}
		s->drop[s->ndrop++] = (struct span){rec->off, rec->len};
		m->st->duplicates++;
		return ERR_OK;
	}
	snprintf(id, sizeof(id), "%s", rec->key);
	id[strcspn(id, "\x1f")] = '\0';
	m->ndiffer++;
	buf_printf(&m->differ, "attempt of case '%s' is recorded differently in '%s' and '%s'\n", id,
		   m->dirs[first->shard], m->dirs[m->cur]);
	return ERR_OK;
}

/* Each record of the shard being read: its key kept with where it is. */
static enum err on_record(void *ctx, struct mergeread_rec *rec, struct diag *d)
{
	struct merge *m = ctx;
	struct part *s = &m->sh[m->cur];
	struct loc *first = keyset_get(&m->keys, rec->key);
	enum err e;

	if (rec->load) {
		cJSON_AddItemToArray(s->load, rec->load);
		rec->load = NULL;
	}
	if (s->has_plan && !keyset_has(&s->plan, rec->key) && !s->foreign++) {
		snprintf(s->foreign_id, sizeof(s->foreign_id), "%s", rec->key);
		s->foreign_id[strcspn(s->foreign_id, "\x1f")] = '\0';
	}
	if (first)
		return again(m, first, rec, d);
	if (!(first = mem_alloc(sizeof(*first))))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	*first = (struct loc){m->cur, rec->off, rec->len};
	if ((e = keyset_put(&m->keys, rec->key, first, d))) {
		mem_free(first);
		return e;
	}
	s->kept++;
	s->pass += (size_t)rec->passed;
	return ERR_OK;
}

/* The shard's planned keys, and how many of them an earlier shard plans. */
static enum err read_plan(struct merge *m, struct part *s, struct diag *d)
{
	const cJSON *k, *keys = jget2(s->rd.manifest, MK_PLANNED, MK_KEYS);
	size_t *at;
	int added;
	enum err e = ERR_OK;

	keyset_init(&s->plan);
	if (!(s->has_plan = cJSON_IsArray(keys)))
		return ERR_OK;
	cJSON_ArrayForEach(k, keys) {
		if (!cJSON_IsString(k))
			continue;
		if ((e = keyset_add(&s->plan, k->valuestring, &added, d)))
			return e;
		s->nplan += (size_t)added;
		if ((at = keyset_get(&m->planned, k->valuestring))) {
			if (!s->shared++)
				s->shared_with = *at;
			continue;
		}
		if (!(at = mem_alloc(sizeof(*at))))
			return diag_fail(d, ERR_NOMEM, "out of memory");
		*at = m->cur;
		if ((e = keyset_put(&m->planned, k->valuestring, at, d))) {
			mem_free(at);
			return e;
		}
	}
	return e;
}

/* Opens and reads every shard folder, in the order given. */
static enum err read_all(struct merge *m, struct diag *d)
{
	enum err e = ERR_OK;

	if (!(m->sh = mem_calloc(m->n, sizeof(*m->sh))))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	for (m->cur = 0; m->cur < m->n; m->cur++)
		m->sh[m->cur].rd.fd = -1;
	for (m->cur = 0; !e && m->cur < m->n; m->cur++) {
		struct part *s = &m->sh[m->cur];
		if (!(s->load = cJSON_CreateArray()))
			return diag_fail(d, ERR_NOMEM, "out of memory");
		e = mergeread_open(&s->rd, m->dirs[m->cur], d);
		if (!e)
			e = read_plan(m, s, d);
		if (!e)
			e = mergeread_scan(&s->rd, on_record, m, d);
		if (!e && !s->rd.manifest)
			e = diag_fail(d, ERR_INPUT, "'%s' has no manifest.json: not a run folder",
				      m->dirs[m->cur]);
	}
	return e;
}

/* ---- writing ---- */

/* The index of shard folder `i` (checked before). */
static long index_of(const struct merge *m, size_t i)
{
	long index = 0, count;
	size_t planned;

	shard_of(m, i, &index, &count, &planned);
	return index;
}

/* The attempts shard folder `i` planned. */
static size_t planned_of(const struct merge *m, size_t i)
{
	long index, count;
	size_t planned = 0;

	shard_of(m, i, &index, &count, &planned);
	return planned;
}

/* The earliest and latest of a string timestamp over the shards. */
static const char *bound(const struct merge *m, const char *key, int latest)
{
	const char *best = NULL;
	size_t i;

	for (i = 0; i < m->n; i++) {
		const cJSON *v = jget(m->sh[i].rd.manifest, key);
		if (cJSON_IsString(v) && (!best || (strcmp(v->valuestring, best) > 0) == latest))
			best = v->valuestring;
	}
	return best;
}

/* One entry of "shards" for shard folder `i`. */
static cJSON *shard_entry(struct json_build *jb, struct merge *m, size_t i)
{
	const cJSON *man = m->sh[i].rd.manifest, *lag = jget(man, MK_START_LAG_MS);
	cJSON *o = json_new_obj(jb);

	json_add_str(jb, o, "dir", m->dirs[i]);
	json_add_int(jb, o, MK_INDEX, index_of(m, i));
	json_add_dup(jb, o, MK_FROM, jget2(man, MK_SHARD, MK_FROM));
	json_add_dup(jb, o, MK_STARTED_AT, jget(man, MK_STARTED_AT));
	if (jget(man, MK_ENDED_AT))
		json_add_dup(jb, o, MK_ENDED_AT, jget(man, MK_ENDED_AT));
	else /* cut before its end, merged with --allow-partial */
		json_add_null(jb, o, MK_ENDED_AT);
	if (cJSON_IsNumber(lag)) {
		json_add_num(jb, o, MK_START_LAG_MS, lag->valuedouble);
		if (lag->valuedouble > m->st->max_lag_ms)
			m->st->max_lag_ms = lag->valuedouble;
	} else {
		json_add_null(jb, o, MK_START_LAG_MS);
	}
	json_add_int(jb, o, MK_ATTEMPTS, (long long)planned_of(m, i));
	json_add_int(jb, o, "records", (long long)m->sh[i].kept);
	return o;
}

/* The merged run's plan: every shard's planned keys, in index order, once
 * each (record_manifest_plan); older than RECORD_PLAN_VERSION when any
 * shard's is, and none when a shard has none (its part is unknown). */
static enum err union_plan(struct merge *m, cJSON *man, struct diag *d)
{
	struct json_build jb;
	struct keyset seen;
	cJSON *keys;
	const cJSON *k;
	size_t i;
	long want;
	int old = 0, added;
	enum err e = ERR_OK;

	for (i = 0; i < m->n; i++)
		if (!cJSON_IsArray(jget2(m->sh[i].rd.manifest, MK_PLANNED, MK_KEYS))) {
			cJSON_DeleteItemFromObjectCaseSensitive(man, MK_PLANNED);
			return ERR_OK;
		}
	keyset_init(&seen);
	json_build_init(&jb);
	keys = json_new_arr(&jb);
	for (want = 0; want < m->count; want++)
		for (i = 0; i < m->n; i++) {
			const cJSON *plan = jget(m->sh[i].rd.manifest, MK_PLANNED);
			if (index_of(m, i) != want)
				continue;
			old |= jget_num(plan, MK_VERSION) < RECORD_PLAN_VERSION;
			cJSON_ArrayForEach(k, jget(plan, MK_KEYS))
				if (cJSON_IsString(k) && !e &&
				    !(e = keyset_add(&seen, k->valuestring, &added, d)) && added)
					json_add_str(&jb, keys, NULL, k->valuestring);
		}
	keyset_release(&seen);
	if (e) {
		cJSON_Delete(keys);
		return e;
	}
	if (json_build_end(&jb, &keys, "the merged plan", d) || record_manifest_plan(man, keys, d))
		return d->code;
	if (old)
		cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(man, MK_PLANNED),
						       MK_VERSION);
	return ERR_OK;
}

/* The merged manifest: the first shard's, with the merge's facts. */
static enum err merged_manifest(struct merge *m, size_t pass, size_t planned,
				cJSON **out, struct diag *d)
{
	struct json_build jb;
	cJSON *man = cJSON_Duplicate(m->sh[0].rd.manifest, 1), *o, *arr;
	size_t i;

	json_build_init(&jb);
	if (!man)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	cJSON_DeleteItemFromObjectCaseSensitive(man, MK_SHARD);
	cJSON_DeleteItemFromObjectCaseSensitive(man, MK_ATTEMPTS);
	cJSON_DeleteItemFromObjectCaseSensitive(man, MK_START_LAG_MS);
	cJSON_DeleteItemFromObjectCaseSensitive(man, MK_STARTED_AT);
	cJSON_DeleteItemFromObjectCaseSensitive(man, MK_ENDED_AT);
	json_add_str(&jb, man, MK_STARTED_AT, bound(m, MK_STARTED_AT, 0));
	json_add_str(&jb, man, MK_ENDED_AT, bound(m, MK_ENDED_AT, 1));
	o = json_add_obj(&jb, man, MK_SHARD);
	json_add_bool(&jb, o, MK_MERGED, 1);
	json_add_int(&jb, o, MK_COUNT, m->count);
	json_add_dup(&jb, o, MK_RULE, jget2(m->sh[0].rd.manifest, MK_SHARD, MK_RULE));
	arr = json_add_arr(&jb, man, "shards");
	for (i = 0; i < m->n; i++)
		json_add_item(&jb, arr, NULL, shard_entry(&jb, m, i));
	o = json_add_obj(&jb, man, MK_ATTEMPTS);
	json_add_int(&jb, o, MK_PLANNED, (long long)planned);
	json_add_int(&jb, o, MK_RUN, (long long)m->st->records);
	json_add_int(&jb, o, MK_PASS, (long long)pass);
	json_add_int(&jb, o, MK_FAIL, (long long)(m->st->records - pass));
	json_add_int(&jb, o, MK_RECORDED_BEFORE, 0);
	o = json_add_obj(&jb, man, MK_MERGE);
	json_add_int(&jb, o, "duplicates_dropped", (long long)m->st->duplicates);
	json_add_int(&jb, o, "incomplete_shards", (long long)m->st->incomplete);
	json_add_str(&jb, o, "concurrency",
		     "per shard; across shards the sum of the shards' concurrency is a bound, not a measurement");
	mergeload_note(&jb, o, &m->st->load);
	*out = man;
	if (json_build_end(&jb, out, "the merged manifest", d))
		return d->code;
	return union_plan(m, man, d);
}

/* Copies shard `s`'s journal but its dropped duplicates. */
static enum err copy_records(struct mergeout *w, const struct part *s, struct diag *d)
{
	off_t at = 0;
	size_t k;
	enum err e = ERR_OK;

	for (k = 0; !e && k < s->ndrop; k++) {
		e = mergeout_span(w, &s->rd, at, s->drop[k].off, d);
		at = s->drop[k].off + (off_t)s->drop[k].len;
	}
	return e ? e : mergeout_span(w, &s->rd, at, s->rd.end, d);
}

/* Writes the records of every shard, in index order, raw files first. */
static enum err write_out(struct merge *m, const char *out, struct diag *d)
{
	struct mergeout w;
	cJSON *man = NULL;
	size_t i, pass = 0, planned = 0;
	long want;
	enum err e = mergeout_open(&w, out, d);

	for (want = 0; !e && want < m->count; want++)
		for (i = 0; !e && i < m->n; i++) {
			if (index_of(m, i) != want)
				continue;
			planned += planned_of(m, i);
			if (!(e = mergeout_raw(&w, m->dirs[i], d)))
				e = copy_records(&w, &m->sh[i], d);
			m->st->records += m->sh[i].kept;
			pass += m->sh[i].pass;
		}
	if (!e)
		e = merged_manifest(m, pass, planned, &man, d);
	if (!e)
		e = mergeout_commit(&w, man, d);
	cJSON_Delete(man);
	mergeout_close(&w);
	return e;
}

/* Member `k` of `o` when it is a string, else "". */
static const char *str_at(const cJSON *o, const char *k)
{
	const cJSON *v = jget(o, k);

	return cJSON_IsString(v) ? v->valuestring : "";
}

/* Each shard its own: its own run (run id), its own part of the plan, its
 * records in it; and together the whole split (shard.h) every shard
 * computed alike: so a copy of a shard relabelled as another is refused. */
static void check_own(struct merge *m)
{
	const cJSON *first = jget2(m->sh[0].rd.manifest, MK_SHARD, MK_SPLIT), *sp;
	size_t i, j, mine = 0, nsplit = 0;
	long index, count;
	size_t planned;
	char a[64], b[64];

	for (i = 0; i < m->n; i++) {
		const char *id = str_at(m->sh[i].rd.manifest, MK_RUN_ID);
		struct part *s = &m->sh[i];
		for (j = 0; *id && j < i; j++)
			if (!strcmp(id, str_at(m->sh[j].rd.manifest, MK_RUN_ID)))
				problem(m, "'%s' has the run id of '%s' (%s): a copy of one shard, not another",
					m->dirs[i], m->dirs[j], id);
		if (s->shared) {
			snprintf(a, sizeof(a), "%zu", s->shared);
			problem(m, "'%s' plans %s attempts that '%s' plans too: a copy of one shard, not another",
				m->dirs[i], a, m->dirs[s->shared_with]);
		}
		if (s->foreign) {
			snprintf(a, sizeof(a), "%zu", s->foreign);
			problem(m, "'%s' holds %s records its own plan does not (the first of case '%s'): not this shard's attempts",
				m->dirs[i], a, s->foreign_id);
		}
		if (shard_of(m, i, &index, &count, &planned) && s->has_plan && s->nplan != planned) {
			snprintf(a, sizeof(a), "%zu", s->nplan);
			snprintf(b, sizeof(b), "%zu", planned);
			problem(m, "'%s' plans %s attempts but says it has %s", m->dirs[i], a, b);
		}
		sp = jget2(s->rd.manifest, MK_SHARD, MK_SPLIT);
		nsplit += sp != NULL;
		if (sp && (!first || jget_num(sp, MK_ATTEMPTS) != jget_num(first, MK_ATTEMPTS) ||
			   strcmp(str_at(sp, MK_SHA256), str_at(first, MK_SHA256))))
			problem(m, "'%s' is a foreign shard: its split of the suite is not that of '%s'%s",
				m->dirs[i], m->dirs[0], "");
		else if (sp && jget_num(sp, MK_MINE) > (double)s->nplan)
			problem(m, "'%s' plans fewer attempts than its part of the split%s%s", m->dirs[i], "", "");
		mine += sp ? (size_t)jget_num(sp, MK_MINE) : 0;
	}
	if (nsplit && nsplit < m->n)
		problem(m, "some shards record their split of the suite and some do not: shards of different needle versions%s%s%s",
			"", "", "");
	else if (nsplit == m->n && first && m->count == (long)m->n &&
		 (double)mine != jget_num(first, MK_ATTEMPTS)) {
		snprintf(a, sizeof(a), "%zu", mine);
		snprintf(b, sizeof(b), "%.0f", jget_num(first, MK_ATTEMPTS));
		problem(m, "the shards' parts of the split add up to %s attempts, not the suite's %s%s", a, b, "");
	}
}

static enum err check(struct merge *m, int allow_partial, struct diag *d)
{
	size_t i;
	enum err e = check_indexes(m, d);

	for (i = 1; !e && i < m->n; i++)
		check_same(m, i);
	if (!e)
		check_own(m);
	for (i = 0; !e && i < m->n; i++)
		check_complete(m, i, allow_partial);
	if (!e)
		e = check_load(m, d);
	if (!e && !m->nproblems && m->ndiffer) {
		m->nproblems = m->ndiffer;
		buf_append(m->problems, m->differ.data, m->differ.len);
	}
	if (!e && m->nproblems) {
		size_t first = strcspn(m->problems->data, "\n");
		e = diag_fail(d, ERR_INPUT, "%.*s%s", (int)first, m->problems->data,
			      m->nproblems > 1 ? " (and more: see the list)" : "");
	}
	return e;
}

static void merge_release(struct merge *m)
{
	size_t i;

	for (i = 0; i < m->keys.cap; i++)
		mem_free(m->keys.val[i]);
	keyset_release(&m->keys);
	for (i = 0; i < m->planned.cap; i++)
		mem_free(m->planned.val[i]);
	keyset_release(&m->planned);
	for (i = 0; m->sh && i < m->n; i++) {
		keyset_release(&m->sh[i].plan);
		mergeread_close(&m->sh[i].rd);
		cJSON_Delete(m->sh[i].load);
		mem_free(m->sh[i].drop);
	}
	mem_free(m->sh);
	buf_release(&m->a);
	buf_release(&m->b);
	buf_release(&m->differ);
}

enum err merge_shards(const char *out, const char *const *dirs, size_t n,
		      const struct merge_opts *o, struct merge_stats *st,
		      struct buf *problems, struct diag *d)
{
	struct merge m;
	enum err e;

	memset(&m, 0, sizeof(m));
	memset(st, 0, sizeof(*st));
	st->max_lag_ms = -1;
	st->load.tolerance_ms = o->max_skew_ms;
	m.dirs = dirs, m.n = n, m.problems = problems, m.st = st;
	keyset_init(&m.keys);
	keyset_init(&m.planned);
	buf_init(&m.a, RESULTS_LINE_MAX);
	buf_init(&m.b, RESULTS_LINE_MAX);
	buf_init(&m.differ, (size_t)1 << 20);
	e = mergeout_check(out, o->force, d);
	if (!e)
		e = read_all(&m, d);
	if (!e)
		e = check(&m, o->allow_partial, d);
	st->shards = m.count;
	if (!e)
		e = write_out(&m, out, d);
	merge_release(&m);
	return e;
}
