#!/bin/sh
# End to end (issue 4 acceptance): suites/recall-128k.json against the reference server
# (vLLM dialect) started with --max-model-len 131072 (a 128K deployment: the
# 126,976-token prompts plus max_tokens 4,096 fit exactly) with the DeepSeek V3
# tokenizer.json and the deepseek-v3 template.
#   ref-good:      every request has usage_delta 0 (needle's local count equals the
#                  count of the real template + HF tokenizers), all pass, exit 0;
#   ref-forgetful: the 50% needle fails in every document, 10% and 90% pass, exit 1.
set -eu
. "$TESTS/lib/cli.sh"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
suite=$(fixture suites/recall-128k.json)
export REF_LOG="$tmp/server.log"
refserver_start --log "$REF_LOG" --max-model-len 131072

rc=0
"$NEEDLE" run "$suite" --base-url "$REF_URL/v1" --model ref-good \
	--tokenizer "$ds" --template deepseek-v3 --out "$tmp/good" >"$tmp/good.out" 2>&1 || rc=$?
[ "$rc" = 0 ] || { echo "ref-good: exit $rc, expected 0"; cat "$tmp/good.out"; exit 1; }
node "$TESTS/refserver/records.js" "$tmp/good" 'recs.length === 3' '3 records (seeds 1-3)'
node "$TESTS/refserver/records.js" "$tmp/good" \
	'recs.every(r => r.verdict === "pass" && r.transport.ok && r.audit.ok && r.grade.ok)' 'all pass'
node "$TESTS/refserver/records.js" "$tmp/good" \
	'recs.every(r => r.audit.usage_delta === 0 && r.audit.local_prompt_tokens === 126976 && r.usage.prompt_tokens === 126976)' \
	'usage_delta 0 and exactly 126976 prompt tokens on every request'
node "$TESTS/refserver/records.js" "$tmp/good" \
	'JSON.stringify(recs.map(r => r.seed).sort()) === "[1,2,3]"' 'one record per seed'
# The server's own count (real template + HF tokenizers) for every chat request.
node "$TESTS/refserver/records.js" "$tmp/good" \
	'log.filter(l => l.path === "/v1/chat/completions").length === 3 && log.filter(l => l.path === "/v1/chat/completions").every(l => l.prompt_tokens === 126976 && l.stream === true && l.stream_options && l.stream_options.include_usage === true)' \
	'server saw 3 streaming requests of 126976 tokens with include_usage'

rc=0
"$NEEDLE" run "$suite" --base-url "$REF_URL/v1" --model ref-forgetful \
	--tokenizer "$ds" --template deepseek-v3 --out "$tmp/forgetful" >"$tmp/forgetful.out" 2>&1 || rc=$?
[ "$rc" = 1 ] || { echo "ref-forgetful: exit $rc, expected 1"; cat "$tmp/forgetful.out"; exit 1; }
node "$TESTS/refserver/records.js" "$tmp/forgetful" \
	'recs.length === 3 && recs.every(r => r.verdict === "fail" && r.transport.ok && r.audit.ok && r.audit.usage_delta === 0 && !r.grade.ok)' \
	'forgetful: transport and audit fine, grade fails'
node "$TESTS/refserver/records.js" "$tmp/forgetful" \
	'recs.every(r => r.grade.needles.length === 3 && r.grade.needles.every(n => n.ok === (n.depth !== 50)))' \
	'forgetful: exactly the 50% needle fails'
echo "recall-128k: ref-good all pass with usage_delta 0; ref-forgetful fails the 50% needle"
