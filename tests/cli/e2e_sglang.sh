#!/bin/sh
# End to end against the reference server in the SGLang dialect (role chunk with null
# reasoning_content, separate finish chunk, usage with reasoning_tokens, flat errors):
# a 32K recall suite plus an arithmetic chat case with the DeepSeek V3 tokenizer and
# template (usage_delta 0, all pass); reasoning first (recorded, ttft < ttfc); an error
# frame; an empty answer.
set -eu
. "$TESTS/lib/cli.sh"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
export REF_LOG="$tmp/server.log"
refserver_start --dialect sglang --log "$REF_LOG"

cat >"$tmp/suite.json" <<'JSON'
{"suite": "sglang-e2e", "defaults": {"max_tokens": 256, "temperature": 0},
 "cases": [
  {"id": "arith", "kind": "chat", "messages": [{"role": "user", "content": "Compute 19 * 23. Reply with only a JSON object {\"answer\": <integer>}."}],
   "expect": {"json": {"answer": 437}}},
  {"id": "recall-32k", "kind": "recall", "recall": {"tokens": 32768, "depths": [10, 50, 90], "seeds": [4, 5]}}
 ]}
JSON
run() { # run NAME MODEL EXPECTED_EXIT
	rc=0
	"$NEEDLE" run "$tmp/suite.json" --base-url "$REF_URL/v1" --model "$2" --tokenizer "$ds" \
		--template deepseek-v3 --out "$tmp/$1" --timeout 30 >"$tmp/$1.out" 2>&1 || rc=$?
	[ "$rc" = "$3" ] || { echo "$1 ($2): exit $rc, expected $3"; cat "$tmp/$1.out"; exit 1; }
}
run good ref-good 0
node "$TESTS/refserver/records.js" "$tmp/good" \
	'recs.length === 3 && recs.every(r => r.verdict === "pass" && r.audit.usage_delta === 0 && r.http_status === 200 && r.finish_reason === "stop")' \
	'sglang ref-good: 3 attempts pass with usage_delta 0'
node "$TESTS/refserver/records.js" "$tmp/good" \
	'recs.filter(r => r.kind === "recall").every(r => r.audit.local_prompt_tokens === 32768) && recs.find(r => r.case === "arith").content === "{\"answer\": 437}"' \
	'sglang ref-good: exact recall size and the arithmetic answer'

run reasoning ref-reasoning 0
node "$TESTS/refserver/records.js" "$tmp/reasoning" \
	'recs.every(r => r.verdict === "pass" && typeof r.reasoning === "string" && r.reasoning.startsWith("The prompt has ") && r.timing.ttft_ms <= r.timing.ttfc_ms && !r.content.includes("The prompt has"))' \
	'sglang ref-reasoning: reasoning_content recorded apart from the content'

run errframe ref-error-frame 1
node "$TESTS/refserver/records.js" "$tmp/errframe" \
	'recs.every(r => r.verdict === "fail" && r.transport.failures.includes("sse_error_frame"))' \
	'sglang ref-error-frame: sse_error_frame'

run empty ref-empty 1
node "$TESTS/refserver/records.js" "$tmp/empty" \
	'recs.every(r => r.verdict === "fail" && r.transport.failures.includes("empty_output") && r.usage.completion_tokens > 0)' \
	'sglang ref-empty: empty_output although usage counts tokens'
echo "sglang dialect: pass, reasoning, error frame and empty output all recorded as expected"
