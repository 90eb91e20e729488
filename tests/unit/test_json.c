/* Unit tests of json: the checked builder, parsing, printing. `test_json oom`
 * is the failed-allocation mode driven by tests/cli/json_oom.sh. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/io.h"
#include "base/json.h"
#include "base/mem.h"
#include "t.h"

/* The value every builder test makes, and its compact text. */
static cJSON *build_sample(struct json_build *jb, const cJSON *extra)
{
	cJSON *m = json_new_obj(jb), *a, *o;

	json_add_str(jb, m, "name", "needle");
	json_add_num(jb, m, "ratio", 0.5);
	json_add_int(jb, m, "big", 1099511627776LL);
	json_add_bool(jb, m, "yes", 7);
	json_add_bool(jb, m, "no", 0);
	json_add_null(jb, m, "none");
	a = json_add_arr(jb, m, "list");
	json_add_int(jb, a, NULL, 1);
	json_add_str(jb, a, NULL, "two");
	json_add_item(jb, a, NULL, cJSON_CreateNumber(3));
	o = json_add_obj(jb, a, NULL);
	json_add_str(jb, o, "k", "v");
	json_add_dup(jb, m, "extra", extra);
	return m;
}

static const char sample_text[] =
	"{\"name\":\"needle\",\"ratio\":0.5,\"big\":1099511627776,\"yes\":true,"
	"\"no\":false,\"none\":null,\"list\":[1,\"two\",3,{\"k\":\"v\"}],"
	"\"extra\":{\"x\":[true]}}";

static cJSON *sample_extra(void)
{
	return cJSON_Parse("{\"x\":[true]}");
}

static void test_build_all_kinds(void)
{
	struct json_build jb;
	struct diag d;
	struct buf b;
	cJSON *extra = sample_extra(), *m;

	diag_init(&d);
	buf_init(&b, BUF_MAX_DEFAULT);
	json_build_init(&jb);
	m = build_sample(&jb, extra);
	CHECK(json_build_end(&jb, &m, "the sample", &d) == ERR_OK);
	CHECK(m != NULL);
	CHECK(json_print(m, 0, &b, "the sample", &d) == ERR_OK);
	CHECK_STR(b.data, sample_text);
	CHECK(cJSON_IsArray(cJSON_GetObjectItem(extra, "x"))); /* the source stays */
	CHECK(d.code == ERR_OK);
	cJSON_Delete(m);
	cJSON_Delete(extra);
	buf_release(&b);
}

/* A NULL container is a failed creation: ERR_NOMEM, and every later add is a
 * no-op that still frees what it was handed (ASan's leak check sees it). */
static void test_null_parent_is_sticky(void)
{
	struct json_build jb;
	struct diag d;
	cJSON *m;

	diag_init(&d);
	json_build_init(&jb);
	m = json_new_obj(&jb);
	json_add_str(&jb, m, "first", "ok");
	json_add_str(&jb, NULL, "lost", "x");
	json_add_str(&jb, m, "after", "y");
	json_add_item(&jb, m, "item", cJSON_CreateString("freed"));
	CHECK(json_add_obj(&jb, m, "o") == NULL);
	CHECK(json_add_arr(&jb, m, "a") == NULL);
	CHECK(json_new_arr(&jb) == NULL);
	CHECK(cJSON_GetObjectItem(m, "after") == NULL);
	CHECK_STR(jb.key, "lost");
	CHECK(json_build_end(&jb, &m, "the test value", &d) == ERR_NOMEM);
	CHECK(m == NULL);
	CHECK_STR(d.msg, "out of memory building the test value");
}

static void test_null_item_is_nomem(void)
{
	struct json_build jb;
	cJSON *a;

	json_build_init(&jb);
	a = json_new_arr(&jb);
	json_add_item(&jb, a, NULL, NULL);
	CHECK(jb.code == ERR_NOMEM);
	CHECK(json_build_end(&jb, &a, "an array", NULL) == ERR_NOMEM && a == NULL);
}

