/* record — see record.h. */
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "base/jget.h"
#include "base/jscan.h"
#include "base/json.h"
#include "base/mem.h"
#include "base/version.h"
#include "record.h"

void record_key(const char *id, long repeat, int has_seed, long seed,
		char *out, size_t cap)
{
	size_t n = strlen(id);

	/* the usual key without printf (a reader of a journal keys every
	 * record): numbers below 10^15 are what json_g15 writes as %ld does */
	if (n + 2 * JSON_G15_MAX + 2 <= cap && repeat > -1000000000000000L &&
	    repeat < 1000000000000000L && seed > -1000000000000000L && seed < 1000000000000000L) {
		memcpy(out, id, n);
		out[n++] = '\x1f';
		n += json_g15((double)repeat, out + n);
		out[n++] = '\x1f';
		if (has_seed)
			json_g15((double)seed, out + n);
		else
			memcpy(out + n, "null", 5);
		return;
	}
	if (has_seed)
		snprintf(out, cap, "%s\x1f%ld\x1f%ld", id, repeat, seed);
	else
		snprintf(out, cap, "%s\x1f%ld\x1fnull", id, repeat);
}

/* Whether `v` is an integer in the range suite seeds take (|x| < 2^53), which
 * converts to long exactly; converting a larger one would be undefined (found
 * by tests/fuzz/fuzz_results). */
static int as_long(const cJSON *v, long *out)
{
	double x = jget_type(v) == cJSON_Number ? v->valuedouble : 0.5;

	/* the range first (NaN fails it): only then is the cast defined */
	if (!(x >= -9007199254740991.0 && x <= 9007199254740991.0) || x != (double)(long)x)
		return 0;
	*out = (long)x;
	return 1;
}

/* The fields of a record's members and of its objects' members: each
 * function maps a name to its field, or -1 when no reader consults it, by a
 * switch on its first bytes (read only up to its NUL) to the one name it can
 * be, then one compare of the rest. A journal's reader maps every member of
 * every record: some 45 names a record. */
#define NAME(s, lit, f) (!strcmp((s) + 1, (lit) + 1) ? (f) : -1)

static int top_field(const char *s)
{
	switch (s[0]) {
	case 'a': return NAME(s, RK_AUDIT, RF_AUDIT);
	case 'b': return NAME(s, RK_BASE_URL, RF_BASE_URL);
	case 'c': return s[1] == 'a' ? NAME(s, RK_CASE, RF_CASE) : -1;
	case 'f': return NAME(s, RK_FINISH_REASON, RF_FINISH_REASON);
	case 'g': return NAME(s, RK_GRADE, RF_GRADE);
	case 'h': return NAME(s, RK_HTTP_STATUS, RF_HTTP_STATUS);
	case 'k': return NAME(s, RK_KIND, RF_KIND);
	case 'l': return NAME(s, RK_LOAD, RF_LOAD);
	case 'm': return NAME(s, RK_MODEL, RF_MODEL);
	case 'p': return NAME(s, RK_PROBE, RF_PROBE);
	case 'r':
		if (!s[1])
			return -1;
		switch (s[2]) {
		case 'w': return NAME(s, RK_RAW, RF_RAW);
		case 'c': return NAME(s, RK_RECALL, RF_RECALL);
		case 'p': return s[3] == 'e' ? NAME(s, RK_REPEAT, RF_REPEAT)
					     : NAME(s, RK_REPLICA, RF_REPLICA);
		default: return -1;
		}
	case 's':
		if (s[1] == 'e')
			return NAME(s, RK_SEED, RF_SEED);
		return !strcmp(s, RK_STARTED_AT) ? RF_STARTED_AT
						: NAME(s, RK_STARTED_UNIX_MS, RF_STARTED_UNIX_MS);
	case 't':
		return s[1] == 'r' ? NAME(s, RK_TRANSPORT, RF_TRANSPORT)
		       : s[1] == 'i' ? NAME(s, RK_TIMING, RF_TIMING)
		       : s[1] == 'e' ? NAME(s, RK_TEMPERATURE, RF_TEMPERATURE) : -1;
	case 'u': return NAME(s, RK_USAGE, RF_USAGE);
	case 'v': return NAME(s, RK_VERDICT, RF_VERDICT);
	default: return -1;
	}
}

static int transport_field(const char *s)
{
	switch (s[0]) {
	case 'o': return NAME(s, RK_OK, RF_TR_OK);
	case 'f': return NAME(s, RK_FAILURES, RF_TR_FAILURES);
	case 'm': return NAME(s, RK_MESSAGES, RF_TR_MESSAGES);
	default: return -1;
	}
}

static int audit_field(const char *s)
{
	switch (s[0]) {
	case 'o': return NAME(s, RK_OK, RF_AU_OK);
	case 'e': return NAME(s, RK_ENABLED, RF_AU_ENABLED);
	case 'l': return NAME(s, RK_LOCAL_PROMPT_TOKENS, RF_AU_LOCAL_PROMPT_TOKENS);
	case 's': return NAME(s, RK_SERVER_PROMPT_TOKENS, RF_AU_SERVER_PROMPT_TOKENS);
	case 'u': return NAME(s, RK_USAGE_DELTA, RF_AU_USAGE_DELTA);
	case 't': return NAME(s, RK_TOLERANCE, RF_AU_TOLERANCE);
	case 'h': return NAME(s, RK_HINT, RF_AU_HINT);
	default: return -1;
	}
}

static int grade_field(const char *s)
{
	return s[0] == 'r' ? NAME(s, RK_REASONS, RF_GR_REASONS)
	       : s[0] == 'n' ? NAME(s, RK_NEEDLES, RF_GR_NEEDLES)
	       : s[0] == 'o' ? NAME(s, RK_OK, RF_GR_OK) : -1;
}

static int timing_field(const char *s)
{
	switch (s[0]) {
	case 'f': return NAME(s, RK_FIRST_BYTE_MS, RF_TI_FIRST_BYTE_MS);
	case 'e': return NAME(s, RK_E2E_MS, RF_TI_E2E_MS);
	case 't':
		if (s[1] == 'p')
			return NAME(s, RK_TPOT_MS, RF_TI_TPOT_MS);
		if (s[1] != 't' || s[2] != 'f')
			return -1;
		return s[3] == 't' ? NAME(s, RK_TTFT_MS, RF_TI_TTFT_MS) : NAME(s, RK_TTFC_MS, RF_TI_TTFC_MS);
	default: return -1;
	}
}

static int usage_field(const char *s)
{
	return s[0] == 'p' ? NAME(s, RK_PROMPT_TOKENS, RF_US_PROMPT_TOKENS)
	       : s[0] == 'c' ? NAME(s, RK_COMPLETION_TOKENS, RF_US_COMPLETION_TOKENS) : -1;
}

static int recall_field(const char *s)
{
	switch (s[0]) {
	case 't': return NAME(s, RK_TOKENS, RF_RE_TOKENS);
	case 'd': return NAME(s, RK_DEPTHS, RF_RE_DEPTHS);
	case 'p': return NAME(s, RK_PROMPT_SHA256, RF_RE_PROMPT_SHA256);
	default: return -1;
	}
}

static int load_field(const char *s)
{
	switch (s[0]) {
	case 'l': return NAME(s, RK_LEVEL, RF_LO_LEVEL);
	case 'r': return s[1] == 'o' ? NAME(s, RK_ROUND, RF_LO_ROUND) : NAME(s, RK_RATE, RF_LO_RATE);
	case 'w': return NAME(s, RK_WARMUP, RF_LO_WARMUP);
	case 'p': return NAME(s, RK_PRECHECK, RF_LO_PRECHECK);
	case 'c': return NAME(s, RK_CONCURRENCY, RF_LO_CONCURRENCY);
	default: return -1;
	}
}

/* The JSON types each field of a view may have, as record_new writes them
 * (cJSON's type bits; T_ANY: what the server sent). A field that is absent
 * is not checked here: records written before it existed lack it. */
