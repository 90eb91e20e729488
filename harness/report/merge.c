/* merge — see merge.h. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/io.h"
#include "base/jget.h"
#include "base/json.h"
#include "base/keyset.h"
#include "base/mem.h"
#include "merge.h"
#include "run/record.h"
#include "report.h"
#include "run/results.h"
#include "run/shard.h"

#define KEY_MAX 1024

/* One record of some shard, for finding keys recorded twice. */
struct entry {
	char *key;           /* owned */
	const cJSON *rec;    /* borrowed from its shard */
	size_t shard;        /* position in dirs */
};

struct merge {
	const char *const *dirs;
	size_t n;
	struct report_run **runs;
	long count;
	struct entry *ents;
	size_t nents;
	struct buf *problems;
	size_t nproblems;
	struct merge_stats *st;
};

/* The load shards' checks (mergeload.h) over every shard's records. */
static enum err check_load(struct merge *m, struct diag *d)
{
	const cJSON **recs = mem_calloc(m->n, sizeof(*recs));
	size_t i;
	enum err e;

	if (!recs)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	for (i = 0; i < m->n; i++)
		recs[i] = m->runs[i]->all;
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
		{"suite", "sha256", NULL, "suite SHA-256"},
		{"tokenizer", "sha256", NULL, "tokenizer SHA-256"},
		{"template", "sha256", NULL, "template SHA-256"},
		{"endpoint", "base_url", NULL, "endpoint"},
		{"endpoint", "served_model", NULL, "served model"},
		{"endpoint", "server", "version", "server version"},
	};
	const cJSON *a = m->runs[0]->manifest, *b = m->runs[i]->manifest;
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
		const char *opt = k ? "repeat" : "case";
		const cJSON *x = jget2(a, "options", opt), *y = jget2(b, "options", opt);
		if ((x || y) && !(x && y && cJSON_Compare(x, y, 1)))
			problem(m, "'%s' is a foreign shard: option '--%s' is not as in '%s'",
				m->dirs[i], opt, m->dirs[0]);
	}
}

/* The shard's index and planned attempts; 0 when its manifest has none. */
static int shard_of(const struct merge *m, size_t i, long *index, long *count,
		    size_t *planned)
{
	const cJSON *sh = jget(m->runs[i]->manifest, "shard");

	if (!cJSON_IsObject(sh) || !cJSON_IsNumber(jget(sh, "index")) ||
	    !cJSON_IsNumber(jget(sh, "count")))
		return 0;
	*index = (long)jget_num(sh, "index");
	*count = (long)jget_num(sh, "count");
	*planned = (size_t)jget_num(sh, "attempts");
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
	size_t planned, have = (size_t)cJSON_GetArraySize(m->runs[i]->all);
	char msg[128];

	if (!shard_of(m, i, &index, &count, &planned))
		return;
	if (have >= planned && cJSON_IsString(jget(m->runs[i]->manifest, "ended_at")))
		return;
	snprintf(msg, sizeof(msg), "%zu of %zu attempts recorded%s", have, planned,
		 cJSON_IsString(jget(m->runs[i]->manifest, "ended_at")) ? "" : ", never ended");
	if (allow_partial) {
		m->st->incomplete++;
		return;
	}
	problem(m, "'%s' is incomplete: %s (resume it with 'needle run ... --resume --out %s')",
		m->dirs[i], msg, m->dirs[i]);
}

static int by_key(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;
	int c = strcmp(a->key, b->key);

	return c ? c : (a->shard > b->shard) - (a->shard < b->shard);
}

/* Lists every record by key; marks identical repeats (rec = NULL) and
 * reports different ones. */
static enum err collect(struct merge *m, struct diag *d)
{
	size_t i, total = 0, k = 0, first;
	const cJSON *rec;
	char key[KEY_MAX];

	for (i = 0; i < m->n; i++)
		total += (size_t)cJSON_GetArraySize(m->runs[i]->all);
	if (!(m->ents = mem_calloc(total ? total : 1, sizeof(*m->ents))))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	for (i = 0; i < m->n; i++)
		cJSON_ArrayForEach(rec, m->runs[i]->all) {
			record_key_of(rec, key, sizeof(key));
			if (!(m->ents[k].key = mem_strndup(key, strlen(key))))
				return diag_fail(d, ERR_NOMEM, "out of memory");
			m->ents[k].rec = rec;
			m->ents[k++].shard = i;
			m->nents = k;
		}
	qsort(m->ents, m->nents, sizeof(*m->ents), by_key);
	for (k = 1, first = 0; k < m->nents; k++) {
		struct entry *a = &m->ents[first], *b = &m->ents[k];
		if (strcmp(a->key, b->key)) {
			first = k;
			continue;
		}
		if (cJSON_Compare(a->rec, b->rec, 1)) {
			cJSON_Delete(cJSON_DetachItemViaPointer(m->runs[b->shard]->all,
								(cJSON *)b->rec));
			b->rec = NULL;
			m->st->duplicates++;
			continue;
		}
		key[strcspn(strcpy(key, a->key), "\x1f")] = '\0';
		problem(m, "attempt of case '%s' is recorded differently in '%s' and '%s'", key,
			m->dirs[a->shard], m->dirs[b->shard]);
	}
	return ERR_OK;
}

