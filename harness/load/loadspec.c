/*
 * loadspec — the "load" object of a suite case; see loadspec.h.
 */
#include "loadspec.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/jcheck.h"

static const char *const keys[] = {"input_tokens", "output_tokens", "endpoint", "concurrency",
				   "rate", "arrival", "requests", "rounds", "max_rounds",
				   "budget_minutes", "detect", "warmup", "seed", "filler", "slo",
				   NULL};
static const char *const slo_keys[] = {"ttft_ms", "tpot_ms", "e2e_ms", NULL};
static const char *const detect_keys[] = {"output_tps", "ttft_p50", "ttft_p95", NULL};

/* What is being validated: the file (jcheck.h) and the JSON path of "load". */
struct at {
	struct jcheck c;
	const char *path;
};

/* p = path.key[index] (no index when index < 0; no key when NULL). */
static const char *at_path(const struct at *a, const char *key, long index,
			   char p[JCHECK_PATH_MAX])
{
	char q[JCHECK_PATH_MAX];

	snprintf(q, sizeof(q), "%s", a->path);
	if (key)
		jcheck_join(q, q, key);
	if (index >= 0)
		jcheck_index(p, q, (size_t)index);
	else
		memcpy(p, q, sizeof(q));
	return p;
}

static enum err fail(const struct at *a, const char *key, long index, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* "FILE: PATH.KEY[INDEX]: REASON" (jcheck_fail's shape). */
static enum err fail(const struct at *a, const char *key, long index, const char *fmt, ...)
{
	char reason[DIAG_MSG_MAX / 2], p[JCHECK_PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	return jcheck_fail(&a->c, at_path(a, key, index, p), "%s", reason);
}

/* Only `list` keys, each once, in object `o` at path.sub. */
static enum err check_keys(const struct at *a, const cJSON *o, const char *sub,
			   const char *const *list, const char *what)
{
	char p[JCHECK_PATH_MAX];
	enum err e;

	at_path(a, sub, -1, p);
	e = jcheck_keys(&a->c, o, p, list, what);
	return e ? e : jcheck_dupes(&a->c, o, p);
}

/* An integer in [lo, hi]. */
static enum err integer(const struct at *a, const cJSON *v, const char *key, long index,
			double lo, double hi, long *out)
{
	char p[JCHECK_PATH_MAX];

	return jcheck_int(&a->c, v, at_path(a, key, index, p), lo, hi, out);
}

static enum err positive(const struct at *a, const cJSON *v, const char *key, long index,
			 double *out)
{
	char p[JCHECK_PATH_MAX];
	enum err e = jcheck_want(&a->c, v, at_path(a, key, index, p),
				 cJSON_IsNumber(v) && isfinite(v->valuedouble), "a number");

	if (e)
		return e;
	if (!(v->valuedouble > 0))
		return fail(a, key, index, "%.17g must be positive", v->valuedouble);
	*out = v->valuedouble;
	return ERR_OK;
}

/* A number or an array of 1..LOADSPEC_MAX_LEVELS of them. */
static int count_of(const cJSON *v, int allow_scalar)
{
	if (allow_scalar && cJSON_IsNumber(v))
		return 1;
	if (!cJSON_IsArray(v))
		return -1;
	return cJSON_GetArraySize(v);
}

static enum err levels(const struct at *a, const cJSON *v, struct loadspec *s)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(v, "concurrency");
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(v, "rate"), *it;
	const cJSON *arr = c ? c : r;
	const char *key = c ? "concurrency" : "rate";
	int n = count_of(arr, 0), i = 0;
	enum err e = ERR_OK;

	if (!c == !r)
		return fail(a, NULL, -1, "give exactly one of 'concurrency' (closed loop) and 'rate' (open loop)");
	if (n < 1 || n > LOADSPEC_MAX_LEVELS)
		return fail(a, key, -1, "expected an array of 1 to %d levels", LOADSPEC_MAX_LEVELS);
	s->open_loop = r != NULL;
	s->nlevels = n;
	cJSON_ArrayForEach(it, arr) {
		if (c)
			e = integer(a, it, key, i, 1, LOADSPEC_MAX_CONCURRENCY, &s->concurrency[i]);
		else
			e = positive(a, it, key, i, &s->rate[i]);
		if (e)
			return e;
		i++;
	}
	return ERR_OK;
}

static enum err requests(const struct at *a, const cJSON *v, struct loadspec *s)
{
	const cJSON *it;
	int n = count_of(v, 1), i = 0;
	long one;
	enum err e;

	if (!v)
		return fail(a, NULL, -1, "missing 'requests' (per level and round)");
	if (n != 1 && n != s->nlevels)
		return n >= 0 ? fail(a, "requests", -1, "expected a number or one per level (%d), got %d",
				     s->nlevels, n)
			      : fail(a, "requests", -1, "expected a number or one per level (%d), got %s",
				     s->nlevels, jcheck_type(v));
	if (cJSON_IsNumber(v)) {
		if ((e = integer(a, v, "requests", -1, 1, LOADSPEC_MAX_REQUESTS, &one)))
			return e;
		for (i = 0; i < s->nlevels; i++)
			s->requests[i] = one;
		return ERR_OK;
	}
	cJSON_ArrayForEach(it, v) {
		if ((e = integer(a, it, "requests", i, 1, LOADSPEC_MAX_REQUESTS, &s->requests[i])))
			return e;
		i++;
	}
	for (; i < s->nlevels; i++)
		s->requests[i] = s->requests[0];
	return ERR_OK;
}

static enum err slo(const struct at *a, const cJSON *v, struct loadstat_slo *out)
{
	const char *const *k;
	double *field[] = {&out->ttft_ms, &out->tpot_ms, &out->e2e_ms};
	enum err e;
	int i = 0;

	if (!v)
		return ERR_OK;
	if (!cJSON_IsObject(v))
		return fail(a, "slo", -1, "expected an object such as {\"ttft_ms\": 3000, \"tpot_ms\": 50}");
	if ((e = check_keys(a, v, "slo", slo_keys, "slo")))
		return e;
	for (k = slo_keys; *k; k++, i++) {
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(v, *k);
		char key[32];

		snprintf(key, sizeof(key), "slo.%s", *k);
		if (f && (e = positive(a, f, key, -1, field[i])))
			return e;
	}
	return ERR_OK;
}

/* "detect": the changes in percent a run sizes itself to tell apart. */
static enum err detect(const struct at *a, const cJSON *v, struct loadspec *s)
{
	double *field[] = {&s->detect.output_tps, &s->detect.ttft_p50, &s->detect.ttft_p95};
	const char *const *k;
	enum err e;
	int i = 0;

	if (!v)
		return ERR_OK;
	if (!cJSON_IsObject(v))
		return fail(a, "detect", -1, "expected an object such as {\"output_tps\": 10, \"ttft_p50\": 10, "
				   "\"ttft_p95\": 15} (percent)");
	if ((e = check_keys(a, v, "detect", detect_keys, "detect")))
		return e;
	for (k = detect_keys; *k; k++, i++) {
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(v, *k);
		char key[32];

		snprintf(key, sizeof(key), "detect.%s", *k);
		if (f && (e = positive(a, f, key, -1, field[i])))
			return e;
		if (f && *field[i] >= 100)
			return fail(a, key, -1, "%.17g%% is not a change a run can size itself for (below 100)",
				    *field[i]);
	}
	return ERR_OK;
}

static enum err strings(const struct at *a, const cJSON *v, struct loadspec *s)
{
	const cJSON *f;
	static const char *const fillers[] = {"prose", "code", "zh", "mixed", NULL};

	if ((f = cJSON_GetObjectItemCaseSensitive(v, "endpoint"))) {
		if (!cJSON_IsString(f) || (strcmp(f->valuestring, "completions") &&
					   strcmp(f->valuestring, "chat")))
			return fail(a, "endpoint", -1, "expected 'completions' or 'chat'");
		s->endpoint = strcmp(f->valuestring, "chat") ? LOADGEN_COMPLETIONS : LOADGEN_CHAT;
	}
	if ((f = cJSON_GetObjectItemCaseSensitive(v, "arrival"))) {
		struct diag ignored;

		if (!s->open_loop)
			return fail(a, "arrival", -1, "'arrival' is for open-loop 'rate' levels only");
		if (!cJSON_IsString(f) || arrival_parse(f->valuestring, &s->arrival, &ignored))
			return fail(a, "arrival", -1, "expected 'poisson' or 'constant'");
	}
	if ((f = cJSON_GetObjectItemCaseSensitive(v, "filler"))) {
		if (!cJSON_IsString(f) || !jcheck_in(f->valuestring, fillers))
			return fail(a, "filler", -1, "expected one of 'prose', 'code', 'zh', 'mixed'");
		s->filler = f->valuestring;
	}
	return ERR_OK;
}

static enum err numbers(const struct at *a, const cJSON *v, struct loadspec *s)
{
	const cJSON *in = cJSON_GetObjectItemCaseSensitive(v, "input_tokens");
	const cJSON *outp = cJSON_GetObjectItemCaseSensitive(v, "output_tokens"), *f;
	enum err e;

	if (!in || !outp)
		return fail(a, NULL, -1, "missing '%s' (exact lengths are required)",
			    in ? "output_tokens" : "input_tokens");
	if ((e = integer(a, in, "input_tokens", -1, 1, 100000000, &s->input_tokens)) ||
	    (e = integer(a, outp, "output_tokens", -1, 1, 100000000, &s->output_tokens)))
		return e;
	if ((f = cJSON_GetObjectItemCaseSensitive(v, "rounds")) &&
	    (e = integer(a, f, "rounds", -1, 1, LOADSPEC_MAX_ROUNDS, &s->rounds)))
		return e;
	s->max_rounds = s->rounds;
	if ((f = cJSON_GetObjectItemCaseSensitive(v, "max_rounds")) &&
	    (e = integer(a, f, "max_rounds", -1, 1, LOADSPEC_MAX_ROUNDS, &s->max_rounds)))
		return e;
	if (s->max_rounds < s->rounds)
		return fail(a, "max_rounds", -1, "%ld is below \"rounds\" (%ld): the rounds always run",
			    s->max_rounds, s->rounds);
	if ((f = cJSON_GetObjectItemCaseSensitive(v, "budget_minutes")) &&
	    (e = positive(a, f, "budget_minutes", -1, &s->budget_minutes)))
		return e;
	if ((f = cJSON_GetObjectItemCaseSensitive(v, "warmup")) &&
	    (e = integer(a, f, "warmup", -1, 0, LOADSPEC_MAX_REQUESTS, &s->warmup)))
		return e;
	if ((f = cJSON_GetObjectItemCaseSensitive(v, "seed")) &&
	    (e = integer(a, f, "seed", -1, 0, 9007199254740991.0, &s->seed)))
		return e;
	return ERR_OK;
}

enum err loadspec_parse(const cJSON *v, const char *file, const char *path,
			struct loadspec *out, struct diag *d)
{
	struct at a = {{file, d}, path};
	struct loadspec s;
	enum err e;

	memset(&s, 0, sizeof(s));
	s.rounds = 3;
	s.detect.output_tps = 10;
	s.detect.ttft_p50 = 10;
	s.detect.ttft_p95 = 15;
	s.warmup = -1;
	s.seed = 1;
	s.filler = "prose";
	if (!cJSON_IsObject(v))
		return fail(&a, NULL, -1, "expected an object (at least input_tokens, output_tokens, "
				   "concurrency or rate, requests)");
	if ((e = check_keys(&a, v, NULL, keys, "load")) || (e = numbers(&a, v, &s)) ||
	    (e = levels(&a, v, &s)) ||
	    (e = requests(&a, cJSON_GetObjectItemCaseSensitive(v, "requests"), &s)) ||
	    (e = strings(&a, v, &s)) || (e = slo(&a, cJSON_GetObjectItemCaseSensitive(v, "slo"), &s.slo)) ||
	    (e = detect(&a, cJSON_GetObjectItemCaseSensitive(v, "detect"), &s)))
		return e;
	if (out)
		*out = s;
	return ERR_OK;
}

long loadspec_warmup(const struct loadspec *s, int i)
{
	if (s->warmup >= 0)
		return s->warmup;
	return s->requests[i];
}

enum err loadspec_check_fit(const struct loadspec *s, long max_model_len,
			    const char *file, const char *path, struct diag *d)
{
	struct at a = {{file, d}, path};

	if (max_model_len > 0 && s->input_tokens + s->output_tokens > max_model_len)
		return fail(&a, "input_tokens", -1,
			    "%ld input + %ld output tokens exceed the server's max_model_len %ld",
			    s->input_tokens, s->output_tokens, max_model_len);
	return ERR_OK;
}
