// Scripted server for the conformance tests: replays exact byte sequences, with the
// chosen splits and delays, for one scenario per URL prefix.
//
// A request to /NAME/... is answered from scenario NAME (see scenarios.js):
//   GET  /NAME/v1/models            a one-model list (or the scenario's `models` reply)
//   POST /NAME/v1/chat/completions  the scenario's scripted `response`
//   anything else under /NAME       404 JSON (e.g. /version: "no version endpoint")
//
// A response is {status, headers, headerDelay, body: [SEGMENT, ...], end}; a SEGMENT is
// a string or Buffer (written as one write), {delay: MS}, {bytewise: true|false} (from then
// on, write one byte per write) or {stall: true} (go silent until the client hangs up).
// `end` is 'end' (default: a clean end of the chunked body), 'destroy' (drop the socket
// without the terminating chunk). A body written with `length: true` gets a
// Content-Length instead of chunked encoding.
//
// Standalone: node scripted.js --port 0   (prints "scripted listening on http://...")
'use strict';

const http = require('http');
const { scenarios } = require('./scenarios');

function sleep(ms) {
	return new Promise((r) => setTimeout(r, ms));
}

function tick() {
	return new Promise((r) => setImmediate(r));
}

function bodyBytes(resp) {
	const parts = [];
	for (const seg of resp.body || []) {
		if (typeof seg === 'string') parts.push(Buffer.from(seg, 'utf8'));
		else if (Buffer.isBuffer(seg)) parts.push(seg);
	}
	return Buffer.concat(parts);
}

async function play(req, res, resp) {
	let closed = false;
	res.on('close', () => { closed = true; });
	req.socket.setNoDelay(true);
	if (resp.headerDelay) await sleep(resp.headerDelay);
	const headers = Object.assign({}, resp.headers || {});
	if (resp.length) headers['content-length'] = bodyBytes(resp).length;
	res.writeHead(resp.status || 200, headers);
	res.flushHeaders();
	let bytewise = false;
	for (const seg of resp.body || []) {
		if (closed) return;
		if (typeof seg === 'string' || Buffer.isBuffer(seg)) {
			const buf = Buffer.isBuffer(seg) ? seg : Buffer.from(seg, 'utf8');
			if (!bytewise) res.write(buf);
			else {
				for (let i = 0; i < buf.length && !closed; i++) {
					res.write(buf.subarray(i, i + 1));
					if (i % 16 === 15) await sleep(1);
					else await tick();
				}
			}
		} else if (seg.delay !== undefined) await sleep(seg.delay);
		else if (seg.bytewise !== undefined) bytewise = seg.bytewise;
		else if (seg.stall) {
			await new Promise((r) => { if (closed) r(); else res.on('close', r); });
			return;
		}
	}
	if (resp.end === 'destroy') {
		await sleep(30);
		res.socket.destroy();
		return;
	}
	res.end();
}

function json(res, status, obj) {
	const b = JSON.stringify(obj);
	res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(b) });
	res.end(b);
}

function handler(req, res) {
	const chunks = [];
	req.on('data', (c) => chunks.push(c));
	req.on('end', () => {
		const m = /^\/([^/]+)(\/.*)$/.exec(req.url.split('?')[0]);
		const sc = m && scenarios.find((s) => s.name === m[1]);
		if (!sc) return json(res, 404, { detail: 'Not Found' });
		const rest = m[2];
		sc.requests = sc.requests || [];
		sc.requests.push({ method: req.method, path: rest, headers: req.headers,
			body: Buffer.concat(chunks).toString('utf8') });
		if (req.method === 'GET' && rest === '/v1/models') {
			if (sc.models) return play(req, res, sc.models);
			return json(res, 200, { object: 'list', data: [{ id: sc.name, object: 'model', created: 1790000000,
				owned_by: sc.dialect === 'sglang' ? 'sglang' : 'vllm', root: sc.name, parent: null,
				max_model_len: 163840 }] });
		}
		if (req.method === 'POST' && rest === '/v1/chat/completions') return play(req, res, sc.response);
		return json(res, 404, { detail: 'Not Found' });
	});
}

function start(port, host) {
	return new Promise((resolve) => {
		const server = http.createServer({ requestTimeout: 0, keepAliveTimeout: 1000 }, handler);
		server.listen(port, host || '127.0.0.1', () => resolve(server));
	});
}

module.exports = { start, bodyBytes };

if (require.main === module) {
	const i = process.argv.indexOf('--port');
	const port = i > 0 ? Number(process.argv[i + 1]) : 0;
	start(port).then((s) => {
		process.stdout.write(`scripted listening on http://127.0.0.1:${s.address().port}\n`);
	});
}
