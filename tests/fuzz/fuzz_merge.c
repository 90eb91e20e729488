/*
 * fuzz_merge — merge's reading of a shard from another machine
 * (harness/report/merge.h, mergeread.h): the input is shard 0's manifest.json,
 * and after a NUL byte, when there is one, its results.jsonl (else one fixed
 * record). Shard 1 is fixed and belongs with the seeds' shard 0, so a
 * well-formed input reaches the checks, the plan's union and the writing of
 * the merged folder. The folders are one set per process under $TMPDIR,
 * /dev/shm or /tmp. A merge that succeeds must have written as many records
 * as it says, and the merged manifest must count them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "base/io.h"
#include "base/jget.h"
#include "report/merge.h"
#include "run/results.h"
#include "../unit/trec.h"

#define REC1 "{\"case\":\"b\",\"repeat\":1,\"seed\":null,\"verdict\":\"pass\"," TREC_CHAT "}\n"
#define MAN1                                                                            \
	"{\"suite\":{\"sha256\":\"S\"},\"tokenizer\":null,\"template\":null,"            \
	"\"endpoint\":{\"base_url\":\"http://h\",\"served_model\":\"m\",\"server\":{}},"  \
	"\"started_at\":\"2026-01-01T00:00:01Z\",\"ended_at\":\"2026-01-01T00:01:00Z\"," \
	"\"planned\":{\"version\":2,\"attempts\":1,\"keys\":[\"b\\u001f1\\u001fnull\"]}," \
	"\"shard\":{\"index\":1,\"count\":2,\"attempts\":1,\"from\":\"option\",\"rule\":\"r\"}}"

static char top[4096], s0[4200], s1[4200], out[4200];

static void path(char *p, size_t cap, const char *dir, const char *name)
{
	snprintf(p, cap, "%s/%s", dir, name);
}

static int put(const char *dir, const char *name, const void *data, size_t size)
{
	char p[4400];
	FILE *f;
	int ok;

	path(p, sizeof(p), dir, name);
	if (!(f = fopen(p, "wb")))
		return 0;
	ok = !size || fwrite(data, 1, size, f) == size;
	return !fclose(f) && ok;
}

static void rm(const char *dir, const char *name)
{
	char p[4400];

	path(p, sizeof(p), dir, name);
	unlink(p);
}

static void clean_out(void)
{
	char p[4400];

	rm(out, "results.jsonl");
	rm(out, "manifest.json");
	rm(out, ".results.jsonl.merge");
	rm(out, ".lock");
	path(p, sizeof(p), out, "raw");
	rmdir(p);
	rmdir(out);
}

static void cleanup(void)
{
	clean_out();
	rm(s0, "manifest.json");
	rm(s0, "results.jsonl");
	rm(s1, "manifest.json");
	rm(s1, "results.jsonl");
	rmdir(s0);
	rmdir(s1);
	rmdir(top);
}

static void setup(void)
{
	const char *t = getenv("TMPDIR");
	struct stat st;

	if (!t || !*t)
		t = !stat("/dev/shm", &st) && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
	snprintf(top, sizeof(top), "%s/needle-fuzz-merge-%ld", t, (long)getpid());
	path(s0, sizeof(s0), top, "s0");
	path(s1, sizeof(s1), top, "s1");
	path(out, sizeof(out), top, "out");
	if (mkdir(top, 0700) || mkdir(s0, 0700) || mkdir(s1, 0700) ||
	    !put(s1, "manifest.json", MAN1, strlen(MAN1)) || !put(s1, "results.jsonl", REC1, strlen(REC1)))
		abort();
	atexit(cleanup);
}

/* The merged folder holds the records the merge counted. */
static void check_out(const struct merge_stats *st)
{
	char p[4400];
	struct buf b;
	struct diag d;
	size_t lines = 0, i;
	cJSON *man = NULL;

	buf_init(&b, (size_t)1 << 30);
	diag_init(&d);
	path(p, sizeof(p), out, "results.jsonl");
	if (io_read_file(p, &b, &d))
		abort();
	for (i = 0; i < b.len; i++)
		lines += b.data[i] == '\n';
	if (lines != st->records || results_read_manifest(out, &man, &d) || !man ||
	    jget_num(jget(man, "attempts"), "run") != (double)st->records)
		abort();
	cJSON_Delete(man);
	buf_release(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t mlen = nul ? (size_t)(nul - data) : size;
	const char *dirs[2];
	struct merge_opts o = {1, 0, 1000};
	struct merge_stats st;
	struct buf problems;
	struct diag d;

	if (!top[0])
		setup();
	dirs[0] = s0, dirs[1] = s1;
	if (!put(s0, "manifest.json", data, mlen) ||
	    !(nul ? put(s0, "results.jsonl", nul + 1, size - mlen - 1)
		  : put(s0, "results.jsonl", REC1, strlen(REC1))))
		abort();
	buf_init(&problems, 1 << 20);
	diag_init(&d);
	if (merge_shards(out, dirs, 2, &o, &st, &problems, &d) == ERR_OK)
		check_out(&st);
	buf_release(&problems);
	clean_out();
	return 0;
}
