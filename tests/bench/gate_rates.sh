#!/bin/sh
# The cutover gate's error rates: how often `needle diff BASE CAND --gate cutover`
# passes, is underpowered or fails when nothing changed (A/A), and how often it
# catches a server 10%, 15% and 25% slower, against the reference server with noise
# that spans rounds and runs (tests/refserver/README.md "Noise": per-request jitter,
# a drift, slow phases of a quarter of every 20 s, stalls). Each pair i gets its own
# server (a restart between pairs); on it the baseline runs, then, in an order that
# rotates with i, the same server again (A/A) and the slower candidates, each diffed
# against that baseline. The suite is suites/cutover.json's load cases as shipped
# (levels, requests, rounds, self-sizing, budgets) at smaller token sizes: input
# divided by GATE_DIV, GATE_OUT output tokens. Exit codes of diff: 0 pass, 1 fail,
# 4 underpowered (anything else is an error). Loopback only.
#   sh tests/bench/gate_rates.sh BUILD_DIR
#   env GATE_PAIRS (default 20), GATE_NOISE (the noise options), GATE_KINDS (default
#   "aa:0 r10:10 r15:15 r25:25"), GATE_CASES (how many load cases, default all),
#   GATE_DIV (16), GATE_OUT (16), GATE_SUITE (a suite file instead), GATE_FIRST
#   (the first pair's number, default 1: pair i seeds the server's noise with i,
#   so that several copies of the script can measure different pairs at once),
#   GATE_KEEP (a folder: each pair's diff stderr as KINDi.err and both run folders,
#   baseI and KINDi, are kept there, so that a pair can be judged again with
#   needle diff baseI KINDi --gate cutover)
set -u
TESTS=${TESTS:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS/lib/cli.sh"
NEEDLE=${NEEDLE:-$ROOT/${1:-build}/needle}
pairs=${GATE_PAIRS:-20}
noise=${GATE_NOISE:-prefill=10000,tpot=2,batch=10,seqs=8,jitter=0.1,drift=10,drift_period=2,phase=30,phase_period=20,phase_share=0.25,stall_p=0.03,stall_ms=100}
kinds=${GATE_KINDS:-"aa:0 r10:10 r15:15 r25:25"}
ds=$(fixture hf/deepseek_v3/tokenizer.json)
suite=${GATE_SUITE:-$tmp/suite.json}
[ -n "${GATE_SUITE:-}" ] || node -e '
const [file, n, div, out] = process.argv.slice(1);
const s = JSON.parse(require("fs").readFileSync(file, "utf8"));
const cases = s.cases.filter(c => c.kind === "load").slice(0, Number(n) || undefined);
for (const c of cases)
	Object.assign(c.load, { input_tokens: Math.max(16, Math.round(c.load.input_tokens / Number(div))), output_tokens: Number(out) });
process.stdout.write(JSON.stringify({ suite: "cutover-small", cases }));' \
	"$ROOT/suites/cutover.json" "${GATE_CASES:-0}" "${GATE_DIV:-16}" "${GATE_OUT:-16}" >"$suite"

# run KIND PAIR MODEL: one run of the suite against the current server into
# $tmp/KINDPAIR, its seconds and counted rounds per cell appended to $tmp/sizes;
# 1 when it failed
run() {
	t0=$(date +%s) out=$1$2
	"$NEEDLE" run "$suite" --base-url "$REF_URL" --model "$3" --tokenizer "$ds" --template deepseek-v3 \
		--out "$tmp/$out" >"$tmp/$out.out" 2>&1 || { echo "run $out ($3) failed: $(tail -3 "$tmp/$out.out")" >&2; return 1; }
	node -e '
const m = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const s = m.load_sizing || [];
const r = s.reduce((a, e) => a + e.rounds, 0) / Math.max(1, s.length);
const why = {}; for (const e of s) why[e.stopped] = (why[e.stopped] || 0) + 1;
console.log(process.argv[2], process.argv[3], r.toFixed(2), Object.entries(why).map(([k, v]) => k + "=" + v).join(","));' \
		"$tmp/$out/manifest.json" "$1" "$(($(date +%s) - t0))" >>"$tmp/sizes"
}

[ -z "${GATE_KEEP:-}" ] || mkdir -p "$GATE_KEEP" || exit 1
: >"$tmp/counts"
: >"$tmp/sizes"
i=${GATE_FIRST:-1}
start=$(date +%s)
while [ "$i" -lt "$((${GATE_FIRST:-1} + pairs))" ]; do
	refserver_start --max-model-len 32768 || exit 1
	base="ref-good:$noise,seed=$i"
	run base "$i" "$base" || exit 1
	# rotate the order of the candidates with i
	order=$(echo $kinds | tr ' ' '\n' | awk -v k="$i" '{ a[NR] = $0 } END { for (j = 0; j < NR; j++) print a[(j + k) % NR + 1] }')
	for kind in $order; do
		name=${kind%%:*} pct=${kind#*:}
		model=$base
		[ "$pct" = 0 ] || model="$base,slower=$pct"
		run "$name" "$i" "$model" || exit 1
		g=0
		"$NEEDLE" diff "$tmp/base$i" "$tmp/$name$i" --gate cutover >/dev/null 2>"$tmp/gate.err" || g=$?
		echo "$name $g" >>"$tmp/counts"
		[ -z "${GATE_KEEP:-}" ] || { cp "$tmp/gate.err" "$GATE_KEEP/$name$i.err" &&
			cp -r "$tmp/base$i" "$tmp/$name$i" "$GATE_KEEP/"; }
		rm -rf "${tmp:?}/$name$i"
	done
	rm -rf "${tmp:?}/base$i"
	refserver_stop
	i=$((i + 1))
done
echo "== cutover gate error rates: needle diff BASE CAND --gate cutover, $pairs pairs per row, reference server with noise ($noise), $(($(date +%s) - start)) s"
awk '
function pct(a, b) { return b ? sprintf("%.0f%%", 100 * a / b) : "-" }
{ n[$1]++; c[$1, $2]++ }
END {
	label["aa"] = "A/A (the same server twice)"
	label["r10"] = "10% slower"; label["r15"] = "15% slower"; label["r25"] = "25% slower"
	split("aa r10 r15 r25", order, " ")
	for (k = 1; k <= 4; k++) {
		m = order[k]
		if (!n[m]) continue
		other = n[m] - c[m, 0] - c[m, 1] - c[m, 4]
		printf "%-28s passed (exit 0) %d/%d (%s); underpowered (exit 4) %d/%d; failed (exit 1) %d/%d (%s)%s\n",
			label[m] ":", c[m, 0], n[m], pct(c[m, 0], n[m]), c[m, 4], n[m], c[m, 1], n[m], pct(c[m, 1], n[m]),
			other ? sprintf("; other exits %d/%d", other, n[m]) : ""
	}
}' "$tmp/counts"
awk '
{ n[$1]++; s[$1] += $2; r[$1] += $3 }
END {
	split("base aa r10 r15 r25", order, " ")
	for (k = 1; k <= 5; k++) {
		m = order[k]
		if (n[m]) printf "  %-5s runs: mean %.1f counted rounds a cell, %.1f min a run (n = %d)\n", m, r[m] / n[m], s[m] / n[m] / 60, n[m]
	}
}' "$tmp/sizes"
