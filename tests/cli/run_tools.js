// A scripted OpenAI-compatible server for run_tools.sh (on tests/lib/fake_server.js): one
// model; streams tool-call deltas split across chunks for round 1, and for round 2 (a
// tool message at the end) answers with the tool results it was given, but only if the
// assistant turn carried the calls exactly as streamed.
'use strict';
const fake = require('../lib/fake_server');

const USAGE = { id: 'x', object: 'chat.completion.chunk', choices: [],
	usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } };
const chunk = (delta, finish) => ({ id: 'x', object: 'chat.completion.chunk', model: 'scripted',
	choices: [{ index: 0, delta, finish_reason: finish || null }] });

function stream(req, res, chunks) {
	fake.play(req, res, { headers: { 'content-type': 'text/event-stream' }, body: fake.sse(chunks.concat([USAGE])) });
}

function calls(list) {
	const out = [chunk({ role: 'assistant', content: '' })];
	list.forEach((c, i) => {
		out.push(chunk({ tool_calls: [{ index: i, id: 'call_' + i, type: 'function', function: { name: c.name, arguments: '' } }] }));
		const a = JSON.stringify(c.args), h = a.length >> 1;
		out.push(chunk({ tool_calls: [{ index: i, function: { arguments: a.slice(0, h) } }] }));
		out.push(chunk({ tool_calls: [{ index: i, function: { arguments: a.slice(h) } }] }));
	});
	out.push(chunk({}, 'tool_calls'));
	return out;
}

function round2(req, res, msgs) {
	const tools = msgs.filter((m) => m.role === 'tool');
	const asst = msgs[msgs.length - 1 - tools.length];
	const ok = asst.role === 'assistant' && Array.isArray(asst.tool_calls) &&
		asst.tool_calls.length === tools.length &&
		tools.every((t, i) => t.tool_call_id === asst.tool_calls[i].id && asst.tool_calls[i].id === 'call_' + i);
	const text = ok ? 'Results: ' + tools.map((t) => t.content).join(' | ') : 'BAD round 2';
	stream(req, res, [chunk({ role: 'assistant', content: '' }), chunk({ content: text.slice(0, 9) }),
		chunk({ content: text.slice(9) }, 'stop')]);
}

function handler(req, res, body) {
	if (req.method === 'GET' && req.url === '/v1/models')
		return fake.json(res, 200, { object: 'list', data: [{ id: 'scripted', max_model_len: 4096 }] });
	if (req.method !== 'POST') return fake.json(res, 404, { detail: 'Not Found' });
	const r = JSON.parse(body.toString('utf8'));
	if (r.stream !== true || !r.stream_options || r.stream_options.include_usage !== true)
		return fake.json(res, 400, { error: { message: 'stream with usage expected' } });
	const msgs = r.messages, last = msgs[msgs.length - 1];
	if (last.role === 'tool') return round2(req, res, msgs);
	const q = String(last.content);
	if (q.includes('both'))
		return stream(req, res, calls([{ name: 'get_weather', args: { city: 'Oslo', unit: 'celsius' } },
			{ name: 'get_weather', args: { city: 'Paris', unit: 'celsius' } }]));
	if (q.includes('weather'))
		return stream(req, res, calls([{ name: 'get_weather', args: { city: 'Paris', unit: 'celsius' } }]));
	return stream(req, res, [chunk({ role: 'assistant', content: '' }), chunk({ content: '{"answer": 42}' }, 'stop')]);
}

fake.main('scripted', handler);
