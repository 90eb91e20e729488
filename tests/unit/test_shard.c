/* Unit tests for shard.c: parsing I/N, the orchestrators' variables, the
 * greedy assignment (every unit placed once, balanced, deterministic), the
 * common start instant, and a load case's parts over the shards. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/shard.h"
#include "t.h"

static void clear_env(void)
{
	unsetenv("SLURM_ARRAY_TASK_ID");
	unsetenv("SLURM_ARRAY_TASK_COUNT");
	unsetenv("SLURM_ARRAY_TASK_MIN");
	unsetenv("SLURM_ARRAY_TASK_STEP");
	unsetenv("JOB_COMPLETION_INDEX");
	unsetenv("NEEDLE_SHARDS");
}

static void test_parse(void)
{
	static const char *const bad[] = {"", "3", "/4", "1/", "4/4", "-1/4", "1/0", "a/2",
					  "1/2x", "+1/2", "1/100001"};
	struct shard s;
	struct diag d;
	size_t i;

	diag_init(&d);
	CHECK(shard_parse("3/4", &s, &d) == ERR_OK);
	CHECK_EQ_LONG(s.index, 3);
	CHECK_EQ_LONG(s.count, 4);
	CHECK_STR(s.from, "option");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		diag_init(&d);
		CHECK(shard_parse(bad[i], &s, &d) == ERR_USAGE);
		CHECK(strstr(d.msg, bad[i]) != NULL);
	}
}

static void test_env(void)
{
	struct shard s;
	struct diag d;

	clear_env();
	diag_init(&d);
	CHECK(shard_from_env(&s, &d) == ERR_OK);
	CHECK_EQ_LONG(s.count, 0);
	/* sbatch --array=1-4: ids 1..4 are indexes 0..3 */
	setenv("SLURM_ARRAY_TASK_ID", "3", 1);
	setenv("SLURM_ARRAY_TASK_COUNT", "4", 1);
	setenv("SLURM_ARRAY_TASK_MIN", "1", 1);
	CHECK(shard_from_env(&s, &d) == ERR_OK);
	CHECK_EQ_LONG(s.index, 2);
	CHECK_EQ_LONG(s.count, 4);
	CHECK_STR(s.from, "slurm");
	/* --array=0-6:2 -> ids 0, 2, 4, 6 */
	setenv("SLURM_ARRAY_TASK_ID", "6", 1);
	setenv("SLURM_ARRAY_TASK_MIN", "0", 1);
	setenv("SLURM_ARRAY_TASK_STEP", "2", 1);
	CHECK(shard_from_env(&s, &d) == ERR_OK);
	CHECK_EQ_LONG(s.index, 3);
	setenv("SLURM_ARRAY_TASK_ID", "5", 1);
	CHECK(shard_from_env(&s, &d) == ERR_USAGE);
	unsetenv("SLURM_ARRAY_TASK_COUNT");
	diag_init(&d);
	CHECK(shard_from_env(&s, &d) == ERR_USAGE);
	CHECK(strstr(d.msg, "SLURM_ARRAY_TASK_COUNT") != NULL);
	clear_env();
	setenv("JOB_COMPLETION_INDEX", "1", 1);
	diag_init(&d);
	CHECK(shard_from_env(&s, &d) == ERR_USAGE);
	CHECK(strstr(d.msg, "NEEDLE_SHARDS") != NULL);
	setenv("NEEDLE_SHARDS", "2", 1);
	CHECK(shard_from_env(&s, &d) == ERR_OK);
	CHECK_EQ_LONG(s.index, 1);
	CHECK_EQ_LONG(s.count, 2);
	CHECK_STR(s.from, "kubernetes");
	setenv("JOB_COMPLETION_INDEX", "2", 1);
	diag_init(&d);
	CHECK(shard_from_env(&s, &d) == ERR_USAGE);
	CHECK(strstr(d.msg, "JOB_COMPLETION_INDEX") != NULL);
	setenv("SLURM_ARRAY_TASK_ID", "0", 1);
	diag_init(&d);
	CHECK(shard_from_env(&s, &d) == ERR_USAGE);
	CHECK(strstr(d.msg, "both") != NULL);
	clear_env();
}

/* A recall-grid-like spread: 32K..1M cells, two seeds each, plus small
 * cases. Every unit lands in one shard, the heaviest shard is within the
 * largest unit of the lightest, and shuffling the input changes nothing. */
