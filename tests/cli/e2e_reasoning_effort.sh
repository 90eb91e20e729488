#!/bin/sh
# SGLang turns reasoning_effort into the template kwargs thinking and
# enable_thinking = (effort != "none") unless the request set them (docs/protocol.md "Thinking switches",
# ChatCompletionRequest.normalize_reasoning_inputs). With the Qwen3 template and
# reasoning_effort "none" the server renders the empty think block; needle's audit
# must too (usage_delta 0), and an explicit enable_thinking must win over the effort.
set -eu
. "$TESTS/lib/cli.sh"
Q=$(fixture hf/qwen3)
cat >"$tmp/suite.json" <<'JSON'
{"suite": "x", "cases": [{"id": "none", "kind": "chat", "reasoning_effort": "none", "max_tokens": 64,
 "expect": {"json": {"answer": 437}},
 "messages": [{"role": "user", "content": "Compute 19 * 23. Reply with only a JSON object {\"answer\": <integer>}."}]},
 {"id": "explicit", "kind": "chat", "reasoning_effort": "none", "chat_template_kwargs": {"enable_thinking": true},
  "max_tokens": 64, "expect": {"json": {"answer": 437}},
  "messages": [{"role": "user", "content": "Compute 19 * 23. Reply with only a JSON object {\"answer\": <integer>}."}]}]}
JSON
run() { # DIALECT: the suite against the reference server in that dialect, into $tmp/DIALECT
	refserver_start --dialect "$1" --tokenizer "$Q"
	"$NEEDLE" run "$tmp/suite.json" --base-url "$REF_URL/v1" --model ref-good --tokenizer "$Q/tokenizer.json" \
		--template qwen3 --out "$tmp/$1" >/dev/null 2>&1 || true
	refserver_stop
}
run sglang
node "$TESTS/refserver/records.js" "$tmp/sglang" 'recs.find(r => r.case === "none").audit.usage_delta === 0 && recs.find(r => r.case === "none").verdict === "pass"' \
	'sglang: reasoning_effort "none" rendered with enable_thinking false'
node "$TESTS/refserver/records.js" "$tmp/sglang" 'recs.find(r => r.case === "explicit").audit.usage_delta === 0 && recs.find(r => r.case === "explicit").verdict === "pass"' \
	'sglang: explicit enable_thinking true wins over reasoning_effort "none"'
# vLLM main derives enable_thinking alone (docs/protocol.md "Thinking switches"); the audit agrees.
run vllm
node "$TESTS/refserver/records.js" "$tmp/vllm" 'recs.length === 2 && recs.every(r => r.audit.usage_delta === 0 && r.verdict === "pass")' \
	'vllm: reasoning_effort "none" rendered with enable_thinking false, explicit kwargs win'
echo "reasoning_effort: thinking kwargs derived as SGLang and vLLM do, explicit kwargs win"
