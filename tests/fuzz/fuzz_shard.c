/*
 * fuzz_shard — the shard options (harness/run/shard.h): the input's first line
 * as --shard, the second as --start-at, the third as a Slurm task id and the
 * fourth as its count (shard_from_env). A shard that parses has
 * 0 <= index < count <= SHARD_MAX; a start that parses is a finite positive
 * number of Unix seconds, and checked against now it is refused or lies
 * within SHARD_START_PAST_S behind and SHARD_START_AHEAD_S ahead.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "run/shard.h"

/* Line `k` (0-based) of the input, NUL-terminated, into `out`. */
static void line(const uint8_t *data, size_t size, int k, char *out, size_t cap)
{
	size_t i = 0, n = 0;

	for (; i < size && k > 0; i++)
		k -= data[i] == '\n';
	for (; i < size && data[i] != '\n' && n + 1 < cap; i++)
		out[n++] = data[i] ? (char)data[i] : ' ';
	out[n] = '\0';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char spec[256], at[256], id[64], count[64];
	struct shard s;
	struct diag d;
	double t, now = (double)time(NULL);

	line(data, size, 0, spec, sizeof(spec));
	line(data, size, 1, at, sizeof(at));
	line(data, size, 2, id, sizeof(id));
	line(data, size, 3, count, sizeof(count));
	diag_init(&d);
	if (!shard_parse(spec, &s, &d) && !(s.index >= 0 && s.index < s.count && s.count <= SHARD_MAX))
		abort();
	diag_init(&d);
	if (!shard_parse_time(at, &t, &d)) {
		if (!isfinite(t) || t <= 0)
			abort();
		diag_init(&d);
		if (!shard_check_start(t, now, 0, &d) &&
		    !(t >= now - SHARD_START_PAST_S && t <= now + SHARD_START_AHEAD_S))
			abort();
	}
	setenv("SLURM_ARRAY_TASK_ID", id, 1);
	setenv("SLURM_ARRAY_TASK_COUNT", count, 1);
	unsetenv("JOB_COMPLETION_INDEX");
	diag_init(&d);
	if (!shard_from_env(&s, &d) && s.count &&
	    !(s.index >= 0 && s.index < s.count && s.count <= SHARD_MAX))
		abort();
	return 0;
}