/* ---- writing ---- */

/* Copies every file of SHARD/raw/ not yet in OUT/raw/. */
static enum err copy_raw(struct results *res, const char *dir, struct diag *d)
{
	char path[4096], there[4096];
	struct dirent *de;
	struct buf b;
	DIR *dp;
	enum err e = ERR_OK;

	snprintf(path, sizeof(path), "%s/raw", dir);
	if (!(dp = opendir(path)))
		return ERR_OK;
	buf_init(&b, (size_t)1 << 30);
	while (!e && (de = readdir(dp))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(there, sizeof(there), "%s/raw/%s", res->dir, de->d_name);
		if (access(there, F_OK) == 0)
			continue;
		snprintf(path, sizeof(path), "%s/raw/%s", dir, de->d_name);
		buf_reset(&b);
		e = io_read_file(path, &b, d);
		if (!e)
			e = results_write_raw(res, de->d_name, b.data, b.len, d);
	}
	closedir(dp);
	buf_release(&b);
	return e;
}

/* The index of shard folder `i` (checked before). */
static long index_of(const struct merge *m, size_t i)
{
	long index = 0, count;
	size_t planned;

	shard_of(m, i, &index, &count, &planned);
	return index;
}

/* The earliest and latest of a string timestamp over the shards. */
static const char *bound(const struct merge *m, const char *key, int latest)
{
	const char *best = NULL;
	size_t i;

	for (i = 0; i < m->n; i++) {
		const cJSON *v = jget(m->runs[i]->manifest, key);
		if (cJSON_IsString(v) && (!best || (strcmp(v->valuestring, best) > 0) == latest))
			best = v->valuestring;
	}
	return best;
}

/* One entry of "shards" for shard folder `i`. */
static cJSON *shard_entry(struct json_build *jb, struct merge *m, size_t i)
{
	const cJSON *man = m->runs[i]->manifest, *lag = jget(man, "start_lag_ms");
	cJSON *o = json_new_obj(jb);

	json_add_str(jb, o, "dir", m->dirs[i]);
	json_add_int(jb, o, "index", index_of(m, i));
	json_add_dup(jb, o, "from", jget2(man, "shard", "from"));
	json_add_dup(jb, o, "started_at", jget(man, "started_at"));
	if (jget(man, "ended_at"))
		json_add_dup(jb, o, "ended_at", jget(man, "ended_at"));
	else /* cut before its end, merged with --allow-partial */
		json_add_null(jb, o, "ended_at");
	if (cJSON_IsNumber(lag)) {
		json_add_num(jb, o, "start_lag_ms", lag->valuedouble);
		if (lag->valuedouble > m->st->max_lag_ms)
			m->st->max_lag_ms = lag->valuedouble;
	} else {
		json_add_null(jb, o, "start_lag_ms");
	}
	json_add_int(jb, o, "attempts", (long long)jget_num(jget(man, "shard"), "attempts"));
	json_add_int(jb, o, "records", cJSON_GetArraySize(m->runs[i]->all));
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
		if (!cJSON_IsArray(jget2(m->runs[i]->manifest, "planned", "keys"))) {
			cJSON_DeleteItemFromObjectCaseSensitive(man, "planned");
			return ERR_OK;
		}
	keyset_init(&seen);
	json_build_init(&jb);
	keys = json_new_arr(&jb);
	for (want = 0; want < m->count; want++)
		for (i = 0; i < m->n; i++) {
			const cJSON *plan = jget(m->runs[i]->manifest, "planned");
			if (index_of(m, i) != want)
				continue;
			old |= jget_num(plan, "version") < RECORD_PLAN_VERSION;
			cJSON_ArrayForEach(k, jget(plan, "keys"))
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
		cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(man, "planned"),
						       "version");
	return ERR_OK;
}

