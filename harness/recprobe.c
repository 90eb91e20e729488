/* recprobe — see recprobe.h. */
#include <stdio.h>
#include <string.h>

#include "recprobe.h"

static const char *const cache_steps[RECPROBE_CACHE_STEPS] = {"cold", "warm", "warm-reordered"};

int recprobe_steps(const struct suite_recall *rc)
{
	if (rc->cache)
		return RECPROBE_CACHE_STEPS;
	return rc->jitter > 1 ? rc->jitter : 1;
}

void recprobe_step_id(const char *id, const struct suite_recall *rc, int step,
		      char *out, size_t cap)
{
	if (rc->cache)
		snprintf(out, cap, "%s/%s", id, cache_steps[step]);
	else if (rc->jitter > 1)
		snprintf(out, cap, "%s@%ld", id, recprobe_tokens(rc, step));
	else
		snprintf(out, cap, "%s", id);
}

long recprobe_tokens(const struct suite_recall *rc, int step)
{
	return rc->jitter > 1 ? rc->tokens + step : rc->tokens;
}

int recprobe_reversed(const struct suite_recall *rc, int step)
{
	return rc->cache && step == RECPROBE_CACHE_STEPS - 1;
}

int recprobe_waits(const struct suite_recall *rc, int step)
{
	return rc->cache && step > 0;
}

uint64_t recprobe_seed(const struct suite_recall *rc, const char *id,
		       long seed, uint64_t nonce)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	if (!rc->cache)
		return (uint64_t)seed;
	for (; *id; id++)
		h = (h ^ (unsigned char)*id) * 1099511628211ull;
	return ((uint64_t)seed ^ nonce ^ h) & 0x1fffffffffffffull;
}

cJSON *recprobe_json(const struct suite_recall *rc, int step,
		     const struct stream *st)
{
	struct stream_timing t;
	cJSON *o;
	int ok;

	if (recprobe_steps(rc) == 1 || !(o = cJSON_CreateObject()))
		return NULL;
	if (rc->cache) {
		stream_timing(st, &t);
		ok = cJSON_AddStringToObject(o, "step", cache_steps[step]) &&
		     (st->usage.cached_tokens >= 0
			      ? cJSON_AddNumberToObject(o, "cached_tokens", (double)st->usage.cached_tokens)
			      : cJSON_AddNullToObject(o, "cached_tokens")) &&
		     cJSON_AddNumberToObject(o, "ttft_ms", t.ttft_ms);
	} else {
		long n = recprobe_tokens(rc, step);
		ok = cJSON_AddNumberToObject(o, "tokens", (double)n) &&
		     cJSON_AddNumberToObject(o, "offset", step) &&
		     cJSON_AddNumberToObject(o, "mod2", (double)(n % 2)) &&
		     cJSON_AddNumberToObject(o, "mod4", (double)(n % 4)) &&
		     cJSON_AddNumberToObject(o, "mod8", (double)(n % 8));
	}
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}
