#!/bin/sh
# slow: runs killed and resumed
# Crash safety (issue 4 acceptance): SIGKILL `needle run` mid-run against a slow
# reference server, then rerun with --resume. Every (case, repeat) of the suite
# (repeats from the suite's defaults) must be recorded exactly once, none lost and
# none extra, all passing; the records written before the kill are kept byte for
# byte; a torn last line (left as a crash would) is discarded; the journal ends
# with a newline; finished attempts are not sent again; raw/ holds one .sse per
# attempt.
set -eu
. "$TESTS/lib/cli.sh"
export REF_LOG="$tmp/server.log"
refserver_start --log "$REF_LOG"

# 4 cases x 3 repeats = 12 attempts, each taking 400 ms at the server, 2 at a time.
node -e '
const cases = [[19, 23], [7, 6], [12, 12], [101, 3]].map(([a, b], i) => ({
	id: "mul" + i, kind: "chat", max_tokens: 64,
	messages: [{ role: "user", content: `Compute ${a} * ${b}. Reply with only a JSON object {"answer": <integer>}.` }],
	expect: { json: { answer: a * b } } }));
process.stdout.write(JSON.stringify({ suite: "resume", defaults: { repeat: 3 }, cases }));' >"$tmp/suite.json"
cases=4 repeats=3
total=$((cases * repeats))
res=$tmp/run/results.jsonl
run="$NEEDLE run $tmp/suite.json --base-url $REF_URL/v1 --model ref-slow:delay=400 --concurrency 2 --timeout 20 --out $tmp/run"

$run >"$tmp/first.out" 2>&1 &
npid=$!
track "$npid"
# Kill once at least 3 attempts are recorded (well before the 12th).
i=0
while [ "$(cat "$res" 2>/dev/null | wc -l)" -lt 3 ]; do
	i=$((i + 1))
	[ $i -lt 300 ] || fail "no records appeared: $(cat "$tmp/first.out")"
	sleep 0.05
done
kill -9 "$npid"
wait "$npid" 2>/dev/null || true
before=$(wc -l <"$res" | tr -d " ")
# The server logs a request when it ends: let those the kill cut short end
# (the first token comes after 400 ms), then count what the first run sent.
sent() { grep -c '"path":"/v1/chat/completions"' "$REF_LOG" || true; }
first=-1
i=0
while [ "$(sent)" != "$first" ]; do
	first=$(sent)
	i=$((i + 1))
	[ $i -lt 20 ] || fail "the server log never settled"
	sleep 1
done
[ "$before" -ge 3 ] && [ "$before" -lt $total ] || fail "killed with $before of $total records: not mid-run"
# Keep the complete lines; then leave a torn line as a crash mid-write would.
head -n "$before" "$res" >"$tmp/kept"
if [ -z "$(tail -c 1 "$res")" ]; then printf '{"case":"mul3","kind":"chat","repeat":2,"verd' >>"$res"; fi

rc=0
$run --resume >"$tmp/second.out" 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "resume: exit $rc, expected 0: $(cat "$tmp/second.out")"
head -n "$before" "$res" | cmp -s - "$tmp/kept" || fail "records written before the kill were changed"
# records.js refuses a journal without its final newline or with a line that is not JSON.
node "$TESTS/refserver/records.js" "$tmp/run" \
	"JSON.stringify(recs.map(r => r.case + '#' + r.repeat).sort()) === JSON.stringify(Array.from({ length: $total },
		(_, k) => 'mul' + Math.floor(k / $repeats) + '#' + (k % $repeats + 1)).sort())" \
	"every (case, repeat) exactly once, $total in all"
node "$TESTS/refserver/records.js" "$tmp/run" 'recs.every(r => r.verdict === "pass")' 'all pass'
# Finished attempts are not sent again: the resume sends exactly the ones
# without a record (those the kill cut short, and those answered whose
# records were not yet durable: reported done only once on disk).
second=$(($(sent) - first))
[ "$second" = $((total - before)) ] ||
	fail "resume sent $second requests for the $((total - before)) attempts without a record"
[ "$(ls "$tmp/run/raw" | grep -c '\.sse$')" = $total ] || fail "raw/: not one .sse per attempt: $(ls "$tmp/run/raw")"
echo "killed after $before of $total records; resume completed the rest exactly once"