static void test_misuse_is_internal(void)
{
	struct json_build jb;
	struct diag d;
	cJSON *m, *a;

	diag_init(&d);
	json_build_init(&jb);
	m = json_new_obj(&jb);
	json_add_int(&jb, m, NULL, 1); /* no key on an object */
	CHECK(jb.code == ERR_INTERNAL);
	CHECK(json_build_end(&jb, &m, "x", &d) == ERR_INTERNAL && m == NULL);
	CHECK(strstr(d.msg, "no key") != NULL);

	diag_init(&d);
	json_build_init(&jb);
	a = json_new_arr(&jb);
	json_add_int(&jb, a, "k", 1); /* a key on an array */
	CHECK(json_build_end(&jb, &a, "y", &d) == ERR_INTERNAL);
	CHECK(strstr(d.msg, "field 'k'") != NULL);
	cJSON_Delete(a);

	diag_init(&d);
	json_build_init(&jb);
	m = json_new_obj(&jb);
	json_add_str(&jb, m, "s", NULL);
	json_add_dup(&jb, m, "v", NULL);
	CHECK(json_build_end(&jb, &m, "z", &d) == ERR_INTERNAL);
	CHECK_STR(d.msg, "cannot build z: field 's': a NULL string");
}

/* The recorded key is cut to fit; a root that was never created is NOMEM. */
static void test_end_edges(void)
{
	struct json_build jb;
	char key[200];
	cJSON *none = NULL;

	memset(key, 'k', sizeof(key) - 1);
	key[sizeof(key) - 1] = '\0';
	json_build_init(&jb);
	json_add_str(&jb, NULL, key, "x");
	CHECK_EQ_LONG(strlen(jb.key), JSON_KEY_MAX - 1);
	json_build_init(&jb);
	CHECK(json_build_end(&jb, NULL, "w", NULL) == ERR_OK);
	CHECK(json_build_end(&jb, &none, "w", NULL) == ERR_NOMEM);
}

static void test_parse(void)
{
	static const char slice[] = "[1,2]]]"; /* a slice with no NUL after it */
	struct diag d;
	cJSON *v;

	diag_init(&d);
	CHECK(json_parse(" {\"a\": [1, 2]} \r\n\t", 18, &v, "'t.json'", &d) == ERR_OK);
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(v, "a")) == 2);
	cJSON_Delete(v);
	CHECK(json_parse(slice, 5, &v, "a slice", &d) == ERR_OK);
	CHECK(cJSON_GetArraySize(v) == 2);
	cJSON_Delete(v);
	CHECK(json_parse(slice, 6, &v, "'x.json'", &d) == ERR_INPUT);
	CHECK(v == NULL);
	CHECK_STR(d.msg, "cannot parse 'x.json': invalid JSON at byte 5");
	diag_init(&d);
	CHECK(json_parse("{\"a\":}", 6, &v, "'y'", &d) == ERR_INPUT && v == NULL);
	CHECK_STR(d.msg, "cannot parse 'y': invalid JSON at byte 5");
	diag_init(&d);
	CHECK(json_parse("", 0, &v, "'empty'", &d) == ERR_INPUT && v == NULL);
	CHECK(json_parse("1 \0 2", 5, &v, "'nul'", NULL) == ERR_INPUT && v == NULL);
}

static void test_print(void)
{
	struct buf b;
	struct diag d;
	cJSON *v = cJSON_Parse("{\"a\":[1]}");

	diag_init(&d);
	buf_init(&b, 16);
	CHECK(buf_puts(&b, "x") == ERR_OK);
	CHECK(json_print(v, JSON_NEWLINE, &b, "v", &d) == ERR_OK);
	CHECK_STR(b.data, "x{\"a\":[1]}\n");
	buf_reset(&b);
	CHECK(json_print(v, JSON_PRETTY, &b, "v", &d) == ERR_OK);
	CHECK_STR(b.data, "{\n\t\"a\":\t[1]\n}");
	CHECK(json_print(v, JSON_PRETTY, &b, "the value", &d) == ERR_LIMIT);
	CHECK_STR(b.data, "{\n\t\"a\":\t[1]\n}"); /* unchanged on failure */
	CHECK_STR(d.msg, "the value is too large to print");
	diag_init(&d);
	CHECK(json_print(NULL, 0, &b, "nothing", &d) == ERR_INTERNAL);
	cJSON_Delete(v);
	buf_release(&b);
}

