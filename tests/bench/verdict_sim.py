"""The load verdict's interval, chosen by simulation: per-round log figures of
two runs (clean noise of sd 0.03 a round; a slow phase that catches a share of
the rounds and makes them a given percentage slower), judged against a 10%
throughput threshold by Welch's t on the rounds' mean, Yuen's 20%-trimmed t,
and the Hodges-Lehmann shift with the exact Mann-Whitney interval (the one
needle uses, harness/load/loadci.h). Prints pass / underpowered / fail counts
per method for the same server twice and for candidates 15% and 25% slower.
Then the same noise through the whole decision: runs of 12 cells, each cell
sizing itself by needle's earlier stop rule and by its rule now, the decision
passing when every cell passes and failing when one fails. Last, slow phases
that last several rounds (a cell's rounds in the order they ran share the
phase) or longer than a run, judged with each run's rounds counted as they
are and as the independent rounds they are worth (needle's, loadci.c), the
stop rule reading the rounds' standard deviation as estimated or its upper
80% confidence bound (needle's). Then that bound against TTFT P95's
threshold: a steady server, and slow rounds that are nearly half a level's.

    python3 tests/bench/verdict_sim.py [TRIALS] [PHASE_SHARE] [PHASE_PCT]
"""
import math
import sys
from functools import lru_cache
from math import comb
from statistics import NormalDist

import numpy as np

TRIALS = int(sys.argv[1]) if len(sys.argv) > 1 else 400
SHARE = float(sys.argv[2]) if len(sys.argv) > 2 else 0.25
PHASE = float(sys.argv[3]) / 100 if len(sys.argv) > 3 else 0.30
T = 0.9  # output throughput may fall 10%
rng = np.random.default_rng(1)


@lru_cache(None)
def count(m, n, u):
    """How many arrangements of m and n values give Mann-Whitney U = u."""
    if u < 0:
        return 0
    if m == 0 or n == 0:
        return 1 if u == 0 else 0
    return count(m - 1, n, u - n) + count(m, n - 1, u)


@lru_cache(None)
def mw_rank(m, n, alpha=0.05):
    total, cum, k = comb(m + n, m), 0, 0
    for u in range(m * n + 1):
        cum += count(m, n, u)
        if cum / total > alpha:
            break
        k = u + 1
    return k


def t95(df):
    # Student's t by Cornish-Fisher from the normal quantile (enough here)
    z = NormalDist().inv_cdf(0.95)
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df * df)


def welch(a, b):
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1)) if va + vb > 0 else 1
    d = b.mean() - a.mean()
    return d - t95(df) * se, d + t95(df) * se


def yuen(a, b, g=0.2):
    def trimmed(x):
        x = np.sort(x)
        n = len(x)
        k = int(g * n)
        w = x.copy()
        w[:k], w[n - k:] = x[k], x[n - k - 1]
        h = n - 2 * k
        return x[k:n - k].mean(), (n - 1) * w.var(ddof=1) / (h * (h - 1)), h - 1
    ta, da, ha = trimmed(a)
    tb, db, hb = trimmed(b)
    se = math.sqrt(da + db)
    df = (da + db) ** 2 / (da**2 / ha + db**2 / hb) if da + db > 0 else 1
    return tb - ta - t95(df) * se, tb - ta + t95(df) * se


def hodges_lehmann(a, b):
    d = np.sort((b[None, :] - a[:, None]).ravel())
    k = mw_rank(len(a), len(b))
    return (d[k - 1], d[-k]) if k else (-math.inf, math.inf)


def run(rounds, slower):
    slow = np.where(rng.random(rounds) < SHARE, -math.log(1 + PHASE), 0.0)
    return 0.03 * rng.standard_normal(rounds) + slow - math.log(slower)


def sized_run(cells, slower, settled, most):
    """One run of `cells` cells, each sized from 3 rounds: a round more until
    `settled` says the cell is, or `most` rounds."""
    out = []
    for _ in range(cells):
        y = run(3, slower)
        while len(y) < most and not settled(y):
            y = np.append(y, run(1, slower))
        out.append(y)
    return out


def by_rank(y, z=NormalDist().inv_cdf(0.90)):
    """needle's earlier rule: the rank interval of the run against itself,
    widened for 90% power, fits the threshold."""
    lo, hi = hodges_lehmann(y, y)
    return (hi - lo) / 2 * (1 + z / 1.6448536269514722) <= -math.log(T)


