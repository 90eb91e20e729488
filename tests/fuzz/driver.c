/*
 * driver — a plain main() for the fuzz targets when libFuzzer is not at hand
 * (gcc, `make test`). Each target defines LLVMFuzzerTestOneInput; linked with
 * this file it becomes a program that
 *   1. replays every file of a seed corpus directory, then
 *   2. runs deterministic random mutations of those seeds (bit flips, byte
 *      sets, inserts, deletes, duplicated or spliced ranges, truncations)
 *      until an iteration or time bound is reached.
 * It calls LLVMFuzzerInitialize (tests/fuzz/init.c) first, as libFuzzer does.
 * Findings are whatever the sanitizers (or the target's own abort()) report;
 * the driver itself only feeds inputs. The mutation stream comes from
 * generators/prng.h, so a run is reproducible from its seed. When a sanitizer
 * reports or the target aborts, the input is written to FUZZ_CRASH_DIR (default:
 * the working directory) as `fuzz-crash-input` so that it can be replayed.
 *
 * Usage: TARGET CORPUS_DIR [ITERATIONS [SECONDS [SEED]]]
 *        TARGET FILE...     (replay the given files only)
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "generators/prng.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv); /* tests/fuzz/init.c */

#define INPUT_MAX ((size_t)64 << 10) /* a mutated input never grows past this */
#define SEEDS_MAX 256

struct seed {
	uint8_t *data;
	size_t len;
};

static struct seed seeds[SEEDS_MAX];
static size_t nseeds;
static char crash_path[4096];
static const uint8_t *current;
static size_t current_len;

/* The sanitizers' hook for "about to die" (weak: absent without them). */
void __sanitizer_set_death_callback(void (*fn)(void)) __attribute__((weak));

/* Async-signal-safe: open/write/close only. */
static void save_current(void)
{
	int fd = open(crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd >= 0) {
		if (current && write(fd, current, current_len) < 0)
			current_len = 0;
		close(fd);
	}
}

static void on_signal(int sig)
{
	save_current();
	signal(sig, SIG_DFL);
	raise(sig);
}

static int read_all(const char *path, struct seed *s)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 4096, n;

	if (!f)
		return -1;
	s->data = malloc(cap);
	s->len = 0;
	while (s->data && (n = fread(s->data + s->len, 1, cap - s->len, f)) > 0) {
		s->len += n;
		if (s->len == cap) {
			uint8_t *p = cap < INPUT_MAX ? realloc(s->data, cap * 2) : NULL;

			if (!p)
				break;
			s->data = p;
			cap *= 2;
		}
	}
	fclose(f);
	return s->data ? 0 : -1;
}

