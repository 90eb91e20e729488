/* shard — see shard.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/mem.h"
#include "generators/prng.h"
#include "shard.h"

/* A whole decimal number in [lo, hi]; 0 when `s` is not one. */
static int whole(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	if (!s || !*s || *s == '+' || *s == '-' || *s == ' ')
		return 0;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return 0;
	*out = v;
	return 1;
}

enum err shard_parse(const char *spec, struct shard *s, struct diag *d)
{
	const char *slash = strchr(spec, '/');
	char first[32];
	size_t n = slash ? (size_t)(slash - spec) : 0;

	if (!slash || n == 0 || n >= sizeof(first))
		return diag_fail(d, ERR_USAGE, "shard '%s' is not INDEX/COUNT, e.g. 0/4", spec);
	memcpy(first, spec, n);
	first[n] = '\0';
	if (!whole(slash + 1, 1, SHARD_MAX, &s->count))
		return diag_fail(d, ERR_USAGE, "shard '%s': the count wants 1 to %d", spec, SHARD_MAX);
	if (!whole(first, 0, s->count - 1, &s->index))
		return diag_fail(d, ERR_USAGE, "shard '%s': the index wants 0 to %ld", spec,
				 s->count - 1);
	s->from = "option";
	return ERR_OK;
}

static enum err var(const char *name, long lo, long hi, long *out, struct diag *d)
{
	const char *v = getenv(name);

	if (!v)
		return diag_fail(d, ERR_USAGE, "environment variable '%s' is not set", name);
	if (!whole(v, lo, hi, out))
		return diag_fail(d, ERR_USAGE, "environment variable '%s' is '%s', not a whole number from %ld to %ld",
				 name, v, lo, hi);
	return ERR_OK;
}

static enum err from_slurm(struct shard *s, struct diag *d)
{
	long id, min = 0, step = 1;
	enum err e = var("SLURM_ARRAY_TASK_ID", 0, 1L << 30, &id, d);

	if (!e)
		e = var("SLURM_ARRAY_TASK_COUNT", 1, SHARD_MAX, &s->count, d);
	if (!e && getenv("SLURM_ARRAY_TASK_MIN"))
		e = var("SLURM_ARRAY_TASK_MIN", 0, id, &min, d);
	if (!e && getenv("SLURM_ARRAY_TASK_STEP"))
		e = var("SLURM_ARRAY_TASK_STEP", 1, 1L << 30, &step, d);
	if (e)
		return e;
	if ((id - min) % step || (id - min) / step >= s->count)
		return diag_fail(d, ERR_USAGE,
				 "Slurm array task %ld is not one of %ld tasks from %ld in steps of %ld",
				 id, s->count, min, step);
	s->index = (id - min) / step;
	s->from = "slurm";
	return ERR_OK;
}

static enum err from_kubernetes(struct shard *s, struct diag *d)
{
	enum err e = var("NEEDLE_SHARDS", 1, SHARD_MAX, &s->count, d);

	if (e) {
		diag_prefix(d, "JOB_COMPLETION_INDEX is set");
		return e;
	}
	e = var("JOB_COMPLETION_INDEX", 0, s->count - 1, &s->index, d);
	s->from = "kubernetes";
	return e;
}

enum err shard_from_env(struct shard *s, struct diag *d)
{
	int slurm = getenv("SLURM_ARRAY_TASK_ID") != NULL;
	int k8s = getenv("JOB_COMPLETION_INDEX") != NULL;

	memset(s, 0, sizeof(*s));
	if (slurm && k8s)
		return diag_fail(d, ERR_USAGE,
				 "both SLURM_ARRAY_TASK_ID and JOB_COMPLETION_INDEX are set: pass '--shard I/N'");
	if (slurm)
		return from_slurm(s, d);
	if (k8s)
		return from_kubernetes(s, d);
	return ERR_OK;
}

/* Heaviest first, then by key: the order the units are placed in. */
static int heavier(const void *pa, const void *pb)
{
	const struct shard_unit *a = *(const struct shard_unit *const *)pa;
	const struct shard_unit *b = *(const struct shard_unit *const *)pb;

	if (a->weight != b->weight)
		return a->weight > b->weight ? -1 : 1;
	return strcmp(a->key, b->key);
}

enum err shard_assign(struct shard_unit *u, size_t n, long count, struct diag *d)
{
	struct shard_unit **order = mem_calloc(n ? n : 1, sizeof(*order));
	uint64_t *load = mem_calloc((size_t)count, sizeof(*load));
	size_t i;
	long k, best;
	enum err e = ERR_OK;

	if (!order || !load) {
		e = diag_fail(d, ERR_NOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++)
		order[i] = &u[i];
	qsort(order, n, sizeof(*order), heavier);
	for (i = 0; i < n; i++) {
		for (best = 0, k = 1; k < count; k++)
			if (load[k] < load[best])
				best = k;
		order[i]->shard = best;
		load[best] += order[i]->weight;
	}
out:
	mem_free(order);
	mem_free(load);
	return e;
}

/* Unix seconds beyond any --start-at a day ahead could name, and within
 * what a double holds to the microsecond and time_t converts exactly. */
#define SHARD_TIME_MAX 1e11

/* After the seconds of an RFC 3339 time: an optional fraction, then "Z" or
 * "+00:00" / "-00:00" (UTC only). Adds the fraction to *frac; 0 otherwise. */
static int utc_tail(const char *p, double *frac)
{
	char *end;

	if (*p == '.') {
		if (p[1] < '0' || p[1] > '9')
			return 0;
		*frac = strtod(p, &end);
		p = end;
	}
	return !strcmp(p, "Z") || !strcmp(p, "z") || !strcmp(p, "+00:00") || !strcmp(p, "-00:00");
}

enum err shard_parse_time(const char *s, double *unix_s, struct diag *d)
{
	struct tm tm;
	char *num_end;
	double v = strtod(s, &num_end), frac = 0;
	int n = 0;

