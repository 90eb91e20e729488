#!/bin/sh
# slow: recall under a load case
# Issue 12 acceptance, recall under load: a recall case with "during": LOAD runs while
# the load case holds the server at concurrency 4.
#   ref-load-forget (loses the middle needle while other requests are in flight): the
#     recall case fails during the load, and the same case on an idle server passes;
#   ref-good: passes under the same load;
#   a load case over before the recall attempts could start: they fail as not under
#     load, and the report says so;
#   a prefix-cache probe "during" the load runs its warm steps under it: a warm hit
#     answered wrong only under concurrency (ref-busy-cache-drift) fails there, not idle;
#   bad "during" values are refused with their JSON path.
# Nothing here hangs on timing: both recall attempts start together (--concurrency 2)
# as soon as the first load request after the pre-check has ended, with 31 of the load's 32 requests (a
# warm-up round and a measured one, about 10 s at 20 ms per token) still to come;
# needle's own mark (during.under_load) says whether each started under load, and
# ref-load-forget counts the requests in flight from their arrival (a request still
# being tokenized counts), so no request's place in the server's queue decides it.
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

run() { # SUITE MODEL OUT EXPECTED-EXIT [CONCURRENCY, 2]
	rc=0
	"$NEEDLE" run "$1" --base-url "$REF_URL/v1" --model "$2" --concurrency "${5:-2}" \
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
	'recs.filter(r => r.kind === "recall").every(r => r.during && r.during.load_case === "hold" && r.during.under_load === true && !r.grade.reasons.some(x => x.startsWith("not under load")))' \
	'the recall attempts started while the load was running'

run "$tmp/idle.json" ref-load-forget idle 0 1 # one at a time: nothing else in flight
node "$TESTS/refserver/records.js" "$tmp/idle" \
	'recs.filter(r => r.kind === "recall").length === 2 && recs.filter(r => r.kind === "recall").every(r => r.verdict === "pass")' \
	'ref-load-forget: the same recall case passes on an idle server'

run "$tmp/during.json" ref-good good 0
node "$TESTS/refserver/records.js" "$tmp/good" \
	'recs.filter(r => r.kind === "recall").length === 2 && recs.filter(r => r.kind === "recall").every(r => r.verdict === "pass" && r.during.under_load === true)' \
	'ref-good: the recall case passes under load'

# --warmup's uncounted request is the load case's, yet the load case has not begun:
# its "during" cases still wait for the load to be under way.
rc=0
"$NEEDLE" run "$tmp/during.json" --base-url "$REF_URL/v1" --model ref-good --concurrency 2 --warmup 1 \
	--tokenizer "$ds" --template deepseek-v3 --out "$tmp/warm" >"$tmp/warm.out" 2>&1 || rc=$?
[ "$rc" = 0 ] || { echo "ref-good warm: exit $rc, expected 0"; cat "$tmp/warm.out"; exit 1; }
node "$TESTS/refserver/records.js" "$tmp/warm" \
	'recs.filter(r => r.kind === "recall").length === 2 && recs.filter(r => r.kind === "recall").every(r => r.verdict === "pass" && r.during.under_load === true)' \
	'--warmup: the recall case still runs under load'

# One load request: when it has ended, the load is over, so the recall attempts (which
# wait for the first one after the pre-check to end) are never under load, and fail as such.
node -e 'const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); Object.assign(s.cases[0].load, { concurrency: [1], requests: [1], rounds: 1, warmup: 0 }); process.stdout.write(JSON.stringify(s));' \
	"$tmp/during.json" >"$tmp/short.json"
run "$tmp/short.json" ref-good short 1
node "$TESTS/refserver/records.js" "$tmp/short" \
	'recs.filter(r => r.kind === "recall").length === 2 && recs.filter(r => r.kind === "recall").every(r => r.verdict === "fail" && r.during.under_load === false && r.grade.needles.every(n => n.ok) && r.grade.reasons.includes("not under load: load case \x27hold\x27 had ended when this attempt started"))' \
	'recall attempts after the load: failed as not under load (their answers were right)'
"$NEEDLE" report "$tmp/short" >"$tmp/short.md" || true
grep -qF "grade: not under load (2 attempts, 1 case)" "$tmp/short.md" || { echo "the report does not count 'not under load'"; cat "$tmp/short.md"; exit 1; }

# The prefix-cache probe under load: its warm steps wait for its own cold step, not
# for the load, so all three run while the load holds the server; ref-busy-cache-drift
# (a warm hit answered wrong only while others are in flight) fails the warm steps
# there and passes idle.
node -e 'const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
s.cases[1] = { id: "cache-under-load", kind: "recall", during: "hold", recall: { tokens: 3000, depths: [50], cache: true } };
process.stdout.write(JSON.stringify(s));' "$tmp/during.json" >"$tmp/cache.json"
node -e 'const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); s.cases = s.cases.filter((c) => c.kind !== "load"); delete s.cases[0].during; process.stdout.write(JSON.stringify(s));' \
	"$tmp/cache.json" >"$tmp/cache-idle.json"
run "$tmp/cache.json" ref-good cache-good 0
node "$TESTS/refserver/records.js" "$tmp/cache-good" \
	'recs.filter(r => r.kind === "recall").map(r => r.probe.step + ":" + r.verdict + ":" + r.during.under_load).join() === "cold:pass:true,warm:pass:true,warm-reordered:pass:true"' \
	'ref-good: cold, warm and warm-reordered all under load, all pass'
run "$tmp/cache.json" ref-busy-cache-drift cache-drift 1
node "$TESTS/refserver/records.js" "$tmp/cache-drift" \
	'recs.filter(r => r.kind === "recall").map(r => r.probe.step + ":" + r.verdict).join() === "cold:pass,warm:fail,warm-reordered:fail" && recs.filter(r => r.kind === "recall" && r.verdict === "fail").every(r => r.during.under_load && r.grade.needles.some(n => !n.ok))' \
	'ref-busy-cache-drift: the warm steps fail under load'
run "$tmp/cache-idle.json" ref-busy-cache-drift cache-idle 0 1
node "$TESTS/refserver/records.js" "$tmp/cache-idle" \
	'recs.length === 3 && recs.every(r => r.verdict === "pass")' 'ref-busy-cache-drift: the same probe passes idle'

sed 's/"during": "hold"/"during": "nope"/' "$tmp/during.json" >"$tmp/bad.json"
rc=0
"$NEEDLE" run "$tmp/bad.json" --base-url "$REF_URL/v1" --model ref-good --tokenizer "$ds" \
	--template deepseek-v3 --out "$tmp/bad" >"$tmp/bad.out" 2>&1 || rc=$?
[ "$rc" = 2 ] || { echo "bad during: exit $rc, expected 2"; cat "$tmp/bad.out"; exit 1; }
grep -q "cases\[1\].during: 'nope' is not a load case of this suite" "$tmp/bad.out" ||
	{ echo "bad during: wrong message"; cat "$tmp/bad.out"; exit 1; }
echo "during: recall under load fails on ref-load-forget and passes idle"
