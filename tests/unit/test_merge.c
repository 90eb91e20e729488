/* Unit tests of merge.c through merge_shards, on shard folders written into a
 * new folder under /tmp (the working directory while they run, so messages
 * name the shards as given: 's0', 's1'): the merged journal in index order,
 * raw/ copied, the manifest's merge facts and the stats; identical records
 * dropped and counted; and every way shards fail to make one run (foreign,
 * not a shard, index twice, missing or out of range, incomplete, recorded
 * differently, load rounds begun apart), each a problem line with the exact
 * message, ERR_INPUT with the first, and nothing written; an unreadable
 * folder; an output folder that holds records already; a hostile shard (a
 * symbolic link or FIFO as its journal, manifest, raw/ or a raw/ file, a
 * shard index no integer holds), each refused by name; --force into an
 * earlier merge, never into a run; raw/ files linked on the shard's
 * filesystem and copied onto another. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/io.h"
#include "base/jget.h"
#include "report/merge.h"
#include "t.h"
#include "trec.h"

/* One record line of case `c`, repeat `r`, no seed. */
#define REC(c, r, v) "{\"case\":\"" c "\",\"repeat\":" #r ",\"seed\":null,\"verdict\":\"" v "\"," TREC_CHAT "}\n"
/* One load request of case "x", level 0, round 1, begun at `t0` (Unix s). */
#define LOADREC(r, t0)                                                                      \
	"{\"case\":\"x\",\"repeat\":" #r ",\"seed\":null,\"verdict\":\"pass\",\"kind\":\"load\","  \
	"\"load\":{\"level\":0,\"round\":1,\"warmup\":false,\"scheduled_ms\":0,\"sent_ms\":1,"  \
	"\"round_started_unix\":" #t0 "}," TREC_CHECKS "}\n"

static char top[] = "/tmp/needle-test-merge-XXXXXX";

/* The manifest of a shard: index of count (count 0: no "shard"), planned
 * attempts, ended_at (NULL: never ended), the suite's SHA-256 and more
 * members (JSON text, each followed by ','). */
struct man {
	long index, count, attempts;
	const char *ended, *suite, *extra;
};

/* The string at o[k], NULL when there is none. */
static const char *str(const cJSON *o, const char *k)
{
	return cJSON_GetStringValue(jget(o, k));
}

static int starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static void put(const char *dir, const char *file, const char *text)
{
	char path[512];
	struct diag d;

	diag_init(&d);
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	CHECK(io_mkdirs(dir, &d) == ERR_OK);
	CHECK(io_write_file(path, text, strlen(text), &d) == ERR_OK);
}

/* Writes shard folder `dir`: its manifest and its records. */
static void shard(const char *dir, const struct man *m, const char *records)
{
	char text[2048], sh[256] = "", ended[64] = "";

	if (m->count)
		snprintf(sh, sizeof(sh),
			 ",\"shard\":{\"index\":%ld,\"count\":%ld,\"attempts\":%ld,\"from\":\"option\","
			 "\"rule\":\"greedy-prompt-tokens-v1\"}", m->index, m->count, m->attempts);
	if (m->ended)
		snprintf(ended, sizeof(ended), ",\"ended_at\":\"%s\"", m->ended);
	snprintf(text, sizeof(text),
		 "{%s\"suite\":{\"sha256\":\"%s\"},\"tokenizer\":{\"sha256\":\"T\"},"
		 "\"template\":{\"sha256\":\"P\"},\"endpoint\":{\"base_url\":\"http://h:8000/v1\","
		 "\"served_model\":\"m\",\"server\":{\"version\":\"0.11.0\"}},"
		 "\"started_at\":\"2026-01-01T00:00:0%ldZ\"%s%s}",
		 m->extra ? m->extra : "", m->suite ? m->suite : "S", m->index, ended, sh);
	put(dir, "manifest.json", text);
	put(dir, "results.jsonl", records);
}

static void clear(void)
{
	CHECK(system("rm -rf s0 s1 s2 out out2") == 0);
}

