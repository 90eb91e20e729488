#!/bin/sh
# The cutover gate on the real vLLM (the CPU build, random weights, the toy
# Qwen3 folder): the same server restarted and measured again, RUNS times, and
# every consecutive pair diffed with --gate cutover. The suite is
# suites/cutover.json's first load case at 512/16 tokens, C1 and C4, 32 and 128
# requests a round, with the shipped rounds, self-sizing and budget. Prints
# each pair's exit (0 pass, 1 fail, 4 underpowered) and the rounds each run
# used; the pairs' gate output stays in BUILD/vllm/gate.
#   env TESTS=tests BUILD=build NEEDLE=build/needle sh tests/vllm/gate_rates.sh
#   env VLLM_GATE_RUNS (default 6)
set -eu
. "$TESTS/lib/cli.sh"
. "$TESTS/vllm/lib.sh"

runs=${VLLM_GATE_RUNS:-6}
G=$OUT/gate
vllm_setup
rm -rf "$G"
mkdir -p "$G"
node -e '
const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const c = s.cases.filter(c => c.kind === "load")[0];
Object.assign(c.load, { input_tokens: 512, output_tokens: 16, concurrency: [1, 4], requests: [32, 128] });
process.stdout.write(JSON.stringify({ suite: "vllm-gate", cases: [c] }));' "$ROOT/suites/cutover.json" >"$G/suite.json"
FOLDER=$OUT/model-qwen3
start=$(date +%s)
i=1
while [ "$i" -le "$runs" ]; do
	vllm_start qwen3
	t0=$(date +%s)
	"$NEEDLE" run "$G/suite.json" --base-url "$URL/v1" --tokenizer "$FOLDER" --out "$G/run$i" \
		--wait-ready 10m >"$G/run$i.out" 2>&1 || { vllm_stop; fail "run $i: $(tail -3 "$G/run$i.out")"; }
	vllm_stop
	node -e '
const m = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
console.log("run " + process.argv[2] + ": " + (m.load_sizing || []).map(e => "c" + e.concurrency + " " + e.rounds + " rounds (" + e.stopped + ")").join(", ") + ", " + process.argv[3] + " s");' \
		"$G/run$i/manifest.json" "$i" "$(($(date +%s) - t0))"
	if [ "$i" -gt 1 ]; then
		g=0
		"$NEEDLE" diff "$G/run$((i - 1))" "$G/run$i" --gate cutover >/dev/null 2>"$G/pair$i.err" || g=$?
		echo "pair $((i - 1))-$i: exit $g"
		echo "$g" >>"$G/exits"
	fi
	i=$((i + 1))
done
echo "== cutover gate on vLLM, the same server restarted: $((runs - 1)) consecutive pairs, $(($(date +%s) - start)) s"
awk '{ n++; c[$1]++ } END { printf "passed (exit 0) %d/%d; underpowered (exit 4) %d/%d; failed (exit 1) %d/%d\n", c[0], n, c[4], n, c[1], n }' "$G/exits"
