#!/bin/sh
# make test-vllm: needle against the real vLLM (the CPU build, random
# weights from --load-format dummy) on loopback, with tiny model folders built
# from the tests' Qwen3 and DeepSeek V3 tokenizers (tests/vllm/model.sh).
# Random weights answer nonsense; what must hold of them is what needle checks
# about the server: every attempt's transport checks, the token audit
# (usage_delta 0, from the folder's own template), cached_tokens on warm cache
# steps, valid load cells, /metrics token counts equal to needle's, the
# max_model_len boundary, a server killed mid-stream and a restart under
# --wait-ready. Graded answers are proven against the same engine answering by
# rule (tests/vllm/needle_rules.py, a logits processor): recall and the smoke
# suite pass in its right mode and fail with each planted defect in its wrong
# mode. Run folders stay in BUILD/vllm/runs.
#   env TESTS=tests BUILD=build NEEDLE=build/needle sh tests/vllm/run.sh
set -eu
. "$TESTS/lib/cli.sh"

. "$TESTS/vllm/lib.sh"

RUNS=$OUT/runs
vllm_setup
rm -rf "$RUNS"
mkdir -p "$RUNS"
CHECK="node $TESTS/vllm/check.js"

# run NAME SUITE [needle run options]: runs SUITE into RUNS/NAME against URL
# with the model folder as the tokenizer (no --template: the folder's own),
# waiting for the server; exit 0 or 1 (graded answers may fail) is fine.
run() {
	name=$1 suite=$2
	shift 2
	st=0
	"$NEEDLE" run "$suite" --base-url "$URL/v1" --tokenizer "$FOLDER" --out "$RUNS/$name" \
		--wait-ready 10m "$@" 2> "$tmp/err" || st=$?
	[ "$st" -le 1 ] || { cat "$tmp/err" >&2; fail "$name: needle run exit $st"; }
	grep '^needle run: ' "$tmp/err" | sed "s|^|$name: |"
}

# --- Qwen3: the smoke suite, recall, cache, load, the rendering cases -------
FOLDER=$OUT/model-qwen3
vllm_start qwen3
$CHECK smoke-suite "$ROOT/suites/smoke.json" > "$tmp/smoke.json"
run smoke "$tmp/smoke.json"
$CHECK audit "$RUNS/smoke"
$CHECK parity-suite "$ROOT/suites/smoke.json" > "$tmp/parity.json"
run parity "$tmp/parity.json"
$CHECK parity "$RUNS/parity"
run render "$TESTS/vllm/render.json"
$CHECK audit "$RUNS/render"
$CHECK own-template "$RUNS/render" "$FOLDER/tokenizer_config.json"
run recall "$TESTS/vllm/recall.json"
$CHECK audit "$RUNS/recall"
run cache "$TESTS/vllm/cache.json"
$CHECK audit "$RUNS/cache"
$CHECK cache "$RUNS/cache"
run load "$TESTS/vllm/load.json" --metrics
$CHECK load "$RUNS/load"
run rate "$TESTS/vllm/rate.json" --metrics
$CHECK load "$RUNS/rate"

# The max_model_len boundary. needle's pre-flight sends a prompt of MML - 16
# tokens with max_tokens 16 (served, audit delta 0) and refuses one token more.
# vLLM 0.32 refuses only prompt >= MML (HTTP 400) and serves a shorter prompt
# with max_tokens cut to MML - prompt; needle, sent such a request without
# its pre-flight (no --tokenizer), names the cut (stream.c context_cut).
fit=$((MML - 16))
$CHECK boundary-suite "$fit" 16 > "$tmp/boundary.json"
run boundary "$tmp/boundary.json"
$CHECK boundary "$RUNS/boundary" "$fit"
# post N: gen haystack's N-token prompt with max_tokens 16, straight to vLLM;
# the status in $tmp/code$N, the body in $tmp/resp$N.json.
post() {
	"$NEEDLE" gen haystack --tokenizer "$FOLDER" --tokens "$1" --seed 1 --out "$tmp/hay$1" > /dev/null 2> "$tmp/err" ||
		{ cat "$tmp/err" >&2; fail "gen haystack $1"; }
	$CHECK chat-body "$tmp/hay$1/prompt.json" tiny-qwen3 16 > "$tmp/body$1.json"
	curl -sS -o "$tmp/resp$1.json" -w '%{http_code}' -H 'Content-Type: application/json' \
		--data-binary "@$tmp/body$1.json" "$URL/v1/chat/completions" > "$tmp/code$1"
}
for n in $((fit + 1)) $((MML - 1)) "$MML" $((MML + 1)); do
	post "$n"
