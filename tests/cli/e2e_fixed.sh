#!/bin/sh
# End to end, fixed-length cases and pass-through of the vLLM/SGLang extras: with
# ignore_eos the reference server generates exactly max_tokens (pass); ref-short stops
# early (length_mismatch); the server saw ignore_eos, min_tokens, reasoning_effort,
# chat_template_kwargs, seed, temperature and stream_options.include_usage.
set -eu
. "$TESTS/lib/cli.sh"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
export REF_LOG="$tmp/log"
refserver_start --log "$REF_LOG"
cat >"$tmp/suite.json" <<'JSON'
{"suite": "x", "cases": [{"id": "fixed", "kind": "chat", "messages": [{"role": "user", "content": "Write about the sea."}],
 "max_tokens": 50, "ignore_eos": true, "min_tokens": 10, "reasoning_effort": "low",
 "chat_template_kwargs": {"thinking": false}, "temperature": 0, "seed": 7}]}
JSON
rc=0
"$NEEDLE" run "$tmp/suite.json" --base-url "$REF_URL/v1" --model ref-good --tokenizer "$ds" \
	--template deepseek-v3 --out "$tmp/good" >"$tmp/good.out" 2>&1 || rc=$?
[ "$rc" = 0 ] || { echo "ref-good: exit $rc"; cat "$tmp/good.out"; exit 1; }
node "$TESTS/refserver/records.js" "$tmp/good" \
	'recs[0].verdict === "pass" && recs[0].usage.completion_tokens === 50 && recs[0].finish_reason === "length" && recs[0].audit.usage_delta === 0' \
	'ignore_eos: exactly max_tokens, pass'
node "$TESTS/refserver/records.js" "$tmp/good" \
	'(l => l && l.ignore_eos === true && l.min_tokens === 10 && l.max_tokens === 50 && l.reasoning_effort === "low" && l.chat_template_kwargs.thinking === false && l.seed === 7 && l.temperature === 0 && l.stream === true && l.stream_options.include_usage === true)(log.find(l => l.path === "/v1/chat/completions"))' \
	'extras passed through'
rc=0
"$NEEDLE" run "$tmp/suite.json" --base-url "$REF_URL/v1" --model ref-short --out "$tmp/short" >"$tmp/short.out" 2>&1 || rc=$?
[ "$rc" = 1 ] || { echo "ref-short: exit $rc, expected 1"; cat "$tmp/short.out"; exit 1; }
node "$TESTS/refserver/records.js" "$tmp/short" \
	'recs[0].verdict === "fail" && JSON.stringify(recs[0].transport.failures) === "[\"length_mismatch\"]" && recs[0].usage.completion_tokens < 50' \
	'ref-short: length_mismatch'
echo "fixed length: exact max_tokens passes, a short answer is length_mismatch; extras passed through"
