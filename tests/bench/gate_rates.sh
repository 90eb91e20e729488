#!/bin/sh
# The cutover gate's error rates (issue 21 item 7): how often `needle diff BASE CAND
# --gate cutover` raises a false alarm when nothing changed, and how often it catches a
# regression of 10%, 15% and 25%, against the reference server with its noise model
# (tests/refserver/README.md "Noise"). Each pair i gets its own server; on it the
# baseline runs, then, in an order that rotates with i (the server drifts with wall
# time), the same server again (A/A) and candidates 10%, 15% and 25% slower (every
# prefill and token time; throughput down to 1/1.1, 1/1.15, 1/1.25), each diffed
# against that baseline. The suite is suites/cutover.json's first two load cases at a
# quarter of their input and 32 output tokens, C1 and C8, 3 rounds of 8 and 32
# requests. Exit codes: 0 pass, 1 fail, 4 underpowered (anything else is an error).
# Loopback only; about 5 runs of 15 s per pair.
#   sh tests/bench/gate_rates.sh BUILD_DIR   env GATE_PAIRS (default 6), GATE_NOISE
#                                            (the noise options), GATE_SUITE (a suite file)
set -u
TESTS=${TESTS:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS/lib/cli.sh"
NEEDLE=${NEEDLE:-$ROOT/${1:-build}/needle}
pairs=${GATE_PAIRS:-6}
noise=${GATE_NOISE:-prefill=20000,tpot=4,batch=10,seqs=8,jitter=0.1,drift=5,drift_period=60,stall_p=0.01,stall_ms=300}
ds=$(fixture hf/deepseek_v3/tokenizer.json)
suite=${GATE_SUITE:-$tmp/suite.json}
[ -n "${GATE_SUITE:-}" ] || cutover_small cutover-bench 32 8 32 >"$suite"

# run OUT MODEL: one run of the suite against the current server; 1 when it failed
run() {
	"$NEEDLE" run "$suite" --base-url "$REF_URL" --model "$2" --tokenizer "$ds" --template deepseek-v3 \
		--out "$tmp/$1" >"$tmp/$1.out" 2>&1 || { echo "run $1 ($2) failed: $(tail -3 "$tmp/$1.out")" >&2; return 1; }
}

# The kinds of candidate, as "NAME SLOWER_PCT"; one line of counts per kind in $tmp/counts.
kinds="aa:0 r10:10 r15:15 r25:25"
: >"$tmp/counts"
i=1
start=$(date +%s)
while [ "$i" -le "$pairs" ]; do
	refserver_start --max-model-len 32768 || exit 1
	base="ref-good:$noise,seed=$i"
	run "base$i" "$base" || exit 1
	# rotate the order of the candidates with i
	order=$(echo $kinds | tr ' ' '\n' | awk -v k="$i" '{ a[NR] = $0 } END { for (j = 0; j < NR; j++) print a[(j + k) % NR + 1] }')
	for kind in $order; do
		name=${kind%%:*} pct=${kind#*:}
		model=$base
		[ "$pct" = 0 ] || model="$base,slower=$pct"
		run "$name$i" "$model" || exit 1
		g=0
		"$NEEDLE" diff "$tmp/base$i" "$tmp/$name$i" --gate cutover >/dev/null 2>"$tmp/gate.err" || g=$?
		echo "$name $g" >>"$tmp/counts"
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
		what = m == "aa" ? "false alarms" : "detected"
		printf "%-28s %s (exit 1) %d/%d (%s); underpowered (exit 4) %d/%d; passed (exit 0) %d/%d%s\n",
			label[m] ":", what, c[m, 1], n[m], pct(c[m, 1], n[m]), c[m, 4], n[m], c[m, 0], n[m],
			other ? sprintf("; other exits %d/%d", other, n[m]) : ""
	}
}' "$tmp/counts"
