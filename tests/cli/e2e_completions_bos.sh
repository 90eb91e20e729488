#!/bin/sh
# Audit of /v1/completions (a case with "prompt"): the servers encode with
# add_special_tokens=true and the DeepSeek V3 tokenizer (LlamaTokenizerFast,
# add_bos_token true in tokenizer_config.json) adds the BOS, whatever tokenizer.json's
# post-processor says; needle's local count must include it (usage_delta 0).
set -eu
. "$TESTS/lib/cli.sh"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
cat >"$tmp/suite.json" <<'JSON'
{"suite": "x", "cases": [{"id": "raw", "kind": "chat", "max_tokens": 64, "expect": {"json": {"answer": 437}},
 "prompt": "Compute 19 * 23. Reply with only a JSON object {\"answer\": <integer>}."}]}
JSON
refserver_start --log "$tmp/log"
"$NEEDLE" run "$tmp/suite.json" --base-url "$REF_URL/v1" --model ref-good --tokenizer "$ds" \
	--template deepseek-v3 --out "$tmp/run" >/dev/null 2>&1 || true
REF_LOG="$tmp/log" node "$TESTS/refserver/records.js" "$tmp/run" \
	'log.some(l => l.path === "/v1/completions") && recs[0].audit.usage_delta === 0 && recs[0].verdict === "pass"' \
	'completions prompt counted with the BOS the tokenizer adds'
echo "completions: the BOS the tokenizer adds is counted (usage_delta 0)"
