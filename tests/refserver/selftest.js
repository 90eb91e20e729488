// Self-test of the reference server (no needle involved): starts server.js in both
// dialects and checks the protocol facts the end-to-end tests rely on (docs/protocol.md):
// prompt_tokens equal to an independent render + count with the same libraries, the
// context-length boundary (prompt + max_tokens <= max_model_len), chunk order in each
// dialect, error shapes, the API key, the needle-reading model, and a multi-MB body.
//   node tests/refserver/selftest.js
'use strict';

const http = require('http');
const path = require('path');
const fs = require('fs');
const { spawn } = require('child_process');
const { Tokenizer } = require('tokenizers');
const { Template } = require('@huggingface/jinja');

const { fixture } = require('../lib/fixture');
const DIR = fixture('hf/deepseek_v3');
let failures = 0;
function check(cond, what) {
	if (cond) return;
	failures++;
	console.log(`FAIL ${what}`);
}

function startServer(args) {
	return new Promise((resolve, reject) => {
		const p = spawn(process.execPath, [path.join(__dirname, 'server.js'), '--port', '0'].concat(args), { stdio: ['ignore', 'pipe', 'inherit'] });
		let buf = '';
		p.stdout.on('data', (d) => {
			buf += d;
			const m = /^refserver listening on (http:\/\/127\.0\.0\.1:(\d+))\n$/.exec(buf);
			if (m) resolve({ proc: p, port: Number(m[2]) });
		});
		p.on('exit', (c) => reject(new Error(`server exited ${c}: ${buf}`)));
	});
}

function request(port, method, p, body, headers) {
	return new Promise((resolve, reject) => {
		const data = body === undefined ? null : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
		const req = http.request({ host: '127.0.0.1', port, path: p, method,
			headers: Object.assign({ 'content-type': 'application/json' }, headers || {}) }, (res) => {
			const chunks = [];
			res.on('data', (c) => chunks.push(c));
			res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
		});
		req.on('error', reject);
		if (data) req.write(data);
		req.end();
	});
}

function events(text) {
	return text.split('\n\n').filter((s) => s.startsWith('data: ')).map((s) => s.slice(6))
		.map((s) => (s === '[DONE]' ? s : JSON.parse(s)));
}

