#!/bin/sh
# slow: pairs of noisy load runs
# Acceptance of the cutover decision (issue 21), end to end against the reference
# server with its noise model (tests/refserver/README.md "Noise": per-request jitter,
# drift, rare stalls) on the load matrix of suites/cutover.json sized down (its first
# two load cases at a quarter of their input, 24 output tokens, C1 and C8, 3 rounds of
# 6 and 16 requests after one warm-up request):
#   - A/A: four runs against the same noisy server, six pairs; --gate cutover does not
#     fail (exit 0, or 4: underpowered) in at least 5 of the 6;
#   - a candidate 25% slower (every prefill and token time) fails (exit 1);
#   - a candidate whose 7th request (round 1 at C1) is an empty 200 fails;
#   - a candidate that ran only one of the baseline's two load cases does not pass;
#   - needle diff --format json has a "load" entry per case and level with both runs'
#     throughput and TTFT.
set -eu
. "$TESTS/lib/cli.sh"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
cutover_small cutover-small 24 6 16 >"$tmp/s.json"
refserver_start --max-model-len 32768
noisy='ref-good:prefill=20000,tpot=3,batch=10,seqs=8,jitter=0.1,drift=5,drift_period=20,stall_p=0.01,stall_ms=150'
run() { # run OUT MODEL [ARG...]: one run of the small matrix
	out=$1 model=$2
	shift 2
	rc=0
	"$NEEDLE" run "$tmp/s.json" --base-url "$REF_URL" --model "$model" --tokenizer "$ds" --template deepseek-v3 \
		--out "$tmp/$out" "$@" >"$tmp/$out.out" 2>&1 || rc=$?
}
gate() { # gate A B: g = the exit status of needle diff A B --gate cutover
	g=0
	"$NEEDLE" diff "$tmp/$1" "$tmp/$2" --gate cutover >"$tmp/gate.out" 2>"$tmp/gate.err" || g=$?
}
for a in a1 a2 a3 a4; do
	run $a "$noisy"
	[ "$rc" = 0 ] || fail "baseline run $a: exit $rc: $(cat "$tmp/$a.out")"
done
run slow "$noisy,slower=25"
[ "$rc" = 0 ] || fail "the slower candidate's run: exit $rc: $(cat "$tmp/slow.out")"
run empty "$noisy,empty_at=7"
[ "$rc" = 1 ] || fail "the run with an empty 200: exit $rc, expected 1"
node "$TESTS/refserver/records.js" "$tmp/empty" \
	'recs.filter(r => r.verdict !== "pass").length === 1 && recs.some(r => r.verdict !== "pass" && r.load.round === 1 && r.load.concurrency === 1 && r.transport.failures.includes("empty_output"))' \
	'exactly one request failed, an empty 200 in round 1 at C1'
run half "$noisy" --case "$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).cases[0].id)' "$tmp/s.json")"
[ "$rc" = 0 ] || fail "the one-case run: exit $rc: $(cat "$tmp/half.out")"

gate a1 slow
[ "$g" = 1 ] || fail "a candidate 25% slower: --gate cutover exit $g, expected 1: $(cat "$tmp/gate.err")"
gate a1 empty
[ "$g" = 1 ] || fail "a candidate with an empty 200: --gate cutover exit $g, expected 1: $(cat "$tmp/gate.err")"
alarms=0
for pair in "a1 a2" "a1 a3" "a1 a4" "a2 a3" "a2 a4" "a3 a4"; do
	gate $pair
	case $g in
	0 | 4) ;;
	1) alarms=$((alarms + 1)) && echo "A/A false alarm ($pair): $(cat "$tmp/gate.err")" ;;
	*) fail "A/A ($pair): --gate cutover exit $g: $(cat "$tmp/gate.err")" ;;
	esac
done
[ "$alarms" -le 1 ] || fail "A/A: $alarms of 6 pairs failed --gate cutover (at most 1 may)"
gate a1 half
[ "$g" != 0 ] || fail "a candidate that ran one of the baseline's two load cases passed --gate cutover"
"$NEEDLE" diff "$tmp/a1" "$tmp/slow" --format json >"$tmp/diff.json" 2>/dev/null || true
node -e '
const fs = require("fs"), d = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
const cells = JSON.parse(fs.readFileSync(process.argv[2] + "/summary.json", "utf8")).load.cells;
const num = (x) => typeof x === "number" && x > 0;
const load = Array.isArray(d.load) ? d.load : [];
const missing = cells.filter(c => !load.some(e => e.case === c.case && e.concurrency === c.concurrency &&
	e.a && e.b && num(e.a.output_tps) && num(e.b.output_tps) && num(e.a.ttft_p50_ms) && num(e.b.ttft_p50_ms) &&
	num(e.a.ttft_p95_ms) && num(e.b.ttft_p95_ms)));
if (cells.length !== 4 || missing.length) {
	console.log("FAIL diff --format json: no load entry with the throughput and TTFT of both runs for " +
		JSON.stringify(missing.map(c => c.case + "/c" + c.concurrency)) + ": " + JSON.stringify(d.load));
	process.exit(1);
}' "$tmp/diff.json" "$tmp/a1"
echo "cutover acceptance: A/A $alarms of 6 pairs failed, 25% slower fails, an empty 200 fails, a missing load case does not pass, a load entry per level"
