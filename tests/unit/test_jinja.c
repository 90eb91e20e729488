/*
 * test_jinja — the C side of the jinja interpreter that the Python oracle
 * comparison (tests/cli/jinja_oracle.sh) cannot see: Python's float repr and
 * JSON reading (number classes, key order, duplicates), the three outcomes
 * and their messages, the output buffer after a failure, limits, the clock,
 * template reuse and jinja_tpl_reads.
 */
#include <string.h>

#include "jinja/jinja.h"
#include "jinja/jinja_value.h"
#include "jinja/pyfmt.h"
#include "t.h"

static char rendered[4096];

/* Renders `tpl` with the variables of the JSON object `vars`; the output (or
 * the message) goes to `rendered`. */
static enum err render(const char *tpl, const char *vars)
{
	struct jinja_ctx *c = jinja_ctx_new();
	struct diag d;
	struct buf out;
	enum err e;

	diag_init(&d);
	buf_init(&out, 1 << 16);
	e = jinja_ctx_merge_json(c, vars, strlen(vars), &d);
	if (!e)
		e = jinja_render(tpl, strlen(tpl), c, &out, &d);
	snprintf(rendered, sizeof(rendered), "%s", e ? d.msg : out.data);
	buf_release(&out);
	jinja_ctx_free(c);
	return e;
}

static const char *float_repr(double f)
{
	static char s[64];
	struct buf b;

	buf_init(&b, 64);
	if (pyfmt_float(f, &b))
		return "(error)";
	snprintf(s, sizeof(s), "%s", b.data);
	buf_release(&b);
	return s;
}

/* Slices take their length before their items: steps as large as an int64
 * holds (Python's answers, written out), an empty range, a reversed one. */
static void test_slices(void)
{
	CHECK(!render("{{ xs[::-1] }}|{{ xs[1::9223372036854775807] }}|"
		      "{{ xs[::-9223372036854775807] }}|{{ xs[-2::-9223372036854775807] }}|"
		      "{{ xs[3:1] }}|{{ xs[5:0:-2] }}|{{ xs[::4] }}",
		      "{\"xs\": [0, 1, 2, 3, 4, 5]}"));
	CHECK_STR(rendered, "[5, 4, 3, 2, 1, 0]|[1]|[5]|[4]|[]|[5, 3, 1]|[0, 4]");
}

static void test_float_repr(void)
{
	CHECK_STR(float_repr(1.0), "1.0");
	CHECK_STR(float_repr(0.1), "0.1");
	CHECK_STR(float_repr(0.1 + 0.2), "0.30000000000000004");
	CHECK_STR(float_repr(1e16), "1e+16");
	CHECK_STR(float_repr(1e15), "1000000000000000.0");
	CHECK_STR(float_repr(0.0001), "0.0001");
	CHECK_STR(float_repr(0.00001), "1e-05");
	CHECK_STR(float_repr(-0.0), "-0.0");
	CHECK_STR(float_repr(1.5e300), "1.5e+300");
	CHECK_STR(float_repr(5e-324), "5e-324");
	CHECK_STR(float_repr(123456789.125), "123456789.125");
	CHECK_STR(float_repr(1.0 / 0.0), "inf");
}

/* json.loads converts no integer of more than 4300 digits (CPython 3.11's
 * int_max_str_digits); 4300 still pass. */
static void test_json_digit_limit(void)
{
	char ctx[4400] = "{\"n\": ";
	size_t k = strlen(ctx);

	memset(ctx + k, '9', 4300);
	memcpy(ctx + k + 4300, "}", 2);
	CHECK_EQ_LONG(render("{{ n|string|length }}", ctx), ERR_OK);
	CHECK_STR(rendered, "4300");
	memcpy(ctx + k + 4300, "9}", 3);
	CHECK_EQ_LONG(render("x", ctx), ERR_UNSUPPORTED);
	CHECK(strstr(rendered, "more than 4300 digits") != NULL);
}

