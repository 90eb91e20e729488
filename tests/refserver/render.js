// The reference server's chat-template engine: Python jinja2 in transformers'
// settings, the same oracle the tests compare needle with (tests/jinja/render_py.py
// --serve), in one helper process started on first use. So needle and the reference
// server cannot agree with each other while both disagree with the engine vLLM runs.
//
//   const render = require('./render');
//   const { openai } = await render.contentFormat(text);   // vLLM's content format
//   const { ok, err } = await render.render(text, contextJsonText);
//
// The context is JSON text (read by Python's json.loads, so numbers keep their
// lexeme). Answers come back in request order; the helper exits when the server does.
'use strict';

const { spawn } = require('child_process');
const path = require('path');

const SCRIPT = path.join(__dirname, '..', 'jinja', 'render_py.py');
let helper = null;
let pending = [];
let partial = '';
const formats = new Map();

function fail(err) {
	const waiting = pending;
	pending = [];
	helper = null;
	for (const p of waiting) p.reject(err);
}

function start() {
	helper = spawn('/usr/bin/python3', [SCRIPT, '--serve'], { stdio: ['pipe', 'pipe', 'inherit'] });
	helper.stdout.setEncoding('utf8');
	helper.stdout.on('data', (chunk) => {
		partial += chunk;
		let nl;
		while ((nl = partial.indexOf('\n')) >= 0) {
			const line = partial.slice(0, nl);
			partial = partial.slice(nl + 1);
			const p = pending.shift();
			if (p) p.resolve(JSON.parse(line));
		}
	});
	helper.on('error', (e) => fail(new Error(`template helper: ${e.message}`)));
	helper.on('exit', (code) => fail(new Error(`template helper exited with status ${code}`)));
	helper.stdin.on('error', () => {});
	helper.unref();
	helper.stdout.unref();
	helper.stdin.unref();
}

function ask(req) {
	if (!helper) start();
	return new Promise((resolve, reject) => {
		pending.push({ resolve, reject });
		helper.stdin.write(JSON.stringify(req) + '\n');
	});
}

// Whether vLLM hands this template content as a list of parts ({openai: 0|1}).
async function contentFormat(text) {
	if (!formats.has(text)) formats.set(text, ask({ template: text, context: null }));
	return formats.get(text);
}

// Renders `text` with the variables of the JSON object text `context`:
// {ok: PROMPT} or {err: "ExceptionType: message"}.
function render(text, context) {
	return ask({ template: text, context });
}

module.exports = { contentFormat, render };