#define T_NUM cJSON_Number
#define T_STR cJSON_String
#define T_BOOL (cJSON_True | cJSON_False)
#define T_NULL cJSON_NULL
#define T_OBJ cJSON_Object
#define T_ARR cJSON_Array
#define T_ANY 0xFF
static const unsigned char field_types[RECORD_VIEW_TYPES] = {
	[RF_CASE] = T_STR, [RF_KIND] = T_STR, [RF_REPEAT] = T_NUM, [RF_SEED] = T_NUM | T_NULL,
	[RF_VERDICT] = T_STR, [RF_TRANSPORT] = T_OBJ, [RF_AUDIT] = T_OBJ, [RF_GRADE] = T_OBJ,
	[RF_HTTP_STATUS] = T_NUM, [RF_TIMING] = T_OBJ, [RF_USAGE] = T_ANY,
	[RF_FINISH_REASON] = T_STR | T_NULL, [RF_MODEL] = T_STR | T_NULL, [RF_STARTED_AT] = T_STR,
	[RF_STARTED_UNIX_MS] = T_NUM, [RF_RAW] = T_STR, [RF_RECALL] = T_OBJ, [RF_LOAD] = T_OBJ,
	[RF_PROBE] = T_OBJ, [RF_REPLICA] = T_NUM, [RF_BASE_URL] = T_STR,
	[RF_TEMPERATURE] = T_NUM | T_NULL,
	[RF_TR_OK] = T_BOOL, [RF_TR_FAILURES] = T_ARR, [RF_TR_MESSAGES] = T_ARR,
	[RF_AU_OK] = T_BOOL, [RF_AU_ENABLED] = T_BOOL, [RF_AU_USAGE_DELTA] = T_NUM | T_NULL,
	[RF_AU_LOCAL_PROMPT_TOKENS] = T_NUM | T_NULL, [RF_AU_SERVER_PROMPT_TOKENS] = T_NUM | T_NULL,
	[RF_AU_TOLERANCE] = T_NUM, [RF_AU_HINT] = T_STR,
	[RF_GR_OK] = T_BOOL, [RF_GR_REASONS] = T_ARR, [RF_GR_NEEDLES] = T_ARR,
	[RF_TI_FIRST_BYTE_MS] = T_NUM | T_NULL, [RF_TI_TTFT_MS] = T_NUM | T_NULL,
	[RF_TI_TTFC_MS] = T_NUM | T_NULL, [RF_TI_E2E_MS] = T_NUM | T_NULL,
	[RF_TI_TPOT_MS] = T_NUM | T_NULL, [RF_US_PROMPT_TOKENS] = T_ANY, [RF_US_COMPLETION_TOKENS] = T_ANY,
	[RF_RE_TOKENS] = T_NUM, [RF_RE_DEPTHS] = T_ARR, [RF_RE_PROMPT_SHA256] = T_STR,
	[RF_LO_LEVEL] = T_NUM, [RF_LO_ROUND] = T_NUM, [RF_LO_WARMUP] = T_BOOL,
	[RF_LO_PRECHECK] = T_BOOL, [RF_LO_CONCURRENCY] = T_NUM, [RF_LO_RATE] = T_NUM,
};

/* Sets field k of `v` to member `m`, its type noted for
 * record_view_edited. */
static inline void take(struct record_view *v, int k, const cJSON *m)
{
	v->f[k] = m;
	v->type[k] = (unsigned char)m->type;
}

/* The members of object `o` that `field` maps into v->f, the first of
 * duplicate names winning. */
static void view_sub(const cJSON *o, int (*field)(const char *), struct record_view *v)
{
	const cJSON *m;
	int k;

	for (m = o->child; m; m = m->next)
		if (m->string && (k = field(m->string)) >= 0 && !v->f[k])
			take(v, k, m);
}

void record_view_of(const cJSON *rec, struct record_view *v)
{
	static int (*const subs[RF_TR_OK])(const char *) = {
		[RF_TRANSPORT] = transport_field, [RF_AUDIT] = audit_field,
		[RF_GRADE] = grade_field, [RF_TIMING] = timing_field, [RF_USAGE] = usage_field,
		[RF_RECALL] = recall_field, [RF_LOAD] = load_field};
	const cJSON *m;
	int k;

	memset(v, 0, sizeof(*v));
	v->rec = rec;
	if (jget_type(rec) != cJSON_Object)
		return;
	for (m = rec->child; m; m = m->next) {
		if (!m->string || (k = top_field(m->string)) < 0 || v->f[k])
			continue;
		take(v, k, m);
		if (subs[k] && jget_type(m) == cJSON_Object)
			view_sub(m, subs[k], v);
	}
}

/* The same maps by a name's length, known from the parse (jscan.h's tree mode), and
 * one compare of the whole name against the one it can be: a compare of a
 * few bytes the compiler inlines, where the maps above call strcmp. */
#define IS(lit) (n == sizeof(lit) - 1 && !memcmp(s, lit, sizeof(lit) - 1))
#define IS_F(lit, f) (IS(lit) ? (f) : -1)

static int top_field_n(const char *s, size_t n)
{
	switch (n) {
	case 3: return IS_F(RK_RAW, RF_RAW);
	case 4:
		switch (s[0]) {
		case 'c': return IS_F(RK_CASE, RF_CASE);
		case 'k': return IS_F(RK_KIND, RF_KIND);
		case 'l': return IS_F(RK_LOAD, RF_LOAD);
		case 's': return IS_F(RK_SEED, RF_SEED);
		default: return -1;
		}
	case 5:
		switch (s[0]) {
		case 'a': return IS_F(RK_AUDIT, RF_AUDIT);
		case 'g': return IS_F(RK_GRADE, RF_GRADE);
		case 'm': return IS_F(RK_MODEL, RF_MODEL);
		case 'p': return IS_F(RK_PROBE, RF_PROBE);
		case 'u': return IS_F(RK_USAGE, RF_USAGE);
		default: return -1;
		}
	case 6:
		return IS(RK_REPEAT) ? RF_REPEAT : IS(RK_RECALL) ? RF_RECALL : IS_F(RK_TIMING, RF_TIMING);
	case 7: return IS(RK_VERDICT) ? RF_VERDICT : IS_F(RK_REPLICA, RF_REPLICA);
	case 8: return IS_F(RK_BASE_URL, RF_BASE_URL);
	case 9: return IS_F(RK_TRANSPORT, RF_TRANSPORT);
	case 10: return IS_F(RK_STARTED_AT, RF_STARTED_AT);
	case 11: return IS(RK_HTTP_STATUS) ? RF_HTTP_STATUS : IS_F(RK_TEMPERATURE, RF_TEMPERATURE);
	case 13: return IS_F(RK_FINISH_REASON, RF_FINISH_REASON);
	case 15: return IS_F(RK_STARTED_UNIX_MS, RF_STARTED_UNIX_MS);
	default: return -1;
	}
}

static int transport_field_n(const char *s, size_t n)
{
	return IS(RK_OK) ? RF_TR_OK : IS(RK_FAILURES) ? RF_TR_FAILURES
	       : IS_F(RK_MESSAGES, RF_TR_MESSAGES);
}

static int audit_field_n(const char *s, size_t n)
{
	switch (n) {
	case 2: return IS_F(RK_OK, RF_AU_OK);
	case 4: return IS_F(RK_HINT, RF_AU_HINT);
	case 7: return IS_F(RK_ENABLED, RF_AU_ENABLED);
	case 9: return IS_F(RK_TOLERANCE, RF_AU_TOLERANCE);
	case 11: return IS_F(RK_USAGE_DELTA, RF_AU_USAGE_DELTA);
	case 19: return IS_F(RK_LOCAL_PROMPT_TOKENS, RF_AU_LOCAL_PROMPT_TOKENS);
	case 20: return IS_F(RK_SERVER_PROMPT_TOKENS, RF_AU_SERVER_PROMPT_TOKENS);
	default: return -1;
	}
}

static int grade_field_n(const char *s, size_t n)
{
	return IS(RK_OK) ? RF_GR_OK : IS(RK_REASONS) ? RF_GR_REASONS : IS_F(RK_NEEDLES, RF_GR_NEEDLES);
}

static int timing_field_n(const char *s, size_t n)
{
	switch (n) {
	case 6: return IS_F(RK_E2E_MS, RF_TI_E2E_MS);
	case 7:
		return IS(RK_TTFT_MS) ? RF_TI_TTFT_MS : IS(RK_TTFC_MS) ? RF_TI_TTFC_MS
		       : IS_F(RK_TPOT_MS, RF_TI_TPOT_MS);
	case 13: return IS_F(RK_FIRST_BYTE_MS, RF_TI_FIRST_BYTE_MS);
	default: return -1;
	}
}