static void test_json_numbers(void)
{
	CHECK_EQ_LONG(render("{{ a }}|{{ b }}|{{ c }}|{{ d }}|{{ e }}",
			     "{\"a\": 1, \"b\": 1.0, \"c\": 1E2, \"d\": -0, \"e\": 12345678901234567890}"),
		      ERR_OK);
	CHECK_STR(rendered, "1|1.0|100.0|0|12345678901234567890");
	CHECK_EQ_LONG(render("{{ x|tojson }}", "{\"x\": [9223372036854775807, -9223372036854775808, 9223372036854775808]}"),
		      ERR_OK);
	CHECK_STR(rendered, "[9223372036854775807, -9223372036854775808, 9223372036854775808]");
	/* big integers compute (jinja_bigint), back to int64 where they fit */
	CHECK_EQ_LONG(render("{{ n + 1 }}|{{ n - n + 1 }}|{{ -n // 7 }}", "{\"n\": 99999999999999999999}"),
		      ERR_OK);
	CHECK_STR(rendered, "100000000000000000000|1|-14285714285714285715");
	CHECK_EQ_LONG(render("{{ n / 3 }}", "{\"n\": 99999999999999999999}"), ERR_OK);
	CHECK_STR(rendered, "3.333333333333333e+19");
	CHECK_EQ_LONG(render("{{ 1 / 3**700 }}", "{}"), ERR_UNSUPPORTED);
	CHECK_EQ_LONG(render("{{ n + 0.5 }}", "{\"n\": 99999999999999999999}"), ERR_UNSUPPORTED);
	test_json_digit_limit();
}

static void test_json_keys(void)
{
	CHECK_EQ_LONG(render("{{ d|tojson }}|{% for k in d %}{{ k }}{% endfor %}",
			     "{\"d\": {\"b\": 1, \"1\": 2, \"b\": 3, \"0\": 4}}"), ERR_OK);
	CHECK_STR(rendered, "{\"b\": 3, \"1\": 2, \"0\": 4}|b10");
	CHECK_EQ_LONG(render("x", "{\"s\": \"\\ud800\"}"), ERR_INPUT);
	CHECK_EQ_LONG(render("x", "{\"s\": NaN}"), ERR_UNSUPPORTED);
	CHECK_EQ_LONG(render("x", "{\"s\": 1} 2"), ERR_INPUT);
	CHECK_EQ_LONG(render("x", "[1]"), ERR_INPUT);
}

/* A context variable from a cJSON tree reads as the text cJSON prints for
 * it: lexemes kept as cJSON_Raw keep their class, cJSON numbers read as
 * printed, strings (escapes decoded) and keys borrowed in order. */
static void test_cjson_context(void)
{
	const char *tpl = "{{ m|tojson }}|{{ m.r is float }}|{{ m.n is integer }}|{{ m.s|length }}";
	cJSON *m = cJSON_CreateObject();
	struct jinja_ctx *c = jinja_ctx_new();
	struct diag d;
	struct buf out;
	int i;

	cJSON_AddItemToObject(m, "r", cJSON_CreateRaw("1.0"));
	cJSON_AddItemToObject(m, "n", cJSON_CreateNumber(2));
	cJSON_AddItemToObject(m, "f", cJSON_CreateNumber(2.5));
	cJSON_AddItemToObject(m, "big", cJSON_CreateRaw("12345678901234567890"));
	cJSON_AddItemToObject(m, "s", cJSON_CreateString("a\"\n\u00e9"));
	cJSON_AddItemToObject(m, "l", cJSON_CreateArray());
	cJSON_AddItemToArray(cJSON_GetObjectItem(m, "l"), cJSON_CreateNull());
	cJSON_AddItemToArray(cJSON_GetObjectItem(m, "l"), cJSON_CreateTrue());
	diag_init(&d);
	buf_init(&out, 1 << 16);
	CHECK_EQ_LONG(jinja_ctx_set_cjson(c, "m", m, &d), ERR_OK);
	CHECK_EQ_LONG(jinja_render(tpl, strlen(tpl), c, &out, &d), ERR_OK);
	CHECK_STR(out.data, "{\"r\": 1.0, \"n\": 2, \"f\": 2.5, \"big\": 12345678901234567890, "
		  "\"s\": \"a\\\"\\n\u00e9\", \"l\": [null, true]}|True|True|4");
	jinja_ctx_free(c);
	cJSON_Delete(m);
	m = cJSON_CreateArray(); /* nested past JSCAN_MAX_DEPTH: refused like the text */
	for (i = 0; i < 300; i++) {
		cJSON *in = cJSON_CreateArray();

		cJSON_AddItemToArray(in, m);
		m = in;
	}
	c = jinja_ctx_new();
	diag_init(&d);
	CHECK_EQ_LONG(jinja_ctx_set_cjson(c, "m", m, &d), ERR_INPUT);
	CHECK(strstr(d.msg, "cannot parse 'm': nested too deeply") != NULL);
	jinja_ctx_free(c);
	cJSON_Delete(m);
	buf_release(&out);
}