static void test_write_file(void)
{
	char path[64];
	struct buf b;
	struct diag d;
	cJSON *v = cJSON_Parse("[\"a\",1]");

	diag_init(&d);
	buf_init(&b, BUF_MAX_DEFAULT);
	snprintf(path, sizeof(path), "/tmp/needle-test-json-%d", (int)getpid());
	CHECK(json_write_file(path, v, JSON_NEWLINE, &d) == ERR_OK);
	CHECK(io_read_file(path, &b, &d) == ERR_OK);
	CHECK_STR(b.data, "[\"a\",1]\n");
	buf_reset(&b);
	CHECK(json_write_file(path, v, JSON_PRETTY, &d) == ERR_OK);
	CHECK(io_read_file(path, &b, &d) == ERR_OK);
	CHECK_STR(b.data, "[\"a\", 1]");
	unlink(path);
	CHECK(json_write_file("/nonexistent-dir/x.json", v, 0, &d) == ERR_IO);
	cJSON_Delete(v);
	buf_release(&b);
}

/* Under NEEDLE_FAIL_ALLOC=N: build, print and parse the sample. Exit 0 when
 * everything succeeded with the exact text, 3 when a step failed cleanly with
 * ERR_NOMEM (nothing half-built is left), 1 on anything else. */
static int mode_oom(void)
{
	struct json_build jb;
	struct diag d;
	struct buf b;
	cJSON *extra = sample_extra(), *m, *back = NULL;
	enum err e;
	int rc = 0;

	if (!extra)
		return 3; /* the fixture itself could not be built */
	diag_init(&d);
	buf_init(&b, BUF_MAX_DEFAULT);
	json_build_init(&jb);
	m = build_sample(&jb, extra);
	e = json_build_end(&jb, &m, "the sample", &d);
	if (!e)
		e = json_print(m, 0, &b, "the sample", &d);
	if (!e && strcmp(b.data, sample_text))
		rc = 1;
	if (!e)
		e = json_parse(b.data, b.len, &back, "the sample", &d);
	if (!e && !cJSON_Compare(back, m, 1))
		rc = 1;
	if (e && (e != ERR_NOMEM || d.code != e || back || !strstr(d.msg, "out of memory")))
		rc = 1;
	if (e && !rc)
		rc = 3;
	cJSON_Delete(back);
	cJSON_Delete(m);
	cJSON_Delete(extra);
	buf_release(&b);
	return rc;
}

/* json_g15 writes what printf's "%.15g" writes, for the values a journal
 * holds (milliseconds with three decimals, counts) and for random doubles of
 * every magnitude, halves, powers of ten and the edges of its fast paths. */
static void g15_is(double v)
{
	char want[64], got[JSON_G15_MAX];
	size_t n = json_g15(v, got);

	snprintf(want, sizeof(want), "%.15g", v);
	if (strcmp(got, want) || n != strlen(want))
		fprintf(stderr, "json_g15(%.17g): '%s', printf '%s'\n", v, got, want);
	CHECK(!strcmp(got, want) && n == strlen(want));
}

