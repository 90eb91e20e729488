/* mergeload — see mergeload.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jget.h"
#include "base/mem.h"
#include "mergeload.h"
#include "base/stats.h"
#include "load/loadcells.h"
#include "run/record.h"

#define MERGELOAD_INDEX_MAX 1000000000L /* of a level or round read from a shard */

/* The start of one round on one shard. */
struct start {
	const char *id;       /* borrowed from the record */
	long level, round;
	size_t shard;
	double t;             /* Unix seconds */
};

static int by_round(const void *pa, const void *pb)
{
	const struct start *a = pa, *b = pb;
	int c = strcmp(a->id, b->id);

	if (c)
		return c;
	if (a->level != b->level)
		return a->level < b->level ? -1 : 1;
	if (a->round != b->round)
		return a->round < b->round ? -1 : 1;
	return (a->shard > b->shard) - (a->shard < b->shard);
}

/* The round start of a sharded load record of a counted round (the ones the
 * cells are made of), 0 when `rec` is none. */
static int start_of(const cJSON *rec, size_t shard, struct start *s)
{
	const cJSON *load = jget(rec, RK_LOAD), *t = jget(load, RK_ROUND_STARTED_UNIX);
	const cJSON *id = jget(rec, RK_CASE);

	if (!cJSON_IsNumber(t) || !cJSON_IsString(id) ||
	    !jget_whole(load, RK_ROUND, 1, MERGELOAD_INDEX_MAX, &s->round) ||
	    !jget_whole(load, RK_LEVEL, 0, MERGELOAD_INDEX_MAX, &s->level))
		return 0;
	s->id = id->valuestring;
	s->shard = shard;
	s->t = t->valuedouble;
	return 1;
}

static void problem(struct buf *b, size_t *np, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void problem(struct buf *b, size_t *np, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	buf_puts(b, line);
	buf_putc(b, '\n');
	(*np)++;
}

/* Reports the widest spread of one case's rounds (s[0..n), one case, sorted)
 * when it exceeds the tolerance. */
static void case_skew(const struct start *s, size_t n, const char *const *dirs,
		      struct mergeload *ml, struct buf *b, size_t *np)
{
	size_t i = 0, j, lo, hi, worst_lo = 0, worst_hi = 0;
	double worst = -1, spread;

	while (i < n) {
		for (j = i, lo = hi = i; j < n && s[j].level == s[i].level && s[j].round == s[i].round; j++) {
			lo = s[j].t < s[lo].t ? j : lo;
			hi = s[j].t > s[hi].t ? j : hi;
		}
		spread = (s[hi].t - s[lo].t) * 1000.0;
		if (spread > worst)
			worst = spread, worst_lo = lo, worst_hi = hi;
		i = j;
	}
	if (worst > ml->skew_ms)
		ml->skew_ms = worst;
	if (worst > ml->tolerance_ms)
		problem(b, np, "load case '%s' (level %ld, round %ld): the shards began %.0f ms apart ('%s' first, '%s' last), more than %.0f ms (--max-skew): their loads did not overlap as planned; check the machines' clocks (chrony/NTP) and start every shard with the same --start-at",
			s[worst_lo].id, s[worst_lo].level, s[worst_lo].round, worst,
			dirs[s[worst_lo].shard], dirs[s[worst_hi].shard], ml->tolerance_ms);
}

static enum err check_skew(const cJSON *const *records, const char *const *dirs, size_t n,
			   struct mergeload *ml, struct buf *b, size_t *np, struct diag *d)
{
	struct start *s, one;
	const struct start *prev = NULL;
	size_t i, k = 0, total = 0, first;
	const cJSON *rec;

	for (i = 0; i < n; i++)
		total += (size_t)cJSON_GetArraySize(records[i]);
	if (!(s = mem_calloc(total ? total : 1, sizeof(*s))))
		return diag_fail(d, ERR_NOMEM, "out of memory");
	for (i = 0; i < n; i++)
		cJSON_ArrayForEach(rec, records[i])
			if (start_of(rec, i, &one))
				s[k++] = one;
	qsort(s, k, sizeof(*s), by_round);
	for (i = 0, first = 0; i <= k; i++) {
		if (i < k && (!prev || !strcmp(prev->id, s[i].id))) {
			prev = &s[i];
			continue;
		}
		case_skew(s + first, i - first, dirs, ml, b, np);
		first = i;
		prev = i < k ? &s[i] : NULL;
	}
	mem_free(s);
	return ERR_OK;
}

/* The scheduling-lag P99 of one shard's counted sharded load requests; 0
 * when it has none (*has = 0). */
static enum err lag_p99(const cJSON *records, int *has, double *p99, struct diag *d)
{
	struct stats_vec v = {0};
	const cJSON *rec, *load;
	enum err e = ERR_OK;

	cJSON_ArrayForEach(rec, records) {
		load = jget(rec, RK_LOAD);
		if (!cJSON_IsNumber(jget(load, RK_ROUND_STARTED_UNIX)) || jget_num(load, RK_ROUND) < 1)
			continue;
		if (stats_vec_push(&v, jget_num(load, RK_SENT_MS) - jget_num(load, RK_SCHEDULED_MS))) {
			e = diag_fail(d, ERR_NOMEM, "out of memory");
			break;
		}
	}
	*has = v.n > 0;
	stats_sort(v.v, v.n);
	*p99 = stats_nearest_rank(v.v, v.n, 99);
	stats_vec_release(&v);
	return e;
}

enum err mergeload_check(const cJSON *const *records, const char *const *dirs, size_t n,
			 struct mergeload *ml, struct buf *problems, size_t *nproblems,
			 struct diag *d)
{
	size_t i;
	int has;
	double p99;
	enum err e = ERR_OK;

	ml->shards = 0;
	ml->skew_ms = ml->lag_p99_ms = 0;
	for (i = 0; !e && i < n; i++) {
		e = lag_p99(records[i], &has, &p99, d);
		if (e || !has)
			continue;
		ml->shards++;
		if (p99 > ml->lag_p99_ms)
			ml->lag_p99_ms = p99;
		if (p99 > ml->tolerance_ms)
			problem(problems, nproblems, "'%s': its load requests went out late (scheduling lag P99 %.0f ms, more than %.0f ms: --max-skew): that machine could not keep up with its part, so the server saw less than the target",
				dirs[i], p99, ml->tolerance_ms);
	}
	if (!e && ml->shards)
		e = check_skew(records, dirs, n, ml, problems, nproblems, d);
	return e;
}

void mergeload_note(struct json_build *jb, cJSON *merge, const struct mergeload *ml)
{
	char note[512];
	cJSON *o;

	if (!ml->shards)
		return;
	o = json_add_obj(jb, merge, "load");
	json_add_int(jb, o, "shards", (long long)ml->shards);
	json_add_num(jb, o, "start_skew_ms", ml->skew_ms);
	json_add_num(jb, o, LC_LAG_P99_MS, ml->lag_p99_ms);
	json_add_num(jb, o, "tolerance_ms", ml->tolerance_ms);
	snprintf(note, sizeof(note),
		 "load cases ran on %zu shards at once, each with its part of the target; their rounds began within %.0f ms of each other and the worst scheduling-lag P99 was %.0f ms. Each shard saw only its own requests: global concurrency is a bound (the sum of the shards'), not a measurement.",
		 ml->shards, ml->skew_ms, ml->lag_p99_ms);
	json_add_str(jb, merge, MK_NOTE, note);
}