static void test_outcomes(void)
{
	CHECK_EQ_LONG(render("a\n{{ 'x' + 1 }}", "{}"), ERR_INPUT);
	CHECK(strstr(rendered, "the server would reject this request") != NULL);
	CHECK(strstr(rendered, "TypeError") != NULL);
	CHECK(strstr(rendered, "template line 2, column 8") != NULL);
	CHECK_EQ_LONG(render("{% if x %}\n{% include 'a' %}{% endif %}", "{}"), ERR_UNSUPPORTED);
	CHECK(strstr(rendered, "include") != NULL && strstr(rendered, "template line 2") != NULL);
	CHECK_EQ_LONG(render("{{ raise_exception('no tools here') }}", "{}"), ERR_INPUT);
	CHECK(strstr(rendered, "no tools here") != NULL);
	CHECK_EQ_LONG(render("{% set xs = [] %}{{ xs.append(1) }}", "{}"), ERR_INPUT);
	CHECK(strstr(rendered, "SecurityError") != NULL);
	CHECK_EQ_LONG(render("{{ x|frobnicate }}", "{}"), ERR_INPUT);
	CHECK(strstr(rendered, "no filter named 'frobnicate'") != NULL);
	CHECK_EQ_LONG(render("{% if x %}{{ x|frobnicate }}{% endif %}ok", "{}"), ERR_OK);
	CHECK_EQ_LONG(render("{{ 'a b'|wordcount }}", "{}"), ERR_UNSUPPORTED);
	CHECK(strstr(rendered, "wordcount") != NULL);
	CHECK_EQ_LONG(render("{% for %}", "{}"), ERR_INPUT);
	CHECK_EQ_LONG(render("\xff", "{}"), ERR_INPUT);
	/* RFC 3629 (utf8_valid): an overlong, a surrogate, past U+10FFFF, a cut
	 * sequence are refused; CJK and 4-byte characters are text */
	CHECK_EQ_LONG(render("a\xc0\x80", "{}"), ERR_INPUT);
	CHECK_EQ_LONG(render("a\xed\xa0\x80", "{}"), ERR_INPUT);
	CHECK_EQ_LONG(render("a\xf4\x90\x80\x80", "{}"), ERR_INPUT);
	CHECK_EQ_LONG(render("a\xe4\xb8", "{}"), ERR_INPUT);
	CHECK_EQ_LONG(render("\xe4\xb8\xad \xf0\x9f\x98\x80", "{}"), ERR_OK);
}

/* A macro made in a loop's body reads the loop's one frame: the current
 * iteration's names while the loop runs (jinja2's names are one Python
 * local), a refusal at the reading name once the loop has ended. */
