/*
 * fuzz_results — the results reader (harness/run/results.h): arbitrary bytes as
 * RUN_DIR/results.jsonl opened with --resume (records loaded, a torn last line
 * cut off) and as RUN_DIR/manifest.json read back. The run folder is one
 * per process under $TMPDIR, /dev/shm or /tmp. After a resume that succeeded,
 * the prior verdict counts must match the recorded keys.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "run/results.h"

static char dir[4096], journal[4200], manifest[4200], raw[4200], lock[4200];

static void cleanup(void)
{
	unlink(journal);
	unlink(manifest);
	unlink(lock);
	rmdir(raw);
	rmdir(dir);
}

static int put(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	int ok;

	if (!f)
		return 0;
	ok = !size || fwrite(data, 1, size, f) == size;
	return !fclose(f) && ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct results *r = NULL;
	cJSON *m = NULL;
	struct diag d;

	if (!dir[0]) {
		const char *t = getenv("TMPDIR");
		struct stat st;

		if (!t || !*t)
			t = !stat("/dev/shm", &st) && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
		snprintf(dir, sizeof(dir), "%s/needle-fuzz-results-%ld", t, (long)getpid());
		snprintf(journal, sizeof(journal), "%s/results.jsonl", dir);
		snprintf(manifest, sizeof(manifest), "%s/manifest.json", dir);
		snprintf(raw, sizeof(raw), "%s/raw", dir);
		snprintf(lock, sizeof(lock), "%s/.lock", dir);
		mkdir(dir, 0700);
		atexit(cleanup);
	}
	if (!put(journal, data, size) || !put(manifest, data, size))
		abort();
	diag_init(&d);
	if (!results_open(dir, 1, &r, &d) && r->prior_pass + r->prior_fail != r->keys.n)
		abort();
	results_free(r);
	diag_init(&d);
	(void)results_read_manifest(dir, &m, &d);
	cJSON_Delete(m);
	return 0;
}