/* The merged manifest: the first shard's, with the merge's facts. */
static enum err merged_manifest(struct merge *m, size_t pass, size_t planned,
				cJSON **out, struct diag *d)
{
	struct json_build jb;
	cJSON *man = cJSON_Duplicate(m->runs[0]->manifest, 1), *o, *arr;
	size_t i;

	json_build_init(&jb);
	if (!man)
		return diag_fail(d, ERR_NOMEM, "out of memory");
	cJSON_DeleteItemFromObjectCaseSensitive(man, "shard");
	cJSON_DeleteItemFromObjectCaseSensitive(man, "attempts");
	cJSON_DeleteItemFromObjectCaseSensitive(man, "start_lag_ms");
	cJSON_DeleteItemFromObjectCaseSensitive(man, "started_at");
	cJSON_DeleteItemFromObjectCaseSensitive(man, "ended_at");
	json_add_str(&jb, man, "started_at", bound(m, "started_at", 0));
	json_add_str(&jb, man, "ended_at", bound(m, "ended_at", 1));
	o = json_add_obj(&jb, man, "shard");
	json_add_bool(&jb, o, "merged", 1);
	json_add_int(&jb, o, "count", m->count);
	json_add_dup(&jb, o, "rule", jget2(m->runs[0]->manifest, "shard", "rule"));
	arr = json_add_arr(&jb, man, "shards");
	for (i = 0; i < m->n; i++)
		json_add_item(&jb, arr, NULL, shard_entry(&jb, m, i));
	o = json_add_obj(&jb, man, "attempts");
	json_add_int(&jb, o, "planned", (long long)planned);
	json_add_int(&jb, o, "run", (long long)m->st->records);
	json_add_int(&jb, o, "pass", (long long)pass);
	json_add_int(&jb, o, "fail", (long long)(m->st->records - pass));
	json_add_int(&jb, o, "recorded_before", 0);
	o = json_add_obj(&jb, man, "merge");
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

/* Writes the records of every shard, in index order, raw files first. */
static enum err write_out(struct merge *m, const char *out, struct diag *d)
{
	struct results *res = NULL;
	cJSON *man = NULL, *rec;
	size_t i, pass = 0, planned = 0;
	long want;
	enum err e = results_open(out, 0, &res, d);

	for (want = 0; !e && want < m->count; want++)
		for (i = 0; !e && i < m->n; i++) {
			if (index_of(m, i) != want)
				continue;
			planned += (size_t)jget_num(jget(m->runs[i]->manifest, "shard"), "attempts");
			e = copy_raw(res, m->dirs[i], d);
			cJSON_ArrayForEach(rec, m->runs[i]->all) {
				if (e)
					break;
				e = results_append(res, rec, d);
				m->st->records += !e;
				pass += !e && record_passed(rec);
			}
		}
	if (!e)
		e = merged_manifest(m, pass, planned, &man, d);
	if (!e)
		e = results_write_manifest(res, man, d);
	cJSON_Delete(man);
	results_free(res);
	return e;
}

static enum err load_all(struct merge *m, struct diag *d)
{
	size_t i;
	enum err e = ERR_OK;

	if (!(m->runs = mem_calloc(m->n, sizeof(*m->runs))))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	for (i = 0; !e && i < m->n; i++) {
		e = report_load_records(m->dirs[i], &m->runs[i], d);
		if (!e && !m->runs[i]->manifest)
			e = diag_fail(d, ERR_INPUT, "'%s' has no manifest.json: not a run folder",
				      m->dirs[i]);
	}
	return e;
}

static enum err check(struct merge *m, int allow_partial, struct diag *d)
{
	size_t i;
	enum err e = check_indexes(m, d);

	for (i = 1; !e && i < m->n; i++)
		check_same(m, i);
	for (i = 0; !e && i < m->n; i++)
		check_complete(m, i, allow_partial);
	if (!e)
		e = check_load(m, d);
	if (!e && !m->nproblems)
		e = collect(m, d);
	if (!e && m->nproblems) {
		size_t first = strcspn(m->problems->data, "\n");
		e = diag_fail(d, ERR_INPUT, "%.*s%s", (int)first, m->problems->data,
			      m->nproblems > 1 ? " (and more: see the list)" : "");
	}
	return e;
}

enum err merge_shards(const char *out, const char *const *dirs, size_t n,
		      int allow_partial, double max_skew_ms, struct merge_stats *st,
		      struct buf *problems, struct diag *d)
{
	struct merge m;
	size_t i;
	enum err e;

	memset(&m, 0, sizeof(m));
	memset(st, 0, sizeof(*st));
	st->max_lag_ms = -1;
	st->load.tolerance_ms = max_skew_ms;
	m.dirs = dirs, m.n = n, m.problems = problems, m.st = st;
	e = load_all(&m, d);
	if (!e)
		e = check(&m, allow_partial, d);
	st->shards = m.count;
	if (!e)
		e = write_out(&m, out, d);
	for (i = 0; i < m.nents; i++)
		mem_free(m.ents[i].key);
	mem_free(m.ents);
	for (i = 0; m.runs && i < n; i++)
		report_run_free(m.runs[i]);
	mem_free(m.runs);
	return e;
}