static void test_loop_closures(void)
{
	const char *keep = "{% set ns = namespace(f=none) %}{% for x in [1, 2, 3] %}"
			   "{% if x == 1 %}{% macro m() %}[{{ x }}{{ loop.index }}]{% endmacro %}"
			   "{% set ns.f = m %}{% endif %}{{ ns.f() }}{% endfor %}";

	CHECK_EQ_LONG(render(keep, "{}"), ERR_OK);
	CHECK_STR(rendered, "[11][22][33]");
	CHECK_EQ_LONG(render("{% set ns = namespace(f=none) %}{% for x in [1] %}\n"
			     "{% macro m(p) %}{{ p }}\n{{ x }}{% endmacro %}{% set ns.f = m %}"
			     "{% endfor %}{{ ns.f(1) }}", "{}"), ERR_UNSUPPORTED);
	CHECK(strstr(rendered, "'x' read by a macro") != NULL);
	CHECK(strstr(rendered, "template line 3, column 4") != NULL);
	CHECK_EQ_LONG(render("{% set ns = namespace(f=none) %}{% for x in [1] %}{% macro m(x) %}"
			     "{{ x }}{% endmacro %}{% set ns.f = m %}{% endfor %}{{ ns.f(7) }}", "{}"),
		      ERR_OK);
	CHECK_STR(rendered, "7");
}

/* A failed render leaves the caller's buffer as it was; a render appends. */
static void test_buffer(void)
{
	struct jinja_ctx *c = jinja_ctx_new();
	struct jinja_tpl *ok = NULL, *bad = NULL;
	struct diag d;
	struct buf out;

	diag_init(&d);
	buf_init(&out, 64);
	CHECK(!buf_puts(&out, "keep:"));
	CHECK_EQ_LONG(jinja_tpl_new("{{ 'ab' * n }}", 14, &ok, &d), ERR_OK);
	CHECK_EQ_LONG(jinja_tpl_new("abc{{ 1 / 0 }}", 14, &bad, &d), ERR_OK);
	if (!ok || !bad)
		return;
	CHECK_EQ_LONG(jinja_ctx_set_json(c, "n", "2", 1, &d), ERR_OK);
	CHECK_EQ_LONG(jinja_tpl_render(bad, c, &out, &d), ERR_INPUT);
	CHECK_STR(out.data, "keep:");
	diag_init(&d);
	CHECK_EQ_LONG(jinja_tpl_render(ok, c, &out, &d), ERR_OK);
	CHECK_EQ_LONG(jinja_tpl_render(ok, c, &out, &d), ERR_OK);
	CHECK_STR(out.data, "keep:abababab");
	CHECK_EQ_LONG(jinja_ctx_set_json(c, "n", "100", 3, &d), ERR_OK);
	CHECK_EQ_LONG(jinja_tpl_render(ok, c, &out, &d), ERR_LIMIT);
	CHECK_STR(out.data, "keep:abababab");
	jinja_tpl_free(ok);
	jinja_tpl_free(bad);
	jinja_tpl_free(NULL);
	jinja_ctx_free(c);
	jinja_ctx_free(NULL);
	buf_release(&out);
}

static void test_context(void)
{
	struct jinja_ctx *c = jinja_ctx_new();
	struct tm tm = { .tm_year = 124, .tm_mon = 6, .tm_mday = 26, .tm_hour = 9, .tm_wday = 5 };
	struct diag d;
	struct buf out;
	const char *tpl = "{{ bos_token }}{{ t }}{{ f }}{{ n }}{{ strftime_now('%d %B %Y %H:%M %f%z') }}";

	diag_init(&d);
	buf_init(&out, 1024);
	CHECK_EQ_LONG(jinja_ctx_set_str(c, "bos_token", "<s>", 3, &d), ERR_OK);
	CHECK_EQ_LONG(jinja_ctx_set_bool(c, "t", 1, &d), ERR_OK);
	CHECK_EQ_LONG(jinja_ctx_set_bool(c, "f", 0, &d), ERR_OK);
	CHECK_EQ_LONG(jinja_ctx_set_none(c, "n", &d), ERR_OK);
	jinja_ctx_clock(c, &tm);
	CHECK_EQ_LONG(jinja_render(tpl, strlen(tpl), c, &out, &d), ERR_OK);
	CHECK_STR(out.data, "<s>TrueFalseNone26 July 2024 09:00 000000");
	CHECK_EQ_LONG(jinja_ctx_set_str(c, "x", "\xc3", 1, &d), ERR_INPUT);
	diag_init(&d);
	CHECK_EQ_LONG(jinja_ctx_merge_json(c, "[]", 2, &d), ERR_INPUT);
	buf_release(&out);
	jinja_ctx_free(c);
}

