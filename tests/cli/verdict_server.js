// A loopback server for tests/cli/verdict_*.sh: one served model "m" and a
// healthy vLLM-style stream answering "ok"; over TLS with the key and
// certificate a test made (its own private CA) when they are given.
//
//   node verdict_server.js [KEY CERT]   prints "verdict listening on http(s)://127.0.0.1:PORT"
'use strict';

const fs = require('fs');
const http = require('http');
const https = require('https');
const fake = require('../lib/fake_server');

const [key, cert] = process.argv.slice(2);
const frames = [
	{ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
	{ choices: [{ index: 0, delta: { content: 'ok' }, finish_reason: 'stop' }] },
	{ choices: [], usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } },
];

function handler(req, res) {
	req.resume();
	req.on('end', () => {
		if (req.method === 'GET' && req.url === '/v1/models')
			return fake.json(res, 200, { object: 'list', data: [{ id: 'm', object: 'model', owned_by: 'vllm', max_model_len: 4096 }] });
		if (req.method === 'POST' && req.url === '/v1/chat/completions')
			return fake.play(req, res, { status: 200, headers: { 'content-type': 'text/event-stream' }, body: fake.sse(frames) });
		return fake.json(res, 404, { detail: 'Not Found' });
	});
}

const server = key ? https.createServer({ key: fs.readFileSync(key), cert: fs.readFileSync(cert) }, handler)
	: http.createServer(handler);
server.listen(0, '127.0.0.1', () => {
	process.stdout.write(`verdict listening on ${key ? 'https' : 'http'}://127.0.0.1:${server.address().port}\n`);
});