static int usage_field_n(const char *s, size_t n)
{
	return IS(RK_PROMPT_TOKENS) ? RF_US_PROMPT_TOKENS
	       : IS_F(RK_COMPLETION_TOKENS, RF_US_COMPLETION_TOKENS);
}

static int recall_field_n(const char *s, size_t n)
{
	return IS(RK_TOKENS) ? RF_RE_TOKENS : IS(RK_DEPTHS) ? RF_RE_DEPTHS
	       : IS_F(RK_PROMPT_SHA256, RF_RE_PROMPT_SHA256);
}

static int load_field_n(const char *s, size_t n)
{
	return IS(RK_LEVEL) ? RF_LO_LEVEL : IS(RK_ROUND) ? RF_LO_ROUND : IS(RK_RATE) ? RF_LO_RATE
	       : IS(RK_WARMUP) ? RF_LO_WARMUP : IS(RK_PRECHECK) ? RF_LO_PRECHECK
	       : IS_F(RK_CONCURRENCY, RF_LO_CONCURRENCY);
}

#undef IS_F
#undef IS

/* The members of object `o` that field map `map` finds, into v (the first of
 * duplicate names winning); one loop a map, so that each map is inlined. */
#define WALK_SUB(map)                                                                            \
	for (o = m->child; o; o = o->next)                                                       \
		if (o->string && (i = map(o->string, jtree_name_len(o))) >= 0 && !v->f[i])        \
			take(v, i, o);                                                           \
	break

void record_view_of_jtree(const cJSON *rec, struct record_view *v)
{
	const cJSON *m, *o;
	int k, i;

	memset(v, 0, sizeof(*v));
	v->rec = rec;
	v->jtree = 1;
	if (jget_type(rec) != cJSON_Object)
		return;
	for (m = rec->child; m; m = m->next) {
		if (!m->string || (k = top_field_n(m->string, jtree_name_len(m))) < 0 || v->f[k])
			continue;
		take(v, k, m);
		if (jget_type(m) != cJSON_Object)
			continue;
		switch (k) {
		case RF_TRANSPORT: WALK_SUB(transport_field_n);
		case RF_AUDIT: WALK_SUB(audit_field_n);
		case RF_GRADE: WALK_SUB(grade_field_n);
		case RF_TIMING: WALK_SUB(timing_field_n);
		case RF_USAGE: WALK_SUB(usage_field_n);
		case RF_RECALL: WALK_SUB(recall_field_n);
		case RF_LOAD: WALK_SUB(load_field_n);
		default: break;
		}
	}
}

#undef WALK_SUB

/* Whether the record `v` views has a key (record_key_of) that fits in
 * `cap` bytes; its repeat and seed (0 for null) into *r and *sd. */
static int key_parts(const struct record_view *v, size_t cap, long *r, long *sd)
{
	const cJSON *id = v->f[RF_CASE], *seed = v->f[RF_SEED];
	size_t n;

	*sd = 0;
	return jget_type(id) == cJSON_String && as_long(v->f[RF_REPEAT], r) &&
	       (jget_type(seed) == cJSON_NULL || as_long(seed, sd)) &&
	       (n = strlen(id->valuestring)) <= SUITE_ID_MAX &&
	       n + 44 <= cap; /* id, 2 separators, 2 longs, NUL */
}

int record_view_key(const struct record_view *v, char *out, size_t cap)
{
	long r, sd;

	if (!key_parts(v, cap, &r, &sd))
		return 0;
	record_key(v->f[RF_CASE]->valuestring, r, jget_type(v->f[RF_SEED]) != cJSON_NULL, sd,
		   out, cap);
	return 1;
}

int record_key_of(const cJSON *rec, char *out, size_t cap)
{
	struct record_view v;

	record_view_of(rec, &v);
	return record_view_key(&v, out, cap);
}

const char *record_view_problem(const struct record_view *v)
{
	long r, sd;

	if (!v->rec)
		return "not JSON";
	if (!cJSON_IsObject(v->rec))
		return "not a JSON object";
	if (!key_parts(v, RECORD_KEY_MAX, &r, &sd))
		return "no \"case\" string, \"repeat\" number or \"seed\" (number or null)";
	if (jget_type(v->f[RF_VERDICT]) != cJSON_String)
		return "no \"verdict\" string";
	return NULL;
}

/* "a number or null" for type bits `t`. */
static const char *types_text(unsigned t, char *out, size_t cap)
{
	static const struct {
		unsigned bit;
		const char *name;
	} names[] = {{T_NUM, "a number"}, {T_STR, "a string"}, {T_BOOL, "true or false"},
		     {T_OBJ, "an object"}, {T_ARR, "an array"}, {T_NULL, "null"}};
	size_t i, n = 0, k = 0, at = 0;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		n += (t & names[i].bit) != 0;
	out[0] = '\0';
	for (i = 0; i < sizeof(names) / sizeof(names[0]) && at < cap; i++) {
		if (!(t & names[i].bit))
			continue;
		k++;
		at += (size_t)snprintf(out + at, cap - at, "%s%s", k == 1 ? "" : k == n ? " or " : ", ",
				       names[i].name);
	}
	return out;
}

enum record_field record_field_parent(enum record_field k)
{
	return k >= RF_LO_LEVEL ? RF_LOAD : k >= RF_RE_TOKENS ? RF_RECALL : k >= RF_US_PROMPT_TOKENS ? RF_USAGE
	       : k >= RF_TI_FIRST_BYTE_MS ? RF_TIMING : k >= RF_GR_OK ? RF_GRADE : k >= RF_AU_OK ? RF_AUDIT
	       : k >= RF_TR_OK ? RF_TRANSPORT : RF_COUNT;
}

const char *record_field_name(enum record_field k)
{
	static const char *const names[RF_COUNT] = {
		[RF_CASE] = RK_CASE, [RF_KIND] = RK_KIND, [RF_REPEAT] = RK_REPEAT, [RF_SEED] = RK_SEED,
		[RF_VERDICT] = RK_VERDICT, [RF_TRANSPORT] = RK_TRANSPORT, [RF_AUDIT] = RK_AUDIT,
		[RF_GRADE] = RK_GRADE, [RF_HTTP_STATUS] = RK_HTTP_STATUS, [RF_TIMING] = RK_TIMING,
		[RF_USAGE] = RK_USAGE, [RF_FINISH_REASON] = RK_FINISH_REASON, [RF_MODEL] = RK_MODEL,
		[RF_STARTED_AT] = RK_STARTED_AT, [RF_STARTED_UNIX_MS] = RK_STARTED_UNIX_MS,
		[RF_RAW] = RK_RAW, [RF_RECALL] = RK_RECALL, [RF_LOAD] = RK_LOAD, [RF_PROBE] = RK_PROBE,
		[RF_REPLICA] = RK_REPLICA, [RF_BASE_URL] = RK_BASE_URL, [RF_TEMPERATURE] = RK_TEMPERATURE,
		[RF_TR_OK] = RK_OK, [RF_TR_FAILURES] = RK_FAILURES, [RF_TR_MESSAGES] = RK_MESSAGES,
		[RF_AU_OK] = RK_OK, [RF_AU_ENABLED] = RK_ENABLED, [RF_AU_USAGE_DELTA] = RK_USAGE_DELTA,
		[RF_AU_LOCAL_PROMPT_TOKENS] = RK_LOCAL_PROMPT_TOKENS,
		[RF_AU_SERVER_PROMPT_TOKENS] = RK_SERVER_PROMPT_TOKENS, [RF_AU_TOLERANCE] = RK_TOLERANCE,
		[RF_AU_HINT] = RK_HINT, [RF_GR_OK] = RK_OK, [RF_GR_REASONS] = RK_REASONS,
		[RF_GR_NEEDLES] = RK_NEEDLES, [RF_TI_FIRST_BYTE_MS] = RK_FIRST_BYTE_MS,
		[RF_TI_TTFT_MS] = RK_TTFT_MS, [RF_TI_TTFC_MS] = RK_TTFC_MS, [RF_TI_E2E_MS] = RK_E2E_MS,
		[RF_TI_TPOT_MS] = RK_TPOT_MS, [RF_US_PROMPT_TOKENS] = RK_PROMPT_TOKENS,
		[RF_US_COMPLETION_TOKENS] = RK_COMPLETION_TOKENS, [RF_RE_TOKENS] = RK_TOKENS,
		[RF_RE_DEPTHS] = RK_DEPTHS, [RF_RE_PROMPT_SHA256] = RK_PROMPT_SHA256,
		[RF_LO_LEVEL] = RK_LEVEL, [RF_LO_ROUND] = RK_ROUND, [RF_LO_WARMUP] = RK_WARMUP,
		[RF_LO_PRECHECK] = RK_PRECHECK, [RF_LO_CONCURRENCY] = RK_CONCURRENCY, [RF_LO_RATE] = RK_RATE};

	return names[k];
}

