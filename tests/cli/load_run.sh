#!/bin/sh
# slow: load matrices against the timing model
# End to end, load cases against the reference server's timing model (tests/refserver/README.md
# "Timing model"): a closed-loop matrix gives TTFT, TPOT and throughput near the analytic
# values (a load-only run's report and diff say its latency is in the cells, no empty
# latency table); one empty 200 marks exactly its round invalid, stays in the success
# count and leaves the medians to the other rounds; an open loop achieves its rate;
# chat prompts count exactly; 'needle diff --gate cutover' passes a run against itself and fails (naming the
# cells) a run whose TPOT is 30% worse.
set -eu
. "$TESTS/lib/cli.sh"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
refserver_start --max-model-len 32768
run() { # run OUT MODEL SUITE
	rc=0
	"$NEEDLE" run "$3" --base-url "$REF_URL" --model "$2" --tokenizer "$ds" \
		--template deepseek-v3 --out "$tmp/$1" >"$tmp/$1.out" 2>&1 || rc=$?
}
check() { # check RUN EXPR WHAT: EXPR over `cells` (summary.json load.cells)
	node -e '
const s = JSON.parse(require("fs").readFileSync(process.argv[1] + "/summary.json", "utf8"));
const cells = s.load.cells, near = (x, want, tol) => Math.abs(x - want) <= tol * want;
if (!(eval(process.argv[2]))) { console.log("FAIL " + process.argv[3] + ": " + JSON.stringify(cells.map(c => { const o = Object.assign({}, c); delete o.rounds; return o; }))); process.exit(1); }' \
		"$tmp/$1" "$2" "$3"
}
# timed OUT MODEL SUITE EXPR WHAT: wall-clock figures on a shared machine (another
# process can take the core a server or needle needs): the run counts when one of
# three tries meets every bound of EXPR; a wrong figure misses all three.
timed() {
	for try in 1 2 3; do
		rm -rf "${tmp:?}/$1"
		run "$1" "$2" "$3"
		[ "$rc" = 0 ] || { echo "$1: exit $rc"; cat "$tmp/$1.out"; exit 1; }
		(check "$1" "$4" "$5") && return 0
		[ $try = 3 ] || echo "try $try of '$5' missed a bound (machine busy?); running again"
	done
	exit 1
}
cat >"$tmp/matrix.json" <<'JSON'
{"suite": "m", "cases": [{"id": "m", "kind": "load", "temperature": 0, "load": {"input_tokens": 1000,
 "output_tokens": 40, "concurrency": [1, 4], "requests": [4, 8], "rounds": 3, "warmup": 1, "seed": 5}}]}
JSON
# prefill 10000 tok/s: TTFT 100 ms; TPOT 10 ms at C1, 10 * (1 + 0.1 * 3) = 13 ms at C4;
# E2E 490 and 607 ms; throughput 40 / 0.49 = 81.6 and 8 * 40 / (2 * 0.607) = 263.6 tok/s
timed a 'ref-good:prefill=10000,tpot=10,batch=10' "$tmp/matrix.json" \
	'near(cells[0].ttft_p50_ms, 100, 0.15) && near(cells[1].ttft_p50_ms, 100, 0.15) &&
	 near(cells[0].tpot_p95_ms, 10, 0.1) && near(cells[1].tpot_p95_ms, 13, 0.1) &&
	 near(cells[0].output_tps, 81.6, 0.1) && near(cells[1].output_tps, 263.6, 0.12)' \
	'TTFT P50 = P / prefill, TPOT with the batch effect, output throughput'
check a 'cells.length === 2 && cells.every(c => c.rounds_valid === 3 && c.succeeded === c.requests)' 'all rounds valid'
# the inter-token latencies: every gap of every request kept, and the cell's ITL
# percentiles bracket its TPOT (one token a chunk: the gaps are the token times)
node "$TESTS/refserver/records.js" "$tmp/a" \
	'recs.filter(r => r.load && r.load.round >= 1).every(r => r.load.itl_ms.length === r.usage.completion_tokens - 1 && r.load.itl_ms.every(g => g > 0))' \
	'one gap per token after the first'
check a 'cells.every(c => c.itl_p50_ms > 0 && c.itl_p50_ms <= c.itl_p95_ms && c.itl_p95_ms <= c.itl_p99_ms &&
	near(c.itl_p50_ms, c.tpot_p50_ms, 0.25))' 'ITL P50/P95/P99 per cell, its median near TPOT'
