#!/bin/sh
# make bench-peers: the load levels of tests/vllm/peers.json (512/16 tokens on
# /v1/completions, concurrency 1, 2, 4, 3 rounds of 64 requests a level)
# against one vLLM server (the Qwen3 folder of tests/vllm/model.sh, random
# weights) by needle and by the peers' bench clients, each in its own pinned
# virtual environment under BUILD (tests/setup.sh): `vllm bench serve` (the
# client that ships with vLLM), GuideLLM, AIPerf, SGLang's bench_serving and
# inference-perf.
# Each peer sends as many requests a level as needle counts (192), with no
# warm-up, so that the /metrics scraped around each client's run at each
# level hold exactly its requests; each client's own CPU time is measured
# (/usr/bin/time: user + system, start-up and child processes included). A
# peer that cannot be installed or that fails leaves its error in
# P/CLIENT-cC.failed and the others run on. tests/vllm/peers.js prints one
# table per level to BUILD/vllm/peers/peers.md. Not part of `make test` nor
# of `make test-vllm`: a benchmark, not a test.
#   env TESTS=tests BUILD=build NEEDLE=build/needle sh tests/vllm/peers.sh
# PEERS (default: all of them) names the peers to run, e.g. PEERS="vllm aiperf".
set -eu
. "$TESTS/lib/cli.sh"
. "$TESTS/vllm/lib.sh"

P=$OUT/peers
N=192 # requests a level: peers.json's 3 rounds of 64
PEERS=${PEERS:-vllm guidellm aiperf sglang inference-perf}
vllm_setup
rm -rf "$P"
mkdir -p "$P"
ok=""
for peer in $PEERS; do
	case $peer in
	vllm) ok="$ok vllm" ;;
	*) if sh "$TESTS/setup.sh" "$peer" "$BUILD/venv-$peer" 2> "$P/$peer-setup.log"; then
		ok="$ok $peer"
	else
		tail -5 "$P/$peer-setup.log" >&2
		for c in 1 2 4; do tail -5 "$P/$peer-setup.log" > "$P/$peer-c$c.failed"; done
	fi ;;
	esac
done
FOLDER=$OUT/model-qwen3
MODEL=tiny-qwen3
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
cpu needle "$NEEDLE" run "$TESTS/vllm/peers.json" --base-url "$URL/v1" --tokenizer "$FOLDER" \
	--out "$P/needle" --metrics 2> "$tmp/err" || st=$?
[ "$st" = 0 ] || { cat "$tmp/err" >&2; fail "needle run exit $st"; }

