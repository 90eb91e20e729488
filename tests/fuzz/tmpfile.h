/*
 * tmpfile — the loaders under test read files, not memory (tpl_load and
 * tok_load take a path), so the fuzz targets write each input to one file of
 * their own: under $TMPDIR, else /dev/shm when it exists (much faster than a
 * disk for thousands of small writes), else /tmp. The file is removed at exit.
 * Returns the path (static storage), or NULL when it cannot be written.
 */
#ifndef NEEDLE_FUZZ_TMPFILE_H
#define NEEDLE_FUZZ_TMPFILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char fuzz_tmp_path[4096];

static void fuzz_tmp_remove(void)
{
	unlink(fuzz_tmp_path);
}

static const char *fuzz_tmp_write(const uint8_t *data, size_t size, const char *suffix)
{
	FILE *f;

	if (!fuzz_tmp_path[0]) {
		const char *dir = getenv("TMPDIR");
		struct stat st;

		if (!dir || !*dir)
			dir = !stat("/dev/shm", &st) && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
		snprintf(fuzz_tmp_path, sizeof(fuzz_tmp_path), "%s/needle-fuzz-%ld%s", dir,
			 (long)getpid(), suffix);
		atexit(fuzz_tmp_remove);
	}
	f = fopen(fuzz_tmp_path, "wb");
	if (!f)
		return NULL;
	if (size && fwrite(data, 1, size, f) != size) {
		fclose(f);
		return NULL;
	}
	return fclose(f) ? NULL : fuzz_tmp_path;
}

#endif