# load.png: a whole PNG (every chunk's CRC, the pixels inflate to h rows of
# 1 + 3w bytes) of the size loadplot.h gives one case: 952 x (400 + 16)
python3 - "$tmp/a/load.png" 952 416 <<'PY' || { echo "load.png is not the expected picture"; exit 1; }
import struct, sys, zlib
b = open(sys.argv[1], "rb").read()
assert b[:8] == b"\x89PNG\r\n\x1a\n", "signature"
i, idat, ihdr = 8, b"", None
while i < len(b):
    n, t = struct.unpack(">I4s", b[i:i + 8])
    body = b[i + 8:i + 8 + n]
    assert zlib.crc32(t + body) == struct.unpack(">I", b[i + 8 + n:i + 12 + n])[0], "crc"
    ihdr = body if t == b"IHDR" else ihdr
    idat += body if t == b"IDAT" else b""
    i += 12 + n
w, h, depth, colour = struct.unpack(">IIBB", ihdr[:10])
assert (w, h, depth, colour) == (int(sys.argv[2]), int(sys.argv[3]), 8, 2), (w, h, depth, colour)
assert len(zlib.decompress(idat)) == h * (1 + 3 * w), "pixels"
PY
grep -q '(load.png)' "$tmp/a/summary.md" || { echo "summary.md does not link load.png"; exit 1; }
# a run of load cases only has no timed attempt outside them: a line, not a table of "-"
"$NEEDLE" report "$tmp/a" --format html >"$tmp/a.html"
"$NEEDLE" diff "$tmp/a" "$tmp/a" >"$tmp/aa.md" || true
for f in "$tmp/a/summary.md" "$tmp/a.html" "$tmp/aa.md"; do
	grep -q "No attempt outside the load cases was timed" "$f" && ! grep -q "ttft_ms" "$f" ||
		{ echo "$f: a latency table for a load-only run:"; grep -A8 "Latency" "$f"; exit 1; }
done
node "$TESTS/refserver/records.js" "$tmp/a" \
	'recs.length === 1 + 2 + 12 + 24 && recs.filter(r => r.load.warmup).length === 2 && recs[0].load.precheck && recs.every(r => r.usage.completion_tokens === 40 && r.audit.usage_delta === 0)' \
	'one record per request, warm-up marked, exact lengths'
# the same matrix with TPOT 30% worse: the cutover gate fails and names the cells
run b 'ref-good:prefill=10000,tpot=13,batch=10' "$tmp/matrix.json"
[ "$rc" = 0 ] || { echo "matrix b: exit $rc"; cat "$tmp/b.out"; exit 1; }
rc=0
"$NEEDLE" diff "$tmp/a" "$tmp/a" --gate cutover >/dev/null 2>"$tmp/self.err" || rc=$?
# against itself nothing fails; 3 rounds of 4 and 8 requests may be too few
# to vouch for a 10% threshold on a busy machine: underpowered (4), never 1
{ [ "$rc" = 0 ] || [ "$rc" = 4 ]; } && ! grep -q "gate failed" "$tmp/self.err" ||
	{ echo "cutover against itself: exit $rc"; cat "$tmp/self.err"; exit 1; }
rc=0
"$NEEDLE" diff "$tmp/a" "$tmp/b" --gate cutover >/dev/null 2>"$tmp/worse.err" || rc=$?
[ "$rc" = 1 ] || { echo "cutover with TPOT 30% worse: exit $rc, expected 1"; cat "$tmp/worse.err"; exit 1; }
grep -q "gate failed: output_tps_ratio>=0.9: .*m/c1" "$tmp/worse.err" || { echo "the failing cells are not named:"; cat "$tmp/worse.err"; exit 1; }
# one empty 200 (the 6th request: round 2): exactly that round is invalid
cat >"$tmp/one.json" <<'JSON'
{"suite": "o", "cases": [{"id": "o", "kind": "load", "load": {"input_tokens": 200, "output_tokens": 8,
 "concurrency": [1], "requests": 4, "rounds": 3, "warmup": 0}}]}
JSON
run e 'ref-good:tpot=2,empty_at=6' "$tmp/one.json"
[ "$rc" = 1 ] || { echo "one empty 200: exit $rc, expected 1"; cat "$tmp/e.out"; exit 1; }
check e 'cells[0].rounds_valid === 2 && cells[0].succeeded === 11 && cells[0].requests === 12 && cells[0].rounds.map(r => r.valid).join() === "true,false,true" && cells[0].output_tps_max === Math.max(cells[0].rounds[0].output_tps, cells[0].rounds[2].output_tps)' \
	'the empty 200 invalidates round 2 only and stays in the success count'
