/*
 * loadci — whether a load figure of run B is no worse than run A's by more
 * than a threshold: the non-inferiority verdict of one gate on one cell
 * (pass, fail or underpowered), with the interval of the ratio B/A, and the
 * estimate a run makes of its own precision while it runs (self-sizing).
 * Pure functions on plain arrays; docs/statistics.md "The load gate" says
 * why each choice.
 *
 * The unit is the round: a round's requests share the server's state (a
 * drift, a slow phase, a warm cache), so rounds, not requests, are what
 * move together, and their disagreement is the noise a second run sees.
 * Per run and figure, each valid round gives one value: a percentile of its
 * requests (TTFT P50/P95, TPOT P95, E2E P50; numpy's "linear", between
 * samples) or its own figure (output throughput, goodput).
 *
 * The comparison is the Hodges-Lehmann shift of the logarithms: d = the
 * median of the m x n differences log b_j - log a_i, B/A = exp(d); its 90%
 * interval is [D(k), D(mn + 1 - k)] of the sorted differences, k from the
 * exact null distribution of the Mann-Whitney U (the normal approximation
 * beyond LOADCI_MW_EXACT pairs), each bound one-sided 95%. It assumes only
 * that the rounds of a run are exchangeable, not normal: a slow phase that
 * catches a quarter of the rounds, or a P95 that sits on a stall mode one
 * round in four, moves a few differences, not the median of them. With 3
 * rounds against 3 the interval is the range of the differences; with 2 it
 * is unbounded.
 *
 * Rounds that move together are worth fewer: a machine whose speed shifts
 * for minutes at a time puts runs of consecutive rounds in one state, and a
 * run's count of rounds then overstates how many of the machine's states it
 * saw. Each run's rounds, in the order they ran, count as n (1 - r) /
 * (1 + r) independent ones (at least 3), r their lag-1 autocorrelation less
 * what chance gives n independent rounds (1.645 / sqrt n), and n when r is
 * not above that; k is the rank for those sizes, moved to the same quantile
 * of all m x n differences. Rounds that do not move together keep k.
 *
 * The verdict, for a rule "ratio <= T" (latency, T > 1) or ">= T"
 * (throughput, T < 1):
 *  - pass: the whole interval is on the good side of T (the change is shown
 *    to be within the threshold), or a change of T's size is itself within
 *    the absolute floor (A |T - 1| <= floor: 6 -> 7 ms never counts);
 *  - fail: the whole interval is beyond T (the change is shown to exceed
 *    the threshold, not merely 1) and |B - A| is above the floor;
 *  - underpowered: the interval holds T.
 * A per-round figure that is 0 in some round of B has no logarithm: it is
 * judged as a point (the medians' ratio), so a collapse to 0 fails.
 *
 * A run's own precision (self-sizing, loadsize.h) is the standard deviation
 * of its rounds' logs, bounded above: not a rank measure, which would not
 * see a slow phase that a few rounds happened to miss (a run stopped on
 * such a lucky spread is a biased sample, and a pair of runs then fails
 * against itself), and not the estimate alone, which ten rounds that
 * happened to agree understate.
 */
#ifndef NEEDLE_LOADCI_H
#define NEEDLE_LOADCI_H

#include <stddef.h>

/* The power at which a run sizes itself: a run stops adding rounds when a
 * like run would show "no worse than T" at ratio 1 with this probability
 * (per figure and cell: with a dozen cells of three figures, the same
 * server twice still passes as a whole most of the time). */
#define LOADCI_POWER 0.99
/* Rounds before a run may stop on its spread: fewer may all miss a slow
 * phase that a quarter of the rounds meet (0.75^10 < 6%). */
#define LOADCI_SETTLE_MIN 10
/* The confidence with which the rounds' spread is bounded above when a run
 * decides whether it may stop (loadci_settled). */
#define LOADCI_SD_BOUND 0.80
/* Pairs (m x n rounds) up to which the Mann-Whitney U is counted exactly. */
#define LOADCI_MW_EXACT 10000

