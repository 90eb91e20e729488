/*
 * loadci — whether a load figure of run B is worse than run A's beyond what
 * the two runs' noise explains: the verdict of one noise-aware gate on one
 * cell (pass, fail or underpowered), with the interval of the ratio B/A, the
 * smallest change the runs could have detected and how much more data would
 * settle an underpowered cell. Pure functions on plain arrays.
 *
 * The point estimate is the cell's own figure (loadstat.h): per valid round
 * the nearest-rank percentile P of its request samples (or the round's
 * value), then the median over rounds; the ratio is B's over A's.
 *
 * The interval, 95%, two-sided:
 *  - figures measured per request (TTFT P50/P95, TPOT P95, E2E P50): a
 *    hierarchical bootstrap. Each of LOADCI_RESAMPLES resamples draws each
 *    run's rounds with replacement, then each drawn round's requests with
 *    replacement, and recomputes the median over rounds of the per-round
 *    percentile; the interval is the 2.5% and 97.5% points of the resampled
 *    ratios. The percentile of a resample of n sorted samples is drawn
 *    directly: its rank-k order statistic is x[floor(n * U)] with U ~
 *    Beta(k, n + 1 - k) (the k-th smallest of n uniforms), which is the same
 *    law as drawing n indices and sorting them, at O(1) per round;
 *  - figures measured per round (output throughput, goodput): Welch's t
 *    interval of the difference of the mean log values (unequal variances,
 *    Welch-Satterthwaite degrees of freedom), exponentiated. With one round
 *    in either run there is no spread to judge by: underpowered (the field
 *    reports screen on one round and conclude on several). A round at 0 (no
 *    token, no request within the SLO) has no logarithm: the ratio is then
 *    judged as a point, so a collapse to 0 fails.
 * The generator is seeded from `seed` (loadci_seed of the cell and gate), so
 * one comparison always gives the same verdict.
 *
 * The verdict, for a rule "ratio <= T" (latency, T > 1) or ">= T"
 * (throughput, T < 1):
 *  - fail: the point ratio crosses T, the interval excludes 1, and |B - A|
 *    is above the rule's absolute floor (so 6 -> 7 ms never fails);
 *  - underpowered: not a fail, and the interval's half-width (in log
 *    units) is wider than |log T|, i.e. a regression of T's size could have
 *    hidden in the noise, unless such a regression is itself within the
 *    floor (A * |T - 1| <= floor);
 *  - pass otherwise.
 * The minimum detectable effect is exp(half-width) - 1 (a ratio that far
 * from 1 would just exclude 1); `more` = (half-width / |log T|)^2 is the
 * factor of data that brings it to T (a half-width shrinks as 1/sqrt(n)).
 */
#ifndef NEEDLE_LOADCI_H
#define NEEDLE_LOADCI_H

#include <stddef.h>
#include <stdint.h>

#define LOADCI_RESAMPLES 2000 /* bootstrap resamples per cell and figure */

/* One run's samples of one figure in one cell: valid rounds only. */
struct loadci_set {
	double *v;              /* owned: the samples, round after round, each
				   round's sorted ascending */
	size_t *start;          /* owned: round i is v[start[i] .. start[i + 1]) */
	size_t rounds;          /* valid rounds */
	size_t n, cap, capr;    /* samples held and room (v, start) */
};

enum loadci_verdict { LOADCI_PASS, LOADCI_FAIL, LOADCI_UNDERPOWERED };

struct loadci_rule {
	double pct;             /* percentile of a round's requests (50, 95); 0 =
				   one value per round (v holds it) */
	double threshold;       /* T: the ratio B/A may reach */
	int up_is_bad;          /* 1: fails above T (latency); 0: below (throughput) */
	double floor;           /* |B - A| at or under it never fails (figure's unit) */
	uint64_t seed;
};

struct loadci_result {
	enum loadci_verdict verdict;
	double a, b;            /* point figures */
	double ratio;           /* b / a */
	double lo, hi;          /* 95% interval of the ratio */
	double mde;             /* minimum detectable effect, relative (0.12 = 12%) */
	double more;            /* data factor that would make mde = |T - 1|-ish */
	int floored;            /* crossed the threshold within the floor */
	int one_round;          /* a per-round figure with a single round in a run */
};

/* Empties `s` (keeps its memory). */
void loadci_set_reset(struct loadci_set *s);
/* Frees what `s` holds. Accepts an empty set. */
void loadci_set_release(struct loadci_set *s);
/* Appends a sample to the open round; 0 when out of memory. */
int loadci_set_add(struct loadci_set *s, double v);
/* Closes the open round: sorts it, and keeps it when it has a sample. 0 when
 * out of memory. */
int loadci_set_end_round(struct loadci_set *s);

/* A seed for the cell and gate named by `text` (FNV-1a of its bytes). */
uint64_t loadci_seed(const char *text);

/* Judges B against A under `rule`. Both sets need a round with a sample and
 * A's point figure must be above 0 (the caller says why otherwise); returns 0
 * when not. Allocates nothing. */
int loadci_judge(const struct loadci_set *a, const struct loadci_set *b,
		 const struct loadci_rule *rule, struct loadci_result *out);

#endif