/* merge_shards into `out` of the named shards; d and pr start empty. */
static enum err merge(const char *out, const char *a, const char *b, int partial,
		      double skew, struct merge_stats *st, struct buf *pr, struct diag *d)
{
	const char *dirs[2] = {a, b};
	struct merge_opts o = {partial, 0, skew};

	diag_init(d);
	buf_reset(pr);
	return merge_shards(out, dirs, b ? 2 : 1, &o, st, pr, d);
}

static cJSON *read_json(const char *path)
{
	struct buf b;
	struct diag d;
	cJSON *j = NULL;

	buf_init(&b, 1 << 20);
	diag_init(&d);
	if (io_read_file(path, &b, &d) == ERR_OK)
		j = cJSON_Parse(b.data);
	buf_release(&b);
	CHECK(j != NULL);
	return j;
}

static void check_file(const char *path, const char *want)
{
	struct buf b;
	struct diag d;

	buf_init(&b, 1 << 20);
	diag_init(&d);
	CHECK(io_read_file(path, &b, &d) == ERR_OK);
	CHECK_STR(b.data, want);
	buf_release(&b);
}

/* Two shards given out of order: records in index order, raw/ copied, the
 * manifest's shard, shards, attempts and merge members, the stats. */
static void test_merged(void)
{
	struct man m0 = {0, 2, 2, "2026-01-01T00:09:00Z", NULL, NULL};
	struct man m1 = {1, 2, 1, "2026-01-01T00:05:00Z", NULL, "\"start_lag_ms\":250,"};
	struct merge_stats st;
	struct buf pr;
	struct diag d;
	const cJSON *sh;
	cJSON *man;

	buf_init(&pr, 1 << 16);
	shard("s0", &m0, REC("c", 0, "pass") REC("c", 1, "fail"));
	put("s0/raw", "c-r0.sse", "data: [DONE]\n\n");
	shard("s1", &m1, REC("d", 0, "pass"));
	CHECK_EQ_LONG(merge("out", "s1", "s0", 0, 1000, &st, &pr, &d), ERR_OK);
	CHECK_EQ_LONG(pr.len, 0);
	CHECK(st.shards == 2 && st.records == 3 && st.duplicates == 0 && st.incomplete == 0);
	CHECK(st.max_lag_ms == 250);
	check_file("out/results.jsonl", REC("c", 0, "pass") REC("c", 1, "fail") REC("d", 0, "pass"));
	check_file("out/raw/c-r0.sse", "data: [DONE]\n\n");
	man = read_json("out/manifest.json");
	CHECK(cJSON_IsTrue(jget2(man, "shard", "merged")) && jget_num(jget(man, "shard"), "count") == 2);
	CHECK_STR(str(jget(man, "shard"), "rule"), "greedy-prompt-tokens-v1");
	CHECK_STR(str(man, "started_at"), "2026-01-01T00:00:00Z");
	CHECK_STR(str(man, "ended_at"), "2026-01-01T00:09:00Z");
	CHECK_EQ_LONG(cJSON_GetArraySize(jget(man, "shards")), 2);
	sh = cJSON_GetArrayItem(jget(man, "shards"), 0); /* in the order given */
	CHECK(jget_num(sh, "index") == 1 && jget_num(sh, "start_lag_ms") == 250);
	CHECK_STR(str(sh, "dir"), "s1");
	sh = cJSON_GetArrayItem(jget(man, "shards"), 1);
	CHECK(jget_num(sh, "attempts") == 2 && jget_num(sh, "records") == 2);
	CHECK(cJSON_IsNull(jget(sh, "start_lag_ms")));
	sh = jget(man, "attempts");
	CHECK(jget_num(sh, "planned") == 3 && jget_num(sh, "run") == 3);
	CHECK(jget_num(sh, "pass") == 2 && jget_num(sh, "fail") == 1);
	CHECK_EQ_LONG(jget_num(jget(man, "merge"), "duplicates_dropped"), 0);
	CHECK_STR(str(jget(man, "endpoint"), "served_model"), "m");
	CHECK(jget(man, "start_lag_ms") == NULL && jget(jget(man, "merge"), "load") == NULL);
	cJSON_Delete(man);
	/* a folder that holds records already */
	CHECK_EQ_LONG(merge("out", "s0", "s1", 0, 1000, &st, &pr, &d), ERR_USAGE);
	CHECK_STR(d.msg, "results folder 'out' already holds results; pass --force to merge into it again, or another OUT");
	check_file("out/results.jsonl", REC("c", 0, "pass") REC("c", 1, "fail") REC("d", 0, "pass"));
	buf_release(&pr);
	clear();
}

