#!/bin/sh
# Crash safety: SIGKILL 'needle run' mid-run, then --resume: every (case,
# repeat) is recorded exactly once and none is lost; the journal stays valid.
set -eu
tmp=$(mktemp -d)
pid=
npid=
cleanup() {
	[ -n "$npid" ] && kill -9 "$npid" 2>/dev/null
	[ -n "$pid" ] && kill "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

node "$TESTS/refserver/server.js" --port 0 > "$tmp/srv.out" 2> "$tmp/srv.err" &
pid=$!
i=0
until grep -q listening "$tmp/srv.out" 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 200 ] || { cat "$tmp/srv.err"; exit 1; }; sleep 0.05
done
url=$(sed -n 's/.*listening on //p' "$tmp/srv.out")

# 8 cases x 2 repeats = 16 attempts of ~0.3 s each, 2 at a time
node -e '
const cases = [];
for (let i = 0; i < 8; i++)
	cases.push({id: "c" + i, kind: "chat", max_tokens: 32,
		messages: [{role: "user", content: `Compute ${i + 2} * 7. Reply with only a JSON object {"answer": <integer>}.`}],
		expect: {json: {answer: (i + 2) * 7}}});
console.log(JSON.stringify({suite: "resume", defaults: {repeat: 2}, cases}));
' > "$tmp/suite.json"

"$NEEDLE" run "$tmp/suite.json" --base-url "$url" --model 'ref-slow:delay=300' \
	--concurrency 2 --out "$tmp/run" --timeout 20 2> "$tmp/first.err" &
npid=$!
# kill once a few records exist, well before the end
i=0
while [ "$(cat "$tmp/run/results.jsonl" 2>/dev/null | wc -l)" -lt 3 ]; do
	i=$((i + 1)); [ $i -lt 300 ] || fail "no records appeared"; sleep 0.05
done
kill -9 "$npid"
wait "$npid" 2>/dev/null || true
npid=
before=$(wc -l < "$tmp/run/results.jsonl")
[ "$before" -lt 16 ] || fail "the run finished before it was killed"

st=0
"$NEEDLE" run "$tmp/suite.json" --base-url "$url" --model 'ref-slow:delay=300' \
	--concurrency 2 --out "$tmp/run" --timeout 20 --resume 2> "$tmp/second.err" || st=$?
[ "$st" = 0 ] || { cat "$tmp/second.err"; fail "resume exit $st"; }

node -e '
const fs = require("fs");
const lines = fs.readFileSync(process.argv[1], "utf8").split("\n");
if (lines.pop() !== "") throw new Error("journal does not end with a newline");
const seen = new Map();
for (const l of lines) {
	const r = JSON.parse(l);
	const k = r.case + "#" + r.repeat;
	seen.set(k, (seen.get(k) || 0) + 1);
	if (r.verdict !== "pass") throw new Error(k + " " + r.verdict);
}
for (let i = 0; i < 8; i++) for (let rep = 1; rep <= 2; rep++) {
	const n = seen.get("c" + i + "#" + rep) || 0;
	if (n !== 1) throw new Error("c" + i + "#" + rep + " recorded " + n + " times");
}
if (seen.size !== 16) throw new Error("unexpected attempts: " + [...seen.keys()]);
' "$tmp/run/results.jsonl" || fail "journal after resume"
ls "$tmp/run/raw" | grep -c '\.sse$' | grep -qx 16 || fail "raw files"
echo "ok (killed after $before records)"