# peer_PEER: one run of N requests at concurrency c by PEER under cpu, its
# result in P/PEER-cC.json (or in the folder P/PEER-cC, its own layout). The
# seed is c: with one seed, a client sends the same prompts at every level and
# the server (prefix caching on) serves the later levels' prefills from cache.
NO_TELEMETRY="VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1"
peer_vllm() {
	cpu "vllm-c$c" env $NO_TELEMETRY "$VENV/bin/python" "$TESTS/vllm/vllm_cli.py" bench serve --backend openai \
		--endpoint /v1/completions --base-url "$URL" --model "$MODEL" --tokenizer "$FOLDER" \
		--dataset-name random --input-len 512 --output-len 16 --ignore-eos --num-prompts "$N" \
		--max-concurrency "$c" --request-rate inf --num-warmups 0 --seed "$c" --temperature 0 \
		--percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,95 --disable-tqdm \
		--save-result --result-dir "$P" --result-filename "vllm-c$c.json"
}
# GuideLLM: synthetic prompts of exactly 512 tokens asking for 16 (it sets
# max_tokens, ignore_eos and stop itself), N requests at c streams.
peer_guidellm() {
	cpu "guidellm-c$c" env $NO_TELEMETRY "$BUILD/venv-guidellm/bin/guidellm" run \
		--backend "kind=openai_http,target=$URL,model=$MODEL,request_format=/v1/completions" \
		--profile "kind=concurrent,streams=$c" --constraint "kind=max_requests,count=$N" \
		--data kind=synthetic_text,prompt_tokens=512,output_tokens=16 \
		--tokenizer "kind=hf_auto,model=$FOLDER" --seed "kind=static,value=$c" \
		--output "kind=json,path=$P/guidellm-c$c.json" --disable-progress
}
# AIPerf: synthetic prompts of 512 tokens (no spread), max_tokens 16 with
# ignore_eos, streamed, N requests at concurrency c, no warm-up. Not offline:
# with HF_HUB_OFFLINE set it looks a local tokenizer folder up in the hub's
# cache and fails.
peer_aiperf() {
	cpu "aiperf-c$c" env VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 "$BUILD/venv-aiperf/bin/aiperf" profile \
		--model "$MODEL" --url "$URL" --endpoint-type completions --streaming \
		--tokenizer "$FOLDER" --isl 512 --isl-stddev 0 --osl 16 --osl-stddev 0 \
		--extra-inputs ignore_eos:true --extra-inputs temperature:0 \
		--concurrency "$c" --request-count "$N" --random-seed "$c" --ui none \
		--artifact-dir "$P/aiperf-c$c"
}
# SGLang's bench_serving: random token ids (its "random" dataset samples
# ShareGPT, a download) decoded to a 512-token prompt, 16 tokens asked for
# with ignore_eos (its default), on /v1/completions (its vllm backend), N
# requests at most c at a time, no warm-up.
peer_sglang() {
	cpu "sglang-c$c" env $NO_TELEMETRY "$BUILD/venv-sglang/bin/python" -m sglang.bench_serving \
		--backend vllm --base-url "$URL" --model "$MODEL" --tokenizer "$FOLDER" \
		--dataset-name random-ids --random-input-len 512 --random-output-len 16 \
		--random-range-ratio 1 --num-prompts "$N" --max-concurrency "$c" --request-rate inf \
		--warmup-requests 0 --seed "$c" --temperature 0 --output-file "$P/sglang-c$c.jsonl"
}
# inference-perf (Kubernetes SIG Serving's): a configuration file (JSON, which
# its YAML reader takes), random token ids decoded to exactly 512 tokens, 16
# asked for with ignore_eos, streamed on /v1/completions, one concurrent stage
# of N requests at c; its summary report in P/inference-perf-cC.
peer_inference_perf() {
	_fixed() { echo "{\"type\": \"fixed\", \"min\": $1, \"max\": $1, \"mean\": $1, \"std_dev\": 0, \"total_count\": $N}"; }
	cat > "$P/inference-perf-c$c.yml" <<-CFG
	{"api": {"type": "completion", "streaming": true},
	 "data": {"type": "random", "input_distribution": $(_fixed 512), "output_distribution": $(_fixed 16)},
	 "load": {"type": "concurrent", "stages": [{"num_requests": $N, "concurrency_level": $c}], "base_seed": $c},
	 "server": {"type": "vllm", "model_name": "$MODEL", "base_url": "$URL", "ignore_eos": true},
	 "tokenizer": {"pretrained_model_name_or_path": "$FOLDER"},
	 "report": {"request_lifecycle": {"summary": true, "per_stage": false, "per_request": false}},
	 "storage": {"local_storage": {"path": "$P/inference-perf-c$c"}}}
	CFG
	cpu "inference-perf-c$c" env $NO_TELEMETRY "$BUILD/venv-inference-perf/bin/inference-perf" \
		--config_file "$P/inference-perf-c$c.yml"
}

for c in 1 2 4; do
	for peer in $ok; do
		scrape "$P/$peer-c$c-before.prom"
		st=0
		"peer_$(echo "$peer" | tr - _)" > "$P/$peer-c$c.log" 2>&1 || st=$?
		scrape "$P/$peer-c$c-after.prom"
		if [ "$st" != 0 ]; then
			echo "$peer at concurrency $c: exit $st" >&2
			tail -20 "$P/$peer-c$c.log" >&2
			{ echo "exit $st"; tail -5 "$P/$peer-c$c.log"; } > "$P/$peer-c$c.failed"
		fi
	done
done
vllm_stop
# The vLLM bench client's start-up alone (imports, argument parsing): its CPU with --help.
cpu vllm-startup "$VENV/bin/python" "$TESTS/vllm/vllm_cli.py" bench serve --help > /dev/null
node "$TESTS/vllm/peers.js" "$P" > "$P/peers.md"
cat "$P/peers.md"