/* An attempt recorded alike in two shards is kept once and counted; recorded
 * differently, it is a problem. */
static void test_duplicates(void)
{
	struct man m0 = {0, 2, 2, "2026-01-01T00:09:00Z", NULL, NULL};
	struct man m1 = {1, 2, 1, "2026-01-01T00:09:00Z", NULL, NULL};
	struct merge_stats st;
	struct buf pr;
	struct diag d;
	cJSON *man;

	buf_init(&pr, 1 << 16);
	shard("s0", &m0, REC("c", 0, "pass") REC("d", 0, "pass"));
	shard("s1", &m1, REC("d", 0, "pass"));
	CHECK_EQ_LONG(merge("out", "s0", "s1", 0, 1000, &st, &pr, &d), ERR_OK);
	CHECK(st.records == 2 && st.duplicates == 1 && st.max_lag_ms == -1);
	check_file("out/results.jsonl", REC("c", 0, "pass") REC("d", 0, "pass"));
	man = read_json("out/manifest.json");
	CHECK_EQ_LONG(jget_num(jget(man, "merge"), "duplicates_dropped"), 1);
	cJSON_Delete(man);
	shard("s1", &m1, REC("d", 0, "fail"));
	CHECK_EQ_LONG(merge("out2", "s0", "s1", 0, 1000, &st, &pr, &d), ERR_INPUT);
	CHECK_STR(d.msg, "attempt of case 'd' is recorded differently in 's0' and 's1'");
	CHECK_STR(pr.data, "attempt of case 'd' is recorded differently in 's0' and 's1'\n");
	CHECK(access("out2", F_OK) != 0);
	buf_release(&pr);
	clear();
}

/* Runs merge of s0 and s1 (built from m0 and m1, one record each of case
 * "a" and "b") into "out": ERR_INPUT, the problem lines `want`, d.msg the
 * first of them, nothing written. */
static void expect_problems(const struct man *m0, const struct man *m1, const char *want)
{
	struct merge_stats st;
	struct buf pr;
	struct diag d;
	size_t first = strcspn(want, "\n");
	char msg[1024];

	buf_init(&pr, 1 << 16);
	shard("s0", m0, REC("a", 0, "pass"));
	shard("s1", m1, REC("b", 0, "pass"));
	CHECK_EQ_LONG(merge("out", "s0", "s1", 0, 1000, &st, &pr, &d), ERR_INPUT);
	CHECK_STR(pr.data, want);
	snprintf(msg, sizeof(msg), "%.*s%s", (int)first, want,
		 want[first + 1] ? " (and more: see the list)" : "");
	CHECK_STR(d.msg, msg);
	CHECK(access("out", F_OK) != 0);
	buf_release(&pr);
	clear();
}

static void test_problems(void)
{
	const char *end = "2026-01-01T00:09:00Z";
	struct man s0 = {0, 2, 1, end, NULL, NULL};
	struct man other = {1, 2, 1, end, "other", NULL};
	struct man opt = {1, 2, 1, end, NULL, "\"options\":{\"case\":[\"b\"]},"};
	struct man three = {1, 3, 1, end, NULL, NULL}, twice = {0, 2, 1, end, NULL, NULL};
	struct man one = {0, 1, 1, end, NULL, NULL}, far = {5, 1, 1, end, NULL, NULL};
	struct man none = {0, 0, 1, end, NULL, NULL};
	struct man short1 = {1, 2, 2, end, NULL, NULL}, open1 = {1, 2, 1, NULL, NULL, NULL};

	expect_problems(&s0, &other, "'s1' is a foreign shard: suite SHA-256 'other' is not 'S' as in 's0'\n");
	expect_problems(&s0, &opt, "'s1' is a foreign shard: option '--case' is not as in 's0'\n");
	expect_problems(&s0, &three, "'s1' is a foreign shard: one of 3 shards, not 2\nshard 1 of 2 is missing\n");
	expect_problems(&s0, &twice, "shard 0 is given twice (again in 's1')\nshard 1 of 2 is missing\n");
	expect_problems(&one, &far, "'s1': shard index 5 is out of range\n");
	expect_problems(&one, &none,
			"'s1' is not a shard: its manifest has no \"shard\" index and count\n");
	expect_problems(&s0, &short1,
			"'s1' is incomplete: 1 of 2 attempts recorded (resume it with 'needle run ... --resume --out s1')\n");
	expect_problems(&s0, &open1,
			"'s1' is incomplete: 1 of 1 attempts recorded, never ended (resume it with 'needle run ... --resume --out s1')\n");
}

