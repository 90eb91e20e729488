#!/bin/sh
# slow: 48 scripted server behaviours
# Held-out conformance (issue 4 acceptance): 48 scripted server behaviours replayed on
# loopback through `needle run SUITE --base-url URL --model NAME --out DIR --timeout 5`,
# checking exit code, verdict, failure codes, content, reasoning, timings and raw/.
# First the scenarios themselves are checked with an independent SSE reader.
set -eu
. "$TESTS/lib/cli.sh"
if ! out=$(node "$TESTS/conformance/selfcheck.js"); then
	echo "$out" | grep -v '^ok'
	exit 1
fi
node "$TESTS/conformance/run.js" --needle "$NEEDLE" --jobs 8