/* The fields needle has written in every record since the journal's first
 * format, and those of every load and every recall record: one that is
 * absent was taken out by hand. */
#define ALWAYS(X)                                                                          \
	X(RF_KIND) X(RF_TRANSPORT) X(RF_AUDIT) X(RF_GRADE) X(RF_HTTP_STATUS) X(RF_TIMING)      \
	X(RF_USAGE) X(RF_TR_OK) X(RF_TR_FAILURES) X(RF_TR_MESSAGES) X(RF_AU_OK)                \
	X(RF_AU_ENABLED) X(RF_AU_USAGE_DELTA) X(RF_AU_LOCAL_PROMPT_TOKENS)                     \
	X(RF_AU_SERVER_PROMPT_TOKENS) X(RF_AU_TOLERANCE) X(RF_GR_OK) X(RF_GR_REASONS)          \
	X(RF_TI_FIRST_BYTE_MS) X(RF_TI_TTFT_MS) X(RF_TI_TTFC_MS) X(RF_TI_E2E_MS) X(RF_TI_TPOT_MS)
#define ALWAYS_ITEM(k) k,
static const unsigned char always[] = {ALWAYS(ALWAYS_ITEM)};
#define ALWAYS_MASK(k) [k] = 0xFF,
static const unsigned char always_mask[RECORD_VIEW_TYPES] = {ALWAYS(ALWAYS_MASK)};
static const unsigned char of_load[] = {RF_LOAD, RF_LO_LEVEL, RF_LO_ROUND, RF_LO_WARMUP};
static const unsigned char of_recall[] = {RF_RECALL, RF_RE_TOKENS, RF_RE_DEPTHS};

/* The first of fields `ks[0..n)` absent from `v` (an object's member only
 * when the object is there), as 'member "timing"."ttft_ms" is missing' into
 * `out`; NULL when all are there. */
static const char *missing(const struct record_view *v, const unsigned char *ks, size_t n,
			   char *out, size_t cap)
{
	size_t i;
	int k;

	for (i = 0; i < n; i++) {
		k = ks[i];
		if (v->f[k] || (record_field_parent(k) != RF_COUNT && !v->f[record_field_parent(k)]))
			continue;
		if (record_field_parent(k) == RF_COUNT)
			snprintf(out, cap, "member \"%s\" is missing", record_field_name(k));
		else
			snprintf(out, cap, "member \"%s\".\"%s\" is missing",
				 record_field_name(record_field_parent(k)), record_field_name(k));
		return out;
	}
	return NULL;
}

/* The types of a view, 16 at a time: what nearly every record answers is
 * asked of all its fields at once (a field at a time cost a journal's
 * reader some 150 instructions a record). */
typedef unsigned char bytes16 __attribute__((vector_size(16)));

static inline bytes16 load16(const unsigned char *p)
{
	bytes16 x;

	memcpy(&x, p, sizeof(x));
	return x;
}

static inline int any16(bytes16 x)
{
	unsigned long long h[2];

	memcpy(h, &x, sizeof(h));
	return (h[0] | h[1]) != 0;
}

/* Types 16 fields at a time into *bad (a member of a type needle never
 * writes it with) and *gone (a field of `always` absent). */
static inline void check16(const struct record_view *v, size_t i, bytes16 *bad, bytes16 *gone)
{
	const bytes16 zero = {0};
	bytes16 t = load16(v->type + i), absent = (bytes16)(t == zero);

	*bad |= ~absent & (bytes16)((t & load16(field_types + i)) == zero);
	*gone |= absent & load16(always_mask + i);
}

/* Whether a member of `v` has a type needle never writes it with
 * (*mistyped) and whether a field of `always` is absent (*incomplete). */
static void check_types(const struct record_view *v, int *mistyped, int *incomplete)
{
	bytes16 bad = {0}, gone = {0};

	check16(v, 0, &bad, &gone);
	check16(v, 16, &bad, &gone);
	check16(v, 32, &bad, &gone);
	check16(v, 48, &bad, &gone);
	*mistyped = any16(bad);
	*incomplete = any16(gone);
}

/* The mistyped field whose member comes first in the record (its members,
 * then those of the object it is in, as record_view_of walks them); -1 when
 * none is. */
static int mistyped_at(const struct record_view *v, const cJSON *m)
{
	int k;

	for (k = 0; k < RF_COUNT; k++)
		if (v->f[k] == m && !(v->type[k] & field_types[k]))
			return k;
	return -1;
}

static int first_mistyped(const struct record_view *v)
{
	const cJSON *m, *o;
	int k;

	for (m = v->rec->child; m; m = m->next) {
		if ((k = mistyped_at(v, m)) >= 0)
			return k;
		if (jget_type(m) == cJSON_Object)
			for (o = m->child; o; o = o->next)
				if ((k = mistyped_at(v, o)) >= 0)
					return k;
	}
	return -1;
}

/* Whether the kind of the record `v` views is `kind` (its first byte
 * compared first: most records are of another kind). */
static int kind_is(const struct record_view *v, const char *kind)
{
	const char *s = jget_type(v->f[RF_KIND]) == cJSON_String ? v->f[RF_KIND]->valuestring : "";

	return s[0] == kind[0] && !strcmp(s, kind);
}

const char *record_view_edited(const struct record_view *v, char *out, size_t cap)
{
	static const struct {
		enum record_field f;
		const char *msg;
	} lies[] = {
		{RF_TR_OK, "verdict \"pass\" beside transport \"ok\": false"},
		{RF_AU_OK, "verdict \"pass\" beside audit \"ok\": false"},
		{RF_GR_OK, "verdict \"pass\" beside grade \"ok\": false"},
	};
	char want[80], got[80], name[160];
	const char *why;
	size_t i;
	int k, t, mistyped, incomplete;

	check_types(v, &mistyped, &incomplete);
	if (record_view_passed(v))
		for (i = 0; i < sizeof(lies) / sizeof(lies[0]); i++)
			if (jget_type(v->f[lies[i].f]) == cJSON_False)
				return lies[i].msg;
	if ((k = mistyped ? first_mistyped(v) : -1) >= 0) {
		t = jget_type(v->f[k]);
		if (record_field_parent(k) == RF_COUNT)
			snprintf(name, sizeof(name), "\"%.60s\"", v->f[k]->string);
		else
			snprintf(name, sizeof(name), "\"%.60s\".\"%.60s\"", v->f[record_field_parent(k)]->string,
				 v->f[k]->string);
		snprintf(out, cap, "member %s is %s, not %s", name,
			 types_text(t == cJSON_True || t == cJSON_False ? T_BOOL : (unsigned)t, got, sizeof(got)),
			 types_text(field_types[k], want, sizeof(want)));
		return out;
	}
	if (incomplete && (why = missing(v, always, sizeof(always), out, cap)))
		return why;
	if (kind_is(v, "load"))
		return missing(v, of_load, sizeof(of_load), out, cap);
	if (kind_is(v, "recall"))
		return missing(v, of_recall, sizeof(of_recall), out, cap);
	return NULL;
}

/* A member's number, or `otherwise` when it is absent or not a number. */
static double num_or(const cJSON *v, double otherwise)
{
	return jget_type(v) == cJSON_Number ? v->valuedouble : otherwise;
}

