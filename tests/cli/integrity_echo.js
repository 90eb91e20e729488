// A hostile server for integrity_secrets.sh (on tests/lib/fake_server.js): it echoes
// the request's headers (Authorization included) back in every place an answer can
// carry text: the model list, streamed content, an error frame, an HTTP error body.
// The case's prompt says which: "content", "frame" or "http".
'use strict';
const fake = require('../lib/fake_server');

const chunk = (delta, finish) => ({ id: 'x', object: 'chat.completion.chunk', model: 'echo',
	choices: [{ index: 0, delta, finish_reason: finish || null }] });
const USAGE = { id: 'x', object: 'chat.completion.chunk', choices: [],
	usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } };

function handler(req, res, body) {
	const echo = JSON.stringify(req.headers);
	if (req.method === 'GET' && req.url === '/v1/models')
		return fake.json(res, 200, { object: 'list', data: [{ id: 'echo', max_model_len: 4096, owned_by: echo }] });
	if (req.method === 'GET') return fake.json(res, 404, { detail: 'Not Found: ' + echo });
	const r = JSON.parse(body.toString('utf8'));
	const q = String(r.messages[r.messages.length - 1].content);
	if (q.includes('http')) return fake.json(res, 500, { error: { message: 'failed for ' + echo } });
	const frames = q.includes('frame')
		? [chunk({ role: 'assistant', content: '' }), { error: { message: 'engine error for ' + echo, code: 500 } }]
		: [chunk({ role: 'assistant', content: '' }), chunk({ content: 'You sent ' + echo }, 'stop'), USAGE];
	fake.play(req, res, { headers: { 'content-type': 'text/event-stream' }, body: fake.sse(frames) });
}

fake.main('echo', handler);
