#!/bin/sh
# Held-out conformance (issue 4 acceptance): 48 scripted server behaviours replayed on
# loopback through `needle run SUITE --base-url URL --model NAME --out DIR --timeout 5`,
# checking exit code, verdict, failure codes, content, reasoning, timings and raw/.
# First the scenarios themselves are checked with an independent SSE reader.
set -eu
here=${TESTS:-$(cd "$(dirname "$0")/.." && pwd)}
needle=${NEEDLE:-$here/../build/needle}
if ! out=$(node "$here/conformance/selfcheck.js"); then
	echo "$out" | grep -v '^ok'
	exit 1
fi
exec node "$here/conformance/run.js" --needle "$needle" --jobs 8
