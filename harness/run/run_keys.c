/* run_keys — which attempts a case has and their record keys (run_int.h). */
#include <fnmatch.h>
#include <stdio.h>

#include "run_int.h"

int run_seeds(const struct suite_case *c)
{
	return c->kind == SUITE_RECALL ? c->recall.nseeds * recprobe_steps(&c->recall) : 1;
}

long run_repeats(const struct run *r, const struct suite_case *c)
{
	return r->o->repeat > 0 ? r->o->repeat : c->repeat;
}

int run_selected(const struct run *r, const struct suite_case *c)
{
	int i;

	for (i = 0; i < r->o->ncase_globs; i++)
		if (!fnmatch(r->o->case_globs[i], c->id, 0))
			return 1;
	return r->o->ncase_globs == 0;
}

void run_key_seed(const struct suite_case *c, int si, int *has, long *seed)
{
	if (c->kind == SUITE_RECALL) {
		*has = 1;
		*seed = c->recall.seeds[si / recprobe_steps(&c->recall)];
	} else {
		*has = c->has_seed;
		*seed = c->seed;
	}
}

int run_step(const struct suite_case *c, int si)
{
	return c->kind == SUITE_RECALL ? si % recprobe_steps(&c->recall) : 0;
}

void run_attempt_key(const struct suite_case *k, int step, long repeat,
		     int has_seed, long seed, char *key, size_t cap)
{
	char id[RECORD_KEY_MAX];

	if (k->kind == SUITE_RECALL)
		recprobe_step_id(k->id, &k->recall, step, id, sizeof(id));
	else
		snprintf(id, sizeof(id), "%s", k->id);
	record_key(id, repeat, has_seed, seed, key, cap);
}
