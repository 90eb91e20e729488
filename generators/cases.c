#include "cases.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "image.h"
#include "base/json.h"
#include "base/mem.h"
#include "prng.h"

#define TEXT_MAX ((size_t)1 << 20) /* any one prompt or JSON text */
#define CODES_MAX 32

/* Generation state: a seeded stream, a checked JSON builder (json.h: its
 * error is sticky and checked once at the end, which keeps builders
 * readable), a flag for a JSON template of this file's own that did not
 * parse (a bug), and the unique values handed out so far. */
struct gen {
	struct prng rng;
	struct json_build jb;
	int bad_template;
	int ncodes;
	char codes[CODES_MAX][16];
};

/* Uniform in 0..n-1 (n >= 1): prng_below is unbiased. */
static int below(struct gen *g, int n)
{
	return (int)prng_below(&g->rng, (uint64_t)n);
}

/* Each kind (and each JSON task) draws from its own stream, so adding a case
 * to one kind never changes the values of another. */
static void gen_init(struct gen *g, uint64_t seed, uint64_t stream)
{
	memset(g, 0, sizeof(*g));
	json_build_init(&g->jb);
	prng_init(&g->rng, seed, stream);
}

/* `k` different indices below `n` (k <= n <= 64) into `out`. */
static void distinct(struct gen *g, int n, int k, int *out)
{
	int i, j;

	for (i = 0; i < k; i++) {
	again:
		out[i] = below(g, n);
		for (j = 0; j < i; j++)
			if (out[j] == out[i])
				goto again;
	}
}

/* A value such as "WX-7K2P9Q" that no earlier call returned. The alphabet
 * leaves out look-alikes (0/O, 1/I). */
static const char *unique_code(struct gen *g, const char *prefix)
{
	static const char alpha[] = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
	char *c = g->codes[g->ncodes < CODES_MAX ? g->ncodes : CODES_MAX - 1];
	size_t p = strlen(prefix);
	int i, j;

	if (p > 8)
		p = 8;
	for (;;) {
		memcpy(c, prefix, p);
		c[p] = '-';
		for (i = 0; i < 6; i++)
			c[p + 1 + (size_t)i] = alpha[below(g, (int)sizeof(alpha) - 1)];
		c[p + 7] = '\0';
		for (j = 0; j < g->ncodes; j++)
			if (!strcmp(g->codes[j], c))
				break;
		if (j == g->ncodes)
			break;
	}
	if (g->ncodes < CODES_MAX)
		g->ncodes++;
	return c;
}

/* ---- cJSON helpers: failures go to the builder, never leak the item ---- */

/* A new JSON string made with printf, or NULL (which an add records). */
static cJSON *vstrf(const char *fmt, va_list ap)
{
	struct buf b;
	cJSON *s = NULL;

	buf_init(&b, TEXT_MAX);
	if (!buf_vprintf(&b, fmt, ap))
		s = cJSON_CreateString(b.data);
	buf_release(&b);
	return s;
}

/* A JSON string made with printf. */
static cJSON *strf(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static cJSON *strf(const char *fmt, ...)
{
	va_list ap;
	cJSON *s;

	va_start(ap, fmt);
	s = vstrf(fmt, ap);
	va_end(ap);
	return s;
}

/* A JSON value parsed from text made with printf, or NULL (which an add
 * records as out of memory). The texts are this file's own, so a parse
 * failure is a bug: g->bad_template reports it as ERR_INTERNAL. */
static cJSON *jsonf(struct gen *g, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static cJSON *jsonf(struct gen *g, const char *fmt, ...)
{
	struct buf b;
	va_list ap;
	cJSON *v = NULL;
	enum err e;

	buf_init(&b, TEXT_MAX);
	va_start(ap, fmt);
	e = buf_vprintf(&b, fmt, ap);
	va_end(ap);
	if (!e && json_parse(b.data, b.len, &v, "a JSON template", NULL) == ERR_INPUT)
		g->bad_template = 1;
	buf_release(&b);
	return v;
}

static cJSON *message(struct gen *g, const char *role, cJSON *content)
{
	cJSON *m = cJSON_CreateObject();

	json_add_str(&g->jb, m, "role", role);
	json_add_item(&g->jb, m, "content", content);
	return m;
}

static cJSON *case_new(struct gen *g, const char *id, const char *kind)
{
	cJSON *c = cJSON_CreateObject();

	json_add_str(&g->jb, c, "id", id);
	json_add_str(&g->jb, c, "kind", kind);
	return c;
}

static enum err gen_result(const struct gen *g, struct diag *d, const char *what)
{
	if (g->bad_template)
		return diag_fail(d, ERR_INTERNAL, "cannot build %s: bad JSON template", what);
	return json_build_end(&g->jb, NULL, what, d);
}

/* ---- kinds ---- */

enum err cases_parse_kinds(const char *s, unsigned *kinds, struct diag *d)
{
	static const struct {
		const char *name;
		unsigned bits;
	} names[] = {{"json", CASES_JSON}, {"tool", CASES_TOOL},
		     {"multiturn", CASES_MULTITURN}, {"image", CASES_IMAGE},
		     {"all", CASES_ALL}};
	const char *p = s;

	*kinds = 0;
	for (;;) {
		size_t n = strcspn(p, ","), i;

		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strlen(names[i].name) == n && !strncmp(names[i].name, p, n))
				break;
		if (i == sizeof(names) / sizeof(names[0]))
			return diag_fail(d, ERR_USAGE,
					 "unknown case kind '%.*s' (json, tool, multiturn, image, all)",
					 (int)n, p);
		*kinds |= names[i].bits;
		if (!p[n])
			return ERR_OK;
		p += n + 1;
	}
}

/* ---- type specs ---- */

static const char *type_of(const cJSON *v)
{
	if (cJSON_IsNumber(v))
		return v->valuedouble == (double)(long long)v->valuedouble ? "integer" : "number";
	if (cJSON_IsString(v))
		return "string";
	if (cJSON_IsBool(v))
		return "boolean";
	if (cJSON_IsNull(v))
		return "null";
	if (cJSON_IsArray(v))
		return "array";
	if (cJSON_IsObject(v))
		return "object";
	return "invalid";
}

static int scalar_match(const cJSON *v, const char *spec)
{
	const char *t = type_of(v);
	const char *bar = strchr(spec, '|');

	if (bar && !strcmp(bar + 1, "null") && cJSON_IsNull(v))
		return 1;
	if (bar ? (size_t)(bar - spec) == strlen(t) && !strncmp(spec, t, strlen(t))
		: !strcmp(spec, t))
		return 1;
	/* an integer is also a number */
	return !strncmp(spec, "number", bar ? (size_t)(bar - spec) : strlen(spec) + 1) &&
	       cJSON_IsNumber(v);
}

static int valid_scalar_spec(const char *s)
{
	static const char *const ok[] = {"integer", "number", "string", "boolean", "null",
					 "integer|null", "number|null", "string|null",
					 "boolean|null"};
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!strcmp(s, ok[i]))
			return 1;
	return 0;
}

