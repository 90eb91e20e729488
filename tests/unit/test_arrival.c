/* Unit tests of arrival: the achieved rate and shape of open-loop schedules. */
#include <math.h>
#include <string.h>

#include "base/io.h"
#include "load/arrival.h"
#include "t.h"

#define N 20000

static void test_constant(void)
{
	struct arrival s;
	struct diag d;
	double t = 0;
	int i;

	diag_init(&d);
	CHECK(!arrival_init(&s, ARRIVAL_CONSTANT, 0.48, 1, 0, &d));
	for (i = 0; i < N; i++)
		t = arrival_next_ms(&s);
	/* absolute: the last offset is exactly (N-1)/rate, no accumulated error */
	CHECK(t == (double)(N - 1) * 1000.0 / 0.48);
}

static void test_poisson(void)
{
	struct arrival s, again;
	struct diag d;
	double t = 0, prev = 0, sum = 0, sq = 0, gap, mean, cv;
	int i, same = 1, ordered = 1;

	diag_init(&d);
	CHECK(!arrival_init(&s, ARRIVAL_POISSON, 2.5, 42, 0, &d));
	CHECK(!arrival_init(&again, ARRIVAL_POISSON, 2.5, 42, 0, &d));
	CHECK(arrival_next_ms(&s) == 0);
	(void)arrival_next_ms(&again);
	for (i = 1; i < N; i++) {
		t = arrival_next_ms(&s);
		same &= t == arrival_next_ms(&again);
		gap = t - prev;
		ordered &= gap >= 0;
		sum += gap;
		sq += gap * gap;
		prev = t;
	}
	CHECK(same);
	CHECK(ordered);
	/* achieved rate within 3% of 2.5/s over 20000 arrivals (its standard
	 * error is 0.7%), and gaps exponential: coefficient of variation ~1 */
	CHECK(fabs((double)(N - 1) * 1000.0 / t / 2.5 - 1) < 0.03);
	mean = sum / (N - 1);
	cv = sqrt(sq / (N - 1) - mean * mean) / mean;
	CHECK(fabs(cv - 1) < 0.05);
	CHECK(!arrival_init(&again, ARRIVAL_POISSON, 2.5, 43, 0, &d));
	(void)arrival_next_ms(&again);
	CHECK(arrival_next_ms(&again) != 0);
}

/* With the count known, a round of 200 Poisson arrivals achieves the rate
 * exactly, and its gaps still vary as exponential ones do. */
static void test_conditioned(void)
{
	struct arrival s;
	struct diag d;
	double t = 0, prev = 0, sq = 0, g, cv;
	int i;

	diag_init(&d);
	CHECK(!arrival_init(&s, ARRIVAL_POISSON, 0.48, 9, 200, &d));
	CHECK(arrival_next_ms(&s) == 0);
	for (i = 1; i < 200; i++) {
		t = arrival_next_ms(&s);
		g = t - prev;
		sq += g * g;
		prev = t;
	}
	CHECK(fabs(t - 199 * 1000.0 / 0.48) < 1e-6 * t);
	cv = sqrt(sq / 199 - (t / 199) * (t / 199)) / (t / 199);
	CHECK(cv > 0.7 && cv < 1.3);
}

static void test_bad(void)
{
	struct arrival s;
	struct diag d;
	enum arrival_kind k;

	diag_init(&d);
	CHECK(arrival_init(&s, ARRIVAL_POISSON, 0, 1, 0, &d) == ERR_INPUT);
	CHECK(strstr(d.msg, "rate '0'") != NULL);
	diag_init(&d);
	CHECK(arrival_init(&s, ARRIVAL_POISSON, NAN, 1, 0, &d) == ERR_INPUT);
	CHECK(arrival_parse("burst", &k, &d) == ERR_INPUT);
	CHECK(!arrival_parse("constant", &k, &d) && k == ARRIVAL_CONSTANT);
	CHECK_STR(arrival_name(ARRIVAL_POISSON), "poisson");
}

static void test_sleep(void)
{
	double t0 = io_now_ms(), t1;
	struct arrival s;
	struct diag d;
	int i;

	diag_init(&d);
	CHECK(!arrival_init(&s, ARRIVAL_CONSTANT, 200, 1, 0, &d));
	for (i = 0; i < 10; i++)
		io_sleep_until_ms(t0 + arrival_next_ms(&s));
	t1 = io_now_ms();
	/* the tenth arrival is at 45 ms: never early */
	CHECK(t1 - t0 >= 45);
	io_sleep_until_ms(t0); /* in the past: returns at once */
	CHECK(io_now_ms() - t1 < 20);
}

int main(void)
{
	T_RUN(test_constant);
	T_RUN(test_poisson);
	T_RUN(test_conditioned);
	T_RUN(test_bad);
	T_RUN(test_sleep);
	return T_DONE();
}
