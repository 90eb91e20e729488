// Self-check of the scenarios, independent of needle: a small WHATWG-style SSE reader
// and stream assembler in JavaScript fetches every scenario from the scripted server and
// checks that the scripted bytes really mean what each scenario's `expect` says
// (content, reasoning, failure codes). It guards the conformance suite itself against
// a mistyped scenario; needle's behaviour is checked by run.js.
//   node tests/conformance/selfcheck.js
'use strict';

const http = require('http');
const { start } = require('./scripted');
const { scenarios } = require('./scenarios');

// WHATWG "event stream interpretation": lines end in CRLF, LF or CR; a leading BOM is
// dropped; ":" lines are comments; data lines are joined with "\n"; a blank line
// dispatches; an event not ended by a blank line at EOF is discarded.
function parseSse(buf) {
	let text = buf.toString('utf8');
	if (text.charCodeAt(0) === 0xFEFF) text = text.slice(1);
	const lines = text.split(/\r\n|\r|\n/);
	const complete = /(\r\n|\r|\n)$/.test(text);
	if (!complete) lines.pop();
	else lines.pop();
	const events = [];
	let data = null;
	for (const line of lines) {
		if (line === '') {
			if (data !== null) events.push(data.join('\n'));
			data = null;
			continue;
		}
		if (line.startsWith(':')) continue;
		const i = line.indexOf(':');
		const field = i < 0 ? line : line.slice(0, i);
		let value = i < 0 ? '' : line.slice(i + 1);
		if (value.startsWith(' ')) value = value.slice(1);
		if (field === 'data') (data = data || []).push(value);
	}
	return events;
}

// The servers' context-length wordings (docs/protocol.md "Context-length refusals"), read independently.
const CONTEXT = /maximum context length|context length is only|longer than the maximum model length|longer than the model's context length|exceeds model's maximum context length/i;

function httpFailure(status, buf) {
	let msg = '';
	try { const j = JSON.parse(buf.toString('utf8')); msg = (j.error && j.error.message) || j.message || ''; } catch (e) { /* not JSON */ }
	return status === 400 && CONTEXT.test(msg) ? 'context_overflow' : 'http_status';
}

// finish_reason: stop/tool_calls/function_call end an answer; abort, length (the
// suite is not fixed-length) and anything else fail.
function finishFailure(r) {
	const f = r.finish;
	if (f === null || ['stop', 'tool_calls', 'function_call'].includes(f)) return null;
	if (f === 'abort') return 'aborted';
	if (f === 'length') return r.content ? 'truncated' : null;
	return 'bad_finish_reason';
}

function assemble(status, buf, aborted) {
	const r = { failures: [], content: '', reasoning: '', usage: null, finish: null, tools: new Set() };
	if (status !== 200) { r.failures.push(httpFailure(status, buf)); return r; }
	if (aborted === 'timeout') r.failures.push('timeout');
	let done = false;
	for (const ev of parseSse(buf)) {
		if (ev === '[DONE]') { done = true; continue; }
		let j;
		try { j = JSON.parse(ev); } catch (e) { r.failures.push('malformed_sse'); continue; }
		if (j.error !== undefined) { // a frame that says the context is exceeded is what a 400 says
			const e = j.error, msg = typeof e === 'string' ? e : (e && e.message) || '';
			r.failures.push(CONTEXT.test(msg) ? 'context_overflow' : 'sse_error_frame');
			continue;
		}
		if (j.usage) r.usage = j.usage;
		for (const ch of j.choices || []) {
			const d = ch.delta || {};
			if (typeof d.content === 'string') r.content += d.content;
			const rs = typeof d.reasoning === 'string' ? d.reasoning : (typeof d.reasoning_content === 'string' ? d.reasoning_content : '');
			r.reasoning += rs;
			if (typeof ch.finish_reason === 'string') r.finish = ch.finish_reason;
			for (const t of d.tool_calls || []) r.tools.add(t.index);
		}
	}
	// needle's caps (docs/runs.md "Transport failure codes"): finish_reason 256 bytes, 1,024 tool calls
	if ((r.finish && r.finish.length >= 256) || r.tools.size > 1024) { r.failures = ['response_too_large']; return r; }
	const text = buf.toString('utf8');
	if (!done && !r.failures.includes('timeout')) r.failures.push('no_done');
	if (buf.length && !/^\uFEFF?(data|:|event|id|retry|foo)/.test(text)) r.failures.push('malformed_sse');
	const framed = r.failures.includes('sse_error_frame') || r.failures.includes('context_overflow');
	if (!r.usage && !framed) r.failures.push('missing_usage');
	else if (r.usage && r.usage.total_tokens !== r.usage.prompt_tokens + r.usage.completion_tokens) r.failures.push('bad_usage');
	const fin = done ? finishFailure(r) : null;
	if (fin) r.failures.push(fin);
	if (!r.content && fin !== 'aborted') r.failures.push(r.reasoning ? 'reasoning_only' : 'empty_output');
	return r;
}

function fetch(port, name) {
	return new Promise((resolve) => {
		const chunks = [];
		let aborted = null;
		const req = http.request({ host: '127.0.0.1', port, path: `/${name}/v1/chat/completions`, method: 'POST',
			headers: { 'content-type': 'application/json' } }, (res) => {
			res.on('data', (c) => chunks.push(c));
			res.on('end', () => resolve({ status: res.statusCode, buf: Buffer.concat(chunks), aborted }));
			res.on('error', () => resolve({ status: res.statusCode, buf: Buffer.concat(chunks), aborted: aborted || 'reset' }));
			res.on('aborted', () => { aborted = aborted || 'reset'; });
		});
		req.setTimeout(2500, () => { aborted = 'timeout'; req.destroy(); });
		req.on('error', () => resolve({ status: 200, buf: Buffer.concat(chunks), aborted: aborted || 'reset' }));
		req.end('{}');
	});
}

async function main() {
	const server = await start(0);
	const port = server.address().port;
	let bad = 0;
	await Promise.all(scenarios.filter((s) => s.expect.verdict !== null).map(async (sc) => {
		const f = await fetch(port, sc.name);
		const r = assemble(f.status, f.buf, f.aborted);
		const e = sc.expect;
		const c = [];
		for (const x of e.failures) if (!r.failures.includes(x)) c.push(`scripted bytes lack ${x} (reader saw ${r.failures})`);
		const allowed = new Set(e.failures.concat(e.optional || []));
		for (const x of r.failures) if (!allowed.has(x)) c.push(`reader saw unexpected ${x}`);
		if (e.content !== undefined && e.content !== null && r.content !== e.content) c.push(`content ${JSON.stringify(r.content)}`);
		if (e.reasoning !== undefined && (e.reasoning || '') !== r.reasoning) c.push(`reasoning ${JSON.stringify(r.reasoning)}`);
		if (c.length) { bad++; console.log(`FAIL ${sc.name}\n     - ${c.join('\n     - ')}`); }
		else console.log(`ok   ${sc.name}`);
	}));
	console.log(`${scenarios.length} scenarios, ${bad} inconsistent`);
	process.exit(bad ? 1 : 0);
}

main();