static void test_g15(void)
{
	static const double fixed[] = {0, -0.0, 1, -1, 0.5, 2.5, 0.1, 0.0001, 0.00009999,
				       0.000123456789012345, 1e14, 1e15, -1e15, 999999999999999.0,
				       999999999999999.9, 123456789012345.6, 1e-5, 1e300, -1e-300,
				       1.0 / 3, 2.0 / 3, 2.082, 2.127, 1e22, 0.30000000000000004,
				       9.9999999999999995, 99.999999999999986, 1e-4, 5e-5,
				       /* three decimals at the ends of their fast path */
				       0.001, 0.005, -0.05, 0.999, 999999999999.999, 999999999999.99,
				       123456789012.345, 1000000000000.001, 4503599627370.495};
	unsigned long long x = 88172645463325252ULL;
	double v;
	size_t i;
	int k;

	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		g15_is(fixed[i]);
	g15_is(strtod("nan", NULL));
	g15_is(strtod("inf", NULL));
	g15_is(-strtod("inf", NULL));
	for (i = 0; i < 200000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		switch (i % 4) {
		case 0: /* a journal's milliseconds: "%.3f" of a time */
			v = (double)(x % 100000000) / 1000;
			break;
		case 1: /* any bits of a double */
			memcpy(&v, &x, sizeof(v));
			break;
		case 2: /* magnitudes 1e-6 .. 1e16 */
			k = (int)(x % 23) - 6;
			v = (double)(x >> 11) / 9007199254740992.0 * pow(10, k);
			break;
		default: /* exact halves of the 15th digit */
			v = ((double)(x % 1000000000000000ULL) + 0.5) / pow(10, (double)(x % 16));
		}
		g15_is(i % 8 < 4 ? v : -v);
	}
}

/* json_g15_is_plain: every plain number it takes is json_g15's text of its
 * value, its answer 2 exactly with a point; the texts %g writes otherwise
 * (a trailing zero, below 1e-4, a leading zero) are refused. */
static void test_g15_is_plain(void)
{
	static const struct {
		const char *s;
		int frac, want;
	} cases[] = {
		{"0", 0, 1}, {"-0", 0, 1}, {"7", 0, 1}, {"200", 0, 1}, {"1796285424356", 0, 1},
		{"999999999999999", 0, 1}, {"2.168", 3, 2}, {"-0.5", 1, 2}, {"0.0001", 4, 2},
		{"0.00001", 5, 0}, {"-0.00009", 5, 0}, {"1.50", 2, 0}, {"0.0", 1, 0}, {"01", 0, 0},
		{"-01.5", 1, 0}, {"12345678901234.5", 1, 2},
	};
	char text[40], out[JSON_G15_MAX];
	unsigned long long x = 88172645463325252ull;
	size_t i, n;
	int k, digits, frac, is, bad = 0;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK_EQ_LONG(json_g15_is_plain(cases[i].s, strlen(cases[i].s), cases[i].frac),
			      cases[i].want);
	for (i = 0; i < 300000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		digits = 1 + (int)(x % 15);
		frac = (int)((x >> 8) % (unsigned)(digits + 1));
		if (frac == digits)
			frac = 0;
		n = 0;
		if ((x >> 16) & 1)
			text[n++] = '-';
		for (k = 0; k < digits; k++) {
			if (k && k == digits - frac)
				text[n++] = '.';
			/* zeros often, to try the refusals */
			text[n++] = (char)('0' + (((x >> (20 + k)) & 3) ? (int)((x >> (24 + k)) % 10) : 0));
		}
		text[n] = '\0';
		is = json_g15_is_plain(text, n, frac);
		if (is && (json_g15(strtod(text, NULL), out) != n || memcmp(out, text, n) ||
			   (is == 2) != (frac > 0)) && bad++ < 5)
			fprintf(stderr, "'%s' (frac %d): json_g15 writes '%s'\n", text, frac, out);
	}
	CHECK_EQ_LONG(bad, 0);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "oom"))
		return mode_oom();
	T_RUN(test_build_all_kinds);
	T_RUN(test_null_parent_is_sticky);
	T_RUN(test_null_item_is_nomem);
	T_RUN(test_misuse_is_internal);
	T_RUN(test_end_edges);
	T_RUN(test_parse);
	T_RUN(test_print);
	T_RUN(test_write_file);
	T_RUN(test_g15);
	T_RUN(test_g15_is_plain);
	return T_DONE();
}
