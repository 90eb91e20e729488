#!/bin/sh
# make demo: starts the reference server (vLLM dialect, real DeepSeek V3 tokenizer and
# chat template) on a free loopback port, runs suites/smoke.json and
# suites/recall-128k.json against it with the same tokenizer and template, then
# the small load matrix suites/load-demo.json with the server's timing model and
# --metrics, shows needle's own end-of-run summary of each and where its report is
# (summary.md, attempts.csv, recall.png, load.png), stops the server and exits
# with the worst exit code.
#   sh tests/demo.sh BUILD_DIR [MODEL]     MODEL: ref-good (default), ref-forgetful, ...
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
model=${2:-ref-good}
case "$build" in /*) ;; *) build="$root/$build" ;; esac
NEEDLE="$build/needle"
TESTS="$root/tests"
. "$TESTS/lib/cli.sh"
trap 'exit 130' INT TERM

refserver_start --tpot 2 || exit 3
echo "reference server: $REF_URL (vLLM dialect, DeepSeek V3 tokenizer and chat template, model $model)"
base="results/demo-$(date -u +%Y%m%dT%H%M%SZ)"
tokenizer=$(fixture hf/deepseek_v3/tokenizer.json)
worst=0
for suite in smoke recall-128k load-demo; do
	out="$base/$suite"
	m=$model extra=
	# the load matrix: the reference server's timing model (tests/refserver/README.md)
	[ $suite = load-demo ] && m="$model:prefill=20000,tpot=5,batch=10,seqs=8" extra=--metrics
	echo
	echo "\$ needle run suites/$suite.json --base-url $REF_URL/v1 --model $m \\"
	echo "      --tokenizer .../deepseek_v3/tokenizer.json --template deepseek-v3 --out $out${extra:+ $extra}"
	rc=0
	(cd "$root" && exec "$NEEDLE" run "$(fixture suites/$suite.json)" --base-url "$REF_URL/v1" \
		--model "$m" --tokenizer "$tokenizer" --template deepseek-v3 --out "$out" $extra) || rc=$?
	[ $rc -gt $worst ] && worst=$rc
	# the recall grid as summary.md has it: needles found by depth and prompt length
	[ -s "$root/$out/recall.png" ] && awk '/^\| depth \|/ { on = 1 } on && /^$/ { exit } on { print "  " $0 }' "$root/$out/summary.md"
	# the load matrix: level, valid rounds, throughput, TTFT and TPOT (medians over rounds)
	[ -s "$root/$out/load.png" ] && awk -F' *[|] *' '/^\| case \| level \|/ { on = 1 } on && /^$/ { exit }
		on && !/^\|---/ { printf "  | %s | %s | %s | %s | %s | %s |\n", $3, $4, $6, $7, $8, $9 }' "$root/$out/summary.md"
	for f in summary.md attempts.csv recall.png load.png; do
		[ -s "$root/$out/$f" ] && echo "  $out/$f"
	done
done
echo
echo "needle exit code: $worst"
exit $worst
