"""The load verdict's interval, chosen by simulation: per-round log figures of
two runs (clean noise of sd 0.03 a round; a slow phase that catches a share of
the rounds and makes them a given percentage slower), judged against a 10%
throughput threshold by Welch's t on the rounds' mean, Yuen's 20%-trimmed t,
and the Hodges-Lehmann shift with the exact Mann-Whitney interval (the one
needle uses, harness/load/loadci.h). Prints pass / underpowered / fail counts
per method for the same server twice and for candidates 15% and 25% slower.
Then the same noise through the whole decision: runs of 12 cells, each cell
sizing itself by needle's earlier stop rule and by its rule now, the decision
passing when every cell passes and failing when one fails.

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
    """needle's rule (harness/load/loadci.h): 10 rounds or more, and as many
    as two like runs need at 99% power by the rounds' standard deviation."""
    k = (1.6448536269514722 + z) * y.std(ddof=1) / math.log(T)
    return len(y) >= 10 and len(y) >= 2 * k * k


def decision(a, b):
    """The cutover decision over cells: fail when a cell's interval is wholly
    beyond the threshold, pass when every cell's is wholly within."""
    v = []
    for ya, yb in zip(a, b):
        lo, hi = hodges_lehmann(ya, yb)
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
