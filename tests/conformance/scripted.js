// Scripted server for the conformance tests: replays exact byte sequences, with the
// chosen splits and delays, for one scenario per URL prefix (scripted responses as
// tests/lib/fake_server.js plays them).
//
// A request to /NAME/... is answered from scenario NAME (see scenarios.js):
//   GET  /NAME/v1/models            a one-model list (or the scenario's `models` reply)
//   POST /NAME/v1/chat/completions  the scenario's scripted `response`
//   anything else under /NAME       404 JSON (e.g. /version: "no version endpoint")
//
// Standalone: node scripted.js --port 0   (prints "scripted listening on http://...")
'use strict';

const fake = require('../lib/fake_server');
const { scenarios } = require('./scenarios');

function handler(req, res, body) {
	const m = /^\/([^/]+)(\/.*)$/.exec(req.url.split('?')[0]);
	const sc = m && scenarios.find((s) => s.name === m[1]);
	if (!sc) return fake.json(res, 404, { detail: 'Not Found' });
	const rest = m[2];
	sc.requests = sc.requests || [];
	sc.requests.push({ method: req.method, path: rest, headers: req.headers, body: body.toString('utf8') });
	if (req.method === 'GET' && rest === '/v1/models') {
		if (sc.models) return fake.play(req, res, sc.models);
		return fake.json(res, 200, { object: 'list', data: [{ id: sc.name, object: 'model', created: 1790000000,
			owned_by: sc.dialect === 'sglang' ? 'sglang' : 'vllm', root: sc.name, parent: null,
			max_model_len: 163840 }] });
	}
	if (req.method === 'POST' && rest === '/v1/chat/completions') return fake.play(req, res, sc.response);
	return fake.json(res, 404, { detail: 'Not Found' });
}

const start = (port, host) => fake.start(handler, port, host);

module.exports = { start, bodyBytes: fake.bodyBytes };

if (require.main === module) fake.main('scripted', handler);