	if (num_end != s && !*num_end && v > 0 && s[0] >= '0' && s[0] <= '9') {
		if (!(v < SHARD_TIME_MAX)) /* inf from "1e999" too */
			return diag_fail(d, ERR_USAGE, "Unix seconds must be below %.0f (the year 5138)",
					 SHARD_TIME_MAX);
		*unix_s = v;
		return ERR_OK;
	}
	memset(&tm, 0, sizeof(tm));
	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
		   &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6 ||
	    !utc_tail(s + n, &frac) || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 ||
	    tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60)
		return diag_fail(d, ERR_USAGE,
				 "wants an RFC 3339 UTC time (YYYY-MM-DDTHH:MM:SS[.fff]Z) or Unix seconds");
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	*unix_s = (double)timegm(&tm) + frac;
	if (!(*unix_s > 0)) /* before 1970, or timegm's -1 */
		return diag_fail(d, ERR_USAGE, "wants a time after 1970-01-01T00:00:00Z");
	return ERR_OK;
}

enum err shard_check_start(double start_at, double now, int resuming, struct diag *d)
{
	if (!(start_at - now <= SHARD_START_AHEAD_S)) /* NaN too */
		return diag_fail(d, ERR_USAGE,
				 "the instant is %.0f s ahead, more than %.0f s (a day): every shard waits "
				 "for it before its first request; pick one within a day",
				 start_at - now, SHARD_START_AHEAD_S);
	if (resuming || start_at >= now - SHARD_START_PAST_S)
		return ERR_OK;
	return diag_fail(d, ERR_USAGE,
			 "the instant is %.0f s in the past (more than %.0f s): every shard waits for a common instant ahead; pick a later one (or add --resume to continue a shard that began then)",
			 now - start_at, SHARD_START_PAST_S);
}

/* X split over the shards: X/N each, the first (X mod N) one more. */
static long part(long x, const struct shard *s)
{
	return x / s->count + (x % s->count > s->index);
}

long shard_load_seed(long seed, const struct shard *s)
{
	uint64_t x = (uint64_t)seed ^ ((uint64_t)s->count << 40);
	uint64_t h = prng_splitmix64(&x);

	/* an odd step is invertible modulo 2^31: distinct indexes, distinct seeds */
	return (long)((h + (uint64_t)(s->index + 1) * 0x9E3779B1u) & 0x7fffffffu);
}

enum err shard_load_share(const struct loadspec *all, const struct shard *s, const char *id,
			  struct loadspec *out, struct diag *d)
{
	int i;

	*out = *all;
	if (s->count <= 0)
		return ERR_OK;
	for (i = 0; i < all->nlevels; i++) {
		if (!all->open_loop && all->concurrency[i] < s->count)
			return diag_fail(d, ERR_USAGE,
					 "load case '%s': concurrency %ld (level %d) cannot be split over %ld shards (each needs one request in flight at least): use fewer shards, or run the case on one node (--case) without a shard index",
					 id, all->concurrency[i], i, s->count);
		if (all->requests[i] < s->count)
			return diag_fail(d, ERR_USAGE,
					 "load case '%s': %ld requests a round (level %d) cannot be split over %ld shards: give at least %ld",
					 id, all->requests[i], i, s->count, s->count);
		if (all->open_loop)
			out->rate[i] = all->rate[i] / (double)s->count;
		else
			out->concurrency[i] = part(all->concurrency[i], s);
		out->requests[i] = part(all->requests[i], s);
	}
	if (all->warmup > 0)
		out->warmup = part(all->warmup, s);
	out->seed = shard_load_seed(all->seed, s);
	return ERR_OK;
}

void shard_load_json(struct json_build *jb, cJSON *shard, const char *id,
		     const struct loadspec *part)
{
	cJSON *arr = cJSON_GetObjectItemCaseSensitive(shard, "load");
	cJSON *o, *lv, *rq;
	int i;

	if (!arr)
		arr = json_add_arr(jb, shard, "load");
	o = json_add_obj(jb, arr, NULL);
	json_add_str(jb, o, "case", id);
	json_add_int(jb, o, "seed", part->seed);
	lv = json_add_arr(jb, o, part->open_loop ? "rate" : "concurrency");
	rq = json_add_arr(jb, o, "requests");
	for (i = 0; i < part->nlevels; i++) {
		if (part->open_loop)
			json_add_num(jb, lv, NULL, part->rate[i]);
		else
			json_add_int(jb, lv, NULL, part->concurrency[i]);
		json_add_int(jb, rq, NULL, part->requests[i]);
	}
	json_add_int(jb, o, "warmup", part->warmup);
}
