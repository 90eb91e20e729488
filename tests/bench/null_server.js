// The null server of the runner bench (tests/bench/run.sh, section runner): one model,
// and every chat completion answered at once with the same short stream (content "ok",
// finish_reason stop, usage), so what is measured is needle's own cost per attempt.
'use strict';
const fake = require('../lib/fake_server');

const chunk = (delta, finish) => ({ id: 'n', object: 'chat.completion.chunk', model: 'null',
	choices: [{ index: 0, delta, finish_reason: finish || null }] });
const body = Buffer.from(fake.sse([chunk({ role: 'assistant', content: '' }), chunk({ content: 'ok' }, 'stop'),
	{ id: 'n', object: 'chat.completion.chunk', choices: [],
		usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } }]).join(''));

function handler(req, res) {
	if (req.method === 'GET' && req.url === '/v1/models')
		return fake.json(res, 200, { object: 'list', data: [{ id: 'null', max_model_len: 4096 }] });
	if (req.method !== 'POST') return fake.json(res, 404, { detail: 'Not Found' });
	res.writeHead(200, { 'content-type': 'text/event-stream', 'content-length': body.length });
	res.end(body);
}

fake.main('null', handler);
