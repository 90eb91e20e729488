#!/bin/sh
# slow: load runs of the reference server's timing model
# needle diff on load runs of the reference server: every load cell of both
# runs side by side in Markdown and JSON (a/b with _min/_max, ratios, gates,
# verdict); the cutover gate on the same server twice raises no failure, on a
# candidate 25% slower (TTFT and tokens) fails (exit 1); one round cannot
# vouch for a threshold (underpowered, exit 4); a candidate that ran one of
# two load cases (or 3 of smoke's attempts) fails every gate unless --case
# narrows both runs or --allow-missing; a rate level where no request met its
# SLO fails the cutover.
set -eu
. "$TESTS/lib/cli.sh"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
refserver_start --max-model-len 32768
run() { # run OUT MODEL SUITE [ARG...]
	out=$1 model=$2 suite=$3
	shift 3
	rc=0
	"$NEEDLE" run "$suite" --base-url "$REF_URL" --model "$model" --tokenizer "$ds" \
		--template deepseek-v3 --out "$tmp/$out" "$@" >"$tmp/$out.out" 2>&1 || rc=$?
	[ "$rc" = 0 ] || { echo "run $out: exit $rc"; cat "$tmp/$out.out"; exit 1; }
}
cat >"$tmp/two.json" <<'JSON'
{"suite": "two", "cases": [
 {"id": "p", "kind": "load", "temperature": 0, "load": {"input_tokens": 2000, "output_tokens": 16,
  "concurrency": [1], "requests": 12, "rounds": 3, "warmup": 0, "seed": 3}},
 {"id": "q", "kind": "load", "temperature": 0, "load": {"input_tokens": 200, "output_tokens": 16,
  "concurrency": [1], "requests": 8, "rounds": 3, "warmup": 0, "seed": 4}}]}
JSON
# TTFT = 2000 / 10000 = 200 ms (p), TPOT 5 ms; the candidate: 25% slower in both
run a 'ref-good:prefill=10000,tpot=5' "$tmp/two.json"
run a2 'ref-good:prefill=10000,tpot=5' "$tmp/two.json"
run slow 'ref-good:prefill=8000,tpot=6.25' "$tmp/two.json"
check_exit "0 4" "" "$NEEDLE" diff "$tmp/a" "$tmp/a2" --gate cutover
! grep -q "gate failed" "$tmp/err" || { echo "A/A: a gate failed"; cat "$tmp/err"; exit 1; }
grep -q "^## Load cells" "$tmp/out" && grep -q "^| p | c1 | 3/3 |" "$tmp/out" && grep -q "^| q | c1 | 3/3 |" "$tmp/out" ||
	{ echo "no per-cell load table:"; cat "$tmp/out"; exit 1; }
check_exit 1 "gate failed: ttft_p50_ratio<=1.1: p/c1 1.2" "$NEEDLE" diff "$tmp/a" "$tmp/slow" --gate cutover
grep -q "gate failed: output_tps_ratio>=0.9: .*p/c1" "$tmp/err" || { echo "throughput not failed:"; cat "$tmp/err"; exit 1; }
grep -q "^| p | c1 | 3/3 | .* FAIL; \`output_tps_ratio>=0.9\`" "$tmp/out" || { echo "the cell's verdict is not FAIL:"; cat "$tmp/out"; exit 1; }
check_exit 1 "" "$NEEDLE" diff "$tmp/a" "$tmp/slow" --gate cutover --format json
node -e '
const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const keys = ["rounds_valid", "requests", "success_rate"];
for (const f of ["output_tps", "ttft_p50_ms", "ttft_p95_ms", "tpot_p95_ms"]) keys.push(f, f + "_min", f + "_max");
const ok = d.load.length === 2 && d.load.every(e => typeof e.case === "string" && e.level === "c" + e.concurrency &&
	keys.every(k => typeof e.a[k] === "number" && typeof e.b[k] === "number") &&
	Math.abs(e.ratio.ttft_p50_ms - e.b.ttft_p50_ms / e.a.ttft_p50_ms) < 1e-9 &&
	e.gates.length === 4 && e.gates.every(g => ["gate", "verdict", "value", "threshold", "ci_low", "ci_high", "mde", "advice"].every(k => k in g)) &&
	e.verdict !== null) && d.load[0].verdict === "fail" &&
	d.load[0].gates.find(g => g.gate === "ttft_p50_ratio<=1.1" && g.verdict === "fail" && g.ci_low > 1 && g.threshold === 1.1) &&
	d.gates.find(g => g.gate === "ttft_p50_ratio<=1.1" && g.verdict === "fail" && !g.ok) &&
	d.latency.ttft_ms.a.n === 0 && d.latency.ttft_ms.b.n === 0;