static void test_reads(void)
{
	struct jinja_tpl *t = NULL;
	struct diag d;
	const char *src = "{% macro m(a) %}{{ a }}{% endmacro %}{% if enable_thinking %}{{ m(x.y) }}{% endif %}";

	diag_init(&d);
	CHECK_EQ_LONG(jinja_tpl_new(src, strlen(src), &t, &d), ERR_OK);
	CHECK(jinja_tpl_reads(t, "enable_thinking"));
	CHECK(jinja_tpl_reads(t, "x"));
	CHECK(!jinja_tpl_reads(t, "y"));
	CHECK(!jinja_tpl_reads(t, "thinking"));
	jinja_tpl_free(t);
}

static void test_memory_cap(void)
{
	struct jinja_ctx *c = jinja_ctx_new();
	struct diag d;
	struct buf out;
	const char *tpl = "{% set xs = [1] * 1000000 %}{{ xs|length }}";

	diag_init(&d);
	buf_init(&out, 1024);
	jinja_ctx_memory(c, 1 << 20);
	CHECK_EQ_LONG(jinja_render(tpl, strlen(tpl), c, &out, &d), ERR_LIMIT);
	jinja_ctx_memory(c, 64 << 20);
	diag_init(&d);
	CHECK_EQ_LONG(jinja_render(tpl, strlen(tpl), c, &out, &d), ERR_OK);
	CHECK_STR(out.data, "1000000");
	buf_release(&out);
	jinja_ctx_free(c);
}

/* The least value memory (jinja_ctx_memory) with which `tpl` renders with
 * `vars`; its output goes to `rendered`. */
static size_t least_memory(const char *tpl, const char *vars)
{
	struct jinja_ctx *c = jinja_ctx_new();
	struct diag d;
	struct buf out;
	size_t lo = 0, hi = 1 << 20, mid; /* fails at lo, renders at hi */

	diag_init(&d);
	buf_init(&out, 1 << 16);
	CHECK_EQ_LONG(jinja_ctx_merge_json(c, vars, strlen(vars), &d), ERR_OK);
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		jinja_ctx_memory(c, mid);
		buf_reset(&out);
		diag_init(&d);
		if (jinja_render(tpl, strlen(tpl), c, &out, &d) == ERR_OK)
			hi = mid;
		else
			lo = mid;
	}
	jinja_ctx_memory(c, hi);
	buf_reset(&out);
	CHECK_EQ_LONG(jinja_render(tpl, strlen(tpl), c, &out, &d), ERR_OK);
	snprintf(rendered, sizeof(rendered), "%s", out.data);
	buf_release(&out);
	jinja_ctx_free(c);
	return hi;
}

/* {{ a + b + ... }} of plain strs is printed piece by piece, not made, yet
 * charged to the value memory as if made: it needs exactly the memory of
 * the same sum made by a set, also when an operand is Markup part way (the
 * sum so far is then made). */
