#!/bin/sh
# slow: every code point against the oracle
# The HF Unicode layer (harness/tok/uni.c) against the oracle, `tokenizers` 0.23.2:
# every character class code point by code point (as the rewritten patterns
# match under PCRE2, and the rust_* predicates), the real tokenizers' Split
# patterns on a 3,000-string fuzz corpus, Oniguruma syntax in 33 patterns and
# 300 random ones, and NFC of every scalar value and of 20,000 combining
# sequences. See tests/uni/check.js.
set -eu
. "$TESTS/lib/cli.sh"
bin="$BUILD/tests/test_uni"
check="$TESTS/uni/check.js"

"$bin" classes > "$tmp/classes"
# the oracle probes dominate: two processes share them
node "$check" classes "$tmp/classes" 0/2 > "$tmp/a" 2>&1 & a=$!
node "$check" classes "$tmp/classes" 1/2 > "$tmp/b" 2>&1 & b=$!
status=0
node "$check" split "$bin" || status=1
node "$check" fuzz "$bin" || status=1
node "$check" nfc "$bin" || status=1
wait $a || status=1
wait $b || status=1
cat "$tmp/a" "$tmp/b"
exit $status
