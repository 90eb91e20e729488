#!/bin/sh
# An SGLang build with only /get_server_info (releases before about December
# 2025, some gateways; docs/protocol.md "Readiness and detection"): no /version, no /server_info. It is
# detected as SGLang with its version, and the manifest says where from.
set -eu
. "$TESTS/lib/cli.sh"

cat > "$tmp/old_sglang.js" <<'JS'
'use strict';
const fake = require(process.env.TESTS + '/lib/fake_server');
const frames = [
	{ choices: [{ index: 0, delta: { role: 'assistant', content: '', reasoning_content: null }, finish_reason: null, matched_stop: null }] },
	{ choices: [{ index: 0, delta: { content: 'ok', reasoning_content: null }, finish_reason: null, matched_stop: null }] },
	{ choices: [{ index: 0, delta: { reasoning_content: null }, finish_reason: 'stop', matched_stop: 1 }] },
	{ choices: [], usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6, prompt_tokens_details: null, reasoning_tokens: 0 } },
];
fake.main('old_sglang', (req, res) => {
	if (req.method === 'GET' && req.url === '/v1/models')
		return fake.json(res, 200, { object: 'list', data: [{ id: 'm', object: 'model', owned_by: 'sglang', root: 'm', max_model_len: 4096 }] });
	if (req.method === 'GET' && req.url === '/get_server_info')
		return fake.json(res, 200, { model_path: '/models/m', tp_size: 8, context_length: 4096,
			internal_states: [{ last_gen_throughput: 0 }], version: '0.5.3rc0' });
	if (req.method === 'POST' && req.url === '/v1/chat/completions')
		return fake.play(req, res, { status: 200, headers: { 'content-type': 'text/event-stream' }, body: fake.sse(frames) });
	return fake.json(res, 404, { detail: 'Not Found' });
});
JS
fake_server "$tmp/old_sglang.js" --port 0
cat > "$tmp/suite.json" <<'JSON'
{"suite": "old", "cases": [{"id": "hello", "kind": "chat", "max_tokens": 8,
  "messages": [{"role": "user", "content": "Say ok."}], "expect": {"contains": ["ok"]}}]}
JSON
ds=$(fixture hf/deepseek_v3/tokenizer.json)
check_exit "0 1" "" "$NEEDLE" run "$tmp/suite.json" --base-url "$FAKE_URL" --out "$tmp/r" \
	--tokenizer "$ds" --template deepseek-v3
got=$(node -e 'const m=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")).endpoint.server;
	process.stdout.write([m.kind_guess, m.version, m.version_from].join(" "))' "$tmp/r/manifest.json")
[ "$got" = "sglang 0.5.3rc0 /get_server_info" ] || fail "server detected as '$got'"
# the audit renders as SGLang prepares messages
got=$(node -e 'const t=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")).template;
	process.stdout.write(t.server + " " + t.server_from)' "$tmp/r/manifest.json")
[ "$got" = "sglang detected" ] || fail "audit renders as '$got'"
echo "verdict_sglang_old: ok"