done
$CHECK served "$tmp/code$((fit + 1))" "$tmp/resp$((fit + 1)).json" $((fit + 1)) 15
$CHECK served "$tmp/code$((MML - 1))" "$tmp/resp$((MML - 1)).json" $((MML - 1)) 1
$CHECK refused "$tmp/code$MML" "$tmp/resp$MML.json" 'max_tokens must be at least 1'
$CHECK refused "$tmp/code$((MML + 1))" "$tmp/resp$((MML + 1)).json" "contains at least $((MML + 1)) input tokens"
$CHECK near-suite "$tmp/hay$((MML - 1))/prompt.json" > "$tmp/near.json"
st=0
"$NEEDLE" run "$tmp/near.json" --base-url "$URL/v1" --out "$RUNS/near-full" 2> "$tmp/err" || st=$?
[ "$st" = 1 ] || { cat "$tmp/err" >&2; fail "near-full: needle run exit $st, expected 1"; }
$CHECK context-cut "$RUNS/near-full"
echo "boundary: needle sends $fit + 16 and refuses $((fit + 1)); vLLM serves up to $((MML - 1)) (max_tokens cut) and answers 400 from $MML"

# A server killed mid-stream: the attempt in flight fails transport, by name.
$CHECK long-suite > "$tmp/long.json"
st=0
log_at=$(wc -c < "$OUT/serve-qwen3.log")
"$NEEDLE" run "$tmp/long.json" --base-url "$URL/v1" --tokenizer "$FOLDER" --out "$RUNS/killed" \
	2> "$tmp/killed.err" &
npid=$!
track "$npid"
$CHECK wait-running "$URL" 120 "$OUT/serve-qwen3.log" "$log_at"
vllm_stop KILL
wait "$npid" || st=$?
[ "$st" = 1 ] || fail "killed server: needle run exit $st, expected 1: $(cat "$tmp/killed.err")"
$CHECK killed "$RUNS/killed"

# Its restart: needle waits (--wait-ready) for the server started after it.
"$NEEDLE" run "$TESTS/vllm/render.json" --case system --base-url "$URL/v1" --tokenizer "$FOLDER" \
	--out "$RUNS/restart" --wait-ready 10m 2> "$tmp/restart.err" &
npid=$!
track "$npid"
sleep 2
kill -0 "$npid" 2>/dev/null || fail "needle run did not wait for the server: $(cat "$tmp/restart.err")"
vllm_start qwen3 "$PORT"
st=0
wait "$npid" || st=$?
[ "$st" -le 1 ] || fail "restart: needle run exit $st: $(cat "$tmp/restart.err")"
$CHECK audit "$RUNS/restart"
echo "restart: needle waited for the restarted server and ran"
vllm_stop

# --- Graded, against the rule-answering engine (tests/vllm/needle_rules.py) --
# It answers recall from the document and the smoke cases from their expect,
# through vLLM's own sampling, reasoning parser and tool-call parser: in right
# mode every graded attempt passes, in wrong mode every one fails with the
# defect planted in it.
$CHECK graded-suite "$ROOT/suites/smoke.json" > "$tmp/graded.json"
vllm_start_rules qwen3 right "$tmp/graded.json:$ROOT/suites/structured.json"
run graded-smoke "$tmp/graded.json"
$CHECK audit "$RUNS/graded-smoke"
$CHECK graded "$RUNS/graded-smoke" reasoning
run graded-recall "$TESTS/vllm/graded.json"
$CHECK audit "$RUNS/graded-recall"
$CHECK graded "$RUNS/graded-recall" reasoning
$CHECK cache "$RUNS/graded-recall"
run graded-structured "$ROOT/suites/structured.json"
$CHECK audit "$RUNS/graded-structured"
$CHECK graded "$RUNS/graded-structured" reasoning
# Four runs of the same server: two pairs that share no run, since a pair of
# runs minutes apart on a shared machine fails now and then (docs/statistics.md
# "How often the load gate is wrong": 2 of 20 on the rig).
for r in a b c d; do
	run "cutover-$r" "$TESTS/vllm/cutover.json"
