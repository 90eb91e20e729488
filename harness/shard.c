/* shard — see shard.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mem.h"
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

enum err shard_parse_time(const char *s, double *unix_s, struct diag *d)
{
	struct tm tm;
	char *num_end;
	double v = strtod(s, &num_end);
	int n = 0;

	if (num_end != s && !*num_end && v > 0) {
		*unix_s = v;
		return ERR_OK;
	}
	memset(&tm, 0, sizeof(tm));
	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
		   &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6 ||
	    s[n] || tm.tm_mon < 1 || tm.tm_mon > 12)
		return diag_fail(d, ERR_USAGE,
				 "wants YYYY-MM-DDTHH:MM:SSZ or Unix seconds, not '%s'", s);
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	*unix_s = (double)timegm(&tm);
	return ERR_OK;
}