static void test_printed_sums(void)
{
	char a[101], want[1024];
	size_t streamed, made;
	const char *vars = "{\"a\": \"%s\", \"b\": \"<%s>\"}";
	char v[1024];

	memset(a, 'x', 100);
	a[100] = 0;
	snprintf(v, sizeof v, vars, a, a);
	streamed = least_memory("{{ a + b + a }}", v);
	snprintf(want, sizeof want, "%s<%s>%s", a, a, a);
	CHECK_STR(rendered, want);
	made = least_memory("{% set x = a + b + a %}{{ x }}", v);
	CHECK_STR(rendered, want);
	CHECK_EQ_LONG((long)streamed, (long)made);
	CHECK(made > 2 * 300);
	streamed = least_memory("{{ a + b + (a|safe) + b }}", v);
	snprintf(want, sizeof want, "%s&lt;%s&gt;%s&lt;%s&gt;", a, a, a, a);
	CHECK_STR(rendered, want);
	made = least_memory("{% set x = a + b + (a|safe) + b %}{{ x }}", v);
	CHECK_STR(rendered, want);
	CHECK_EQ_LONG((long)streamed, (long)made);
}

/* The wall clock: a render past jinja_ctx_time ends with ERR_LIMIT at the
 * statement it was running, long before its step budget. */
static void test_time_cap(void)
{
	struct jinja_ctx *c = jinja_ctx_new();
	struct diag d;
	struct buf out;
	const char *tpl = "{% for i in range(100000) %}{% for j in range(100000) %}"
			  "{% endfor %}{% endfor %}";
	struct timespec a, b;

	diag_init(&d);
	buf_init(&out, 1024);
	jinja_ctx_time(c, 0.05);
	clock_gettime(CLOCK_MONOTONIC, &a);
	CHECK_EQ_LONG(jinja_render(tpl, strlen(tpl), c, &out, &d), ERR_LIMIT);
	clock_gettime(CLOCK_MONOTONIC, &b);
	CHECK(strstr(d.msg, "took longer than 0.05 seconds (template line 1, column ") != NULL);
	CHECK((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9 < 2.0);
	CHECK_EQ_LONG((long)out.len, 0);
	buf_release(&out);
	jinja_ctx_free(c);
}

/* Compile limits measured on CPython: the last length Python compiles
 * renders, one more is refused at the node that crosses the limit. */
static void test_compile_limits(void)
{
	struct jinja_ctx *c = jinja_ctx_new();
	struct diag d;
	struct buf t, out;
	int i;

	buf_init(&t, 1 << 20);
	buf_init(&out, 1 << 20);
	CHECK_EQ_LONG(buf_puts(&t, "{{ 1"), ERR_OK);
	for (i = 0; i < 327; i++)
		CHECK_EQ_LONG(buf_puts(&t, "|string"), ERR_OK);
	CHECK_EQ_LONG(buf_puts(&t, " }}"), ERR_OK);
	diag_init(&d);
	CHECK_EQ_LONG(jinja_render(t.data, t.len, c, &out, &d), ERR_OK);
	CHECK_STR(out.data, "1");
	buf_truncate(&t, t.len - 3);
	CHECK_EQ_LONG(buf_puts(&t, "|string }}"), ERR_OK);
	diag_init(&d);
	CHECK_EQ_LONG(jinja_render(t.data, t.len, c, &out, &d), ERR_LIMIT);
	CHECK(strstr(d.msg, "an expression nested too deeply (Python cannot compile it) "
			    "(template line 1, column 6)") != NULL);
	buf_release(&t);
	buf_release(&out);
	jinja_ctx_free(c);
}

int main(void)
{
	T_RUN(test_slices);
	T_RUN(test_float_repr);
	T_RUN(test_json_numbers);
	T_RUN(test_json_keys);
	T_RUN(test_cjson_context);
	T_RUN(test_outcomes);
	T_RUN(test_loop_closures);
	T_RUN(test_buffer);
	T_RUN(test_context);
	T_RUN(test_reads);
	T_RUN(test_memory_cap);
	T_RUN(test_printed_sums);
	T_RUN(test_time_cap);
	T_RUN(test_compile_limits);
	return T_DONE();
}
