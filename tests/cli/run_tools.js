// A scripted OpenAI-compatible server for run_tools.sh (no dependencies): one
// model; streams tool-call deltas split across chunks for round 1, and for
// round 2 (a tool message at the end) answers with the tool results it was
// given, but only if the assistant turn carried the calls exactly as streamed.
'use strict';
const http = require('http');

function sse(res, chunks) {
	res.writeHead(200, { 'content-type': 'text/event-stream' });
	for (const c of chunks) res.write('data: ' + JSON.stringify(c) + '\n\n');
	res.write('data: {"id":"x","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}\n\n');
	res.end('data: [DONE]\n\n');
}
const chunk = (delta, finish) => ({ id: 'x', object: 'chat.completion.chunk', model: 'scripted',
	choices: [{ index: 0, delta, finish_reason: finish || null }] });
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

const srv = http.createServer((req, res) => {
	let body = '';
	req.on('data', (d) => { body += d; });
	req.on('end', () => {
		if (req.method === 'GET' && req.url === '/v1/models') {
			res.writeHead(200, { 'content-type': 'application/json' });
			return res.end(JSON.stringify({ object: 'list', data: [{ id: 'scripted', max_model_len: 4096 }] }));
		}
		if (req.method !== 'POST') {
			res.writeHead(404, { 'content-type': 'application/json' });
			return res.end('{"detail":"Not Found"}');
		}
		const r = JSON.parse(body);
		if (r.stream !== true || !r.stream_options || r.stream_options.include_usage !== true) {
			res.writeHead(400);
			return res.end('{"error":{"message":"stream with usage expected"}}');
		}
		const msgs = r.messages, last = msgs[msgs.length - 1];
		if (last.role === 'tool') {
			const tools = msgs.filter((m) => m.role === 'tool');
			const asst = msgs[msgs.length - 1 - tools.length];
			const ok = asst.role === 'assistant' && Array.isArray(asst.tool_calls) &&
				asst.tool_calls.length === tools.length &&
				tools.every((t, i) => t.tool_call_id === asst.tool_calls[i].id && asst.tool_calls[i].id === 'call_' + i);
			const text = ok ? 'Results: ' + tools.map((t) => t.content).join(' | ') : 'BAD round 2';
			return sse(res, [chunk({ role: 'assistant', content: '' }), chunk({ content: text.slice(0, 9) }),
				chunk({ content: text.slice(9) }, 'stop')]);
		}
		const q = String(last.content);
		if (q.includes('both'))
			return sse(res, calls([{ name: 'get_weather', args: { city: 'Oslo', unit: 'celsius' } },
				{ name: 'get_weather', args: { city: 'Paris', unit: 'celsius' } }]));
		if (q.includes('weather'))
			return sse(res, calls([{ name: 'get_weather', args: { city: 'Paris', unit: 'celsius' } }]));
		return sse(res, [chunk({ role: 'assistant', content: '' }), chunk({ content: '{"answer": 42}' }, 'stop')]);
	});
});
srv.listen(0, '127.0.0.1', () => console.log('scripted listening on http://127.0.0.1:' + srv.address().port));
