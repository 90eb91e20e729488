#!/bin/sh
# make demo: starts the reference server (vLLM dialect, real DeepSeek V3 tokenizer and
# chat template) on a free loopback port, runs suites/smoke.json and
# suites/recall-128k.json against it with the same tokenizer and template, shows
# needle's own end-of-run summary of each and where its report is (summary.md,
# attempts.csv, recall.png), stops the server and exits with the worst exit code.
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
for suite in smoke recall-128k; do
	out="$base/$suite"
	echo
	echo "\$ needle run suites/$suite.json --base-url $REF_URL/v1 --model $model \\"
	echo "      --tokenizer .../deepseek_v3/tokenizer.json --template deepseek-v3 --out $out"
	rc=0
	(cd "$root" && exec "$NEEDLE" run "$(fixture suites/$suite.json)" --base-url "$REF_URL/v1" \
		--model "$model" --tokenizer "$tokenizer" --template deepseek-v3 --out "$out") || rc=$?
	[ $rc -gt $worst ] && worst=$rc
	# the recall grid as summary.md has it: needles found by depth and prompt length
	[ -s "$root/$out/recall.png" ] && awk '/^\| depth \|/ { on = 1 } on && /^$/ { exit } on { print "  " $0 }' "$root/$out/summary.md"
	for f in summary.md attempts.csv recall.png; do
		[ -s "$root/$out/$f" ] && echo "  $out/$f"
	done
done
echo
echo "needle exit code: $worst"
exit $worst