int record_load_request(const struct record_view *v, struct loadcells_req *out)
{
	const cJSON *load = v->f[RF_LOAD], *slo, *rate = v->f[RF_LO_RATE];
	double ttft = num_or(v->f[RF_TI_TTFT_MS], -1), ttfc = num_or(v->f[RF_TI_TTFC_MS], -1);
	double tpot = num_or(v->f[RF_TI_TPOT_MS], -1);
	struct loadcells_req r;

	if (jget_type(load) != cJSON_Object || jget_type(v->f[RF_CASE]) != cJSON_String ||
	    jget_numv(v->f[RF_LO_ROUND]) < 1)
		return 0;
	r.case_id = v->f[RF_CASE]->valuestring;
	r.level = (long)jget_numv(v->f[RF_LO_LEVEL]);
	r.round = (long)jget_numv(v->f[RF_LO_ROUND]);
	r.open_loop = jget_type(rate) == cJSON_Number;
	r.level_value = r.open_loop ? rate->valuedouble : jget_numv(v->f[RF_LO_CONCURRENCY]);
	slo = jget(load, RK_SLO);
	r.has_slo = jget_type(slo) == cJSON_Object;
	r.slo.ttft_ms = jget_num(slo, RK_TTFT_MS);
	r.slo.tpot_ms = jget_num(slo, RK_TPOT_MS);
	r.slo.e2e_ms = jget_num(slo, RK_E2E_MS);
	r.q.ok = record_view_passed(v);
	r.q.sent = num_or(jget(load, RK_SENT_MS), 0);
	r.q.scheduled = num_or(jget(load, RK_SCHEDULED_MS), r.q.sent);
	r.q.completion_tokens = (long)num_or(v->f[RF_US_COMPLETION_TOKENS], 0);
	r.q.first = ttft >= 0 ? r.q.sent + ttft : -1;
	r.q.first_content = ttfc >= 0 ? r.q.sent + ttfc : -1;
	r.q.last = r.q.first < 0 ? -1 : tpot >= 0 && r.q.completion_tokens >= 2
		? r.q.first + tpot * (double)(r.q.completion_tokens - 1) : r.q.first;
	r.q.done = r.q.sent + num_or(v->f[RF_TI_E2E_MS], 0);
	r.itl_ms = jget(load, RK_ITL_MS);
	*out = r;
	return 1;
}

const char *record_problem(const cJSON *rec)
{
	struct record_view v;

	record_view_of(rec, &v);
	return record_view_problem(&v);
}

int record_passed(const cJSON *rec)
{
	const cJSON *v = jget(rec, RK_VERDICT);

	return cJSON_IsString(v) && !strcmp(v->valuestring, "pass");
}

void record_utc_now(char *out, size_t cap)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

long long record_unix_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A new run id into out (RECORD_RUN_ID_LEN + 1 bytes). */
static void record_run_id(char out[RECORD_RUN_ID_LEN + 1])
{
	unsigned char b[16];
	struct timespec ts;
	unsigned long long x;
	size_t i, n = 0;

	if (getrandom(b, sizeof(b), GRND_NONBLOCK) != (ssize_t)sizeof(b)) {
		/* no entropy yet (early boot): the clock and the process, mixed by
		 * Knuth's MMIX linear congruential step */
		clock_gettime(CLOCK_REALTIME, &ts);
		x = ((unsigned long long)ts.tv_sec * 1000000000u + (unsigned long long)ts.tv_nsec) ^
		    (unsigned long long)getpid() << 40;
		for (i = 0; i < sizeof(b); i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			b[i] = (unsigned char)(x >> 56);
		}
	}
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* RFC 9562 version 4 */
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* its variant */
	for (i = 0; i < sizeof(b); i++)
		n += (size_t)snprintf(out + n, RECORD_RUN_ID_LEN + 1 - n, "%s%02x",
				      i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "", b[i]);
}

/* ---- the attempt record ---- */

static void num_or_null(struct json_build *jb, cJSON *o, const char *k, double v,
			int present)
{
	if (present)
		json_add_num(jb, o, k, v);
	else
		json_add_null(jb, o, k);
}

static void ms_or_null(struct json_build *jb, cJSON *o, const char *k, double v)
{
	num_or_null(jb, o, k, (double)(long long)(v * 1000.0 + 0.5) / 1000.0, v >= 0);
}

static void str_or_null(struct json_build *jb, cJSON *o, const char *k, const char *s)
{
	if (s)
		json_add_str(jb, o, k, s);
	else
		json_add_null(jb, o, k);
}

/* o[key] = the first RECORD_TEXT_MAX bytes of `text` (`len` bytes), cut at a
 * UTF-8 character boundary; when cut, o[key "_cut"] = {bytes, kept}. */
static void add_text(struct json_build *jb, cJSON *o, const char *key,
		     const char *text, size_t len)
{
	size_t kept = RECORD_TEXT_MAX;
	char cutkey[64];
	cJSON *c;

	if (len <= RECORD_TEXT_MAX) {
		json_add_strn(jb, o, key, text, len); /* whole: NUL bytes kept */
		return;
	}
	while (kept > 0 && ((unsigned char)text[kept] & 0xC0) == 0x80)
		kept--; /* text[kept] starts the first character left out */
	json_add_strn(jb, o, key, text, kept);
	snprintf(cutkey, sizeof(cutkey), "%s_cut", key);
	c = json_add_obj(jb, o, cutkey);
	json_add_num(jb, c, "bytes", (double)len);
	json_add_num(jb, c, "kept", (double)kept);
}

/* The calls of `s`; `capped`: each arguments text cut as add_text cuts
 * content (a record), else whole (the round-2 request). */
static void add_tool_calls(struct json_build *jb, cJSON *arr, const struct stream *s, int capped)
{
	size_t i;

	for (i = 0; i < s->ntools; i++) {
		const struct stream_tool_call *t = &s->tools[i];
		cJSON *o = json_add_obj(jb, arr, NULL), *fn;
		json_add_str(jb, o, "id", t->id.data);
		json_add_str(jb, o, "type", t->type.len ? t->type.data : "function");
		fn = json_add_obj(jb, o, "function");
		json_add_str(jb, fn, "name", t->name.data);
		if (capped)
			add_text(jb, fn, "arguments", t->arguments.data, t->arguments.len);
		else
			json_add_strn(jb, fn, "arguments", t->arguments.data, t->arguments.len);
	}
}

/* fn's members as in `f`, the arguments text cut as add_text cuts content.
 * Arguments holding a NUL are a raw literal (json_add_strn): one over the
 * cap is left out ("" kept, arguments_cut says how long it was). */
static void add_function_capped(struct json_build *jb, cJSON *fn, const cJSON *f)
{
	const cJSON *k;
	cJSON *c;

	cJSON_ArrayForEach(k, f) {
		size_t n = k->valuestring ? strlen(k->valuestring) : 0;

		if (strcmp(k->string, "arguments") || n <= RECORD_TEXT_MAX) {
			json_add_dup(jb, fn, k->string, k);
		} else if (cJSON_IsString(k)) {
			add_text(jb, fn, "arguments", k->valuestring, n);
		} else {
			json_add_str(jb, fn, "arguments", "");
			c = json_add_obj(jb, fn, "arguments_cut");
			json_add_num(jb, c, "bytes", (double)n);
			json_add_num(jb, c, "kept", 0);
		}
	}
}

/* A copy of the calls `calls` (record_tool_calls), arguments capped. */
static void add_calls_capped(struct json_build *jb, cJSON *arr, const cJSON *calls)
{
	const cJSON *call, *k;

	cJSON_ArrayForEach(call, calls) {
		cJSON *o = json_add_obj(jb, arr, NULL);

		cJSON_ArrayForEach(k, call)
			if (strcmp(k->string, "function"))
				json_add_dup(jb, o, k->string, k);
			else
				add_function_capped(jb, json_add_obj(jb, o, "function"), k);
	}
}

cJSON *record_tool_calls(const struct stream *s)
{
	struct json_build jb;
	cJSON *arr;

	json_build_init(&jb);
	arr = json_new_arr(&jb);
	add_tool_calls(&jb, arr, s, 0);
	json_build_end(&jb, &arr, "the tool calls", NULL);
	return arr;
}

