// The null server of the runner bench (tests/bench/run.sh, section runner): one model,
// and every chat completion answered at once with the same short stream (content "ok",
// finish_reason stop, usage), so what is measured is needle's own cost per attempt.
// A text completion (a load request, section load_client) is answered at once with
// max_tokens chunks of one token each, finish_reason length, and usage counting
// --prompt-tokens N prompt tokens (the load case's input_tokens; default 64).
'use strict';
const fake = require('../lib/fake_server');

const chunk = (delta, finish) => ({ id: 'n', object: 'chat.completion.chunk', model: 'null',
	choices: [{ index: 0, delta, finish_reason: finish || null }] });
const body = Buffer.from(fake.sse([chunk({ role: 'assistant', content: '' }), chunk({ content: 'ok' }, 'stop'),
	{ id: 'n', object: 'chat.completion.chunk', choices: [],
		usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } }]).join(''));

const pi = process.argv.indexOf('--prompt-tokens');
const promptTokens = pi > 0 ? Number(process.argv[pi + 1]) : 64;
const textBodies = new Map(); // max_tokens -> the stream's bytes
function textBody(n) {
	if (!textBodies.has(n)) {
		const frames = [];
		for (let i = 0; i < n; i++)
			frames.push({ id: 'n', object: 'text_completion', model: 'null',
				choices: [{ index: 0, text: ' x', finish_reason: i === n - 1 ? 'length' : null }] });
		frames.push({ id: 'n', object: 'text_completion', choices: [],
			usage: { prompt_tokens: promptTokens, completion_tokens: n, total_tokens: promptTokens + n } });
		textBodies.set(n, Buffer.from(fake.sse(frames).join('')));
	}
	return textBodies.get(n);
}

function handler(req, res, reqBody) {
	if (req.method === 'GET' && req.url === '/v1/models')
		return fake.json(res, 200, { object: 'list', data: [{ id: 'null', max_model_len: 4096 }] });
	if (req.method !== 'POST') return fake.json(res, 404, { detail: 'Not Found' });
	let out = body;
	if (req.url === '/v1/completions')
		out = textBody(Math.max(1, Number(JSON.parse(reqBody.toString()).max_tokens) || 1));
	res.writeHead(200, { 'content-type': 'text/event-stream', 'content-length': out.length });
	res.end(out);
}

fake.main('null', handler);
