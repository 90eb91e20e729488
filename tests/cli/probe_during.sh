#!/bin/sh
# Issue 12 acceptance, recall under load: a recall case with "during": LOAD runs while
# the load case holds the server at concurrency 4.
#   ref-load-forget (loses the middle needle while other requests are in flight): the
#     recall case fails during the load, and the same case on an idle server passes;
#   ref-good: passes under the same load;
#   bad "during" values are refused with their JSON path.
set -eu
. "$TESTS/lib/cli.sh"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
refserver_start --tpot 20

cat >"$tmp/during.json" <<'JSON'
{"suite": "during", "defaults": {"temperature": 0, "max_tokens": 256},
 "cases": [
  {"id": "hold", "kind": "load", "load": {"input_tokens": 256, "output_tokens": 64,
   "endpoint": "completions", "concurrency": [4], "requests": [16], "rounds": 1, "seed": 1}},
  {"id": "recall-under-load", "kind": "recall", "during": "hold",
   "recall": {"tokens": 4096, "depths": [10, 50, 90], "needles": 3, "seeds": [1, 2]}}]}
JSON
# The same recall case alone: no load case at all (the server idle).
node -e 'const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); s.cases = s.cases.filter((c) => c.kind !== "load"); delete s.cases[0].during; process.stdout.write(JSON.stringify(s));' \
	"$tmp/during.json" >"$tmp/idle.json"

run() { # SUITE MODEL OUT EXPECTED-EXIT
	rc=0
	"$NEEDLE" run "$1" --base-url "$REF_URL/v1" --model "$2" \
		--tokenizer "$ds" --template deepseek-v3 --out "$tmp/$3" >"$tmp/$3.out" 2>&1 || rc=$?
	[ "$rc" = "$4" ] || { echo "$2 $3: exit $rc, expected $4"; cat "$tmp/$3.out"; exit 1; }
}

run "$tmp/during.json" ref-load-forget forget 1
node "$TESTS/refserver/records.js" "$tmp/forget" \
	'recs.filter(r => r.load && !r.load.warmup && !r.load.precheck).length === 16 && recs.filter(r => r.load).every(r => r.verdict === "pass")' \
	'the load case ran its 16 requests'
node "$TESTS/refserver/records.js" "$tmp/forget" \
	'recs.filter(r => r.kind === "recall").length === 2 && recs.filter(r => r.kind === "recall").every(r => r.verdict === "fail" && r.grade.needles.some(n => !n.ok))' \
	'ref-load-forget: the recall case fails during the load'
node "$TESTS/refserver/records.js" "$tmp/forget" \
	'(() => { const rc = recs.filter(r => r.kind === "recall"); const ld = recs.filter(r => r.load); const end = Math.max(...ld.map(r => Date.parse(r.started_at))); return rc.every(r => Date.parse(r.started_at) <= end); })()' \
	'the recall attempts started while the load was running'

run "$tmp/idle.json" ref-load-forget idle 0
node "$TESTS/refserver/records.js" "$tmp/idle" \
	'recs.filter(r => r.kind === "recall").length === 2 && recs.filter(r => r.kind === "recall").every(r => r.verdict === "pass")' \
	'ref-load-forget: the same recall case passes on an idle server'

run "$tmp/during.json" ref-good good 0

sed 's/"during": "hold"/"during": "nope"/' "$tmp/during.json" >"$tmp/bad.json"
rc=0
"$NEEDLE" run "$tmp/bad.json" --base-url "$REF_URL/v1" --model ref-good --tokenizer "$ds" \
	--template deepseek-v3 --out "$tmp/bad" >"$tmp/bad.out" 2>&1 || rc=$?
[ "$rc" = 2 ] || { echo "bad during: exit $rc, expected 2"; cat "$tmp/bad.out"; exit 1; }
grep -q "cases\[1\].during: 'nope' is not a load case of this suite" "$tmp/bad.out" ||
	{ echo "bad during: wrong message"; cat "$tmp/bad.out"; exit 1; }
echo "during: recall under load fails on ref-load-forget and passes idle"
