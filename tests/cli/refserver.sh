#!/bin/sh
# The reference server's own protocol checks (no needle involved): prompt counts equal
# an independent render + count, the context boundary, chunk order in both dialects,
# error shapes, the API key, and the needle-reading model on a multi-MB prompt.
set -eu
. "$TESTS/lib/cli.sh"
node "$TESTS/refserver/selftest.js"