static void add_transport(struct json_build *jb, cJSON *rec,
			  const struct stream_checks *ck, const char *extra)
{
	cJSON *o = json_add_obj(jb, rec, RK_TRANSPORT), *codes, *msgs;
	size_t i;

	json_add_bool(jb, o, RK_OK, ck->n == 0);
	codes = json_add_arr(jb, o, RK_FAILURES);
	msgs = json_add_arr(jb, o, RK_MESSAGES);
	for (i = 0; i < ck->n; i++) {
		json_add_str(jb, codes, NULL, stream_fail_name(ck->f[i].code));
		json_add_str(jb, msgs, NULL, ck->f[i].msg);
	}
	for (i = 0; extra && *extra && i < ck->n; i++)
		if (strstr(ck->f[i].msg, extra))
			extra = NULL; /* already said */
	if (extra && *extra)
		json_add_str(jb, msgs, NULL, extra);
}

static void add_audit(struct json_build *jb, cJSON *rec, const struct audit_result *v)
{
	cJSON *o = json_add_obj(jb, rec, RK_AUDIT);

	json_add_bool(jb, o, RK_OK, v->ok);
	json_add_bool(jb, o, RK_ENABLED, v->enabled);
	if (v->skipped)
		json_add_str(jb, o, "note", "images: the local count has the text only; the delta is the image tokens and is not judged");
	num_or_null(jb, o, RK_LOCAL_PROMPT_TOKENS, (double)v->local_tokens, v->local_tokens >= 0);
	num_or_null(jb, o, RK_SERVER_PROMPT_TOKENS, (double)v->server_tokens, v->server_tokens >= 0);
	num_or_null(jb, o, RK_USAGE_DELTA, (double)v->delta, v->have_delta);
	json_add_num(jb, o, RK_TOLERANCE, (double)v->tolerance);
	if (v->hint)
		json_add_str(jb, o, RK_HINT, v->hint);
}

static void add_timing(struct json_build *jb, cJSON *rec, const struct stream *s)
{
	struct stream_timing t;
	cJSON *o = json_add_obj(jb, rec, RK_TIMING);

	stream_timing(s, &t);
	ms_or_null(jb, o, RK_FIRST_BYTE_MS, t.first_byte_ms);
	ms_or_null(jb, o, RK_TTFT_MS, t.ttft_ms);
	ms_or_null(jb, o, RK_TTFC_MS, t.ttfc_ms);
	ms_or_null(jb, o, RK_E2E_MS, t.e2e_ms);
	ms_or_null(jb, o, RK_TPOT_MS, t.tpot_ms);
}

static void add_grade(struct json_build *jb, cJSON *rec, const struct grade *g)
{
	cJSON *o = json_add_obj(jb, rec, RK_GRADE);

	json_add_bool(jb, o, RK_OK, g->ok);
	if (g->reasons)
		json_add_dup(jb, o, RK_REASONS, g->reasons);
	else
		json_add_arr(jb, o, RK_REASONS);
	if (g->needles)
		json_add_dup(jb, o, RK_NEEDLES, g->needles);
}

static void add_recall(struct json_build *jb, cJSON *rec, const struct record_attempt *a)
{
	cJSON *o = json_add_obj(jb, rec, RK_RECALL), *dep;
	int i;

	json_add_int(jb, o, RK_TOKENS, a->recall_tokens);
	dep = json_add_arr(jb, o, RK_DEPTHS);
	for (i = 0; i < a->c->recall.ndepths; i++)
		json_add_int(jb, dep, NULL, a->c->recall.depths[i]);
	json_add_str(jb, o, "filler", a->c->recall.filler);
	json_add_str(jb, o, RK_PROMPT_SHA256, a->prompt_sha256);
}

/* The usage object as the server sent it (its compact text re-parsed), or
 * null. */
static void add_usage(struct json_build *jb, cJSON *o, const struct stream *s)
{
	cJSON *u = NULL;

	if (s->usage.present && s->usage.json.len &&
	    json_parse(s->usage.json.data, s->usage.json.len, &u, "usage", NULL) == ERR_NOMEM)
		json_add_item(jb, o, RK_USAGE, NULL); /* records the failure */
	else if (u)
		json_add_item(jb, o, RK_USAGE, u);
	else
		json_add_null(jb, o, RK_USAGE);
}

/* http_status ... tool_calls, request_sha256: what a record and a round
 * summary both say about a response. */

static void add_response(struct json_build *jb, cJSON *o, const struct record_attempt *a)
{
	json_add_int(jb, o, RK_HTTP_STATUS, a->http_status);
	add_timing(jb, o, a->st);
	add_usage(jb, o, a->st);
	str_or_null(jb, o, RK_FINISH_REASON, a->st->finish_reason.len
		    ? a->st->finish_reason.data : NULL);
	add_text(jb, o, RK_CONTENT, a->st->content.data, a->st->content.len);
	add_text(jb, o, RK_REASONING, a->st->reasoning.data, a->st->reasoning.len);
	if (a->tool_calls)
		add_calls_capped(jb, json_add_arr(jb, o, RK_TOOL_CALLS), a->tool_calls);
	else
		add_tool_calls(jb, json_add_arr(jb, o, RK_TOOL_CALLS), a->st, 1);
	json_add_str(jb, o, "request_sha256", a->request_sha256);
}

static void add_raw(struct json_build *jb, cJSON *o, const char *name)
{
	char path[320];

	snprintf(path, sizeof(path), "raw/%s", name);
	json_add_str(jb, o, RK_RAW, path);
}

static void add_load(struct json_build *jb, cJSON *rec, const struct record_load *l)
{
	cJSON *o = json_add_obj(jb, rec, RK_LOAD), *g, *slo;
	size_t i;

	if (l->open_loop)
		json_add_num(jb, o, RK_RATE, l->rate);
	else
		json_add_int(jb, o, RK_CONCURRENCY, l->concurrency);
	json_add_int(jb, o, RK_LEVEL, l->level);
	json_add_int(jb, o, RK_ROUND, l->round);
	json_add_int(jb, o, RK_INDEX, l->index);
	json_add_bool(jb, o, RK_WARMUP, l->warmup);
	json_add_bool(jb, o, RK_PRECHECK, l->precheck);
	json_add_num(jb, o, RK_SCHEDULED_MS, l->scheduled_ms);
	json_add_num(jb, o, RK_SENT_MS, l->sent_ms);
	json_add_int(jb, o, RK_INPUT_TOKENS, l->input_tokens);
	json_add_int(jb, o, RK_OUTPUT_TOKENS, l->output_tokens);
	if (l->ngaps) { /* to the microsecond */
		g = json_add_arr(jb, o, RK_ITL_MS);
		for (i = 0; i < l->ngaps; i++)
			json_add_num(jb, g, NULL, round(l->gaps_ms[i] * 1000) / 1000);
	}
	if (l->has_round_wall) /* sharded: for needle merge's common-start check */
		json_add_num(jb, o, RK_ROUND_STARTED_UNIX, l->round_started_unix);
	if (l->slo_ttft_ms > 0 || l->slo_tpot_ms > 0 || l->slo_e2e_ms > 0) {
		slo = json_add_obj(jb, o, RK_SLO);
		if (l->slo_ttft_ms > 0)
			json_add_num(jb, slo, RK_TTFT_MS, l->slo_ttft_ms);
		if (l->slo_tpot_ms > 0)
			json_add_num(jb, slo, RK_TPOT_MS, l->slo_tpot_ms);
		if (l->slo_e2e_ms > 0)
			json_add_num(jb, slo, RK_E2E_MS, l->slo_e2e_ms);
	}
}

static void add_probe(struct json_build *jb, cJSON *rec, const struct record_probe *p)
{
	cJSON *o = json_add_obj(jb, rec, RK_PROBE);

	if (p->cache) {
		json_add_str(jb, o, RK_STEP, p->step);
		json_add_str(jb, o, RK_NONCE, p->nonce);
		num_or_null(jb, o, RK_CACHED_TOKENS, (double)p->cached_tokens, p->cached_tokens >= 0);
		json_add_num(jb, o, RK_TTFT_MS, p->ttft_ms);
	} else {
		json_add_int(jb, o, RK_TOKENS, p->tokens);
		json_add_int(jb, o, "offset", p->offset);
		json_add_int(jb, o, "mod2", p->tokens % 2);
		json_add_int(jb, o, "mod4", p->tokens % 4);
		json_add_int(jb, o, "mod8", p->tokens % 8);
	}
}

