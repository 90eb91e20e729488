/* recprobe — see recprobe.h. */
#include <stdio.h>
#include <string.h>

#include "base/jget.h"
#include "record.h"
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

int recprobe_group_ends(const struct suite_recall *rc, int step)
{
	return !rc->cache || step == RECPROBE_CACHE_STEPS - 1;
}

int recprobe_code_shift(const struct suite_recall *rc, int step)
{
	return rc->jitter > 1 ? 25 * step : 0;
}

static uint32_t fnv1a(uint32_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* FNV-1a, 64 bits, of `s` and a NUL after it (so "ab","c" is not "a","bc"),
 * continuing from `h`. */
static uint64_t fnv64(uint64_t h, const char *s)
{
	do
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	while (*s++);
	return h;
}

/* fnv64 of the JSON text of `v` (a number as "%.17g", a string as is). */
static uint64_t fnv64_json(uint64_t h, const cJSON *v)
{
	char num[32];

	if (cJSON_IsString(v))
		return fnv64(h, v->valuestring);
	snprintf(num, sizeof(num), "%.17g", cJSON_IsNumber(v) ? v->valuedouble : -1.0);
	return fnv64(h, num);
}

int recprobe_document_id(const cJSON *rec, char out[RECPROBE_DOC_ID])
{
	const cJSON *recall = jget(rec, RK_RECALL), *it;
	const cJSON *needles = jget2(rec, RK_GRADE, RK_NEEDLES);
	uint64_t h = 14695981039346656037u;

	if (!cJSON_IsString(jget2(rec, RK_PROBE, RK_NONCE)))
		return 0;
	out[0] = '\0';
	if (!cJSON_GetArraySize(needles))
		return 1;
	h = fnv64_json(h, cJSON_GetObjectItemCaseSensitive(recall, RK_TOKENS));
	h = fnv64_json(h, cJSON_GetObjectItemCaseSensitive(recall, "filler"));
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(recall, RK_DEPTHS))
		h = fnv64_json(h, it);
	cJSON_ArrayForEach(it, needles) {
		h = fnv64_json(h, cJSON_GetObjectItemCaseSensitive(it, RK_DEPTH));
		h = fnv64_json(h, cJSON_GetObjectItemCaseSensitive(it, RK_PROJECT));
		h = fnv64_json(h, cJSON_GetObjectItemCaseSensitive(it, RK_EXPECTED));
	}
	snprintf(out, RECPROBE_DOC_ID, "%016llx", (unsigned long long)h);
	return 1;
}

void recprobe_preface(const struct suite_recall *rc, const char *nonce,
		      const char *id, long repeat, long seed, char *out, size_t cap)
{
	char num[64];
	uint32_t h;

	if (!rc->cache) {
		snprintf(out, cap, "%s", "");
		return;
	}
	snprintf(num, sizeof(num), "\x1f%ld\x1f%ld", repeat, seed);
	h = fnv1a(fnv1a(2166136261u, id), num);
	snprintf(out, cap, "Run %s, document %08x.\n\n", nonce, (unsigned)h);
}

static int has_cache(const struct suite *s)
{
	size_t i;

	for (i = 0; i < s->ncases; i++)
		if (s->cases[i].kind == SUITE_RECALL && s->cases[i].recall.cache)
			return 1;
	return 0;
}

/* The nonce and session of `old`'s "cache_probe"; 0 when it has none. */
static int old_nonce(const cJSON *old, char hex[17], long *session, struct diag *d)
{
	const cJSON *cp = cJSON_GetObjectItemCaseSensitive(old, MK_CACHE_PROBE);
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(cp, RK_NONCE);
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(cp, MK_SESSION);

	if (!cp)
		return 0;
	if (!cJSON_IsString(n) || strlen(n->valuestring) != 16 ||
	    strspn(n->valuestring, "0123456789abcdef") != 16 || !cJSON_IsNumber(k) ||
	    k->valuedouble < 0 || k->valuedouble > 1e9 || k->valuedouble != (long)k->valuedouble) {
		diag_fail(d, ERR_INPUT, "\"cache_probe\" is not {\"nonce\": 16 hex digits, "
			  "\"session\": a count}");
		return -1;
	}
	memcpy(hex, n->valuestring, 17);
	*session = (long)k->valuedouble + 1;
	return 1;
}

enum err recprobe_manifest(cJSON *manifest, const cJSON *old, const struct suite *s,
			   uint64_t fresh, char *out, struct diag *d)
{
	char hex[17];
	long session = 0;
	cJSON *o;
	int got;

	snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)fresh);
	if ((got = old_nonce(old, hex, &session, d)) < 0)
		return d->code;
	snprintf(out, RECPROBE_NONCE_MAX, "%s.%ld", hex, session);
	if (!has_cache(s))
		return ERR_OK;
	cJSON_DeleteItemFromObjectCaseSensitive(manifest, MK_CACHE_PROBE);
	if (!(o = cJSON_AddObjectToObject(manifest, MK_CACHE_PROBE)) ||
	    !cJSON_AddStringToObject(o, RK_NONCE, hex) ||
	    !cJSON_AddNumberToObject(o, MK_SESSION, (double)session))
		return diag_fail(d, ERR_NOMEM, "out of memory writing the manifest");
	return ERR_OK;
}

enum err recprobe_check_fit(const struct suite_case *c, long long room,
			    long long max_model_len, const char *file, struct diag *d)
{
	const struct suite_recall *rc = &c->recall;
	long long top = (long long)rc->tokens + rc->jitter - 1;
	long m = c->max_tokens > 0 ? c->max_tokens : 1;

	if (c->kind != SUITE_RECALL || rc->jitter < 2 || room < 0 || top + m <= room)
		return ERR_OK;
	return diag_fail(d, ERR_INPUT, "%s: cases[%zu].recall.jitter: the longest length, %lld "
			 "tokens (%ld + %d - 1), plus max_tokens %ld is %lld, over the %lld the "
			 "server allows (max_model_len %lld)", file, c->index, top, rc->tokens,
			 rc->jitter, m, top + m, room, max_model_len);
}

int recprobe_view(const struct suite_recall *rc, int step, const char *nonce,
		  const struct stream *st, struct record_probe *p)
{
	struct stream_timing t;

	memset(p, 0, sizeof(*p));
	if (recprobe_steps(rc) == 1)
		return 0;
	p->cache = rc->cache;
	if (rc->cache) {
		stream_timing(st, &t);
		p->step = cache_steps[step];
		p->nonce = nonce;
		p->cached_tokens = st->usage.cached_tokens;
		p->ttft_ms = t.ttft_ms;
	} else {
		p->tokens = recprobe_tokens(rc, step);
		p->offset = step;
	}
	return 1;
}