static int match_at(const cJSON *v, const cJSON *spec, const char *path,
		    char *why, size_t n)
{
	char sub[256];
	const cJSON *k;
	int i = 0, r;

	if (cJSON_IsString(spec)) {
		if (!valid_scalar_spec(spec->valuestring))
			return -1;
		if (scalar_match(v, spec->valuestring))
			return 1;
		snprintf(why, n, "%s: expected %s, got %s", path, spec->valuestring,
			 type_of(v));
		return 0;
	}
	if (cJSON_IsArray(spec)) {
		if (cJSON_GetArraySize(spec) != 1)
			return -1;
		if (!cJSON_IsArray(v)) {
			snprintf(why, n, "%s: expected array, got %s", path, type_of(v));
			return 0;
		}
		cJSON_ArrayForEach(k, v) {
			snprintf(sub, sizeof(sub), "%s[%d]", path, i++);
			if ((r = match_at(k, spec->child, sub, why, n)) != 1)
				return r;
		}
		return 1;
	}
	if (!cJSON_IsObject(spec))
		return -1;
	if (!cJSON_IsObject(v)) {
		snprintf(why, n, "%s: expected object, got %s", path, type_of(v));
		return 0;
	}
	cJSON_ArrayForEach(k, v)
		if (!cJSON_GetObjectItemCaseSensitive(spec, k->string)) {
			snprintf(why, n, "%s: unexpected key '%s'", path, k->string);
			return 0;
		}
	cJSON_ArrayForEach(k, spec) {
		const cJSON *item = cJSON_GetObjectItemCaseSensitive(v, k->string);

		snprintf(sub, sizeof(sub), "key '%s'", k->string);
		if (!item) {
			snprintf(why, n, "%s: missing", sub);
			return 0;
		}
		if ((r = match_at(item, k, sub, why, n)) != 1)
			return r;
	}
	return 1;
}

int cases_types_match(const cJSON *value, const cJSON *types, char *why, size_t n)
{
	if (n)
		why[0] = '\0';
	return match_at(value, types, "answer", why, n);
}

/* ---- the 12 strict-JSON tasks ---- */

/* Days since 1970-01-01 of a proleptic Gregorian date, and back (H. Hinnant,
 * "chrono-Compatible Low-Level Date Algorithms"). */