cJSON *record_new(const struct record_attempt *a, struct record_verdict *v)
{
	struct json_build jb;
	const cJSON *temp;
	cJSON *rec;

	v->transport_ok = a->ck->n == 0;
	v->audit_ok = a->audit->ok;
	v->grade_ok = a->g->ok;
	json_build_init(&jb);
	rec = json_new_obj(&jb);
	json_add_str(&jb, rec, RK_CASE, a->c->id);
	json_add_str(&jb, rec, RK_KIND, suite_kind_name(a->c->kind));
	json_add_int(&jb, rec, RK_REPEAT, a->repeat);
	num_or_null(&jb, rec, RK_SEED, (double)a->seed, a->has_seed);
	json_add_str(&jb, rec, RK_VERDICT, v->transport_ok && v->audit_ok && v->grade_ok
					  ? "pass" : "fail");
	add_transport(&jb, rec, a->ck, a->transport_msg);
	add_audit(&jb, rec, a->audit);
	add_grade(&jb, rec, a->g);
	add_response(&jb, rec, a);
	json_add_str(&jb, rec, RK_ENDPOINT, a->endpoint);
	json_add_str(&jb, rec, RK_MODEL, a->model);
	json_add_str(&jb, rec, RK_STARTED_AT, a->started_at);
	json_add_int(&jb, rec, RK_STARTED_UNIX_MS, a->started_unix_ms);
	add_raw(&jb, rec, a->raw_name);
	json_add_num(&jb, rec, "response_bytes", (double)a->response_bytes);
	if (a->c->kind == SUITE_RECALL)
		add_recall(&jb, rec, a);
	temp = cJSON_GetObjectItemCaseSensitive(a->c->json, "temperature");
	json_add_item(&jb, rec, RK_TEMPERATURE, cJSON_IsNumber(temp) ? cJSON_CreateNumber(temp->valuedouble)
								    : cJSON_CreateNull());
	if (a->round1)
		json_add_dup(&jb, json_add_arr(&jb, rec, "rounds"), NULL, a->round1);
	if (a->base_url) {
		json_add_int(&jb, rec, RK_REPLICA, a->replica);
		json_add_str(&jb, rec, RK_BASE_URL, a->base_url);
	}
	if (a->load)
		add_load(&jb, rec, a->load);
	if (a->during) {
		cJSON *o = json_add_obj(&jb, rec, "during");
		json_add_str(&jb, o, "load_case", a->during);
		json_add_bool(&jb, o, "under_load", a->under_load);
	}
	if (a->probe)
		add_probe(&jb, rec, a->probe);
	json_build_end(&jb, &rec, "a result record", NULL);
	return rec;
}

cJSON *record_round(const struct record_attempt *a)
{
	struct json_build jb;
	cJSON *o;

	json_build_init(&jb);
	o = json_new_obj(&jb);
	add_transport(&jb, o, a->ck, a->transport_msg);
	add_response(&jb, o, a);
	add_raw(&jb, o, a->raw_name);
	json_build_end(&jb, &o, "a round summary", NULL);
	return o;
}

/* ---- manifest.json ---- */

static void add_options(struct json_build *jb, cJSON *m, const struct record_options *o)
{
	cJSON *j = json_add_obj(jb, m, MK_OPTIONS);

	json_add_int(jb, j, "concurrency", o->concurrency);
	num_or_null(jb, j, "timeout_s", o->timeout, o->timeout > 0);
	num_or_null(jb, j, "idle_timeout_s", o->idle_timeout, o->idle_timeout > 0);
	num_or_null(jb, j, MK_REPEAT, (double)o->repeat, o->repeat > 0);
	if (o->ncase_globs) {
		cJSON *c = json_add_arr(jb, j, MK_CASE);
		int i;
		for (i = 0; i < o->ncase_globs; i++)
			json_add_str(jb, c, NULL, o->case_globs[i]);
	} else
		json_add_null(jb, j, MK_CASE);
	json_add_bool(jb, j, "resume", o->resume);
	json_add_str(jb, j, "api_key_env", o->api_key_env ? o->api_key_env : "OPENAI_API_KEY");
	str_or_null(jb, j, MK_SERVER, o->server);
}

static void add_config(struct json_build *jb, cJSON *m, const struct record_origin *o)
{
	cJSON *c, *k;
	int i;

	if (!o->config_path) {
		json_add_null(jb, m, "config");
		return;
	}
	c = json_add_obj(jb, m, "config");
	json_add_str(jb, c, "path", o->config_path);
	json_add_str(jb, c, "sha256", o->config_sha256);
	json_add_bool(jb, c, "named", o->config_named);
	k = json_add_arr(jb, c, "keys");
	for (i = 0; i < o->nconfig_keys; i++)
		json_add_str(jb, k, NULL, o->config_keys[i]);
}

static void add_locals(struct json_build *jb, cJSON *m, const struct record_manifest *in)
{
	cJSON *t;

	if (in->tok) {
		t = json_add_obj(jb, m, MK_TOKENIZER);
		json_add_str(jb, t, MK_PATH, in->tokenizer_path);
		json_add_str(jb, t, MK_KIND, tok_kind(in->tok));
		json_add_str(jb, t, MK_SHA256, tok_sha256(in->tok));
		num_or_null(jb, t, "completions_bos_id", (double)in->bos_id, in->bos_id >= 0);
		if (in->bos_answer)
			json_add_str(jb, t, "completions_bos_server", in->bos_answer);
		if (in->origin.tokenizer_id) { /* ./ORG/NAME or the cache's ORG/NAME */
			json_add_str(jb, t, "id", in->origin.tokenizer_id);
			json_add_str(jb, t, "from", in->origin.tokenizer_from);
		}
	} else {
		json_add_null(jb, m, MK_TOKENIZER);
	}
	if (in->tpl) {
		t = json_add_obj(jb, m, MK_TEMPLATE);
		json_add_str(jb, t, MK_NAME, tpl_name(in->tpl));
		json_add_str(jb, t, MK_SHA256, tpl_sha256(in->tpl));
		json_add_str(jb, t, "source", tpl_source(in->tpl));
		json_add_str(jb, t, "source_sha256", tpl_source_sha256(in->tpl));
		if (tpl_clock_text() && tpl_reads_clock(in->tpl)) /* strftime_now's clock */
			json_add_str(jb, t, "date", tpl_clock_text());
		/* how the audit prepared messages (tpl.h, tpl_render_ex) */
		json_add_str(jb, t, MK_SERVER, tpl_server_name(in->server));
		json_add_str(jb, t, "server_from", in->server_from);
	} else {
		json_add_null(jb, m, MK_TEMPLATE);
	}
}

cJSON *record_manifest_new(struct record_manifest *in)
{
	struct json_build jb;
	cJSON *m, *s, *h;
	char when[32], id[RECORD_RUN_ID_LEN + 1];

	json_build_init(&jb);
	m = json_new_obj(&jb);
	h = json_add_obj(&jb, m, MK_HARNESS);
	json_add_str(&jb, h, MK_NAME, "needle");
	json_add_str(&jb, h, MK_VERSION, NEEDLE_VERSION);
	json_add_str(&jb, h, MK_COMMIT, version_describe);
	record_run_id(id);
	json_add_str(&jb, m, MK_RUN_ID, id);
	s = json_add_obj(&jb, m, MK_SUITE);
	json_add_str(&jb, s, MK_NAME, in->suite->name);
	json_add_str(&jb, s, MK_PATH, in->suite->path);
	json_add_str(&jb, s, MK_SHA256, in->suite->sha256);
	json_add_int(&jb, s, "cases", (long long)in->suite->ncases);
	json_add_str(&jb, in->endpoint, EP_BASE_URL, in->base_url);
	json_add_item(&jb, m, MK_ENDPOINT, in->endpoint);
	in->endpoint = NULL;
	add_locals(&jb, m, in);
	add_options(&jb, m, &in->opts);
	add_config(&jb, m, &in->origin);
	record_utc_now(when, sizeof(when));
	json_add_str(&jb, m, MK_STARTED_AT, when);
	json_add_null(&jb, m, MK_ENDED_AT);
	json_build_end(&jb, &m, "the manifest", NULL);
	return m;
}

