#!/bin/sh
# Audit with content given as text parts: vLLM joins them with "\n", SGLang with " "
# (docs/protocol.md "Message content"). needle renders as the detected server does (manifest
# template.server, server_from "detected"), so a correct server of either dialect
# gives usage_delta 0. Forcing the other dialect with --server gives the one-token
# difference, which shows the option is used (server_from "option"), and the
# record's audit hint names the content parts.
set -eu
. "$TESTS/lib/cli.sh"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
cat >"$tmp/suite.json" <<'JSON'
{"suite": "x", "cases": [{"id": "parts", "kind": "chat", "max_tokens": 64, "expect": {"json": {"answer": 437}},
 "messages": [{"role": "system", "content": [{"type": "text", "text": "Be brief."}, {"type": "text", "text": "Answer in JSON."}]},
  {"role": "user", "content": [{"type": "text", "text": "Hello"}, {"type": "text", "text": "world. Compute 19 * 23. Reply with only a JSON object {\"answer\": <integer>}."}]}]}]}
JSON
manifest() { # DIR EXPR MESSAGE
	node -e 'const m = JSON.parse(require("fs").readFileSync(process.argv[1] + "/manifest.json", "utf8"));
		if (!(new Function("m", "return (" + process.argv[2] + ");"))(m)) { console.error("FAILED: " + process.argv[3], JSON.stringify(m.template)); process.exit(1); }' "$@"
}
for d in vllm sglang; do
	other=vllm; [ $d = vllm ] && other=sglang
	refserver_start --dialect $d
	"$NEEDLE" run "$tmp/suite.json" --base-url "$REF_URL/v1" --model ref-good --tokenizer "$ds" \
		--template deepseek-v3 --out "$tmp/$d" >/dev/null 2>&1 || true
	"$NEEDLE" run "$tmp/suite.json" --base-url "$REF_URL/v1" --model ref-good --tokenizer "$ds" \
		--template deepseek-v3 --server $other --out "$tmp/$d-forced" >/dev/null 2>&1 || true
	refserver_stop
	node "$TESTS/refserver/records.js" "$tmp/$d" 'recs[0].audit.usage_delta === 0 && recs[0].verdict === "pass"' \
		"$d: text parts counted as the server joins them"
	manifest "$tmp/$d" "m.template.server === '$d' && m.template.server_from === 'detected' && m.options.server === null" \
		"$d: manifest records the detected server"
	node "$TESTS/refserver/records.js" "$tmp/$d-forced" \
		'recs[0].audit.usage_delta !== 0 && recs[0].verdict === "fail" && /content parts/.test(recs[0].audit.hint)' \
		"$d server audited as $other: the joins differ, and the hint says so"
	manifest "$tmp/$d-forced" "m.template.server === '$other' && m.template.server_from === 'option' && m.options.server === '$other'" \
		"$d: manifest records --server $other"
done
rc=0
"$NEEDLE" run "$tmp/suite.json" --base-url http://127.0.0.1:9/v1 --server tgi >"$tmp/bad.out" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "unknown server 'tgi'" "$tmp/bad.out" || { echo "--server tgi: exit $rc"; cat "$tmp/bad.out"; exit 1; }
echo "text parts: joined as the detected (or forced) server joins them"
