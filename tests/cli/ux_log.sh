#!/bin/sh
# Off a terminal (stderr a file, as in CI) `needle run` writes its progress as
# whole lines at a slow pace (NEEDLE_PROGRESS_SECONDS, default 30 s): a slow
# run logs several "needle run: D/N  pass P  fail F ..." lines, none with a
# carriage return or an escape sequence, then the summary line; a run shorter
# than the interval logs none.
set -eu
. "$TESTS/lib/cli.sh"
refserver_start
cat > "$tmp/slow.json" <<'JSON'
{"suite": "slow", "defaults": {"max_tokens": 16, "temperature": 0}, "cases": [
 {"id": "slow", "messages": [{"role": "user", "content": "Say OK."}], "repeat": 4}]}
JSON
NEEDLE_PROGRESS_SECONDS=0.3 "$NEEDLE" run "$tmp/slow.json" --base-url "$REF_URL/v1" --model ref-slow \
	--out "$tmp/run" > "$tmp/out" 2> "$tmp/log" || fail "run: $(cat "$tmp/log")"
n=$(grep -c '^needle run: [0-9]*/4  pass [0-9]*  fail [0-9]*  elapsed ' "$tmp/log" || true)
[ "$n" -ge 2 ] || fail "$n progress lines in the log: $(cat "$tmp/log")"
! grep -q "$(printf '\r')" "$tmp/log" || fail "a carriage return in the log"
! grep -q "$(printf '\033')" "$tmp/log" || fail "an escape sequence in the log"
tail -1 "$tmp/log" | grep -q '^needle run: 4 attempts, 4 passed' || fail "the summary is not last: $(tail -1 "$tmp/log")"
"$NEEDLE" run "$tmp/slow.json" --base-url "$REF_URL/v1" --model ref-good --out "$tmp/fast" \
	> "$tmp/out" 2> "$tmp/log2" || fail "run: $(cat "$tmp/log2")"
! grep -q '  pass [0-9]*  fail' "$tmp/log2" || fail "a short run logged progress: $(cat "$tmp/log2")"
echo "ux_log: off a terminal, $n whole progress lines at the set pace; none in a short run"
