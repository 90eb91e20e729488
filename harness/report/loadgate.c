/*
 * loadgate — diff gates on load cells; see loadgate.h.
 */
#include "loadgate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jget.h"
#include "load/loadcells.h"

const char *const loadgate_cutover[] = {"output_tps_ratio>=0.9", "ttft_p50_ratio<=1.1",
					"ttft_p95_ratio<=1.15", "success_rate>=1", NULL};

static const struct { const char *gate, *field; } ratios[] = {
	{"output_tps_ratio", "output_tps"}, {"ttft_p50_ratio", "ttft_p50_ms"},
	{"ttft_p95_ratio", "ttft_p95_ms"}, {"tpot_p95_ratio", "tpot_p95_ms"},
	{"e2e_p50_ratio", "e2e_p50_ms"},
};
static const char *const absolutes[] = {"success_rate", "slo_attainment", "goodput_rps",
					"achieved_rate", "output_tps", "ttft_p50_ms",
					"ttft_p95_ms", "tpot_p95_ms", "e2e_p50_ms", "lag_p99_ms"};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* The field a gate reads; *ratio = 1 for B/A. NULL for no load metric. */
static const char *field_of(const char *name, int *ratio)
{
	size_t i;

	for (i = 0; i < COUNT(ratios); i++)
		if (!strcmp(name, ratios[i].gate)) {
			*ratio = 1;
			return ratios[i].field;
		}
	for (i = 0; i < COUNT(absolutes); i++)
		if (!strcmp(name, absolutes[i])) {
			*ratio = 0;
			return absolutes[i];
		}
	return NULL;
}

int loadgate_known(const char *name)
{
	int r;

	return field_of(name, &r) != NULL;
}

/* Whether cell `c` is one that ARG ("", "CASE", "CASE/c32", "CASE/r0.3")
 * picks; levels compare as numbers. */
static int picked(const cJSON *c, const char *arg)
{
	const cJSON *id = jget(c, "case"), *rate = jget(c, "rate");
	const char *slash = strrchr(arg, '/');
	size_t n = slash ? (size_t)(slash - arg) : strlen(arg);
	double want;
	char *end;

	if (!*arg)
		return 1;
	if (!cJSON_IsString(id) || strlen(id->valuestring) != n || strncmp(id->valuestring, arg, n))
		return 0;
	if (!slash)
		return 1;
	want = strtod(slash + 2, &end);
	if (end == slash + 2 || *end)
		return 0;
	if (slash[1] == 'c')
		return !cJSON_IsNumber(rate) && jget_num(c, "concurrency") == want;
	return slash[1] == 'r' && cJSON_IsNumber(rate) && rate->valuedouble == want;
}

/* The cell of A matching B's cell `b`, or NULL. */
static const cJSON *match(const cJSON *load_a, const cJSON *b)
{
	char nb[320], na[320];
	const cJSON *a;

	loadcells_name(b, nb, sizeof(nb));
	cJSON_ArrayForEach(a, jget(load_a, "cells")) {
		loadcells_name(a, na, sizeof(na));
		if (!strcmp(na, nb))
			return a;
	}
	return NULL;
}

/* Cell `b`'s value for the gate into *v; 0 with the reason in `why`. */
static int cell_value(const cJSON *load_a, const cJSON *b, const char *field, int ratio,
		      double *v, char *why, size_t cap)
{
	const cJSON *a = match(load_a, b), *x = jget(b, field), *y;

	if (jget_num(b, "rounds_valid") < 1 || (a && jget_num(a, "rounds_valid") < 1)) {
		snprintf(why, cap, "invalid in %s (no valid round)", jget_num(b, "rounds_valid") < 1 ? "B" : "A");
		return 0;
	}
	if (ratio && !a) {
		snprintf(why, cap, "not in A");
		return 0;
	}
	y = ratio ? jget(a, field) : NULL;
	if (!cJSON_IsNumber(x) || (ratio && (!cJSON_IsNumber(y) || !(y->valuedouble > 0)))) {
		snprintf(why, cap, "no %s", field);
		return 0;
	}
	*v = ratio ? x->valuedouble / y->valuedouble : x->valuedouble;
	return 1;
}

/* Whether `v` is worse than `w` for this operator. */
static int worse(double v, double w, enum diff_op op)
{
	return op == DIFF_GE || op == DIFF_GT ? v < w : op == DIFF_EQ ? v != w : v > w;
}

static void note(char *why, size_t cap, const char *cell, const char *what)
{
	size_t n = strlen(why);

	if (n + 4 < cap)
		snprintf(why + n, cap - n, "%s%s %s", n ? "; " : "", cell, what);
}

int loadgate_eval(const cJSON *load_a, const cJSON *load_b, const struct diff_gate *g,
		  int *ok, double *value, char *why, size_t cap)
{
	const cJSON *b;
	char name[320], r[128];
	const char *field;
	int ratio = 0, cells = 0, have = 0, bad = 0;
	double v = 0;

	why[0] = '\0';
	field = field_of(g->name, &ratio);
	cJSON_ArrayForEach(b, jget(load_b, "cells")) {
		if (!field || !picked(b, g->arg))
			continue;
		cells++;
		loadcells_name(b, name, sizeof(name));
		if (!cell_value(load_a, b, field, ratio, &v, r, sizeof(r))) {
			bad++;
			note(why, cap, name, r);
			continue;
		}
		if (!have || worse(v, *value, g->op))
			*value = v;
		have = 1;
		if (!diff_holds(v, g->op, g->value)) {
			bad++;
			snprintf(r, sizeof(r), "%.6g", v);
			note(why, cap, name, r);
		}
	}
	*ok = cells > 0 && !bad;
	if (!cells)
		snprintf(why, cap, "no load cell matches '%s'", g->arg[0] ? g->arg : "(any)");
	else if (!bad)
		snprintf(why, cap, "%d cell%s, worst %.6g", cells, cells == 1 ? "" : "s", *value);
	return have;
}