/* Replaces member `key` of `o` in place (its position kept) with `item`
 * (consumed). */
static enum err replace(cJSON *o, const char *key, cJSON *item, struct diag *d)
{
	if (item && cJSON_ReplaceItemInObjectCaseSensitive(o, key, item))
		return ERR_OK;
	cJSON_Delete(item);
	return diag_fail(d, ERR_NOMEM, "out of memory building the manifest");
}

enum err record_manifest_end(cJSON *manifest, size_t planned, size_t run, size_t pass,
			     size_t fail, size_t recorded_before, struct diag *d)
{
	struct json_build jb;
	cJSON *c;
	char when[32];

	record_utc_now(when, sizeof(when));
	if (replace(manifest, MK_ENDED_AT, cJSON_CreateString(when), d))
		return d->code;
	json_build_init(&jb);
	c = json_new_obj(&jb);
	json_add_int(&jb, c, MK_PLANNED, (long long)planned);
	json_add_int(&jb, c, MK_RUN, (long long)run);
	json_add_int(&jb, c, MK_PASS, (long long)pass);
	json_add_int(&jb, c, MK_FAIL, (long long)fail);
	json_add_int(&jb, c, MK_RECORDED_BEFORE, (long long)recorded_before);
	cJSON_DeleteItemFromObjectCaseSensitive(manifest, MK_ATTEMPTS);
	json_add_item(&jb, manifest, MK_ATTEMPTS, c);
	return json_build_end(&jb, NULL, "the manifest", d);
}

enum err record_manifest_plan(cJSON *manifest, cJSON *keys, struct diag *d)
{
	struct json_build jb;
	cJSON *p;

	json_build_init(&jb);
	p = json_new_obj(&jb);
	json_add_int(&jb, p, MK_VERSION, RECORD_PLAN_VERSION);
	json_add_int(&jb, p, MK_ATTEMPTS, cJSON_GetArraySize(keys));
	json_add_item(&jb, p, MK_KEYS, keys);
	cJSON_DeleteItemFromObjectCaseSensitive(manifest, MK_PLANNED);
	json_add_item(&jb, manifest, MK_PLANNED, p);
	return json_build_end(&jb, NULL, "the manifest", d);
}

int record_case_selected(const char *const *globs, size_t nglobs, const char *id)
{
	size_t i;

	for (i = 0; i < nglobs; i++)
		if (!fnmatch(globs[i], id, 0))
			return 1;
	return nglobs == 0;
}

/* Whether planned key `key` (record_key) is of a case `globs` selects. */
static int key_selected(const char *key, const char *const *globs, size_t nglobs)
{
	char id[RECORD_KEY_MAX];
	size_t n = strcspn(key, "\x1f");

	if (n >= sizeof(id))
		return 0;
	memcpy(id, key, n);
	id[n] = '\0';
	return record_case_selected(globs, nglobs, id);
}

void record_plan_done(const cJSON *manifest, const struct keyset *recorded,
		      const char *const *globs, size_t nglobs,
		      struct record_plan_count *out)
{
	const cJSON *plan = cJSON_GetObjectItemCaseSensitive(manifest, MK_PLANNED);
	const cJSON *keys = cJSON_GetObjectItemCaseSensitive(plan, MK_KEYS);
	const cJSON *ver = cJSON_GetObjectItemCaseSensitive(plan, MK_VERSION);
	const cJSON *it;

	out->planned = -1;
	out->done = 0;
	out->per_case = 0;
	if (!cJSON_IsArray(keys))
		return;
	out->per_case = !cJSON_IsNumber(ver) || ver->valuedouble < RECORD_PLAN_VERSION;
	out->planned = 0;
	cJSON_ArrayForEach(it, keys) {
		if (nglobs && (!cJSON_IsString(it) || !key_selected(it->valuestring, globs, nglobs)))
			continue;
		out->planned++;
		out->done += cJSON_IsString(it) && keyset_has(recorded, it->valuestring);
	}
}

/* What --resume requires to be unchanged: manifest path, what to call it. */
static const char *const same_on_resume[][4] = {
	{MK_SUITE, MK_SHA256, NULL, "the suite (SHA-256)"},
	{MK_ENDPOINT, EP_BASE_URL, NULL, "the endpoint"},
	{MK_ENDPOINT, EP_SERVED_MODEL, NULL, "the served model"},
	{MK_ENDPOINT, EP_SERVER, EP_KIND_GUESS, "the server flavour"},
	{MK_TOKENIZER, MK_SHA256, NULL, "the tokenizer (SHA-256)"},
	{MK_TEMPLATE, MK_SHA256, NULL, "the template (SHA-256)"},
	{MK_TEMPLATE, MK_SERVER, NULL, "the server whose message preparation the audit renders"},
	{MK_OPTIONS, MK_SERVER, NULL, "option '--server'"},
};

/* The value at path p[0..2] of `m` (NULL when absent). */
static const cJSON *at_path(const cJSON *m, const char *const *p)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, p[0]);
	int i;

	for (i = 1; i < 3 && p[i] && v; i++)
		v = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, p[i]) : NULL;
	return v;
}

/* `v` as short JSON text ("absent" when NULL). */
static void short_json(const cJSON *v, char *out, size_t cap)
{
	char *t = v ? cJSON_PrintUnformatted(v) : NULL;

	snprintf(out, cap, "%s", v ? (t ? t : "?") : "absent");
	if (strlen(out) + 1 == cap && cap > 4)
		memcpy(out + cap - 4, "...", 4);
	cJSON_free(t);
}

/* The plan of a resumed run: the old plan's keys, then this run's new ones
 * (a narrower --case never makes a run look complete). */
static enum err merge_plan(cJSON *manifest, const cJSON *old, struct diag *d)
{
	const cJSON *was = at_path(old, (const char *const[]){MK_PLANNED, MK_KEYS, NULL});
	const cJSON *now = at_path(manifest, (const char *const[]){MK_PLANNED, MK_KEYS, NULL});
	struct json_build jb;
	struct keyset seen;
	cJSON *keys;
	const cJSON *it;
	int pass;
	enum err e = ERR_OK;

	if (!cJSON_IsArray(was) || !cJSON_IsArray(now))
		return ERR_OK;
	keyset_init(&seen);
	json_build_init(&jb);
	keys = json_new_arr(&jb);
	for (pass = 0; pass < 2; pass++) {
		const cJSON *from = pass ? now : was;
		cJSON_ArrayForEach(it, from) {
			int added = 0;
			if (cJSON_IsString(it) && !e && !(e = keyset_add(&seen, it->valuestring, &added, d)) &&
			    added)
				json_add_str(&jb, keys, NULL, it->valuestring);
		}
	}
	keyset_release(&seen);
	if (e) {
		cJSON_Delete(keys);
		return e;
	}
	if (json_build_end(&jb, &keys, "the plan", d))
		return d->code;
	return record_manifest_plan(manifest, keys, d);
}

enum err record_manifest_resume(cJSON *manifest, const cJSON *old,
				const char *dir, struct diag *d)
{
	size_t i;

	for (i = 0; old && i < sizeof(same_on_resume) / sizeof(same_on_resume[0]); i++) {
		const char *const *p = same_on_resume[i];
		const cJSON *was = at_path(old, p), *now = at_path(manifest, p);
		char a[100], b[100];
		if (!cJSON_GetObjectItemCaseSensitive(old, p[0]) ||
		    (was && now && cJSON_Compare(was, now, 1)) || (!was && !now))
			continue; /* a field an older needle did not write is no change */
		short_json(was, a, sizeof(a));
		short_json(now, b, sizeof(b));
		return diag_fail(d, ERR_USAGE,
				 "cannot resume '%s': %s changed since the run started (was %s, now %s); resume with the same, or pass another --out",
				 dir, p[3], a, b);
	}
	if (cJSON_GetObjectItemCaseSensitive(old, MK_STARTED_AT) &&
	    replace(manifest, MK_STARTED_AT,
		    cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(old, MK_STARTED_AT), 1), d))
		return d->code;
	if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(old, MK_RUN_ID)) &&
	    replace(manifest, MK_RUN_ID,
		    cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(old, MK_RUN_ID), 1), d))
		return d->code;
	return merge_plan(manifest, old, d);
}
