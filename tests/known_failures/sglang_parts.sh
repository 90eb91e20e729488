#!/bin/sh
# Known failure: needle's audit flattens content parts with "\n" (vLLM) even against an
# SGLang server, which joins them with " " (PROTOCOL.md §4). Expected: usage_delta 0 on
# both dialects. See README.md here.
set -eu
. "$TESTS/refserver/lib.sh"
tmp=$(mktemp -d)
trap 'refserver_stop; rm -rf "$tmp"' EXIT
cat >"$tmp/suite.json" <<'JSON'
{"suite": "x", "cases": [{"id": "parts", "kind": "chat", "max_tokens": 64, "expect": {"json": {"answer": 437}},
 "messages": [{"role": "system", "content": [{"type": "text", "text": "Be brief."}, {"type": "text", "text": "Answer in JSON."}]},
  {"role": "user", "content": [{"type": "text", "text": "Hello"}, {"type": "text", "text": "world. Compute 19 * 23. Reply with only a JSON object {\"answer\": <integer>}."}]}]}]}
JSON
for d in vllm sglang; do
	refserver_start --dialect $d
	"$NEEDLE" run "$tmp/suite.json" --base-url "$REF_URL/v1" --model ref-good --tokenizer "$DEEPSEEK_JSON" \
		--template deepseek-v3 --out "$tmp/$d" >/dev/null 2>&1 || true
	refserver_stop
	node "$TESTS/refserver/records.js" "$tmp/$d" 'recs[0].audit.usage_delta === 0 && recs[0].verdict === "pass"' \
		"$d: text parts counted as the server joins them"
done