/* --allow-partial merges incomplete shards and counts them, one of them
 * never ended (killed): its entry says so with a null "ended_at", and the
 * merged run ends when the last shard that ended did. */
static void test_partial(void)
{
	struct man m0 = {0, 2, 3, "2026-01-01T00:09:00Z", NULL, NULL};
	struct man m1 = {1, 2, 2, NULL, NULL, NULL};
	struct merge_stats st;
	struct buf pr;
	struct diag d;
	cJSON *man;

	buf_init(&pr, 1 << 16);
	shard("s0", &m0, REC("a", 0, "pass") REC("a", 1, "fail"));
	shard("s1", &m1, REC("b", 0, "pass"));
	CHECK_EQ_LONG(merge("out", "s0", "s1", 1, 1000, &st, &pr, &d), ERR_OK);
	CHECK(st.incomplete == 2 && st.records == 3);
	man = read_json("out/manifest.json");
	CHECK_EQ_LONG(jget_num(jget(man, "merge"), "incomplete_shards"), 2);
	CHECK(jget_num(jget(man, "attempts"), "planned") == 5 && jget_num(jget(man, "attempts"), "run") == 3);
	CHECK_STR(str(man, "ended_at"), "2026-01-01T00:09:00Z");
	CHECK(cJSON_IsNull(jget(cJSON_GetArrayItem(jget(man, "shards"), 1), "ended_at")));
	cJSON_Delete(man);
	buf_release(&pr);
	clear();
}

/* Load shards whose round began 3 s apart: a problem at the default
 * tolerance, merged (and noted) at 5 s. */
static void test_load(void)
{
	struct man m0 = {0, 2, 1, "2026-01-01T00:09:00Z", NULL, NULL};
	struct man m1 = {1, 2, 1, "2026-01-01T00:09:00Z", NULL, NULL};
	struct merge_stats st;
	struct buf pr;
	struct diag d;
	cJSON *man;

	buf_init(&pr, 1 << 16);
	shard("s0", &m0, LOADREC(0, 1000));
	shard("s1", &m1, LOADREC(1, 1003));
	CHECK_EQ_LONG(merge("out", "s0", "s1", 0, MERGELOAD_SKEW_MS, &st, &pr, &d), ERR_INPUT);
	CHECK(starts(d.msg, "load case 'x' (level 0, round 1): the shards began 3000 ms apart "
			    "('s0' first, 's1' last), more than 1000 ms (--max-skew): "));
	CHECK(access("out", F_OK) != 0);
	CHECK_EQ_LONG(merge("out", "s0", "s1", 0, 5000, &st, &pr, &d), ERR_OK);
	CHECK(st.load.shards == 2 && st.load.skew_ms == 3000 && st.records == 2);
	man = read_json("out/manifest.json");
	CHECK_EQ_LONG(jget_num(jget(jget(man, "merge"), "load"), "tolerance_ms"), 5000);
	cJSON_Delete(man);
	buf_release(&pr);
	clear();
}

/* A folder without a manifest, one without results.jsonl, a malformed
 * journal: the message names it; nothing is written. */