if (!ok) { console.log("FAIL diff --format json load entries: " + JSON.stringify(d.load)); process.exit(1); }' "$tmp/out"
# the measuring machine (the probe each round records): B's 30% slower turns the
# 25% slower candidate's fails into underpowered, named, but not a candidate twice
# as slow's (beyond what 1.3^2 explains); B's 20% faster turns the same server's
# passes into underpowered; the JSON carries both runs' probes and B/A
node -e '
const d = JSON.parse(require("fs").readFileSync(process.argv[1] + "/manifest.json", "utf8"));
const p = d.load_client.filter(r => r.round >= 1).map(r => r.probe_ms);
if (!p.length || !p.every(v => v > 0)) { console.log("no probe per round: " + JSON.stringify(d.load_client)); process.exit(1); }' "$tmp/a"
probe() { # probe FROM TO FACTOR: FROM with every probe FACTOR times the same round's of a
	cp -R "$tmp/$1" "$tmp/$2"
	node -e '
const fs = require("fs"), f = process.argv[1] + "/manifest.json", d = JSON.parse(fs.readFileSync(f, "utf8"));
const a = JSON.parse(fs.readFileSync(process.argv[2] + "/manifest.json", "utf8")).load_client;
d.load_client.forEach((r, i) => { r.probe_ms = a[i].probe_ms * Number(process.argv[3]); });
fs.writeFileSync(f, JSON.stringify(d));' "$tmp/$2" "$tmp/a" "$3"
}
probe slow slowm 1.3
check_exit 4 "but the measuring machine ran 30% slower in B" "$NEEDLE" diff "$tmp/a" "$tmp/slowm" --gate cutover
! grep -q "gate failed" "$tmp/err" || { echo "a slower machine: still failed"; cat "$tmp/err"; exit 1; }
grep -q "and with B's figure corrected for it (.*) the interval holds the threshold" "$tmp/err" ||
	{ echo "the correction is not named:"; cat "$tmp/err"; exit 1; }
grep -q "^The measuring machine, B/A of .*: 1.300 to 1.300 over the cells" "$tmp/out" ||
	{ echo "no line of the measuring machine:"; cat "$tmp/out"; exit 1; }
run slow2 'ref-good:prefill=5000,tpot=10' "$tmp/two.json"
probe slow2 slow2m 1.3
check_exit 1 "gate failed: ttft_p50_ratio<=1.1: p/c1 " "$NEEDLE" diff "$tmp/a" "$tmp/slow2m" --gate cutover
grep -q "gate failed: output_tps_ratio>=0.9: .*p/c1 0\.[45]" "$tmp/err" ||
	{ echo "a candidate twice as slow on a 30% slower machine: throughput not failed:"; cat "$tmp/err"; exit 1; }
probe a2 a2f 0.8
check_exit 4 "wholly within the threshold 0.9, but the measuring machine ran 20% faster in B" \
	"$NEEDLE" diff "$tmp/a" "$tmp/a2f" --gate 'output_tps_ratio>=0.9'
check_exit 4 "" "$NEEDLE" diff "$tmp/a" "$tmp/a2f" --gate 'output_tps_ratio>=0.9' --format json
node -e '
const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const ok = d.load.every(e => e.a.client_probe_ms > 0 && Math.abs(e.b.client_probe_ms / e.a.client_probe_ms - 0.8) < 1e-9 &&
	Math.abs(e.ratio.client_probe_ms - e.b.client_probe_ms / e.a.client_probe_ms) < 1e-9);
if (!ok) { console.log("FAIL client_probe_ms in diff --format json: " + JSON.stringify(d.load)); process.exit(1); }' "$tmp/out"
# one round: no spread to judge a per-round figure by
cat >"$tmp/one.json" <<'JSON'
{"suite": "one", "cases": [{"id": "p", "kind": "load", "temperature": 0, "load": {"input_tokens": 400,
 "output_tokens": 16, "concurrency": [2], "requests": 8, "rounds": 1, "warmup": 0, "seed": 3}}]}