def by_sd(y, z=NormalDist().inv_cdf(0.99)):
    """needle's rule before rounds that move together counted as fewer and
    the bound on the spread: 10 rounds or more, and as many as two like runs
    need at 99% power by the rounds' standard deviation."""
    k = (1.6448536269514722 + z) * y.std(ddof=1) / math.log(T)
    return len(y) >= 10 and len(y) >= 2 * k * k


def worth(y, bias=False):
    """The independent rounds that y's rounds (in the order they ran) count
    as: n (1 - r) / (1 + r), r their lag-1 autocorrelation less 1.645 /
    sqrt(n), at least 3; n when r is not above 0 (needle's, loadci.c).
    With `bias`, r is instead the autocorrelation corrected for its small-
    sample bias, r + (1 + 4 r) / n, when it is beyond chance: a stronger
    correction, weighed below."""
    n = len(y)
    if n < 3:
        return n
    d = y - y.mean()
    v = float(d @ d)
    r = float(d[:-1] @ d[1:]) / v if v > 0 else 0
    chance = 1.6448536269514722 / math.sqrt(n)
    if r <= chance:
        return n
    r = min(0.95, r + (1 + 4 * r) / n) if bias else r - chance
    return max(3, math.floor(n * (1 - r) / (1 + r) + 0.5))


def hodges_lehmann_worth(a, b, bias=False):
    """The interval with each run's rounds counted as what they are worth: the
    rank for those sizes moved to the same quantile of all m x n differences."""
    m, n, me, ne = len(a), len(b), worth(a, bias), worth(b, bias)
    d = np.sort((b[None, :] - a[:, None]).ravel())
    k = mw_rank(me, ne)
    if k and (me < m or ne < n):
        k = max(1, math.floor(k * m * n / (me * ne)))
    return (d[k - 1], d[-k]) if k else (-math.inf, math.inf)


def by_sd_worth(y, bias=False, least=10, z=NormalDist().inv_cdf(0.99)):
    """by_sd on the independent rounds the rounds are worth (needle's before
    the bound on the spread);
    `least` rounds at least (a case's "rounds" above 10 raises it)."""
    k = (1.6448536269514722 + z) * y.std(ddof=1) / math.log(T)
    return len(y) >= least and worth(y, bias) >= 2 * k * k


def chi2_low(p, df):
    """The p quantile of chi-square with df degrees of freedom (Wilson and
    Hilferty's approximation, as needle's loadci.c)."""
    c = 2 / (9 * df)
    return df * (1 - c + NormalDist().inv_cdf(p) * math.sqrt(c)) ** 3


def by_sd_bound(y, level=0.80, z=NormalDist().inv_cdf(0.99)):
    """by_sd_worth with the rounds' sd bounded above at `level` confidence
    from the independent rounds less one degrees of freedom (needle's now,
    harness/load/loadci.c)."""
    w = worth(y)
    df = max(1, w - 1)
    k = (1.6448536269514722 + z) * y.std(ddof=1) * math.sqrt(df / chi2_low(1 - level, df)) / math.log(T)
    return len(y) >= 10 and w >= 2 * k * k


def phased(blocks, length):
    """The machine's state in each block of a run (round k of every cell
    runs in block k): slow phases that hold SHARE of the blocks and last
    `length` blocks on average (a two-state chain; a length past the run's
    blocks holds a whole run), as the log figure they add."""
    leave = 1 / length
    enter = SHARE / (1 - SHARE) * leave if SHARE < 1 else 1
    slow = rng.random() < SHARE
    y = np.empty(blocks)
    for i in range(blocks):
        y[i] = -math.log(1 + PHASE) if slow else 0.0
        slow = rng.random() >= leave if slow else rng.random() < enter
    return y


def decision(a, b, interval=hodges_lehmann):
    """The cutover decision over cells: fail when a cell's interval is wholly
    beyond the threshold, pass when every cell's is wholly within."""
    v = []
    for ya, yb in zip(a, b):
        lo, hi = interval(ya, yb)
        v.append(0 if lo > math.log(T) else 2 if hi < math.log(T) else 1)
    return 2 if 2 in v else 1 if 1 in v else 0


def family(trials, cells=12):
    print(f"\n{trials} pairs a row, {cells} cells a run, each sized from 3 rounds; "
          "the decision passes when every cell passes, fails when one fails")
    for name, settled, most in (("rank half-width, power 0.90, at most 10 rounds", by_rank, 10),
                                ("rounds' sd, power 0.99, 10 to 30 rounds", by_sd, 30)):
        for slower in (1.0, 1.15, 1.25):
            c, rounds = [0, 0, 0], 0
            for _ in range(trials):
                a, b = sized_run(cells, 1.0, settled, most), sized_run(cells, slower, settled, most)
                c[decision(a, b)] += 1
                rounds += sum(map(len, a + b)) / (2 * cells)
            print(f"{name}, {'same server' if slower == 1 else f'{slower - 1:.0%} slower':11s}: "
                  f"P{c[0]:4d} U{c[1]:4d} F{c[2]:4d}, mean {rounds / trials:4.1f} rounds a cell")


