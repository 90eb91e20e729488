/* Unit tests for shard.c: parsing I/N, the orchestrators' variables, and the
 * greedy assignment (every unit placed once, balanced, deterministic). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shard.h"
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

int main(void)
{
	T_RUN(test_parse);
	T_RUN(test_env);
	T_RUN(test_assign);
	return T_DONE();
}