async function main() {
	const cfg = JSON.parse(fs.readFileSync(path.join(DIR, 'tokenizer_config.json'), 'utf8'));
	const tok = Tokenizer.fromFile(path.join(DIR, 'tokenizer.json'));
	const tpl = new Template(cfg.chat_template);
	const independent = async (messages) => {
		const s = tpl.render({ messages, add_generation_prompt: true, bos_token: cfg.bos_token.content, eos_token: cfg.eos_token.content });
		return (await tok.encode(s, null, { addSpecialTokens: false })).getLength();
	};
	const v = await startServer(['--max-model-len', '4096', '--log', '/dev/null']);
	const s = await startServer(['--dialect', 'sglang', '--max-model-len', '4096']);
	const k = await startServer(['--api-key', 'sekrit']);
	try {
		// prompt_tokens = the real template + HF tokenizers, without added special tokens
		const convs = [
			[{ role: 'user', content: 'Compute 19 * 23. Reply with only a JSON object {"answer": <integer>}.' }],
			[{ role: 'system', content: 'Be brief.' }, { role: 'user', content: '你好，世界 — naïve café' },
				{ role: 'assistant', content: 'Hi.' }, { role: 'user', content: 'Again?' }],
		];
		for (const msgs of convs) {
			const want = await independent(msgs);
			const r = await request(v.port, 'POST', '/v1/chat/completions', { model: 'ref-good', messages: msgs, max_tokens: 32 });
			const j = JSON.parse(r.text);
			check(r.status === 200 && j.usage.prompt_tokens === want, `vllm prompt_tokens ${j.usage && j.usage.prompt_tokens} = independent ${want}`);
			const t = JSON.parse((await request(v.port, 'POST', '/tokenize', { messages: msgs })).text);
			check(t.count === want && t.tokens.length === want && t.max_model_len === 4096, '/tokenize count');
			const rs = JSON.parse((await request(s.port, 'POST', '/v1/chat/completions', { model: 'x', messages: msgs, max_tokens: 32 })).text);
			check(rs.usage.prompt_tokens === want, 'sglang prompt_tokens');
		}
		// Context boundary: prompt + max_tokens <= max_model_len (vLLM); >= rejects (SGLang).
		const msgs = convs[0];
		const P = await independent(msgs);
		let r = await request(v.port, 'POST', '/v1/chat/completions', { model: 'ref-good', messages: msgs, max_tokens: 4096 - P });
		check(r.status === 200, 'vllm: prompt + max_tokens = max_model_len is accepted');
		r = await request(v.port, 'POST', '/v1/chat/completions', { model: 'ref-good', messages: msgs, max_tokens: 4097 - P });
		let j = JSON.parse(r.text);
		check(r.status === 400 && j.error && j.error.code === 400 && /maximum context length is 4096 tokens/.test(j.error.message) &&
			j.error.param === 'input_tokens', 'vllm: one token over gives the nested 400');
		r = await request(s.port, 'POST', '/v1/chat/completions', { model: 'x', messages: msgs, max_tokens: 4096 - P });
		j = JSON.parse(r.text);
		check(r.status === 400 && j.object === 'error' && /maximum context length of 4096/.test(j.message), 'sglang: P + M >= N gives the flat 400');
		// Unknown model (vLLM 404), stream_options without stream.
		r = await request(v.port, 'POST', '/v1/chat/completions', { model: 'nope', messages: msgs });
		check(r.status === 404 && JSON.parse(r.text).error.type === 'NotFoundError', 'vllm unknown model 404');
		r = await request(v.port, 'POST', '/v1/chat/completions', { model: 'ref-good', messages: msgs, stream_options: { include_usage: true } });
		check(r.status === 400 && JSON.parse(r.text).error.param === 'stream_options', 'vllm stream_options without stream');
		// vLLM chunk order.
		const body = { model: 'ref-reasoning', messages: msgs, max_tokens: 200, stream: true, stream_options: { include_usage: true } };
		let ev = events((await request(v.port, 'POST', '/v1/chat/completions', body)).text);
		check(ev[0].choices[0].delta.role === 'assistant' && ev[0].choices[0].delta.content === '', 'vllm role chunk');
		check(ev[ev.length - 1] === '[DONE]' && ev[ev.length - 2].choices.length === 0 && ev[ev.length - 2].usage, 'vllm usage chunk then [DONE]');
		const last = ev[ev.length - 3].choices[0];
		check(last.finish_reason === 'stop' && 'stop_reason' in last, 'vllm finish_reason on the last delta chunk');
		const content = ev.slice(1, -2).map((e) => e.choices[0].delta.content || '').join('');
		const reasoning = ev.slice(1, -2).map((e) => e.choices[0].delta.reasoning || '').join('');
		check(content === '{"answer": 437}' && reasoning.length > 10, 'vllm reasoning then the answer');
		check(ev.every((e) => e === '[DONE]' || !('reasoning_content' in ((e.choices[0] || {}).delta || {}))), 'vllm new dialect has no reasoning_content');
		const u = ev[ev.length - 2].usage;
		check(u.total_tokens === u.prompt_tokens + u.completion_tokens && u.completion_tokens === ev.length - 3, 'vllm usage consistent, one token per chunk');
		// SGLang chunk order.
		ev = events((await request(s.port, 'POST', '/v1/chat/completions', body)).text);
		check(ev[0].choices[0].delta.reasoning_content === null && ev[0].choices[0].delta.role === 'assistant', 'sglang role chunk');
		const fin = ev[ev.length - 3].choices[0];
		check(fin.finish_reason === 'stop' && fin.matched_stop === 1 && Object.keys(fin.delta).join() === 'reasoning_content', 'sglang separate finish chunk');
		check(ev.slice(1, -3).every((e) => e.choices[0].finish_reason === null), 'sglang content chunks carry no finish_reason');
		check(typeof ev[ev.length - 2].usage.reasoning_tokens === 'number' && ev[ev.length - 2].usage.reasoning_tokens > 0, 'sglang reasoning_tokens');
		check(ev[1].model === 'ref-reasoning', 'sglang echoes the model');
		// API key: /v1 guarded, /tokenize not.
		r = await request(k.port, 'GET', '/v1/models');
		check(r.status === 401 && r.text === '{"error":"Unauthorized"}', 'vllm 401 body');
		r = await request(k.port, 'GET', '/v1/models', undefined, { authorization: 'Bearer sekrit' });
		check(r.status === 200 && JSON.parse(r.text).data[0].max_model_len === 1048576, 'models with key');
		// The model reads needles in a multi-MB prompt; ref-forgetful misses the middle one.
		const filler = 'The river bends slowly past the old mill and the quiet stone houses. ';
		const parts = [];
		for (let i = 0; i < 20000; i++) parts.push(filler);
		parts[2000] += 'The access code for project Heron is 7QX-4821-KB. ';
		parts[10000] += 'Remember: project Osprey uses the access code 2AB-9911-ZQ. ';
		parts[18000] += 'Kestrel\'s access code is 55R-0001-MM. ';
		const doc = parts.join('') + '\n\nReturn only a JSON object mapping each requested project name to its access_code. Projects: Heron, Osprey, Kestrel.';
		for (const [model, want] of [['ref-good', { Heron: '7QX-4821-KB', Osprey: '2AB-9911-ZQ', Kestrel: '55R-0001-MM' }],
			['ref-forgetful', { Heron: '7QX-4821-KB', Kestrel: '55R-0001-MM' }]]) {
			r = await request(k.port, 'POST', '/v1/chat/completions', { model, messages: [{ role: 'user', content: doc }] }, { authorization: 'Bearer sekrit' });
			j = JSON.parse(r.text);
			check(r.status === 200 && JSON.stringify(JSON.parse(j.choices[0].message.content)) === JSON.stringify(want),
				`${model} on a ${(doc.length / 1e6).toFixed(1)} MB prompt: ${j.choices && j.choices[0].message.content}`);
		}
	} finally {
		for (const p of [v, s, k]) p.proc.kill();
	}
	console.log(failures ? `${failures} check(s) failed` : 'refserver self-test passed');
	process.exit(failures ? 1 : 0);
}

main().catch((e) => { console.log(`FAIL ${e.stack}`); process.exit(1); });