static void test_assign(void)
{
	enum { N = 40 };
	struct shard_unit u[N], v[N];
	char keys[N][16];
	unsigned long long load[4] = {0}, hi = 0, lo = ~0ULL, maxw = 0;
	size_t i, j;
	struct diag d;

	for (i = 0; i < N; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%02zu", i);
		u[i].key = keys[i];
		u[i].weight = i < 12 ? (32768ULL << (i / 2)) : 300 + i;
		u[i].shard = -1;
		if (u[i].weight > maxw)
			maxw = u[i].weight;
	}
	diag_init(&d);
	CHECK(shard_assign(u, N, 4, &d) == ERR_OK);
	for (i = 0; i < N; i++) {
		CHECK(u[i].shard >= 0 && u[i].shard < 4);
		if (u[i].shard >= 0 && u[i].shard < 4)
			load[u[i].shard] += u[i].weight;
	}
	for (i = 0; i < 4; i++) {
		hi = load[i] > hi ? load[i] : hi;
		lo = load[i] < lo ? load[i] : lo;
	}
	CHECK(hi - lo <= maxw);
	for (i = 0; i < N; i++)
		v[i] = u[N - 1 - i];
	CHECK(shard_assign(v, N, 4, &d) == ERR_OK);
	for (i = 0; i < N; i++)
		for (j = 0; j < N; j++)
			if (v[j].key == u[i].key)
				CHECK_EQ_LONG(v[j].shard, u[i].shard);
	CHECK(shard_assign(u, N, 1, &d) == ERR_OK);
	for (i = 0; i < N; i++)
		CHECK_EQ_LONG(u[i].shard, 0);
	CHECK(shard_assign(u, 0, 3, &d) == ERR_OK);
}

static void test_time(void)
{
	static const char *const bad[] = {"", "tomorrow", "2026-13-01T00:00:00Z", "2026-12-01T00:00:00",
					  "2026-12-01T00:00:00+01:00", "2026-12-01T24:00:00Z", "-5",
					  "2026-12-01T00:00:00.Z", "1e9x"};
	struct diag d;
	double t;
	size_t i;

	diag_init(&d);
	CHECK(shard_parse_time("2026-01-01T00:00:00Z", &t, &d) == ERR_OK);
	CHECK(t == 1767225600.0);
	CHECK(shard_parse_time("2026-01-01T00:00:01.25+00:00", &t, &d) == ERR_OK);
	CHECK(t == 1767225601.25);
	CHECK(shard_parse_time("1767225600.5", &t, &d) == ERR_OK);
	CHECK(t == 1767225600.5);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		diag_init(&d);
		CHECK(shard_parse_time(bad[i], &t, &d) == ERR_USAGE);
	}
	CHECK(shard_check_start(1000, 1004, 0, &d) == ERR_OK);
	CHECK(shard_check_start(2000, 1000, 0, &d) == ERR_OK);
	CHECK(shard_check_start(1000, 1060, 1, &d) == ERR_OK);
	diag_init(&d);
	CHECK(shard_check_start(1000, 1060, 0, &d) == ERR_USAGE);
	CHECK(strstr(d.msg, "60 s in the past") != NULL);
}

static void test_load_share(void)
{
	struct loadspec all, part;
	struct shard s = {0, 3, "option"};
	long conc = 0, req = 0, warm = 0, seeds[3];
	struct diag d;
	int i;

	memset(&all, 0, sizeof(all));
	all.nlevels = 2;
	all.concurrency[0] = 10, all.concurrency[1] = 3;
	all.requests[0] = 7, all.requests[1] = 30;
	all.rounds = 2, all.warmup = 4, all.seed = 9;
	diag_init(&d);
	for (s.index = 0; s.index < 3; s.index++) {
		CHECK(shard_load_share(&all, &s, "c", &part, &d) == ERR_OK);
		CHECK_EQ_LONG(part.concurrency[0], s.index == 0 ? 4 : 3);
		CHECK_EQ_LONG(part.concurrency[1], 1);
		CHECK_EQ_LONG(part.requests[0], s.index == 0 ? 3 : 2);
		conc += part.concurrency[0], req += part.requests[0], warm += part.warmup;
		seeds[s.index] = part.seed;
		CHECK(part.seed >= 0 && part.seed < (1L << 31));
		CHECK_EQ_LONG(part.seed, shard_load_seed(9, &s));
	}
	CHECK_EQ_LONG(conc, 10);
	CHECK_EQ_LONG(req, 7);
	CHECK_EQ_LONG(warm, 4);
	CHECK(seeds[0] != seeds[1] && seeds[1] != seeds[2] && seeds[0] != seeds[2]);
	s.count = 4, s.index = 0;
	diag_init(&d);
	CHECK(shard_load_share(&all, &s, "c", &part, &d) == ERR_USAGE);
	CHECK(strstr(d.msg, "load case 'c': concurrency 3 (level 1) cannot be split over 4 shards") != NULL);
	all.open_loop = 1;
	for (i = 0; i < 2; i++)
		all.rate[i] = 2.0;
	all.requests[0] = 3;
	diag_init(&d);
	CHECK(shard_load_share(&all, &s, "c", &part, &d) == ERR_USAGE);
	CHECK(strstr(d.msg, "3 requests a round (level 0)") != NULL);
	all.requests[0] = 8;
	CHECK(shard_load_share(&all, &s, "c", &part, &d) == ERR_OK);
	CHECK(part.rate[0] == 0.5 && part.rate[1] == 0.5 && part.requests[0] == 2);
	s.count = 0;
	CHECK(shard_load_share(&all, &s, "c", &part, &d) == ERR_OK);
	CHECK(part.rate[0] == 2.0 && part.seed == 9);
}

int main(void)
{
	T_RUN(test_parse);
	T_RUN(test_env);
	T_RUN(test_assign);
	T_RUN(test_time);
	T_RUN(test_load_share);
	return T_DONE();
}
