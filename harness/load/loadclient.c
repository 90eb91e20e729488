/*
 * loadclient — the client's own CPU during load; see loadclient.h.
 */
#include "loadclient.h"

#include <sys/resource.h>

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
