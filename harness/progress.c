/* progress — see progress.h. */
#include <stdio.h>
#include <string.h>

#include "progress.h"

int progress_due(struct progress *p, double now_ms, int force)
{
	if (!force && now_ms - p->last_ms < PROGRESS_EVERY_MS)
		return 0;
	p->last_ms = now_ms;
	return 1;
}

void progress_duration(double s, char *out, size_t cap)
{
	long t = (long)(s + 0.5);

	if (t >= 3600)
		snprintf(out, cap, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(out, cap, "%ld:%02ld", t / 60, t % 60);
}

void progress_line(const struct progress_state *st, char *out, size_t cap)
{
	char e1[32], e2[32], e3[32];
	int n;

	progress_duration(st->elapsed_s, e1, sizeof(e1));
	if (st->done)
		progress_duration(st->elapsed_s / (double)st->done *
				  (double)(st->total - st->done), e2, sizeof(e2));
	else
		snprintf(e2, sizeof(e2), "?");
	n = snprintf(out, cap, "%zu/%zu  pass %zu  fail %zu  elapsed %s  eta %s", st->done,
		     st->total, st->pass, st->fail, e1, e2);
	if (st->slow_id && n >= 0 && (size_t)n < cap) {
		progress_duration(st->slow_s, e3, sizeof(e3));
		snprintf(out + n, cap - (size_t)n, "  slowest %.40s#%ld %s", st->slow_id,
			 st->slow_repeat, e3);
	}
}