/* One run's samples of one figure in one cell: valid rounds only. */
struct loadci_set {
	double *v;              /* owned: the samples, round after round, each
				   round's sorted ascending */
	size_t *start;          /* owned: round i is v[start[i] .. start[i + 1]) */
	size_t rounds;          /* valid rounds */
	size_t n, cap, capr;    /* samples held and room (v, start) */
	double *pool;           /* owned scratch: the pooled samples, sorted */
	size_t cappool;
};

enum loadci_verdict { LOADCI_PASS, LOADCI_FAIL, LOADCI_UNDERPOWERED };

/* What dominates a run's noise of one figure (for advice). */
enum loadci_noise {
	LOADCI_NOISE_ROUNDS,    /* rounds disagree beyond their own sampling
				   (drift, slow phases): more rounds */
	LOADCI_NOISE_REQUESTS,  /* each round's own sampling: more requests */
	LOADCI_NOISE_MODE,      /* the percentile sits on a rare slow mode */
	LOADCI_NOISE_PHASES     /* rounds move together in phases longer than a
				   round: worth fewer independent rounds */
};

/* One run's estimate of one figure. */
struct loadci_est {
	double log;             /* the median of its rounds' logs */
	double half;            /* the half-width (log) of its interval against
				   itself; INFINITY with too few rounds */
	double sd;              /* the standard deviation of its rounds' logs;
				   INFINITY with fewer than 2 rounds */
	size_t rounds;
	enum loadci_noise noise;
	int zero;               /* a per-round figure is 0 in some round */
	size_t worth;           /* the independent rounds they count as (rounds
				   unless they move together) */
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
	double a, b;            /* the runs' medians over rounds */
	double ratio;           /* exp of the Hodges-Lehmann shift */
	double lo, hi;          /* 90% interval of the ratio (one-sided 95% bounds) */
	double mde;             /* the interval's half-width, relative (0.12 = 12%) */
	double more;            /* data factor (both runs) that would decide it;
				   INFINITY when no amount of data would */
	int floored;            /* a threshold-sized change is within the floor,
				   or the difference is */
	int one_round;          /* a run has a single valid round */
	enum loadci_noise noise;/* what dominates (the noisier run's; PHASES when
				   a run's rounds move together so that they
				   count as two thirds of themselves or fewer:
				   its interval some 20% wider or more) */
	size_t rounds_a, rounds_b; /* each run's valid rounds ... */
	size_t worth_a, worth_b;   /* ... and the independent ones they count as */
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
 * into *out: the median of its rounds' logs, its precision and what
 * dominates its noise. 0 when `s` has no round, or out of memory; a round
 * at or below 0 sets `zero`. */
int loadci_estimate(struct loadci_set *s, double pct, struct loadci_est *out);

/* k of the 1 - 2 alpha interval of a shift between m and n values: the
 * largest k with P(U <= k - 1) <= alpha under the null; 0 when even U = 0
 * is likelier than alpha (no bounded interval), or out of memory. */
size_t loadci_mw_rank(size_t m, size_t n, double alpha);

/* Whether a run with estimate `e`, compared with a like run, would show a
 * ratio of 1 to be within threshold T at LOADCI_POWER: at least
 * LOADCI_SETTLE_MIN rounds, and independent rounds (`worth`) >= 2
 * ((z(0.95) + z(power)) s / log T)^2, the rounds two like runs need for a
 * one-sided 95% bound, with s the upper LOADCI_SD_BOUND confidence bound of
 * the rounds' standard deviation rather than its estimate: a few rounds
 * that happened to agree (most of them missed a slow mode the level has)
 * understate the spread, and the run that stops on them hands the next run
 * a narrow interval; a level far from the threshold still stops at
 * LOADCI_SETTLE_MIN. */
int loadci_settled(const struct loadci_est *e, double threshold);

/* Judges B against A under `rule`. Both sets need a round with a sample and
 * A's figure must be above 0 (the caller says why otherwise); returns 0 when
 * not, or out of memory. */
int loadci_judge(struct loadci_set *a, struct loadci_set *b,
		 const struct loadci_rule *rule, struct loadci_result *out);

#endif
