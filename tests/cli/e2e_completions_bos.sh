#!/bin/sh
# Audit of /v1/completions (a case with "prompt"): the servers encode with
# add_special_tokens=true and the DeepSeek V3 tokenizer (LlamaTokenizerFast,
# add_bos_token true in tokenizer_config.json) adds the BOS, whatever tokenizer.json's
# post-processor says, on transformers 4; on transformers 5 it adds none. needle asks
# the server once (its /tokenize of a short prompt) and counts as it does: usage_delta
# 0 either way, the answer in the manifest.
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
node -e '
const m = JSON.parse(require("fs").readFileSync(process.argv[1] + "/manifest.json", "utf8"));
if (!/^added \(its \/tokenize: \d+ tokens, the count with it\)$/.test(m.tokenizer.completions_bos_server) || m.tokenizer.completions_bos_id !== 0) {
	console.log("FAIL manifest: " + JSON.stringify(m.tokenizer)); process.exit(1); }' "$tmp/run"
refserver_stop
# a server that adds no BOS (vLLM on transformers 5): needle counts none
refserver_start --no-added-bos
"$NEEDLE" run "$tmp/suite.json" --base-url "$REF_URL/v1" --model ref-good --tokenizer "$ds" \
	--template deepseek-v3 --out "$tmp/none" >/dev/null 2>&1 || true
node -e '
const fs = require("fs"), d = process.argv[1];
const m = JSON.parse(fs.readFileSync(d + "/manifest.json", "utf8"));
const r = JSON.parse(fs.readFileSync(d + "/results.jsonl", "utf8").trim());
if (!/^not added \(its \/tokenize: \d+ tokens, the count without it\)$/.test(m.tokenizer.completions_bos_server) ||
    m.tokenizer.completions_bos_id !== null || r.audit.usage_delta !== 0 || r.verdict !== "pass") {
	console.log("FAIL no BOS: " + JSON.stringify(m.tokenizer) + " delta " + r.audit.usage_delta); process.exit(1); }' "$tmp/none"
echo "completions: needle asks whether the server adds the BOS and counts as it does (usage_delta 0 both ways)"