static void test_bad_folders(void)
{
	struct man m0 = {0, 1, 1, "2026-01-01T00:09:00Z", NULL, NULL};
	struct merge_stats st;
	struct buf pr;
	struct diag d;

	buf_init(&pr, 1 << 16);
	shard("s0", &m0, REC("a", 0, "pass"));
	put("s1", "results.jsonl", REC("a", 0, "pass"));
	CHECK_EQ_LONG(merge("out", "s0", "s1", 0, 1000, &st, &pr, &d), ERR_INPUT);
	CHECK_STR(d.msg, "'s1' has no manifest.json: not a run folder");
	CHECK_EQ_LONG(merge("out", "s0", "s2", 0, 1000, &st, &pr, &d), ERR_IO);
	CHECK(starts(d.msg, "cannot read 's2/results.jsonl': "));
	put("s1", "results.jsonl", "{\"case\":\"a\"}\n" REC("a", 1, "pass"));
	CHECK_EQ_LONG(merge("out", "s1", "s0", 0, 1000, &st, &pr, &d), ERR_INPUT);
	CHECK(starts(d.msg, "malformed results 's1/results.jsonl' line 1: "));
	CHECK(pr.len == 0 && access("out", F_OK) != 0);
	CHECK_EQ_LONG(merge("out", "s0", NULL, 0, 1000, &st, &pr, &d), ERR_OK);
	CHECK(st.shards == 1 && st.records == 1);
	buf_release(&pr);
	clear();
}

/* A shard from another machine is never followed: a symbolic link or FIFO
 * in its raw/, raw/ itself a link, its journal or manifest a link: each is
 * refused by name, nothing outside it is read, and nothing is written. */
static void test_hostile(void)
{
	struct man m0 = {0, 1, 1, "2026-01-01T00:09:00Z", NULL, NULL};
	struct merge_stats st;
	struct buf pr;
	struct diag d;

	buf_init(&pr, 1 << 16);
	shard("s0", &m0, REC("a", 0, "pass"));
	put("s1", "secret", "outside");
	CHECK(mkdir("s0/raw", 0700) == 0);
	CHECK(symlink("../../s1/secret", "s0/raw/a-r0.sse") == 0 || !"symlink");
	CHECK_EQ_LONG(merge("out", "s0", NULL, 0, 1000, &st, &pr, &d), ERR_INPUT);
	CHECK_STR(d.msg, "cannot read 's0/raw/a-r0.sse': a symbolic link (not followed here)");
	CHECK(access("out/results.jsonl", F_OK) != 0 && access("out/raw/a-r0.sse", F_OK) != 0);
	CHECK(unlink("s0/raw/a-r0.sse") == 0 && mkfifo("s0/raw/a-r0.sse", 0600) == 0);
	CHECK_EQ_LONG(merge("out", "s0", NULL, 0, 1000, &st, &pr, &d), ERR_INPUT);
	CHECK_STR(d.msg, "cannot read 's0/raw/a-r0.sse': not a regular file (a FIFO)");
	CHECK(system("rm -rf s0/raw out") == 0 && symlink("../s1", "s0/raw") == 0);
	CHECK_EQ_LONG(merge("out", "s0", NULL, 0, 1000, &st, &pr, &d), ERR_INPUT);
	CHECK_STR(d.msg, "'s0/raw' is not a folder (a symbolic link is never followed)");
	CHECK(unlink("s0/raw") == 0 && rename("s0/results.jsonl", "s1/results.jsonl") == 0);
	CHECK(symlink("../s1/results.jsonl", "s0/results.jsonl") == 0);
	CHECK_EQ_LONG(merge("out", "s0", NULL, 0, 1000, &st, &pr, &d), ERR_INPUT);
	CHECK_STR(d.msg, "cannot read 's0/results.jsonl': a symbolic link (not followed here)");
	CHECK(unlink("s0/results.jsonl") == 0 && mkfifo("s0/results.jsonl", 0600) == 0);
	CHECK_EQ_LONG(merge("out", "s0", NULL, 0, 1000, &st, &pr, &d), ERR_INPUT);
	CHECK_STR(d.msg, "cannot read 's0/results.jsonl': not a regular file (a FIFO)");
	CHECK(rename("s0/manifest.json", "s1/manifest.json") == 0 &&
	      symlink("/dev/zero", "s0/manifest.json") == 0);
	CHECK_EQ_LONG(merge("out", "s0", NULL, 0, 1000, &st, &pr, &d), ERR_INPUT);
	CHECK_STR(d.msg, "cannot read 's0/manifest.json': a symbolic link (not followed here)");
	CHECK(access("out/results.jsonl", F_OK) != 0);
	/* numbers no integer holds are no shard index (a cast would be undefined) */
	put("s1", "manifest.json", "{\"shard\":{\"index\":1e300,\"count\":2,\"attempts\":-1e300}}");
	CHECK_EQ_LONG(merge("out", "s1", NULL, 0, 1000, &st, &pr, &d), ERR_INPUT);
	CHECK_STR(pr.data, "'s1' is not a shard: its manifest has no \"shard\" index and count\n");
	buf_release(&pr);
	clear();
}

