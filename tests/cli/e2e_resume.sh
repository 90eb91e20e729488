#!/bin/sh
# Crash safety (issue 4 acceptance): SIGKILL `needle run` mid-run against a slow
# reference server, then rerun with --resume. Every (case, repeat) must be recorded
# exactly once, none lost; the records written before the kill are kept byte for byte;
# a torn last line (left as a crash would) is discarded; finished attempts are not sent
# again.
set -eu
. "$TESTS/refserver/lib.sh"
tmp=$(mktemp -d)
trap 'refserver_stop; [ -n "${npid:-}" ] && kill -9 "$npid" 2>/dev/null; rm -rf "$tmp"' EXIT
export REF_LOG="$tmp/server.log"
refserver_start --log "$REF_LOG"

# 4 cases x 3 repeats = 12 attempts, each taking 400 ms at the server.
node -e '
const cases = [[19, 23], [7, 6], [12, 12], [101, 3]].map(([a, b], i) => ({
	id: "mul" + i, kind: "chat", repeat: 3, max_tokens: 64,
	messages: [{ role: "user", content: `Compute ${a} * ${b}. Reply with only a JSON object {"answer": <integer>}.` }],
	expect: { json: { answer: a * b } } }));
process.stdout.write(JSON.stringify({ suite: "resume", cases }));' >"$tmp/suite.json"
total=12

"$NEEDLE" run "$tmp/suite.json" --base-url "$REF_URL/v1" --model "ref-slow:delay=400" \
	--concurrency 2 --out "$tmp/run" >"$tmp/first.out" 2>&1 &
npid=$!
# Kill once at least 3 attempts are recorded (well before the 12th).
i=0
while [ $i -lt 200 ]; do
	n=$(cat "$tmp"/run/results.jsonl "$tmp"/run/*/results.jsonl 2>/dev/null | grep -c . || true)
	[ "$n" -ge 3 ] && break
	sleep 0.05
	i=$((i + 1))
done
kill -9 "$npid"
wait "$npid" 2>/dev/null || true
npid=
res=$(find "$tmp/run" -name results.jsonl | head -n 1)
[ -n "$res" ] || { echo "no results.jsonl after the kill"; cat "$tmp/first.out"; exit 1; }
before=$(wc -l <"$res" | tr -d " ")
[ "$before" -ge 3 ] && [ "$before" -lt $total ] || { echo "killed with $before of $total records: not mid-run"; exit 1; }
# Keep the complete lines; then leave a torn line as a crash mid-write would.
head -n "$before" "$res" >"$tmp/kept"
if [ -n "$(tail -c 1 "$res")" ]; then :; else printf '{"case":"mul3","kind":"chat","repeat":2,"verd' >>"$res"; fi

rc=0
"$NEEDLE" run "$tmp/suite.json" --base-url "$REF_URL/v1" --model "ref-slow:delay=400" \
	--concurrency 2 --out "$tmp/run" --resume >"$tmp/second.out" 2>&1 || rc=$?
[ "$rc" = 0 ] || { echo "resume: exit $rc, expected 0"; cat "$tmp/second.out"; exit 1; }
head -n "$before" "$res" | cmp -s - "$tmp/kept" || { echo "records written before the kill were changed"; exit 1; }
node "$TESTS/refserver/records.js" "$tmp/run" \
	"recs.length === $total && new Set(recs.map(r => r.case + '#' + r.repeat)).size === $total" \
	"every (case, repeat) exactly once, $total in all"
node "$TESTS/refserver/records.js" "$tmp/run" 'recs.every(r => r.verdict === "pass")' 'all pass'
# Finished attempts are not sent again: at most the ones in flight at the kill (2) are repeated.
node "$TESTS/refserver/records.js" "$tmp/run" \
	"log.filter(l => l.path === '/v1/chat/completions').length <= $total + 2" 'resume re-sent finished attempts'
echo "killed after $before of $total records; resume completed the rest exactly once"
