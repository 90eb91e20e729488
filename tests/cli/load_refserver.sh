#!/bin/sh
# The reference server's timing model and /metrics (no needle involved): analytic
# TTFT/TPOT, queueing behind max_num_seqs, exact completion_tokens, one empty 200 in N,
# the noise model (seeded draws, a regression, a stall), both metrics dialects, a
# booting server's 503.
set -eu
. "$TESTS/lib/cli.sh"
node "$TESTS/refserver/timing_test.js"