/* --force merges again into a folder that holds a merge (a retried merge
 * job), replacing it; never into one that holds a run. */
static void test_force(void)
{
	struct man m0 = {0, 1, 2, "2026-01-01T00:09:00Z", NULL, NULL};
	struct merge_opts o = {0, 1, 1000};
	const char *dirs[1] = {"s0"};
	char shm[128], path[256];
	struct stat a, b;
	struct merge_stats st;
	struct buf pr;
	struct diag d;

	buf_init(&pr, 1 << 16);
	shard("s0", &m0, REC("a", 0, "pass"));
	CHECK_EQ_LONG(merge("out", "s0", NULL, 1, 1000, &st, &pr, &d), ERR_OK);
	put("s0", "results.jsonl", REC("a", 0, "pass") REC("a", 1, "fail"));
	put("s0/raw", "a-r1.sse", "data: [DONE]\n\n");
	CHECK_EQ_LONG(merge("out", "s0", NULL, 0, 1000, &st, &pr, &d), ERR_USAGE);
	diag_init(&d);
	CHECK_EQ_LONG(merge_shards("out", dirs, 1, &o, &st, &pr, &d), ERR_OK);
	CHECK(st.records == 2 && st.incomplete == 0);
	check_file("out/results.jsonl", REC("a", 0, "pass") REC("a", 1, "fail"));
	check_file("out/raw/a-r1.sse", "data: [DONE]\n\n");
	CHECK(access("out/.results.jsonl.merge", F_OK) != 0);
	/* raw/ files are hard links on the shard's filesystem, copies elsewhere */
	CHECK(stat("s0/raw/a-r1.sse", &a) == 0 && stat("out/raw/a-r1.sse", &b) == 0);
	CHECK(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
	snprintf(shm, sizeof(shm), "/dev/shm/needle-test-merge-%ld", (long)getpid());
	if (stat("/dev/shm", &b) == 0 && b.st_dev != a.st_dev) {
		diag_init(&d);
		CHECK_EQ_LONG(merge_shards(shm, dirs, 1, &o, &st, &pr, &d), ERR_OK);
		snprintf(path, sizeof(path), "%s/raw/a-r1.sse", shm);
		check_file(path, "data: [DONE]\n\n");
		CHECK(stat(path, &b) == 0 && b.st_ino != a.st_ino);
		snprintf(path, sizeof(path), "rm -rf %s", shm);
		CHECK(system(path) == 0);
	}
	diag_init(&d);
	CHECK_EQ_LONG(merge_shards("s0", dirs, 1, &o, &st, &pr, &d), ERR_USAGE);
	CHECK_STR(d.msg, "results folder 's0' holds a run that is not a merge: --force replaces only a merged run");
	buf_release(&pr);
	clear();
}

int main(void)
{
	char here[4096];

	if (!getcwd(here, sizeof(here)) || !mkdtemp(top) || chdir(top)) {
		perror("test_merge: cannot set up");
		return 1;
	}
	T_RUN(test_merged);
	T_RUN(test_duplicates);
	T_RUN(test_problems);
	T_RUN(test_partial);
	T_RUN(test_load);
	T_RUN(test_bad_folders);
	T_RUN(test_hostile);
	T_RUN(test_force);
	if (chdir(here) || rmdir(top))
		CHECK(!"temporary folder left behind");
	return T_DONE();
}
