/* Unit tests for mergeload.c: shards whose rounds began together and sent on
 * time pass; a round begun too far apart and a shard sending late are each
 * one problem naming the case or the folder; unsharded load records are no
 * load shards. */
#include <stdio.h>
#include <string.h>

#include "report/mergeload.h"
#include "t.h"

/* A shard's records: `n` load requests of case "x" level 0 round 1 begun at
 * `t0`, each `lag_ms` late; plus a warm-up request (never counted) of a round
 * begun at `warm_t0`, 5 s late. */
static cJSON *shard_recs(double t0, double warm_t0, double lag_ms, int n, int sharded)
{
	cJSON *arr = cJSON_CreateArray();
	char txt[256];
	int i;

	for (i = 0; i <= n; i++) {
		snprintf(txt, sizeof(txt),
			 "{\"case\": \"x\", \"load\": {\"level\": 0, \"round\": %d, \"scheduled_ms\": %d, \"sent_ms\": %g%s%.3f}}",
			 i == n ? 0 : 1, i * 100, i * 100 + (i == n ? 5000 : lag_ms),
			 sharded ? ", \"round_started_unix\": " : ", \"other\": ",
			 i == n ? warm_t0 : t0);
		cJSON_AddItemToArray(arr, cJSON_Parse(txt));
	}
	return arr;
}

static size_t check(cJSON *a, cJSON *b, struct mergeload *ml, struct buf *pr)
{
	const cJSON *recs[2] = {a, b};
	const char *const dirs[2] = {"s0", "s1"};
	size_t np = 0;
	struct diag d;

	diag_init(&d);
	buf_reset(pr);
	ml->tolerance_ms = 1000;
	CHECK(mergeload_check(recs, dirs, 2, ml, pr, &np, &d) == ERR_OK);
	cJSON_Delete(a);
	cJSON_Delete(b);
	return np;
}

static void test_check(void)
{
	struct mergeload ml;
	struct buf pr;

	buf_init(&pr, 1 << 16);
	/* the warm-ups began 9 s apart: not counted */
	CHECK(check(shard_recs(1000.0, 990, 2, 50, 1), shard_recs(1000.3, 999, 3, 50, 1), &ml, &pr) == 0);
	CHECK(ml.shards == 2);
	CHECK(ml.skew_ms > 299 && ml.skew_ms < 301);
	CHECK(ml.lag_p99_ms == 3);
	CHECK(check(shard_recs(1000.0, 990, 2, 50, 1), shard_recs(1001.5, 990, 2, 50, 1), &ml, &pr) == 1);
	CHECK(strstr(pr.data, "load case 'x' (level 0, round 1): the shards began 1500 ms apart ('s0' first, 's1' last)") != NULL);
	CHECK(check(shard_recs(1000.0, 990, 2, 50, 1), shard_recs(1000.0, 990, 1200, 50, 1), &ml, &pr) == 1);
	CHECK(strstr(pr.data, "'s1': its load requests went out late (scheduling lag P99 1200 ms") != NULL);
	CHECK(check(shard_recs(1000.0, 990, 2, 50, 0), shard_recs(1900.0, 990, 2, 50, 0), &ml, &pr) == 0);
	CHECK(ml.shards == 0);
	buf_release(&pr);
}

static void test_note(void)
{
	struct mergeload ml = {1000, 2, 31, 2};
	struct json_build jb;
	cJSON *m = cJSON_CreateObject();
	const cJSON *note;

	json_build_init(&jb);
	mergeload_note(&jb, m, &ml);
	CHECK(json_build_end(&jb, NULL, "m", NULL) == ERR_OK);
	note = cJSON_GetObjectItemCaseSensitive(m, "note");
	CHECK(cJSON_IsString(note) && strstr(note->valuestring, "on 2 shards") &&
	      strstr(note->valuestring, "global concurrency is a bound"));
	CHECK(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m, "load"), "shards")->valuedouble == 2);
	cJSON_Delete(m);
	m = cJSON_CreateObject();
	ml.shards = 0;
	mergeload_note(&jb, m, &ml);
	CHECK(cJSON_GetArraySize(m) == 0);
	cJSON_Delete(m);
}

int main(void)
{
	T_RUN(test_check);
	T_RUN(test_note);
	return T_DONE();
}