# an open loop at 20 requests/s achieves it (constant and Poisson)
cat >"$tmp/rate.json" <<'JSON'
{"suite": "r", "cases": [
 {"id": "c", "kind": "load", "load": {"input_tokens": 64, "output_tokens": 4, "rate": [20], "arrival": "constant", "requests": 40, "rounds": 1, "warmup": 0}},
 {"id": "p", "kind": "load", "load": {"input_tokens": 64, "output_tokens": 4, "rate": [20], "requests": 40, "rounds": 1, "warmup": 0, "slo": {"ttft_ms": 1000}}}]}
JSON
timed r 'ref-good:tpot=5' "$tmp/rate.json" \
	'near(cells[0].achieved_rate, 20, 0.05) && near(cells[1].achieved_rate, 20, 0.05) && cells[1].slo_attainment === 1 && cells[0].lag_p99_ms < 20' \
	'achieved rate within 5%, scheduling lag P99 under 20 ms'
[ ! -e "$tmp/r/load.png" ] || { echo "a run of rates only has a load.png"; exit 1; }
# chat: the prompt counts exactly input_tokens with the template (the audit agrees)
cat >"$tmp/chat.json" <<'JSON'
{"suite": "c", "cases": [{"id": "c", "kind": "load", "load": {"input_tokens": 700, "output_tokens": 8,
 "endpoint": "chat", "concurrency": [2], "requests": 4, "rounds": 1, "warmup": 0}}]}
JSON
run c 'ref-good:tpot=1' "$tmp/chat.json"
[ "$rc" = 0 ] || { echo "chat: exit $rc"; cat "$tmp/c.out"; exit 1; }
node "$TESTS/refserver/records.js" "$tmp/c" \
	'recs.length === 1 + 4 && recs.every(r => r.usage.prompt_tokens === 700 && r.audit.usage_delta === 0 && r.endpoint === "/v1/chat/completions")' \
	'chat load prompts of exactly 700 tokens'
# a thinking stream (ref-reasoning: reasoning first, then content): the cell's TTFT
# is the first fragment, reasoning included (docs/cutover.md "Where the rule comes from"), its TPOT runs from there
# so TTFT + 39 x TPOT = E2E per request, and TTFC, the first content, comes later
cat >"$tmp/think.json" <<'JSON'
{"suite": "t", "cases": [{"id": "t", "kind": "load", "load": {"input_tokens": 300, "output_tokens": 40,
 "endpoint": "chat", "concurrency": [2], "requests": 4, "rounds": 1, "warmup": 0}}]}
JSON
run t 'ref-reasoning:tpot=10' "$tmp/think.json"
[ "$rc" = 0 ] || { echo "thinking stream: exit $rc"; cat "$tmp/t.out"; exit 1; }
node -e '
const fs = require("fs"), d = process.argv[1];
const q = fs.readFileSync(d + "/results.jsonl", "utf8").split("\n").filter(Boolean).map(JSON.parse)
	.filter(r => r.load.round === 1), t = q.map(r => r.timing);
const p50 = (v) => v.slice().sort((a, b) => a - b)[Math.ceil(v.length / 2) - 1], eq = (a, b) => Math.abs(a - b) < 1e-6;
const cell = JSON.parse(fs.readFileSync(d + "/summary.json", "utf8")).load.cells[0];
if (!(q.length === 4 && t.every(x => x.ttfc_ms - x.ttft_ms > 50 && Math.abs(x.ttft_ms + 39 * x.tpot_ms - x.e2e_ms) <= 3) &&
      eq(cell.ttft_p50_ms, p50(t.map(x => x.ttft_ms))) && eq(cell.ttfc_p50_ms, p50(t.map(x => x.ttfc_ms))) &&
      eq(cell.tpot_p50_ms, p50(t.map(x => x.tpot_ms))) && cell.ttfc_p50_ms > cell.ttft_p50_ms + 50)) {
	console.log("FAIL a thinking stream: TTFT to the first fragment, TTFT + 39 x TPOT = E2E, TTFC its own figure: " +
		JSON.stringify({ t, cell: { ttft: cell.ttft_p50_ms, ttfc: cell.ttfc_p50_ms, tpot: cell.tpot_p50_ms } }));
	process.exit(1);
}' "$tmp/t"
echo "load: analytic TTFT/TPOT/throughput, one empty 200 invalidates one round, rates achieved, cutover gate, TTFT on a thinking stream"