static long days_from_civil(long y, long m, long dd)
{
	long era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + dd - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static void civil_from_days(long z, long *y, long *m, long *dd)
{
	long era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*dd = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = yoe + era * 400 + (*m <= 2);
}

struct task_io {
	struct gen *g;
	struct buf *prompt; /* the user message */
	struct buf *answer; /* the expected answer as JSON text */
	struct cases_task *t;
};

static void set_id(struct task_io *io, const char *id, const char *types)
{
	snprintf(io->t->id, sizeof(io->t->id), "%s", id);
	io->t->types = types;
}

/* Seed report 002 §6, task 1: the integer was asked for bare; here as a
 * typed JSON object, as in the runner's own acceptance example. */
static enum err task_arith(struct task_io *io)
{
	set_id(io, "arith-19x23", "{\"answer\":\"integer\"}");
	return buf_puts(io->prompt, "Compute 19 * 23. Reply with only a JSON object "
				    "{\"answer\": <integer>}.") ||
	       buf_printf(io->answer, "{\"answer\":%d}", 19 * 23);
}

/* Seed report 002 §6, task 2 (Ada, platform, 6), with each key's type. */
static enum err task_extract(struct task_io *io)
{
	set_id(io, "extract-fields",
	       "{\"name\":\"string\",\"department\":\"string\",\"seats\":\"integer\"}");
	return buf_puts(io->prompt,
			"Extract fields from the sentence below into a JSON object with exactly "
			"these keys: \"name\" (string), \"department\" (string, copied exactly as "
			"written) and \"seats\" (integer). Reply with only the JSON object.\n\n"
			"Sentence: Ada works in platform and requested 6 seats.") ||
	       buf_puts(io->answer, "{\"name\":\"Ada\",\"department\":\"platform\",\"seats\":6}");
}

/* Seed report 002 §6, task 3: the three failures there read "items" as the
 * list of goods; here it is asked for as an integer count of units. */
static enum err task_order(struct task_io *io)
{
	set_id(io, "order-total", "{\"items\":\"integer\",\"total\":\"integer\"}");
	return buf_puts(io->prompt,
			"Order: 3 apples at 4 credits each, 2 books at 11 credits each. "
			"Return only a JSON object with exactly two keys: \"items\" (an integer: "
			"how many units were bought in all, counting every apple and every book; "
			"not a list) and \"total\" (an integer: the total price in credits).") ||
	       buf_printf(io->answer, "{\"items\":%d,\"total\":%d}", 3 + 2, 3 * 4 + 2 * 11);
}

static enum err task_divmod(struct task_io *io)
{
	int a = 500 + below(io->g, 9500), b = 7 + below(io->g, 23);

	set_id(io, "divide-remainder", "{\"quotient\":\"integer\",\"remainder\":\"integer\"}");
	return buf_printf(io->prompt,
			  "Divide %d by %d using whole-number division. Reply with only a JSON "
			  "object {\"quotient\": <integer>, \"remainder\": <integer>}.", a, b) ||
	       buf_printf(io->answer, "{\"quotient\":%d,\"remainder\":%d}", a / b, a % b);
}

static const char *const en_names[] = {"Maria", "Kenji", "Priya", "Lars", "Amara",
				       "Diego", "Omar", "Lena", "Tomas", "Ingrid"};
#define NEN_NAMES (int)(sizeof(en_names) / sizeof(en_names[0]))

static enum err task_ticket(struct task_io *io)
{
	int id = 1000 + below(io->g, 9000), prio = 1 + below(io->g, 5);
	int urgent = below(io->g, 2), assigned = below(io->g, 2);
	const char *who = en_names[below(io->g, NEN_NAMES)];

	set_id(io, "ticket-fields",
	       "{\"id\":\"string\",\"priority\":\"integer\",\"urgent\":\"boolean\","
	       "\"assignee\":\"string|null\"}");
	if (buf_printf(io->prompt,
		       "Extract the ticket below into a JSON object with exactly these keys: "
		       "\"id\" (string, as written), \"priority\" (integer), \"urgent\" (boolean: "
		       "true or false) and \"assignee\" (string: the person's name, or null if "
		       "nobody is assigned). Reply with only the JSON object.\n\n"
		       "Ticket: INC-%d has priority %d, %s, and %s%s.",
		       id, prio, urgent ? "it is urgent" : "it is not urgent",
		       assigned ? "it is assigned to " : "nobody is assigned to it",
		       assigned ? who : ""))
		return ERR_NOMEM;
	if (assigned)
		return buf_printf(io->answer,
				  "{\"id\":\"INC-%d\",\"priority\":%d,\"urgent\":%s,\"assignee\":\"%s\"}",
				  id, prio, urgent ? "true" : "false", who);
	return buf_printf(io->answer,
			  "{\"id\":\"INC-%d\",\"priority\":%d,\"urgent\":%s,\"assignee\":null}",
			  id, prio, urgent ? "true" : "false");
}

/* Amounts are whole quarters of a euro, so every sum is exact in binary
 * floating point and the expected number compares without rounding. */
static enum err task_expenses(struct task_io *io)
{
	int n = 3 + below(io->g, 2), i, sum = 0;
	enum err e;

	set_id(io, "expense-total", "{\"total_eur\":\"number\"}");
	e = buf_puts(io->prompt, "Add up these expenses, in euros: ");
	for (i = 0; !e && i < n; i++) {
		int cents = 25 * (4 + below(io->g, 397));

		sum += cents;
		e = buf_printf(io->prompt, "%s%d.%02d", i == 0 ? "" : i == n - 1 ? " and " : ", ",
			       cents / 100, cents % 100);
	}
	return e ||
	       buf_puts(io->prompt,
			". Reply with only a JSON object {\"total_eur\": <number>}, where the total "
			"is a JSON number (not a string) equal to the exact sum.") ||
	       buf_printf(io->answer, "{\"total_eur\":%d.%02d}", sum / 100, sum % 100);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static enum err task_sort(struct task_io *io)
{
	int v[6], s[6], i;
	enum err e;

	set_id(io, "sort-ascending", "{\"sorted\":[\"integer\"]}");
	distinct(io->g, 99, 6, v);
	e = buf_puts(io->prompt, "Sort these integers in ascending order: ");
	for (i = 0; i < 6; i++)
		s[i] = v[i] + 1;
	for (i = 0; !e && i < 6; i++)
		e = buf_printf(io->prompt, "%s%d", i ? ", " : "", s[i]);
	qsort(s, 6, sizeof(s[0]), cmp_int);
	e = e || buf_puts(io->prompt, ". Reply with only a JSON object "
				      "{\"sorted\": [<integers>]}, the array holding all six "
				      "numbers.") ||
	    buf_puts(io->answer, "{\"sorted\":[");
	for (i = 0; !e && i < 6; i++)
		e = buf_printf(io->answer, "%s%d", i ? "," : "", s[i]);
	return e || buf_puts(io->answer, "]}");
}

static enum err task_date(struct task_io *io)
{
	static const char *const wd[] = {"Thursday", "Friday", "Saturday", "Sunday",
					 "Monday", "Tuesday", "Wednesday"};
	long y = 2023 + below(io->g, 3), m = 1 + below(io->g, 12), dd = 1 + below(io->g, 28);
	long add = 20 + below(io->g, 71), z = days_from_civil(y, m, dd) + add, y2, m2, d2;

	set_id(io, "date-add", "{\"date\":\"string\",\"weekday\":\"string\"}");
	civil_from_days(z, &y2, &m2, &d2);
	return buf_printf(io->prompt,
			  "What date is %ld days after %04ld-%02ld-%02ld? Reply with only a JSON "
			  "object {\"date\": <string>, \"weekday\": <string>}, where date is in "
			  "the form YYYY-MM-DD and weekday is the English name of that day with "
			  "a capital first letter (for example \"Monday\").",
			  add, y, m, dd) ||
	       buf_printf(io->answer, "{\"date\":\"%04ld-%02ld-%02ld\",\"weekday\":\"%s\"}",
			  y2, m2, d2, wd[((z % 7) + 7) % 7]);
}

static enum err task_units(struct task_io *io)
{
	int tenths = 12 + below(io->g, 88);

	set_id(io, "unit-conversion", "{\"metres\":\"integer\"}");
	return buf_printf(io->prompt,
			  "Convert %d.%d kilometres to metres. Reply with only a JSON object "
			  "{\"metres\": <integer>}.", tenths / 10, tenths % 10) ||
	       buf_printf(io->answer, "{\"metres\":%d}", tenths * 100);
}

static enum err task_count(struct task_io *io)
{
	static const char *const words[] = {"red", "green", "blue"};
	int i, n = 0, w;
	enum err e;

	set_id(io, "count-word", "{\"count\":\"integer\"}");
	e = buf_puts(io->prompt, "How many times does the word \"blue\" appear in this list: ");
	for (i = 0; !e && i < 12; i++) {
		w = below(io->g, 3);
		n += w == 2;
		e = buf_printf(io->prompt, "%s%s", i ? ", " : "", words[w]);
	}
	return e ||
	       buf_puts(io->prompt, "? Reply with only a JSON object {\"count\": <integer>}.") ||
	       buf_printf(io->answer, "{\"count\":%d}", n);
}

static enum err task_zh(struct task_io *io)
{
	static const char *const names[] = {"李娜", "王强", "张伟", "刘洋", "陈静", "赵磊"};
	static const char *const cities[] = {"杭州", "成都", "西安", "厦门", "青岛", "昆明"};
	const char *name = names[below(io->g, 6)], *city = cities[below(io->g, 6)];
	int age = 20 + below(io->g, 41);

	set_id(io, "zh-extract", "{\"name\":\"string\",\"city\":\"string\",\"age\":\"integer\"}");
	return buf_printf(io->prompt,
			  "从下面这句话中提取信息。只返回一个 JSON 对象，恰好包含这三个键："
			  "\"name\"（字符串，照原文写）、\"city\"（字符串，照原文写）和 "
			  "\"age\"（整数）。不要输出其他内容。\n\n句子：%s今年%d岁，住在%s。",
			  name, age, city) ||
	       buf_printf(io->answer, "{\"name\":\"%s\",\"city\":\"%s\",\"age\":%d}",
			  name, city, age);
}

static enum err task_people(struct task_io *io)
{
	int who[3], age[3], i;
	enum err e;

	set_id(io, "people-list", "{\"people\":[{\"name\":\"string\",\"age\":\"integer\"}]}");
	distinct(io->g, NEN_NAMES, 3, who);
	for (i = 0; i < 3; i++)
		age[i] = 18 + below(io->g, 63);
	e = buf_printf(io->prompt,
		       "List the people in the text below in the order they are mentioned. "
		       "Reply with only a JSON object {\"people\": [{\"name\": <string>, "
		       "\"age\": <integer>}, ...]}, one array element per person.\n\n"
		       "Text: %s is %d years old, %s is %d and %s is %d.",
		       en_names[who[0]], age[0], en_names[who[1]], age[1],
		       en_names[who[2]], age[2]) ||
	    buf_puts(io->answer, "{\"people\":[");
	for (i = 0; !e && i < 3; i++)
		e = buf_printf(io->answer, "%s{\"name\":\"%s\",\"age\":%d}", i ? "," : "",
			       en_names[who[i]], age[i]);
	return e || buf_puts(io->answer, "]}");
}

static enum err (*const tasks[CASES_JSON_TASKS])(struct task_io *) = {
	task_arith, task_extract, task_order, task_divmod, task_ticket, task_expenses,
	task_sort, task_date, task_units, task_count, task_zh, task_people};

void cases_task_release(struct cases_task *t)
{
	if (!t)
		return;
	mem_free(t->prompt);
	cJSON_Delete(t->expected);
	memset(t, 0, sizeof(*t));
}

enum err cases_json_task(uint64_t seed, int i, struct cases_task *t,
			 struct diag *d)
{
	struct buf prompt, answer;
	struct gen g;
	struct task_io io = {&g, &prompt, &answer, t};
	enum err e;

	memset(t, 0, sizeof(*t));
	if (i < 0 || i >= CASES_JSON_TASKS)
		return diag_fail(d, ERR_INPUT, "no strict-JSON task %d", i);
	gen_init(&g, seed, 0x100 + (uint64_t)i);
	buf_init(&prompt, TEXT_MAX);
	buf_init(&answer, TEXT_MAX);
	e = tasks[i](&io) ? ERR_NOMEM : ERR_OK;
	if (!e)
		e = json_parse(answer.data, answer.len, &t->expected, "an expected answer", NULL);
	if (e == ERR_INPUT)
		e = diag_fail(d, ERR_INTERNAL, "task '%s': expected answer is not JSON", t->id);
	if (!e && !(t->prompt = buf_take(&prompt, NULL)))
		e = ERR_NOMEM;
	if (e == ERR_NOMEM)
		diag_fail(d, e, "cannot build task %d: out of memory", i);
	buf_release(&prompt);
	buf_release(&answer);
	return e;
}

/* Appends the JSON tasks to the JSON array `cases`, which takes them. */
static enum err cases_add_json_tasks(uint64_t seed, cJSON *cases, struct diag *d)
{
	struct gen g;
	int i;

	memset(&g, 0, sizeof(g));
	json_build_init(&g.jb);
	for (i = 0; i < CASES_JSON_TASKS; i++) {
		struct cases_task t;
		cJSON *c, *msgs, *expect;
		char id[48];
		enum err e = cases_json_task(seed, i, &t, d);

		if (e) {
			cases_task_release(&t);
			return e;
		}
		snprintf(id, sizeof(id), "json-%s", t.id);
		c = case_new(&g, id, "chat");
		msgs = cJSON_CreateArray();
		json_add_item(&g.jb, msgs, NULL, message(&g, "user", cJSON_CreateString(t.prompt)));
		json_add_item(&g.jb, c, "messages", msgs);
		/* Seed 002 §6: temperature 1.0, top_p 1.0, low reasoning, 3 repeats. */
		json_add_num(&g.jb, c, "temperature", 1.0);
		json_add_num(&g.jb, c, "top_p", 1.0);
		json_add_str(&g.jb, c, "reasoning_effort", "low");
		json_add_num(&g.jb, c, "repeat", 3);
		expect = cJSON_CreateObject();
		json_add_item(&g.jb, expect, "json", t.expected);
		t.expected = NULL;
		json_add_item(&g.jb, c, "expect", expect);
		json_add_item(&g.jb, cases, NULL, c);
		cases_task_release(&t);
	}
	return gen_result(&g, d, "the strict-JSON tasks");
}

/* ---- tool calls ---- */

static const char tool_weather[] =
	"{\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
	"\"description\":\"Current weather reported by a city's main weather station.\","
	"\"parameters\":{\"type\":\"object\",\"properties\":{"
	"\"city\":{\"type\":\"string\",\"description\":\"City name in English, e.g. Lisbon\"},"
	"\"unit\":{\"type\":\"string\",\"enum\":[\"celsius\",\"fahrenheit\"]}},"
	"\"required\":[\"city\",\"unit\"]}}}";
static const char tool_order[] =
	"{\"type\":\"function\",\"function\":{\"name\":\"get_order_status\","
	"\"description\":\"Shipping status and tracking number of a customer order.\","
	"\"parameters\":{\"type\":\"object\",\"properties\":{"
	"\"order_id\":{\"type\":\"string\",\"description\":\"Order id such as ORD-12345\"}},"
	"\"required\":[\"order_id\"]}}}";
static const char tool_currency[] =
	"{\"type\":\"function\",\"function\":{\"name\":\"convert_currency\","
	"\"description\":\"Quote for converting a whole amount between currencies.\","
	"\"parameters\":{\"type\":\"object\",\"properties\":{"
	"\"amount\":{\"type\":\"integer\",\"description\":\"Whole units of the source currency\"},"
	"\"from\":{\"type\":\"string\",\"enum\":[\"EUR\",\"USD\",\"GBP\",\"JPY\",\"CHF\"]},"
	"\"to\":{\"type\":\"string\",\"enum\":[\"EUR\",\"USD\",\"GBP\",\"JPY\",\"CHF\"]}},"
	"\"required\":[\"amount\",\"from\",\"to\"]}}}";

static const char *const cities[] = {"Lisbon", "Oslo", "Madrid", "Nairobi", "Santiago",
				     "Toronto", "Hanoi", "Zurich"};
static const char *const conditions[] = {"overcast", "light rain", "sunny",
					 "fog", "windy"};

/* A tool-call case with user text `ask`, the tools named by JSON texts. */
static cJSON *tool_case(struct gen *g, const char *id, cJSON *ask,
			const char *const *tools, int ntools)
{
	cJSON *c = case_new(g, id, "tool_call"), *msgs = cJSON_CreateArray();
	cJSON *arr = cJSON_CreateArray();
	int i;

	json_add_item(&g->jb, msgs, NULL, message(g, "user", ask));
	json_add_item(&g->jb, c, "messages", msgs);
	for (i = 0; i < ntools; i++)
		json_add_item(&g->jb, arr, NULL, jsonf(g, "%s", tools[i]));
	json_add_item(&g->jb, c, "tools", arr);
	json_add_num(&g->jb, c, "temperature", 0);
	/* engines have parsed tool calls differently streamed and not: ask both */
	json_add_bool(&g->jb, c, "parity", 1);
	return c;
}

/* Weather result text for `city` with a fresh unique report id, which is
 * also written to `*id`. */
static cJSON *weather_result(struct gen *g, const char *city, const char **id)
{
	int t = 50 + below(g, 250); /* tenths of a degree: 5.0 to 29.9 */
	const char *cond = conditions[below(g, 5)];

	*id = unique_code(g, "WX");
	return strf("{\"city\":\"%s\",\"unit\":\"celsius\",\"temperature\":%d.%d,"
		       "\"condition\":\"%s\",\"report_id\":\"%s\"}",
		    city, t / 10, t % 10, cond, *id);
}

static cJSON *call_expect(struct gen *g, const char *name, cJSON *args)
{
	cJSON *call = cJSON_CreateObject();

	json_add_str(&g->jb, call, "name", name);
	json_add_item(&g->jb, call, "arguments", args);
	return call;
}

static void tool_weather_case(struct gen *g, cJSON *cases, const char *city)
{
	const char *tools[] = {tool_weather}, *rid;
	cJSON *c = tool_case(g, "tool-weather",
			     strf("What is the weather in %s right now? Use celsius. "
				     "Tell me the temperature and the station's report id "
				     "from the result.", city),
			     tools, 1);
	cJSON *ex = cJSON_CreateObject();

	json_add_item(&g->jb, ex, "tool_call", call_expect(g, "get_weather",
					    jsonf(g, "{\"city\":\"%s\",\"unit\":\"celsius\"}", city)));
	json_add_item(&g->jb, ex, "tool_result", weather_result(g, city, &rid));
	json_add_item(&g->jb, ex, "final_contains", jsonf(g, "[\"%s\"]", rid));
	json_add_item(&g->jb, c, "expect", ex);
	json_add_item(&g->jb, cases, NULL, c);
}

static void tool_order_case(struct gen *g, cJSON *cases)
{
	static const char *const carriers[] = {"DHL", "UPS", "PostNord", "Correos"};
	const char *tools[] = {tool_order, tool_weather}, *trk;
	int order = 10000 + below(g, 90000);
	cJSON *c = tool_case(g, "tool-order-status",
			     strf("Where is my order ORD-%d? Please look it up and tell me "
				     "its status and the tracking number.", order),
			     tools, 2);
	cJSON *ex = cJSON_CreateObject();
	const char *carrier = carriers[below(g, 4)];

	trk = unique_code(g, "TRK");
	json_add_item(&g->jb, ex, "tool_call", call_expect(g, "get_order_status",
					    jsonf(g, "{\"order_id\":\"ORD-%d\"}", order)));
	json_add_item(&g->jb, ex, "tool_result",
	    strf("{\"order_id\":\"ORD-%d\",\"status\":\"shipped\",\"carrier\":\"%s\","
		    "\"tracking_number\":\"%s\"}", order, carrier, trk));
	json_add_item(&g->jb, ex, "final_contains", jsonf(g, "[\"%s\"]", trk));
	json_add_item(&g->jb, c, "expect", ex);
	json_add_item(&g->jb, cases, NULL, c);
}

static void tool_currency_case(struct gen *g, cJSON *cases)
{
	/* Plausible rates in 1/10000, moved up to +-2% by the seed, so that the
	 * simulated result does not invite the model to argue with it. */
	static const struct {
		const char *from, *to;
		int rate;
	} pairs[] = {{"EUR", "USD", 10850}, {"USD", "JPY", 1495000}, {"GBP", "EUR", 11700},
		     {"EUR", "CHF", 9500}, {"USD", "GBP", 7900}, {"CHF", "JPY", 1690000}};
	const char *tools[] = {tool_currency, tool_weather}, *qid;
	int k = below(g, 6), amount = 100 + below(g, 900);
	long rate = pairs[k].rate + (long)pairs[k].rate * (below(g, 401) - 200) / 10000;
	long conv = (long)amount * rate / 100; /* in 1/100 of the target currency */
	cJSON *c, *ex;

	c = tool_case(g, "tool-currency",
		      strf("Please convert %d %s to %s with the currency converter, and "
			      "tell me the converted amount and the quote id.",
			   amount, pairs[k].from, pairs[k].to),
		      tools, 2);
	ex = cJSON_CreateObject();
	qid = unique_code(g, "FXQ");
	json_add_item(&g->jb, ex, "tool_call",
	    call_expect(g, "convert_currency",
			jsonf(g, "{\"amount\":%d,\"from\":\"%s\",\"to\":\"%s\"}", amount,
			      pairs[k].from, pairs[k].to)));
	json_add_item(&g->jb, ex, "tool_result",
	    strf("{\"amount\":%d,\"from\":\"%s\",\"to\":\"%s\",\"rate\":%ld.%04ld,"
		    "\"converted\":%ld.%02ld,\"quote_id\":\"%s\"}",
		 amount, pairs[k].from, pairs[k].to, rate / 10000, rate % 10000,
		 conv / 100, conv % 100, qid));
	json_add_item(&g->jb, ex, "final_contains", jsonf(g, "[\"%s\"]", qid));
	json_add_item(&g->jb, c, "expect", ex);
	json_add_item(&g->jb, cases, NULL, c);
}

static void tool_parallel_case(struct gen *g, cJSON *cases, const char *a, const char *b)
{
	const char *tools[] = {tool_weather}, *ra, *rb;
	cJSON *c = tool_case(g, "tool-parallel",
			     strf("Compare the current weather in %s and in %s, in celsius. "
				     "Call get_weather once for each city, both calls in the "
				     "same turn, then tell me both temperatures and both "
				     "report ids.", a, b),
			     tools, 1);
	cJSON *ex = cJSON_CreateObject(), *calls = cJSON_CreateArray(), *x;

	x = call_expect(g, "get_weather", jsonf(g, "{\"city\":\"%s\",\"unit\":\"celsius\"}", a));
	json_add_item(&g->jb, x, "tool_result", weather_result(g, a, &ra));
	json_add_item(&g->jb, calls, NULL, x);
	x = call_expect(g, "get_weather", jsonf(g, "{\"city\":\"%s\",\"unit\":\"celsius\"}", b));
	json_add_item(&g->jb, x, "tool_result", weather_result(g, b, &rb));
	json_add_item(&g->jb, calls, NULL, x);
	json_add_item(&g->jb, ex, "tool_calls", calls);
	json_add_item(&g->jb, ex, "final_contains", jsonf(g, "[\"%s\",\"%s\"]", ra, rb));
	json_add_item(&g->jb, c, "expect", ex);
	json_add_item(&g->jb, cases, NULL, c);
}

static void tool_none_case(struct gen *g, cJSON *cases)
{
	const char *tools[] = {tool_weather, tool_order};
	int a = 6 + below(g, 14), b = 6 + below(g, 14);
	cJSON *c = tool_case(g, "tool-none",
			     strf("What is %d times %d? This is simple arithmetic: answer "
				     "it yourself and do not call any tool. Reply with only a "
				     "JSON object {\"answer\": <integer>}.", a, b),
			     tools, 2);
	cJSON *ex = cJSON_CreateObject();

	json_add_bool(&g->jb, ex, "no_tool_call", 1);
	json_add_item(&g->jb, ex, "json", jsonf(g, "{\"answer\":%d}", a * b));
	json_add_item(&g->jb, c, "expect", ex);
	json_add_item(&g->jb, cases, NULL, c);
}

/* Appends the tool-call cases to the JSON array `cases`, which takes them. */
static enum err cases_add_tool_calls(uint64_t seed, cJSON *cases, struct diag *d)
{
	struct gen g;
	int city[3];

	gen_init(&g, seed, 0x200);
	distinct(&g, (int)(sizeof(cities) / sizeof(cities[0])), 3, city);
	tool_weather_case(&g, cases, cities[city[0]]);
	tool_order_case(&g, cases);
	tool_currency_case(&g, cases);
	tool_parallel_case(&g, cases, cities[city[1]], cities[city[2]]);
	tool_none_case(&g, cases);
	return gen_result(&g, d, "the tool-call cases");
}

/* ---- multi-turn memory ---- */

/* Appends a scripted conversation: `turns` alternate user, assistant, ...,
 * ending with the user's question. */
static cJSON *script(struct gen *g, cJSON *const *turns, int n)
{
	cJSON *msgs = cJSON_CreateArray();
	int i;

	for (i = 0; i < n; i++)
		json_add_item(&g->jb, msgs, NULL, message(g, i % 2 ? "assistant" : "user", turns[i]));
	return msgs;
}

static void turn_case(struct gen *g, cJSON *cases, const char *id, cJSON *msgs,
		      cJSON *answer, cJSON *recall)
{
	cJSON *c = case_new(g, id, "multi_turn"), *ex = cJSON_CreateObject();

	json_add_item(&g->jb, c, "messages", msgs);
	json_add_num(&g->jb, c, "temperature", 0);
	json_add_item(&g->jb, ex, "json", answer);
	json_add_item(&g->jb, ex, "recall", recall);
	json_add_item(&g->jb, c, "expect", ex);
	json_add_item(&g->jb, cases, NULL, c);
}

static void mt_en_basic(struct gen *g, cJSON *cases)
{
	static const char *const pets[] = {"Biscuit", "Pepper", "Maple", "Juniper",
					   "Waffles", "Clover"};
	static const char *const places[] = {"Porto", "Kyoto", "Quito", "Tallinn",
					     "Hobart", "Bergen"};
	int locker = 1000 + below(g, 9000), a = 10 + below(g, 80), b = 10 + below(g, 80);
	const char *pet = pets[below(g, 6)], *city = places[below(g, 6)];
	cJSON *t[7];

	t[0] = strf("Hi! Please remember two things for later: my locker number is %d "
		       "and my dog is called %s.", locker, pet);
	t[1] = strf("Noted, I will remember both.");
	t[2] = strf("Next week I am flying to %s for a conference. What is one thing I "
		       "should pack?", city);
	t[3] = strf("A compact umbrella is useful on almost any trip.");
	t[4] = strf("Unrelated: what is %d plus %d?", a, b);
	t[5] = strf("%d plus %d is %d.", a, b, a + b);
	t[6] = strf("Going back to what I told you earlier: what is my locker number, "
		       "what is my dog called, and which city am I flying to? Reply with "
		       "only a JSON object {\"locker\": <integer>, \"dog\": <string>, "
		       "\"city\": <string>}.");
	turn_case(g, cases, "multiturn-en-facts", script(g, t, 7),
		  jsonf(g, "{\"locker\":%d,\"dog\":\"%s\",\"city\":\"%s\"}", locker, pet, city),
		  jsonf(g, "[{\"key\":\"locker\",\"message\":0},{\"key\":\"dog\",\"message\":0},"
			   "{\"key\":\"city\",\"message\":2}]"));
}

static void mt_en_correction(struct gen *g, cJSON *cases)
{
	int old = 10000 + below(g, 90000), badge;
	const char *boss = en_names[below(g, NEN_NAMES)];
	cJSON *t[7];

	do
		badge = 10000 + below(g, 90000);
	while (badge == old);
	t[0] = strf("My employee badge number is %d. Please keep it in mind.", old);
	t[1] = strf("Got it.");
	t[2] = strf("Also, my manager's name is %s.", boss);
	t[3] = strf("Noted.");
	t[4] = strf("Correction: my badge was replaced this morning, and the new badge "
		       "number is %d. The old one no longer works.", badge);
	t[5] = strf("Thanks, I have updated it.");
	t[6] = strf("What is my current badge number, and what is my manager's name? "
		       "Reply with only a JSON object {\"badge\": <integer>, \"manager\": "
		       "<string>}.");
	turn_case(g, cases, "multiturn-en-correction", script(g, t, 7),
		  jsonf(g, "{\"badge\":%d,\"manager\":\"%s\"}", badge, boss),
		  jsonf(g, "[{\"key\":\"badge\",\"message\":4,\"superseded\":0},"
			   "{\"key\":\"manager\",\"message\":2}]"));
}

static void mt_zh_basic(struct gen *g, cJSON *cases)
{
	static const char *const pets[] = {"豆豆", "团子", "年糕", "可乐", "橘子", "芝麻"};
	static const char *const places[] = {"成都", "西安", "杭州", "厦门", "青岛", "昆明"};
	int member = 1000 + below(g, 9000), a = 10 + below(g, 80), b = 10 + below(g, 80);
	const char *pet = pets[below(g, 6)], *city = places[below(g, 6)];
	cJSON *t[7];

	t[0] = strf("你好！请帮我记住两件事：我的会员编号是 %d，我的猫叫%s。", member, pet);
	t[1] = strf("好的，我都记住了。");
	t[2] = strf("下周我要去%s出差，有什么当地美食推荐吗？", city);
	t[3] = strf("可以尝尝当地的特色小吃，记得提前查好餐馆的营业时间。");
	t[4] = strf("顺便问一下，%d 加 %d 等于多少？", a, b);
	t[5] = strf("%d 加 %d 等于 %d。", a, b, a + b);
	t[6] = strf("回到我前面说的内容：我的会员编号是多少？我的猫叫什么名字？我要去哪个"
		       "城市出差？只返回一个 JSON 对象：{\"member_id\": <整数>, \"cat\": "
		       "<字符串>, \"city\": <字符串>}，字符串照我的原话写，不要输出其他内容。");
	turn_case(g, cases, "multiturn-zh-facts", script(g, t, 7),
		  jsonf(g, "{\"member_id\":%d,\"cat\":\"%s\",\"city\":\"%s\"}", member, pet, city),
		  jsonf(g, "[{\"key\":\"member_id\",\"message\":0},{\"key\":\"cat\",\"message\":0},"
			   "{\"key\":\"city\",\"message\":2}]"));
}

static void mt_zh_correction(struct gen *g, cJSON *cases)
{
	static const char *const bosses[] = {"王芳", "周杰", "孙丽", "吴昊", "郑洁", "何军"};
	int old = 100000 + below(g, 900000), id;
	const char *boss = bosses[below(g, 6)];
	cJSON *t[7];

	do
		id = 100000 + below(g, 900000);
	while (id == old);
	t[0] = strf("请记一下：我的工号是 %d。", old);
	t[1] = strf("好的，已记下。");
	t[2] = strf("另外，我的主管叫%s。", boss);
	t[3] = strf("明白。");
	t[4] = strf("更正一下：我今天换了新工牌，新工号是 %d，旧工号已经作废。", id);
	t[5] = strf("好的，已经更新。");
	t[6] = strf("我现在的工号是多少？我的主管叫什么？只返回一个 JSON 对象："
		       "{\"employee_id\": <整数>, \"manager\": <字符串>}，不要输出其他内容。");
	turn_case(g, cases, "multiturn-zh-correction", script(g, t, 7),
		  jsonf(g, "{\"employee_id\":%d,\"manager\":\"%s\"}", id, boss),
		  jsonf(g, "[{\"key\":\"employee_id\",\"message\":4,\"superseded\":0},"
			   "{\"key\":\"manager\",\"message\":2}]"));
}

/* Appends the multi-turn cases to the JSON array `cases`, which takes them. */
static enum err cases_add_multi_turn(uint64_t seed, cJSON *cases, struct diag *d)
{
	struct gen g;

	gen_init(&g, seed, 0x300);
	mt_en_basic(&g, cases);
	mt_en_correction(&g, cases);
	mt_zh_basic(&g, cases);
	mt_zh_correction(&g, cases);
	return gen_result(&g, d, "the multi-turn cases");
}

/* ---- image order ---- */

static enum err image_part(struct gen *g, const struct image_object *o, cJSON **out,
			   struct diag *d)
{
	struct buf png, url;
	cJSON *part = NULL, *iu;
	enum err e;

	buf_init(&png, (size_t)16 << 20);
	buf_init(&url, (size_t)32 << 20);
	e = image_png(o, CASES_IMAGE_SIZE, &png, d);
	if (!e)
		e = image_data_url(png.data, png.len, &url, d);
	if (!e) {
		part = cJSON_CreateObject();
		iu = cJSON_CreateObject();
		json_add_str(&g->jb, part, "type", "image_url");
		json_add_str(&g->jb, iu, "url", url.data);
		json_add_item(&g->jb, part, "image_url", iu);
	}
	buf_release(&png);
	buf_release(&url);
	*out = part;
	return e;
}

static cJSON *object_answer(struct gen *g, const struct image_object *o)
{
	cJSON *a = cJSON_CreateObject();

	json_add_str(&g->jb, a, "colour", image_colour_name(o->colour));
	json_add_str(&g->jb, a, "shape", image_shape_name(o->shape));
	if (o->label[0])
		json_add_item(&g->jb, a, "number", cJSON_CreateNumber((double)((o->label[0] - '0') * 10 +
								(o->label[1] - '0'))));
	return a;
}

static const char image_ask[] =
	"Two images are attached, one after the other. Each shows one coloured shape on "
	"a white background%s. Reply with only a JSON object {\"first\": {\"colour\": "
	"<string>, \"shape\": <string>%s}, \"second\": {\"colour\": <string>, \"shape\": "
	"<string>%s}}, where \"first\" describes the first image and \"second\" the "
	"second image. Use one lower-case word from each list: colours red, blue, green, "
	"yellow, purple, orange; shapes circle, square, triangle, star, hexagon, diamond.";

/* One image-order case showing a then b; `twin` is the swapped case's id. */
static enum err image_case(struct gen *g, cJSON *cases, const char *id, const char *twin,
			   const struct image_object *a, const struct image_object *b,
			   struct diag *d)
{
	int labelled = a->label[0] != '\0';
	const char *num = labelled ? ", \"number\": <integer>" : "";
	cJSON *c = case_new(g, id, "image_order"), *msgs = cJSON_CreateArray();
	cJSON *content = cJSON_CreateArray(), *text = cJSON_CreateObject(), *pa, *pb;
	cJSON *ex = cJSON_CreateObject(), *ans = cJSON_CreateObject(), *order;
	char da[64], db[64];

	enum err e;

	e = image_part(g, a, &pa, d);
	if (e)
		goto out;
	json_add_item(&g->jb, content, NULL, pa);
	e = image_part(g, b, &pb, d);
	if (e)
		goto out;
	json_add_item(&g->jb, content, NULL, pb);
	json_add_str(&g->jb, text, "type", "text");
	json_add_item(&g->jb, text, "text", strf(image_ask,
				  labelled ? ", with a two-digit number written under it" : "",
				  num, num));
	json_add_item(&g->jb, content, NULL, text);
	json_add_item(&g->jb, msgs, NULL, message(g, "user", content));
	json_add_item(&g->jb, c, "messages", msgs);
	json_add_num(&g->jb, c, "temperature", 0);
	json_add_item(&g->jb, ans, "first", object_answer(g, a));
	json_add_item(&g->jb, ans, "second", object_answer(g, b));
	json_add_item(&g->jb, ex, "json", ans);
	order = cJSON_CreateObject();
	image_describe(a, da, sizeof(da));
	image_describe(b, db, sizeof(db));
	json_add_item(&g->jb, order, "objects", jsonf(g, "[\"%s\",\"%s\"]", da, db));
	json_add_str(&g->jb, order, "twin", twin);
	json_add_item(&g->jb, ex, "image_order", order);
	json_add_item(&g->jb, c, "expect", ex);
	json_add_item(&g->jb, cases, NULL, c);
	return ERR_OK;
out:
	cJSON_Delete(c);
	cJSON_Delete(msgs);
	cJSON_Delete(content);
	cJSON_Delete(text);
	cJSON_Delete(ex);
	cJSON_Delete(ans);
	return e;
}

/* Appends the image-order cases (ERR_INTERNAL if an image cannot be drawn) to the JSON array `cases`, which takes them. */
static enum err cases_add_image_order(uint64_t seed, cJSON *cases, struct diag *d)
{
	struct image_object o[4];
	struct gen g;
	enum err e;

	memset(&g, 0, sizeof(g));
	json_build_init(&g.jb);
	/* Four different shapes in four different colours: pair 1 plain,
	 * pair 2 with numbers, each pair also swapped. */
	image_pick(seed, 4, 1, o);
	o[0].label[0] = o[1].label[0] = '\0';
	e = image_case(&g, cases, "image-order-1", "image-order-1-swapped", &o[0], &o[1], d);
	if (!e)
		e = image_case(&g, cases, "image-order-1-swapped", "image-order-1", &o[1], &o[0], d);
	if (!e)
		e = image_case(&g, cases, "image-order-2", "image-order-2-swapped", &o[2], &o[3], d);
	if (!e)
		e = image_case(&g, cases, "image-order-2-swapped", "image-order-2", &o[3], &o[2], d);
	return e ? e : gen_result(&g, d, "the image-order cases");
}

/* ---- the suite ---- */

enum err cases_suite(uint64_t seed, unsigned kinds, const char *name,
		     const char *description, cJSON **out, struct diag *d)
{
	cJSON *s = cJSON_CreateObject(), *defaults = cJSON_CreateObject();
	cJSON *cases = cJSON_CreateArray();
	struct gen g;
	enum err e = ERR_OK;

	memset(&g, 0, sizeof(g));
	json_build_init(&g.jb);
	*out = NULL;
	json_add_str(&g.jb, s, "suite", name);
	json_add_str(&g.jb, s, "description", description);
	/* Room for a reasoning model's thoughts before a short answer. */
	json_add_num(&g.jb, defaults, "max_tokens", 4096);
	json_add_item(&g.jb, s, "defaults", defaults);
	json_add_item(&g.jb, s, "cases", cases);
	if (!g.jb.code && (kinds & CASES_JSON))
		e = cases_add_json_tasks(seed, cases, d);
	if (!e && !g.jb.code && (kinds & CASES_TOOL))
		e = cases_add_tool_calls(seed, cases, d);
	if (!e && !g.jb.code && (kinds & CASES_MULTITURN))
		e = cases_add_multi_turn(seed, cases, d);
	if (!e && !g.jb.code && (kinds & CASES_IMAGE))
		e = cases_add_image_order(seed, cases, d);
	if (!e)
		e = gen_result(&g, d, "the suite");
	if (e)
		cJSON_Delete(s);
	else
		*out = s;
	return e;
}
