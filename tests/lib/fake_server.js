// The fake-server helper: loopback HTTP servers that answer from a script, for tests
// that need replies the reference server does not give (exact bytes, splits, delays,
// a scripted tool-call conversation). Every such server is built on this module
// (tests/conformance/scripted.js, tests/cli/run_tools.js); shell tests start them with
// `fake_server` of tests/lib/cli.sh, which waits for the line that main() prints.
//
//   start(handler, port, host)  listens (port 0: a free one, host 127.0.0.1); each request's
//                               body is read whole, then handler(req, res, body) runs with
//                               body a Buffer; resolves to the http.Server
//   main(name, handler)         when the calling file is run as a script: start on --port N
//                               (default 0) and print "NAME listening on http://127.0.0.1:PORT"
//   json(res, status, value)    a JSON reply with Content-Length
//   sse(frames)                 the body segments of an SSE stream: one "data: JSON" event
//                               per frame, then "data: [DONE]"
//   play(req, res, resp)        plays a scripted response (below)
//   bodyBytes(resp)             the bytes of a scripted response's body, delays left out
//
// A scripted response is {status, headers, headerDelay, body: [SEGMENT, ...], end, length}; a
// SEGMENT is a string or Buffer (written as one write), {delay: MS}, {bytewise: true|false}
// (from then on, write one byte per write) or {stall: true} (go silent until the client
// hangs up). `end` is 'end' (default: a clean end of the chunked body) or 'destroy' (drop
// the socket without the terminating chunk). With `length: true` the body gets a
// Content-Length instead of chunked encoding.
'use strict';

const http = require('http');

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

async function writeBytewise(res, buf, isClosed) {
	for (let i = 0; i < buf.length && !isClosed(); i++) {
		res.write(buf.subarray(i, i + 1));
		if (i % 16 === 15) await sleep(1);
		else await tick();
	}
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
			else await writeBytewise(res, buf, () => closed);
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

function json(res, status, value) {
	const b = JSON.stringify(value);
	res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(b) });
	res.end(b);
}

function sse(frames) {
	return frames.map((f) => 'data: ' + JSON.stringify(f) + '\n\n').concat(['data: [DONE]\n\n']);
}

function start(handler, port, host) {
	return new Promise((resolve) => {
		const server = http.createServer({ requestTimeout: 0, keepAliveTimeout: 1000 }, (req, res) => {
			const chunks = [];
			req.on('data', (c) => chunks.push(c));
			req.on('end', () => handler(req, res, Buffer.concat(chunks)));
		});
		server.listen(port || 0, host || '127.0.0.1', () => resolve(server));
	});
}

function main(name, handler) {
	const i = process.argv.indexOf('--port');
	start(handler, i > 0 ? Number(process.argv[i + 1]) : 0).then((s) => {
		process.stdout.write(`${name} listening on http://127.0.0.1:${s.address().port}\n`);
	});
}

module.exports = { start, main, json, sse, play, bodyBytes };