JSON
run one 'ref-good:prefill=10000,tpot=5' "$tmp/one.json"
check_exit 4 "gate underpowered: output_tps_ratio>=0.9: p/c2 underpowered: B/A 1.000 on one valid round in a run" \
	"$NEEDLE" diff "$tmp/one" "$tmp/one" --gate 'output_tps_ratio>=0.9'
"$NEEDLE" diff --help | grep -q "^  4  nothing failed, but a gate was underpowered" || { echo "--help lacks exit 4"; exit 1; }
# a candidate that ran one of the two cases fails every gate, naming what it lacks
run half 'ref-good:prefill=10000,tpot=5' "$tmp/two.json" --case p
check_exit 1 "every gate fails: B lacks 1 of A's load cells (q/c1)" "$NEEDLE" diff "$tmp/a" "$tmp/half" --gate cutover
check_exit 1 "gate failed: pass_rate>=0" "$NEEDLE" diff "$tmp/a" "$tmp/half" --gate 'pass_rate>=0'
check_exit "0 4" "" "$NEEDLE" diff "$tmp/a" "$tmp/half" --gate cutover --allow-missing
! grep -q "gate failed" "$tmp/err" || { echo "--allow-missing: a gate failed"; cat "$tmp/err"; exit 1; }
check_exit "0 4" "" "$NEEDLE" diff "$tmp/a" "$tmp/half" --gate cutover --case p
! grep -q "gate failed\|every gate fails" "$tmp/err" || { echo "--case p: a gate failed"; cat "$tmp/err"; exit 1; }
grep -q "^| p | c1 |" "$tmp/out" && ! grep -q "^| q | c1 |" "$tmp/out" || { echo "--case p compared q:"; cat "$tmp/out"; exit 1; }
# the same for attempts: 3 of smoke's json-arith attempts are not the baseline
"$NEEDLE" run smoke --base-url "$REF_URL" --model ref-good --out "$tmp/smoke" >"$tmp/smoke.out" 2>&1 ||
	{ echo "smoke run failed"; cat "$tmp/smoke.out"; exit 1; }
"$NEEDLE" run smoke --base-url "$REF_URL" --model ref-good --case 'json-arith*' --out "$tmp/arith" >"$tmp/arith.out" 2>&1 ||
	{ echo "json-arith run failed"; cat "$tmp/arith.out"; exit 1; }
check_exit 1 "every gate fails: B lacks" "$NEEDLE" diff "$tmp/smoke" "$tmp/arith" --gate no_new_failures --gate 'pass_rate>=1'
grep -q "gate failed: pass_rate>=1: value 1; fails: B lacks [0-9]* of A's attempts (cases " "$tmp/err" ||
	{ echo "the lacking attempts are not named:"; cat "$tmp/err"; exit 1; }
check_exit 0 "" "$NEEDLE" diff "$tmp/smoke" "$tmp/arith" --case 'json-arith*' --gate no_new_failures --gate 'pass_rate>=1'
check_exit 0 "" "$NEEDLE" diff "$tmp/smoke" "$tmp/arith" --allow-missing --gate no_new_failures
# a rate level whose SLO no request met: the cutover fails on it
cat >"$tmp/slo.json" <<'JSON'
{"suite": "slo", "cases": [{"id": "r", "kind": "load", "temperature": 0, "load": {"input_tokens": 400,
 "output_tokens": 4, "rate": [20], "requests": 10, "rounds": 3, "warmup": 0, "slo": {"ttft_ms": 5}}}]}
JSON
run slo 'ref-good:prefill=10000,tpot=1' "$tmp/slo.json"
check_exit 1 "gate failed: slo_attainment>0: r/r20" "$NEEDLE" diff "$tmp/slo" "$tmp/slo" --gate cutover
echo "diff on load runs: per-cell table and JSON, A/A no failure, 25% slower fails, a machine 30% slower or 20% faster in B makes those underpowered (not twice as slow), underpowered exits 4, missing cells or attempts fail unless --case or --allow-missing, 0% SLO attainment fails"
