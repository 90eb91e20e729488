/*
 * loadci — whether a load figure of run B is no worse than run A's by more
 * than a threshold: the non-inferiority verdict of one gate on one cell
 * (pass, fail or underpowered), with the interval of the ratio B/A, and the
 * estimate a run makes of its own precision while it runs (self-sizing).
 * Pure functions on plain arrays; docs/statistics.md says why each choice.
 *
 * A run's estimate of a figure, in log units, and its variance:
 *  - figures measured per request (TTFT P50/P95, TPOT P95, E2E P50): the
 *    percentile P of the run's valid requests pooled over its valid rounds,
 *    interpolated between samples (numpy's "linear"); pooling puts a P95 of
 *    a few hundred requests in the tail rather than on a rare slow mode that
 *    a 32-request round's P95 lands on one round in four. Its variance is the
 *    delete-one-round jackknife: rounds are the unit that drift and slow
 *    phases move together, so their disagreement is the noise a second run
 *    would see. (A round's requests share the server's state; treating them
 *    as independent is what made one quiet run look precise.)
 *  - figures measured per round (output throughput, goodput): the mean of
 *    the rounds' logs, its variance s^2 / rounds.
 * Degrees of freedom: rounds - 1. One round: no spread, an unknown variance.
 *
 * The comparison: d = log B - log A, se = sqrt(var A + var B), Welch's
 * degrees of freedom, and the 90% two-sided interval d -/+ t(0.95, df) se
 * (each bound one-sided 95%). For a rule "ratio <= T" (latency, T > 1) or
 * ">= T" (throughput, T < 1):
 *  - pass: the whole interval is on the good side of T (the change is shown
 *    to be within the threshold), or a change of T's size is itself within
 *    the absolute floor (A |T - 1| <= floor: 6 -> 7 ms never counts);
 *  - fail: the whole interval is beyond T (the change is shown to exceed
 *    the threshold, not merely 1) and |B - A| is above the floor;
 *  - underpowered: the interval holds T.
 * A per-round figure that is 0 in some round has no logarithm: it is judged
 * as a point (the medians' ratio), so a collapse to 0 fails.
 *
 * The point ratio shown with a verdict is exp(d), the estimator's; the
 * cell's headline figures (medians over rounds, loadstat.h) stay as they are.
 */
#ifndef NEEDLE_LOADCI_H
#define NEEDLE_LOADCI_H

#include <stddef.h>

/* The power at which a run sizes itself: a run stops adding rounds when a
 * like run would show "no worse than T" at ratio 1 with this probability. */
#define LOADCI_POWER 0.9

/* One run's samples of one figure in one cell: valid rounds only. */
struct loadci_set {
	double *v;              /* owned: the samples, round after round, each
				   round's sorted ascending */
	size_t *start;          /* owned: round i is v[start[i] .. start[i + 1]) */
	size_t rounds;          /* valid rounds */
	size_t n, cap, capr;    /* samples held and room (v, start) */
	double *pool;           /* owned scratch: the pooled samples, sorted */
	size_t *tag;            /* owned scratch: round of pool[i] */
	size_t cappool;
};

enum loadci_verdict { LOADCI_PASS, LOADCI_FAIL, LOADCI_UNDERPOWERED };

/* What dominates a run's noise of one figure (for advice). */
enum loadci_noise {
	LOADCI_NOISE_ROUNDS,    /* rounds disagree beyond their own sampling
				   (drift, slow phases): more rounds */
	LOADCI_NOISE_REQUESTS,  /* each round's own sampling: more requests */
	LOADCI_NOISE_MODE       /* the percentile sits on a rare slow mode */
};

/* One run's estimate of one figure. */
struct loadci_est {
	double log;             /* log of the figure */
	double var;             /* its variance (INFINITY with one round) */
	double df;              /* rounds - 1 */
	size_t rounds;
	enum loadci_noise noise;
	int zero;               /* a per-round figure is 0 in some round */
};

struct loadci_rule {
	double pct;             /* percentile of the requests (50, 95); 0 = one
				   value per round (v holds it) */
	double threshold;       /* T: the ratio B/A may reach */
	int up_is_bad;          /* 1: fails above T (latency); 0: below (throughput) */
	double floor;           /* |B - A| at or under it never fails (figure's unit) */
};

struct loadci_result {
	enum loadci_verdict verdict;
	double a, b;            /* the runs' figures as estimated (exp of log) */
	double ratio;           /* b / a */
	double lo, hi;          /* 90% interval of the ratio (one-sided 95% bounds) */
	double mde;             /* the interval's half-width, relative (0.12 = 12%) */
	double more;            /* data factor (both runs) that would decide it;
				   INFINITY when no amount of data would */
	int floored;            /* a threshold-sized change is within the floor,
				   or the difference is */
	int one_round;          /* a run has a single valid round */
	enum loadci_noise noise;/* what dominates (the noisier run's) */
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
/* Drops the open round's samples. */
void loadci_set_drop_round(struct loadci_set *s);

/* The run's estimate of the figure `pct` (0: one value per round) of `s`
 * into *out. 0 when `s` has no round, or out of memory (the pooled scratch);
 * a figure at or below 0 gives log -INFINITY. */
int loadci_estimate(struct loadci_set *s, double pct, struct loadci_est *out);

/* The one-sided 95% point of Student's t with `df` degrees of freedom
 * (rounded down: the wider bound). */
double loadci_t95(double df);

/* Whether a run with estimate `e`, compared with a like run, would show a
 * ratio of 1 to be within threshold T at LOADCI_POWER: (t95 + z) x
 * sqrt(2 var) <= |log T|. */
int loadci_settled(const struct loadci_est *e, double threshold);

/* Judges B against A under `rule`. Both sets need a round with a sample and
 * A's figure must be above 0 (the caller says why otherwise); returns 0 when
 * not, or out of memory. */
int loadci_judge(struct loadci_set *a, struct loadci_set *b,
		 const struct loadci_rule *rule, struct loadci_result *out);

#endif