methods = (("welch", welch), ("yuen", yuen), ("hodges-lehmann", hodges_lehmann))
print(f"{TRIALS} trials a row; slow phases: {SHARE:.0%} of the rounds, {PHASE:.0%} slower; "
      "threshold: throughput -10%; P pass, U underpowered, F fail")
for rounds in (5, 10, 20):
    for slower in (1.0, 1.15, 1.25):
        out = {name: [0, 0, 0] for name, _ in methods}
        for _ in range(TRIALS):
            a, b = run(rounds, 1.0), run(rounds, slower)
            for name, f in methods:
                lo, hi = f(a, b)
                out[name][0 if lo > math.log(T) else 2 if hi < math.log(T) else 1] += 1
        print(f"rounds {rounds:2d}, {'same server' if slower == 1 else f'{slower - 1:.0%} slower':11s}: " +
              "  ".join(f"{n} P{p:4d} U{u:4d} F{f_:4d}" for n, (p, u, f_) in out.items()))
family(max(20, TRIALS // 4))


def phases(trials, cells=12, most=30, lengths=(1, 4, 8, 16, 1000), rules=None):
    print(f"\n{trials} pairs a row, {cells} cells a run sized from 3 rounds up to {most}, in blocks "
          f"(round k of every cell in block k); slow phases of the machine holding {SHARE:.0%} of the "
          f"blocks, {PHASE:.0%} slower, lasting the blocks shown on average; threshold {T:.4g}")
    rules = rules or (
             ("rounds as they are", by_sd, hodges_lehmann),
             ("independent rounds, sd as estimated", by_sd_worth, hodges_lehmann_worth),
             ("independent rounds, sd's 80% bound (needle's)", by_sd_bound, hodges_lehmann_worth),
             ("independent rounds, r bias-corrected", lambda y: by_sd_worth(y, True),
              lambda a, b: hodges_lehmann_worth(a, b, True)),
             ("sd as estimated, the first 15 rounds fixed", lambda y: by_sd_worth(y, least=15),
              hodges_lehmann_worth),
             ("sd as estimated, the first 20 rounds fixed", lambda y: by_sd_worth(y, least=20),
              hodges_lehmann_worth),
             ("needle's interval, always 30 rounds", lambda y: False, hodges_lehmann_worth))
    for length in lengths:
        for name, settled, interval in rules:
            out = []
            for slower in (1.0, 1.15, 1.25):
                c, rounds = [0, 0, 0], 0
                for _ in range(trials):
                    runs = []
                    for s_ in (1.0, slower):
                        state = phased(most, length)
                        run_ = []
                        for _ in range(cells):
                            y = state + 0.03 * rng.standard_normal(most) - math.log(s_)
                            n = 3
                            while n < most and not settled(y[:n]):
                                n += 1
                            run_.append(y[:n])
                        runs.append(run_)
                    c[decision(runs[0], runs[1], interval)] += 1
                    rounds += sum(map(len, runs[0] + runs[1])) / (2 * cells)
                out.append(f"P{c[0]:4d} U{c[1]:4d} F{c[2]:4d} ({rounds / trials:4.1f} rounds)")
            print(f"phases of {str(length) if length < most else 'more than a run':>15s}, {name:46s}: "
                  f"same server {out[0]}; 15% slower {out[1]}; 25% slower {out[2]}")


phases(max(20, TRIALS // 4))

# The spread bounded above, against TTFT P95's threshold (+15%): a steady
# server (no slow rounds), and slow rounds that are nearly half of a level's
# (a P95 that meets a stall mode or a slow phase in about half its rounds),
# 14%, 20% and 26% slower, each round's state its own (phases of one block)
# or lasting four blocks on average.
T = 1 / 1.15
for SHARE, PHASE in ((0.0, 0.0), (0.45, 0.14), (0.45, 0.20), (0.45, 0.26)):
    phases(TRIALS, lengths=(1, 4) if SHARE else (1,),
           rules=(("independent rounds, sd as estimated", by_sd_worth, hodges_lehmann_worth),
                  ("sd as estimated, the first 15 rounds fixed", lambda y: by_sd_worth(y, least=15),
                   hodges_lehmann_worth),
                  ("independent rounds, sd's 80% bound (needle's)", by_sd_bound,
                   hodges_lehmann_worth)))