done
vllm_stop
# The wrong mode's server also runs with --max-num-seqs 1: the cutover's
# candidate, slower at concurrency 4.
vllm_start_rules qwen3 wrong "$tmp/graded.json" --max-num-seqs 1
run planted-smoke "$tmp/graded.json"
run planted-recall "$TESTS/vllm/graded.json"
$CHECK planted "$RUNS/planted-smoke" "$RUNS/planted-recall"
run cutover-slow "$TESTS/vllm/cutover.json"
vllm_stop
# gate A B NAME: needle diff A B --gate cutover as JSON into $tmp/NAME.json, its
# exit into $tmp/NAME.exit
gate() {
	st=0
	"$NEEDLE" diff "$1" "$2" --gate cutover --format json > "$tmp/$3.json" 2> "$tmp/err" || st=$?
	[ "$st" -le 1 ] || [ "$st" = 4 ] || { cat "$tmp/err" >&2; fail "$3: needle diff exit $st"; }
	echo "$st" > "$tmp/$3.exit"
}
gate "$RUNS/cutover-a" "$RUNS/cutover-b" cutover-aa
gate "$RUNS/cutover-c" "$RUNS/cutover-d" cutover-cc
gate "$RUNS/cutover-a" "$RUNS/cutover-slow" cutover-slow
$CHECK cutover "$tmp/cutover-aa.json" "$(cat "$tmp/cutover-aa.exit")" \
	"$tmp/cutover-cc.json" "$(cat "$tmp/cutover-cc.exit")" \
	"$tmp/cutover-slow.json" "$(cat "$tmp/cutover-slow.exit")"

# --- DeepSeek V3's architecture, tokenizer and template -------------------
# With the rule engine too: its ignore_eos requests are left alone, the graded
# smoke suite's tool calls come back through vLLM's deepseek_v3 parser.
FOLDER=$OUT/model-deepseek_v3
vllm_start_rules deepseek_v3 right "$tmp/graded.json"
run render-dsv3 "$TESTS/vllm/render.json"
$CHECK audit "$RUNS/render-dsv3"
$CHECK own-template "$RUNS/render-dsv3" "$FOLDER/tokenizer_config.json"
curl -sS -o "$tmp/tokenize.json" -H 'Content-Type: application/json' \
	-d '{"model": "tiny-deepseek_v3", "prompt": "The capital of Norway is"}' "$URL/tokenize"
$CHECK bos "$RUNS/render-dsv3" "$RUNS/render" "$tmp/tokenize.json" 0
run graded-dsv3 "$tmp/graded.json"
$CHECK audit "$RUNS/graded-dsv3"
$CHECK graded "$RUNS/graded-dsv3"
vllm_stop

# --- Speculative decoding: n-gram drafts, which the CPU build serves ------
# Two runs of the load matrix with --metrics on one server: each level's
# acceptance from vLLM's spec_decode counters, A | B in the diff, and the gate
# on it passes the same server twice.
FOLDER=$OUT/model-qwen3
vllm_start qwen3 "" --speculative-config \
	'{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4, "prompt_lookup_min": 2}'
run spec-a "$TESTS/vllm/load.json" --metrics
run spec-b "$TESTS/vllm/load.json" --metrics
$CHECK spec "$RUNS/spec-a" 3
st=0
"$NEEDLE" diff "$RUNS/spec-a" "$RUNS/spec-b" --gate 'spec_acceptance_ratio>=0.9' > "$tmp/spec.md" 2> "$tmp/err" || st=$?
[ "$st" = 0 ] && grep -q '^## Speculative decoding' "$tmp/spec.md" ||
	fail "spec: needle diff --gate spec_acceptance_ratio>=0.9 exit $st: $(cat "$tmp/err")"
echo "spec: acceptance per level from vLLM's counters, the same server twice passes the gate"
vllm_stop

$CHECK versions "$RUNS"
echo "test-vllm: passed"
