#!/bin/sh
# make bench-peers: the load levels of tests/vllm/load.json (512/16 tokens on
# /v1/completions, concurrency 1, 2, 4) against one vLLM server (the Qwen3
# folder of tests/vllm/model.sh, random weights) by needle and by
# `vllm bench serve` (the client that ships with vLLM), each level's /metrics
# scraped around every client's run, and each client's own CPU time measured
# (/usr/bin/time: user + system, start-up included). tests/vllm/peers.js
# prints one table per level to BUILD/vllm/peers/peers.md. Not part of
# `make test` nor of `make test-vllm`: a benchmark, not a test.
#   env TESTS=tests BUILD=build NEEDLE=build/needle sh tests/vllm/peers.sh
set -eu
. "$TESTS/lib/cli.sh"
. "$TESTS/vllm/lib.sh"

P=$OUT/peers
vllm_setup
rm -rf "$P"
mkdir -p "$P"
FOLDER=$OUT/model-qwen3
vllm_start qwen3
"$NEEDLE" run "$TESTS/vllm/render.json" --case system --base-url "$URL/v1" --tokenizer "$FOLDER" \
	--out "$P/ready" --wait-ready 15m 2> "$tmp/err" || true
grep -q 'needle run: ' "$tmp/err" || { cat "$tmp/err" >&2; fail "vLLM did not come up"; }

# cpu LABEL CMD...: runs CMD with its CPU time in P/LABEL.time ("user sys").
cpu() {
	_label=$1
	shift
	/usr/bin/time -f '%U %S' -o "$P/$_label.time" "$@"
}
scrape() {
	curl -sS -o "$1" "$URL/metrics" || fail "cannot scrape $URL/metrics"
}

st=0
cpu needle "$NEEDLE" run "$TESTS/vllm/load.json" --base-url "$URL/v1" --tokenizer "$FOLDER" \
	--out "$P/needle" --metrics 2> "$tmp/err" || st=$?
[ "$st" = 0 ] || { cat "$tmp/err" >&2; fail "needle run exit $st"; }

# vllm bench serve at each level: as many counted requests as needle's level
# (rounds x requests), no warm-up (so that the /metrics window holds exactly
# its requests), unlimited rate at that concurrency.
for level in 1:8 2:8 4:16; do
	c=${level%%:*} n=${level#*:}
	scrape "$P/vllm-c$c-before.prom"
	cpu "vllm-c$c" env VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 HF_HUB_OFFLINE=1 \
		"$VENV/bin/python" "$TESTS/vllm/vllm_cli.py" bench serve --backend openai \
		--endpoint /v1/completions --base-url "$URL" --model tiny-qwen3 --tokenizer "$FOLDER" \
		--dataset-name random --input-len 512 --output-len 16 --ignore-eos --num-prompts "$n" \
		--max-concurrency "$c" --request-rate inf --num-warmups 0 --seed 1 --temperature 0 \
		--percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,95 --disable-tqdm \
		--save-result --result-dir "$P" --result-filename "vllm-c$c.json" \
		> "$P/vllm-c$c.log" 2>&1 || { tail -20 "$P/vllm-c$c.log" >&2; fail "vllm bench serve c$c"; }
	scrape "$P/vllm-c$c-after.prom"
done
vllm_stop
# The bench client's start-up alone (imports, argument parsing): its CPU with --help.
cpu vllm-startup "$VENV/bin/python" "$TESTS/vllm/vllm_cli.py" bench serve --help > /dev/null
node "$TESTS/vllm/peers.js" "$P" > "$P/peers.md"
cat "$P/peers.md"
