#!/bin/sh
# Pre-flight and "tokens": "max" (issue 8 item 12), against the reference
# server started with --max-model-len 8192 (it enforces vLLM's rule prompt +
# max_tokens <= max_model_len, and SGLang's < with --dialect sglang):
#   - a recall case with "tokens": "max" is built to max_model_len - max_tokens
#     (8128; SGLang 8127) and passes;
#   - a recall case of 8192 tokens + max_tokens 64 cannot fit: it is recorded
#     as failed with context_overflow, stays in the counts, and is not sent;
#   - without a tokenizer count the server's 400 gets the same code.
set -eu
. "$TESTS/lib/cli.sh"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
cat > "$tmp/suite.json" <<'JSON'
{"suite": "ctx", "defaults": {"max_tokens": 64, "temperature": 0, "usage_tolerance": 0},
 "cases": [
  {"id": "longest", "kind": "recall", "recall": {"tokens": "max", "depths": [50], "needles": 1}},
  {"id": "too-long", "kind": "recall", "recall": {"tokens": 8192, "depths": [50], "needles": 1}}
 ]}
JSON

for dialect in vllm sglang; do
	export REF_LOG="$tmp/$dialect.log"
	refserver_start --log "$REF_LOG" --max-model-len 8192 --dialect "$dialect"
	want=8128
	[ "$dialect" = sglang ] && want=8127
	check_exit 1 "" "$NEEDLE" run "$tmp/suite.json" --base-url "$REF_URL/v1" --model ref-good \
		--tokenizer "$ds" --template deepseek-v3 --out "$tmp/$dialect"
	node "$TESTS/refserver/records.js" "$tmp/$dialect" 'recs.length === 2' "$dialect: 2 records"
	node "$TESTS/refserver/records.js" "$tmp/$dialect" \
		"recs.some(r => r.case === 'longest' && r.verdict === 'pass' && r.recall.tokens === $want && r.usage.prompt_tokens === $want)" \
		"$dialect: \"max\" fills to $want tokens and passes"
	node "$TESTS/refserver/records.js" "$tmp/$dialect" \
		"recs.some(r => r.case === 'too-long' && r.verdict === 'fail' && JSON.stringify(r.transport.failures) === '[\"context_overflow\"]' && r.http_status === 0)" \
		"$dialect: the 8192-token case is context_overflow"
	node "$TESTS/refserver/records.js" "$tmp/$dialect" \
		"log.filter(l => l.path === '/v1/chat/completions').length === 1" "$dialect: only the case that fits was sent"
	grep -q 'context_overflow' "$tmp/$dialect/summary.json" || fail "$dialect: summary lacks context_overflow"
	refserver_stop
done

# No local count: the server's own 400 is context_overflow too.
cat > "$tmp/chat.json" <<JSON
{"suite": "ctx-chat", "cases": [{"id": "big", "kind": "chat", "max_tokens": 8000,
  "messages": [{"role": "user", "content": "$(node -e 'process.stdout.write("word ".repeat(600))')"}],
  "expect": {"contains": ["x"]}}]}
JSON
export REF_LOG="$tmp/chat.log"
refserver_start --log "$REF_LOG" --max-model-len 8192
check_exit 1 "" "$NEEDLE" run "$tmp/chat.json" --base-url "$REF_URL/v1" --model ref-good --out "$tmp/chat"
node "$TESTS/refserver/records.js" "$tmp/chat" \
	"recs.length === 1 && JSON.stringify(recs[0].transport.failures) === '[\"context_overflow\"]' && recs[0].http_status === 400" \
	'server 400 for context length is context_overflow'
echo "verdict_context: ok"