static void run_one(const uint8_t *data, size_t len)
{
	current = data;
	current_len = len;
	LLVMFuzzerTestOneInput(data, len);
	current = NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Loads every regular file of `dir` in name order (readdir order varies). */
static int load_corpus(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char *names[SEEDS_MAX];
	size_t n = 0, i;

	if (!d)
		return -1;
	while ((e = readdir(d)) && n < SEEDS_MAX)
		if (e->d_name[0] != '.')
			names[n++] = strdup(e->d_name);
	closedir(d);
	qsort(names, n, sizeof(names[0]), by_name);
	for (i = 0; i < n; i++) {
		char path[4096];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (!stat(path, &st) && S_ISREG(st.st_mode) &&
		    !read_all(path, &seeds[nseeds]))
			nseeds++;
		free(names[i]);
	}
	return 0;
}

/* One mutation of `buf` (`*len` bytes, capacity INPUT_MAX). */
static void mutate(struct prng *r, uint8_t *buf, size_t *len)
{
	size_t n = *len, at = n ? (size_t)prng_below(r, n) : 0, k;
	const struct seed *other = &seeds[prng_below(r, nseeds)];

	switch (prng_below(r, 8)) {
	case 0: /* flip a bit */
		if (n)
			buf[at] ^= (uint8_t)(1u << prng_below(r, 8));
		break;
	case 1: /* set a byte to an interesting value */
		if (n) {
			static const uint8_t v[] = {0, '\n', '\r', '"', '\\', ':', '{',
						    '}', '[', ']', ',', 0x7f, 0x80,
						    0xc3, 0xe2, 0xf0, 0xff, '0', '9'};
			buf[at] = v[prng_below(r, sizeof(v))];
		}
		break;
	case 2: /* insert a random byte */
		if (n < INPUT_MAX) {
			memmove(buf + at + 1, buf + at, n - at);
			buf[at] = (uint8_t)prng_next(r);
			n++;
		}
		break;
	case 3: /* delete a range */
		k = n - at ? 1 + (size_t)prng_below(r, n - at < 16 ? n - at : 16) : 0;
		memmove(buf + at, buf + at + k, n - at - k);
		n -= k;
		break;
	case 4: /* duplicate a range in place */
		k = n - at ? 1 + (size_t)prng_below(r, n - at < 64 ? n - at : 64) : 0;
		if (n + k <= INPUT_MAX) {
			memmove(buf + at + k, buf + at, n - at);
			n += k;
		}
		break;
	case 5: /* splice: a range of another seed overwrites the tail */
		if (other->len) {
			size_t from = (size_t)prng_below(r, other->len);

			k = other->len - from;
			if (at + k > INPUT_MAX)
				k = INPUT_MAX - at;
			memcpy(buf + at, other->data + from, k);
			n = at + k;
		}
		break;
	case 6: /* truncate */
		n = at;
		break;
	default: /* copy a range of itself elsewhere (keeps tokens realistic) */
		if (n) {
			size_t from = (size_t)prng_below(r, n);

			k = 1 + (size_t)prng_below(r, n - from < 32 ? n - from : 32);
			if (at + k > n)
				k = n - at;
			memmove(buf + at, buf + from, k);
		}
		break;
	}
	*len = n;
}

int main(int argc, char **argv)
{
	long iterations = argc > 2 ? strtol(argv[2], NULL, 10) : 2000;
	double seconds = argc > 3 ? strtod(argv[3], NULL) : 5;
	uint64_t seed = argc > 4 ? strtoull(argv[4], NULL, 10) : 1;
	const char *dir = getenv("FUZZ_CRASH_DIR");
	struct stat st;
	struct prng r;
	uint8_t *buf;
	double t0 = now_s();
	long i;
	size_t s;

	if (argc < 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR [ITERATIONS [SECONDS [SEED]]] | FILE...\n",
			argv[0]);
		return 2;
	}
	LLVMFuzzerInitialize(&argc, &argv);
	snprintf(crash_path, sizeof(crash_path), "%s/fuzz-crash-input", dir ? dir : ".");
	if (__sanitizer_set_death_callback)
		__sanitizer_set_death_callback(save_current);
	signal(SIGABRT, on_signal);
	signal(SIGSEGV, on_signal);
	if (!stat(argv[1], &st) && S_ISREG(st.st_mode)) {
		for (i = 1; i < argc; i++) {
			struct seed one;

			if (read_all(argv[i], &one))
				return 2;
			LLVMFuzzerTestOneInput(one.data, one.len);
			free(one.data);
		}
		return 0;
	}
	if (load_corpus(argv[1]) || !nseeds) {
		fprintf(stderr, "%s: no seed files in '%s'\n", argv[0], argv[1]);
		return 2;
	}
	for (s = 0; s < nseeds; s++)
		run_one(seeds[s].data, seeds[s].len);
	buf = malloc(INPUT_MAX);
	if (!buf)
		return 2;
	prng_init(&r, seed, 0);
	for (i = 0; i < iterations; i++) {
		const struct seed *from = &seeds[prng_below(&r, nseeds)];
		size_t len = from->len < INPUT_MAX ? from->len : INPUT_MAX;
		long m, rounds = 1 + (long)prng_below(&r, 8);

		if (now_s() - t0 > seconds)
			break;
		memcpy(buf, from->data, len);
		for (m = 0; m < rounds; m++)
			mutate(&r, buf, &len);
		run_one(buf, len);
	}
	printf("%s: %zu seeds, %ld mutated inputs, %.1f s\n", argv[0], nseeds, i,
	       now_s() - t0);
	for (s = 0; s < nseeds; s++)
		free(seeds[s].data);
	free(buf);
	return 0;
}
