// A loopback server that answers GET /v1/models as an OpenAI server does and
// every other request with raw bytes that are no HTTP response, for
// hostile_files.sh: MODE 09 (an HTTP/0.9 reply: a body without a status line)
// or MODE badstatus ("HTTP/1.1 abc OK"). MODE models09 answers /v1/models that
// way too. Prints "raw listening on http://127.0.0.1:PORT".
// Usage: node raw_server.js MODE
'use strict';
const net = require('net');

const mode = process.argv[2];
const models = JSON.stringify({ object: 'list', data: [{ id: 'm', object: 'model', max_model_len: 4096 }] });
const raw = mode === 'badstatus'
	? 'HTTP/1.1 abc OK\r\nContent-Type: text/event-stream\r\n\r\ndata: [DONE]\n\n'
	: 'data: {"choices":[]}\n\ndata: [DONE]\n\n';

const server = net.createServer((c) => {
	let head = '';
	c.on('error', () => {});
	c.on('data', (d) => {
		if (head === null) return;
		head += d.toString('latin1');
		if (!head.includes('\r\n\r\n')) return;
		const isModels = /^GET \/v1\/models /.test(head);
		head = null;
		if (isModels && mode !== 'models09')
			c.end('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ' +
			      Buffer.byteLength(models) + '\r\nConnection: close\r\n\r\n' + models);
		else
			c.end(raw);
	});
});
server.listen(0, '127.0.0.1', () => console.log('raw listening on http://127.0.0.1:' + server.address().port));
