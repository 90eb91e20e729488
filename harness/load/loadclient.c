/*
 * loadclient — the client's own CPU during load; see loadclient.h.
 */
#include "loadclient.h"

#include <stdint.h>
#include <sys/resource.h>
#include <time.h>

#include "base/io.h"
#include "base/jget.h"
#include "base/json.h"
#include "loadcells.h"

void loadclient_now(struct loadclient_mark *m)
{
	struct rusage u;

	m->wall_ms = io_now_ms();
	m->cpu_ms = 0;
	if (getrusage(RUSAGE_SELF, &u) == 0)
		m->cpu_ms = (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000.0 +
			    (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1000.0;
}

#define PROBE_WORDS (1u << 16) /* 256 KiB of uint32_t */
#define PROBE_STEPS 400000

static uint32_t probe_table[PROBE_WORDS];
static volatile uint32_t probe_sink;

/* The calling thread's CPU time in ms. */
static double thread_cpu_ms(void)
{
	struct timespec t;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0)
		return 0;
	return (double)t.tv_sec * 1000.0 + (double)t.tv_nsec / 1e6;
}

double loadclient_probe(void)
{
	uint32_t x = 2463534242u, sum = 0, i;
	double t0 = thread_cpu_ms();

	for (i = 0; i < PROBE_WORDS; i++)
		probe_table[i] = i * 2654435761u;
	for (i = 0; i < PROBE_STEPS; i++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5; /* xorshift32 */
		probe_table[x & (PROBE_WORDS - 1)] += x;
		sum ^= probe_table[(x >> 16) & (PROBE_WORDS - 1)];
	}
	probe_sink = sum;
	return thread_cpu_ms() - t0;
}

enum err loadclient_note(cJSON *manifest, const struct loadclient_round *r, struct diag *d)
{
	struct loadclient_mark now;
	struct json_build jb;
	cJSON *arr = (cJSON *)jget(manifest, LC_LOAD_CLIENT), *o;

	loadclient_now(&now);
	json_build_init(&jb);
	if (!cJSON_IsArray(arr))
		arr = json_add_arr(&jb, manifest, LC_LOAD_CLIENT);
	o = json_add_obj(&jb, arr, NULL);
	json_add_str(&jb, o, LC_CASE, r->case_id);
	json_add_num(&jb, o, r->open_loop ? LC_RATE : LC_CONCURRENCY, r->level_value);
	json_add_int(&jb, o, LC_LEVEL, r->level);
	json_add_int(&jb, o, LC_ROUND, r->round);
	json_add_num(&jb, o, LC_CPU_MS, now.cpu_ms - r->from.cpu_ms);
	json_add_num(&jb, o, LC_WALL_MS, now.wall_ms - r->from.wall_ms);
	json_add_num(&jb, o, LC_PROBE_MS, r->probe_ms);
	return json_build_end(&jb, NULL, "the manifest", d);
}

enum err loadclient_total(cJSON *manifest, const struct loadclient_mark *from,
			  struct diag *d)
{
	struct loadclient_mark now;
	struct json_build jb;
	double wall, cpu;
	cJSON *o;

	loadclient_now(&now);
	wall = now.wall_ms - from->wall_ms;
	cpu = now.cpu_ms - from->cpu_ms;
	cJSON_DeleteItemFromObjectCaseSensitive(manifest, LC_CLIENT);
	json_build_init(&jb);
	o = json_add_obj(&jb, manifest, LC_CLIENT);
	json_add_num(&jb, o, LC_CPU_MS, cpu);
	json_add_num(&jb, o, LC_WALL_MS, wall);
	json_add_num(&jb, o, LC_CPU_SHARE, wall > 0 ? cpu / wall : 0);
	return json_build_end(&jb, NULL, "the manifest", d);
}
