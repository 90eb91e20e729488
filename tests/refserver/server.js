#!/usr/bin/env node
// Reference server: a stand-in for a vLLM or SGLang OpenAI-compatible endpoint, for
// needle's end-to-end tests and demo. Written independently of needle's C code (no
// shared logic), so a protocol misunderstanding in one cannot hide in the other.
//
//   node tests/refserver/server.js --port PORT [--dialect vllm|sglang] [--tokenizer DIR]
//        [--host 127.0.0.1] [--max-model-len N] [--served-model-name NAME]
//        [--api-key KEY] [--reasoning-field reasoning|reasoning_content|both]
//        [--error-shape nested|flat] [--server-version V] [--tpot MS] [--log FILE]
//        [--max-num-seqs N] [--kv-cache-tokens N] [--enable-metrics] [--start-delay MS]
//
// `--help` prints the options, the timing model and the model-name behaviours.
//
// Prints exactly one line on stdout when ready: "refserver listening on http://HOST:PORT"
// (--port 0 picks a free port).
//
// Token accounting follows vLLM (docs/protocol.md "Prompt token accounting"): the chat template from the tokenizer
// DIR's tokenizer_config.json is rendered with Python jinja2 in transformers' settings
// (render.js: the tests' oracle, tests/jinja/render_py.py, as a helper process), with the
// context vLLM builds (add_generation_prompt, tools, reasoning_effort, only the
// chat_template_kwargs the template reads, the special tokens), and the string is
// counted with the Hugging Face `tokenizers` binding without added special tokens.
//
// The "model" reads the prompt: it finds "access code for project X is CODE" sentences
// (any sentence pairing a capitalised name with a code such as 7QX-4821-KB), works out
// which projects the question asks for, and answers with a JSON object; it evaluates
// "Compute A * B" and answers in the JSON shape the prompt asks for; otherwise it echoes.
//
// Misbehaviour is chosen by the model name, "ref-BEHAVIOUR[:key=value,...]" (see
// BEHAVIOURS below); e.g. "ref-slow:delay=3000", "ref-good:reasoning=1,field=both".
'use strict';

const http = require('http');
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const { Tokenizer } = require('tokenizers');
const render = require('./render');
const { Engine } = require('./engine');
const tasks = require('./tasks');
const structured = require('./structured');

// ---------------------------------------------------------------------------------------
// Command line

const DEFAULT_TOKENIZER = require('../lib/fixture').fixture('hf/deepseek_v3');

function usage(msg) {
	process.stderr.write(`refserver: ${msg}\n` +
		'usage: node server.js --port PORT [--dialect vllm|sglang] [--tokenizer DIR] (--help for more)\n');
	process.exit(2);
}

const HELP = `usage: node tests/refserver/server.js --port PORT [options]

A stand-in for a vLLM or SGLang OpenAI-compatible server (see README.md).

Options:
  --port PORT               port to listen on (0 picks a free one); required
  --host H                  address (127.0.0.1)
  --dialect vllm|sglang     which server to behave as (vllm)
  --tokenizer DIR|FILE      tokenizer.json (+ tokenizer_config.json) to count with (DeepSeek V3)
  --chat-template FILE      chat template instead of the tokenizer's
  --max-model-len N         context length (1048576)
  --served-model-name NAME  the one model served (default: every ref-* name)
  --api-key KEY             require "Authorization: Bearer KEY" on /v1 paths
  --reasoning-field F       reasoning | reasoning_content | both
  --error-shape S           nested | flat (vLLM nested, SGLang flat)
  --server-version V        reported by /version or /server_info
  --tpot MS                 time per output token at batch 1, for every request (0)
  --max-num-seqs N          requests running at once; more wait in a FIFO queue
                            (vLLM --max-num-seqs, SGLang --max-running-requests; no limit)
  --max-running-requests N  the same
  --kv-cache-tokens N       KV capacity behind the KV-usage gauge and the prefix cache's
                            size, least recently used blocks evicted (max(max-model-len, 2^20))
  --enable-metrics          serve /metrics in the SGLang dialect (vLLM always serves it)
  --no-added-bos            add no BOS of add_bos_token's beyond tokenizer.json's own
                            post-processor (vLLM on transformers 5); default: add it
                            as transformers 4's LlamaTokenizerFast does
  --enable-prompt-tokens-details, --enable-cache-report
                            report usage.prompt_tokens_details.cached_tokens (prefix-cache hits)
  --start-delay MS          answer 503 on every path for MS ms after start (a booting server)
  --log FILE                append one JSON line per request

Timing model (model-name options, "ref-good:prefill=20000,tpot=20,batch=5,seqs=8"):
  prefill=TPS   prompt tokens per second of prefill (0 = instant); prefills run side by side
  tpot=MS       ms per output token at batch 1 (default --tpot)
  batch=PCT     each other running request makes a token PCT% slower
  seqs=N        max_num_seqs for this request (default --max-num-seqs)
A request waits (FIFO) until fewer than seqs requests hold a slot; it holds its slot
until its response ends. Then, with P prompt tokens, n output tokens and r requests
holding slots while it decodes:
  TTFT = queue wait + P / prefill          (first token at the end of the prefill)
  TPOT = tpot * (1 + batch/100 * (r - 1))  (each token due that long after the previous)
  E2E  = TTFT + (n - 1) * TPOT
Closed loop at concurrency C <= seqs: r = C, so a round of N requests lasts about
ceil(N / C) * E2E and its output throughput is N * n / that.

Noise on the timing model (model-name options too; README.md "Noise"):
  jitter=S          lognormal sigma, per request, of its prefill time and of its TPOT
  jitter_prefill=S, jitter_tpot=S   each alone (default: jitter)
  drift=PCT         a slow drift: every time up to PCT% longer, rising and falling
  drift_period=SEC  once per SEC of wall time since the server started (60)
  stall_p=P         the share of requests that stall once, before a random token
  stall_ms=MS       how long a stall lasts (1000)
  slower=PCT        a regression: every prefill and token time PCT% longer
  seed=N            the noise's seed (1); one generator per model name, so a name
                    repeats its draws on a new server and continues them on the same

Misbehaviour by model name, ref-NAME[:key=value,...]: NAMES.
Options for any name: delay=MS keepalive=MS tpot=MS field=F reasoning=1,
empty_every=N (every N-th request of this model name is an empty 200),
empty_at=K (the K-th one only), wrong_p=P (each answer wrong with probability P,
seeded by wrong_seed=N), wrong_case=TEXT (every answer to a prompt containing TEXT
wrong), and any behaviour flag (e.g. fenced=1).

Endpoints: /v1/models, /v1/chat/completions, /v1/completions, /tokenize, /health,
/metrics, /version (vLLM), /server_info and /model_info (SGLang).
`;

function parseArgs(argv) {
	const o = {
		port: null, host: '127.0.0.1', dialect: 'vllm', tokenizer: DEFAULT_TOKENIZER,
		maxModelLen: 1048576, served: null, apiKey: null, reasoningField: null,
		errorShape: null, serverVersion: null, tpot: 0, log: null, chatTemplate: null,
		maxNumSeqs: 0, kvCacheTokens: 0, enableMetrics: false, startDelay: 0,
	};
	const take = (i) => {
		if (i + 1 >= argv.length) usage(`option '${argv[i]}' needs a value`);
		return argv[i + 1];
	};
	for (let i = 0; i < argv.length; i += 2) {
		const a = argv[i];
		if (a === '--help') {
			process.stdout.write(HELP.replace('NAMES', Object.keys(BEHAVIOURS).join(', ')));
			process.exit(0);
		}
		if (a === '--enable-metrics') {
			o.enableMetrics = true;
			i--;
			continue;
		}
		if (a === '--no-added-bos') {
			o.noAddedBos = true;
			i--;
			continue;
		}
		if (a === '--enable-prompt-tokens-details' || a === '--enable-cache-report') {
			o.cacheReport = true; // vLLM's and SGLang's flag for usage.prompt_tokens_details
			i--;
			continue;
		}
		const v = take(i);
		switch (a) {
		case '--port': o.port = Number(v); break;
		case '--host': o.host = v; break;
		case '--dialect': o.dialect = v; break;
		case '--tokenizer': o.tokenizer = v; break;
		case '--chat-template': o.chatTemplate = v; break;
		case '--max-model-len': o.maxModelLen = Number(v); break;
		case '--served-model-name': o.served = v; break;
		case '--api-key': o.apiKey = v; break;
		case '--reasoning-field': o.reasoningField = v; break;
		case '--error-shape': o.errorShape = v; break;
		case '--server-version': o.serverVersion = v; break;
		case '--tpot': o.tpot = Number(v); break;
		case '--log': o.log = v; break;
		case '--max-num-seqs': case '--max-running-requests': o.maxNumSeqs = Number(v); break;
		case '--kv-cache-tokens': o.kvCacheTokens = Number(v); break;
		case '--start-delay': o.startDelay = Number(v); break;
		default: usage(`unknown option '${a}'`);
		}
	}
	if (o.port === null || !Number.isInteger(o.port) || o.port < 0 || o.port > 65535)
		usage('--port PORT is required (0 picks a free port)');
	if (o.dialect !== 'vllm' && o.dialect !== 'sglang')
		usage(`unknown dialect '${o.dialect}'`);
	if (!Number.isInteger(o.maxModelLen) || o.maxModelLen < 1)
		usage('--max-model-len must be a positive integer');
	for (const [k, v] of [['--max-num-seqs', o.maxNumSeqs], ['--kv-cache-tokens', o.kvCacheTokens],
		['--start-delay', o.startDelay], ['--tpot', o.tpot]])
		if (!Number.isFinite(v) || v < 0) usage(`${k} must be a non-negative number`);
	if (o.reasoningField === null)
		o.reasoningField = o.dialect === 'sglang' ? 'reasoning_content' : 'reasoning';
	if (!['reasoning', 'reasoning_content', 'both'].includes(o.reasoningField))
		usage(`unknown reasoning field '${o.reasoningField}'`);
	// vLLM >= 0.10.1 nests errors; SGLang chat/completions errors are flat.
	if (o.errorShape === null) o.errorShape = o.dialect === 'sglang' ? 'flat' : 'nested';
	if (o.serverVersion === null)
		o.serverVersion = o.dialect === 'sglang' ? '0.5.5+refserver' : '0.11.2+refserver';
	return o;
}

// ---------------------------------------------------------------------------------------
// Tokenizer and chat template

function specialToken(v) {
	if (v === undefined || v === null) return null;
	if (typeof v === 'string') return v;
	if (typeof v === 'object' && typeof v.content === 'string') return v.content;
	return null;
}

function loadModel(o) {
	let dir = o.tokenizer;
	let file = path.join(dir, 'tokenizer.json');
	if (fs.existsSync(dir) && fs.statSync(dir).isFile()) {
		file = dir;
		dir = path.dirname(dir);
	}
	if (!fs.existsSync(file)) usage(`cannot read tokenizer '${file}': no such file`);
	const tok = Tokenizer.fromFile(file);
	let cfg = {};
	const cfgPath = path.join(dir, 'tokenizer_config.json');
	if (fs.existsSync(cfgPath)) cfg = JSON.parse(fs.readFileSync(cfgPath, 'utf8'));
	let source = null;
	if (o.chatTemplate) source = fs.readFileSync(o.chatTemplate, 'utf8');
	else if (typeof cfg.chat_template === 'string') source = cfg.chat_template;
	else if (Array.isArray(cfg.chat_template)) {
		const d = cfg.chat_template.find((t) => t.name === 'default');
		if (d) source = d.template;
	} else if (fs.existsSync(path.join(dir, 'chat_template.jinja')))
		source = fs.readFileSync(path.join(dir, 'chat_template.jinja'), 'utf8');
	const special = {};
	for (const k of ['bos_token', 'eos_token', 'pad_token', 'unk_token']) {
		const s = specialToken(cfg[k]);
		if (s !== null) special[k] = s;
	}
	const eosId = special.eos_token ? tok.tokenToId(special.eos_token) : null;
	const bosId = special.bos_token ? tok.tokenToId(special.bos_token) : null;
	return {
		tok, cfg, special, eosId, bosId, file,
		// the BOS add_bos_token asks for, added on top of tokenizer.json's own
		// post-processor (transformers 4's LlamaTokenizerFast); none on transformers 5
		addsBos: !o.noAddedBos && !!cfg.add_bos_token && bosId !== null,
		template: source,
	};
}

// The prompt's token ids as the server sees them.
async function encodePrompt(model, text, addSpecial) {
	const enc = await model.tok.encode(text, null, { addSpecialTokens: !!addSpecial });
	let ids = enc.getIds();
	// transformers' LlamaTokenizerFast adds the BOS itself when add_bos_token is set,
	// whatever tokenizer.json's post-processor says (vLLM /v1/completions,
	// add_special_tokens defaults to true there).
	if (addSpecial && model.addsBos && ids[0] !== model.bosId)
		ids = [model.bosId].concat(ids);
	return ids;
}

function textOfContent(content, joiner) {
	if (content === null || content === undefined) return '';
	if (typeof content === 'string') return content;
	if (Array.isArray(content)) {
		return content.filter((p) => p && p.type === 'text' && typeof p.text === 'string')
			.map((p) => p.text).join(joiner);
	}
	return String(content);
}

function countImages(content) {
	if (!Array.isArray(content)) return 0;
	return content.filter((p) => p && (p.type === 'image_url' || p.type === 'image')).length;
}

// Messages as the server hands them to the template (vLLM chat_utils): for a template
// vLLM's content-format detection calls "openai", content as a list of parts (vLLM: a
// string becomes one text part, null none, an image part {"type": "image"}); for the
// others the text parts flattened (vLLM joins with "\n", SGLang with " "), null as "";
// reasoning
// given as "reasoning" (vLLM also keeps reasoning_content); tool-call arguments parsed
// from their JSON string. Returns JSON text: a string argument is spliced in as it
// was sent, so Python's json.loads sees 1.0 and big integers as written.
function templateMessages(openai, messages, dialect) {
	const joiner = dialect === 'sglang' ? ' ' : '\n';
	const raw = [];
	const out = messages.map((m) => {
		const o = Object.assign({}, m);
		if (openai && dialect === 'vllm') {
			const parts = m.content === null || m.content === undefined ? []
				: typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
			o.content = Array.isArray(parts) ? parts.map((p) => (p && p.type === 'image_url'
				? { type: 'image' } : p && p.type === 'text' ? { type: 'text', text: p.text } : p)) : parts;
		} else if (!openai && Array.isArray(m.content)) {
			let text = textOfContent(m.content, joiner);
			const images = countImages(m.content);
			if (images && dialect === 'vllm') text = '<image>\n'.repeat(images) + text;
			o.content = text;
		}
		if (dialect === 'vllm' && o.reasoning_content !== undefined && o.reasoning === undefined)
			o.reasoning = o.reasoning_content;
		if (Array.isArray(m.tool_calls)) {
			o.tool_calls = m.tool_calls.map((tc) => {
				const c = JSON.parse(JSON.stringify(tc));
				if (c.function) {
					const a = c.function.arguments;
					if (typeof a === 'string' && a !== '') {
						try {
							JSON.parse(a);
							c.function.arguments = `\u0000raw${raw.length}\u0000`;
							raw.push(a);
						} catch (e) { /* left as text */ }
					} else if (!a) c.function.arguments = {};
				}
				return c;
			});
		}
		if (o.content === undefined || o.content === null) o.content = dialect === 'vllm' && openai ? [] : '';
		return o;
	});
	return JSON.stringify(out).replace(/"\\u0000raw(\d+)\\u0000"/g, (_, i) => raw[Number(i)]);
}

// Tools as vLLM's pydantic model_dump leaves them: description and parameters null when
// absent, declared fields first.
function dumpTools(tools) {
	return tools.map((t) => {
		const f = t.function || {};
		const fn = Object.assign({ name: f.name, description: f.description ?? null,
			parameters: f.parameters ?? null }, f);
		const out = Object.assign({ type: t.type ?? 'function', function: fn }, t);
		out.function = fn;
		return out;
	});
}

async function renderChat(model, req, dialect) {
	if (!model.template) throw new ApiError(400, 'As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat template if the tokenizer does not define one.');
	const kwargs = req.chat_template_kwargs && typeof req.chat_template_kwargs === 'object'
		? req.chat_template_kwargs : {};
	for (const bad of ['chat_template', 'tokenize']) {
		if (dialect === 'vllm' && bad in kwargs)
			throw new ApiError(400, `Found unexpected chat template kwargs from request: ['${bad}']`);
	}
	const { openai } = await render.contentFormat(model.template);
	const hasTools = Array.isArray(req.tools) && req.tools.length;
	const ctx = Object.assign({}, model.special, {
		messages: null,
		add_generation_prompt: req.add_generation_prompt === undefined ? true : !!req.add_generation_prompt,
		continue_final_message: !!req.continue_final_message,
		tools: hasTools ? (dialect === 'vllm' ? dumpTools(req.tools) : req.tools) : null,
		documents: req.documents === undefined ? null : req.documents,
	});
	if (req.reasoning_effort !== undefined && req.reasoning_effort !== null) {
		ctx.reasoning_effort = req.reasoning_effort;
		// SGLang's normalize_reasoning_inputs sets both toggles; vLLM main sets
		// enable_thinking only (docs/protocol.md "Thinking switches"). Explicit kwargs win below.
		if (dialect === 'sglang') {
			ctx.thinking = req.reasoning_effort !== 'none';
			ctx.enable_thinking = ctx.thinking;
		} else {
			ctx.enable_thinking = req.reasoning_effort !== 'none';
		}
	}
	Object.assign(ctx, kwargs);
	const text = JSON.stringify(ctx).replace('"messages":null',
		`"messages":${templateMessages(openai, req.messages, dialect)}`);
	const r = await render.render(model.template, text);
	if (r.err !== undefined) throw new ApiError(400, `chat template error: ${r.err}`);
	return r.ok;
}

// ---------------------------------------------------------------------------------------
// Errors in each server's shape

class ApiError extends Error {
	constructor(status, message, param, type) {
		super(message);
		this.status = status;
		this.param = param === undefined ? null : param;
		this.type = type || ({ 400: 'BadRequestError', 401: 'Unauthorized', 404: 'NotFoundError',
			500: 'InternalServerError', 501: 'NotImplementedError', 503: 'ServiceUnavailableError' }[status] || 'Error');
	}
}

function errorBody(o, err) {
	const inner = { message: err.message, type: err.type, param: err.param, code: err.status };
	if (o.errorShape === 'flat') return Object.assign({ object: 'error' }, inner);
	return { error: inner };
}

// ---------------------------------------------------------------------------------------
// The "model": reads the prompt and decides what to say

const CODE_RE = /(?<![A-Za-z0-9-])[A-Z0-9]{2,8}(?:-[A-Z0-9]{2,8}){1,3}(?![A-Za-z0-9-])/g;
const STOP_WORDS = new Set(('The A An Access Code Codes For Project Projects Note Remember Its It ' +
	'This That These Those Keep Please Use Your Our Team Key Password Secret In Of Is To And ' +
	'Record Important Reminder Official Internal Confidential By On At As Under Within With ' +
	'Here There When Whoever Anyone Everyone Staff Members Member Only Current Assigned ' +
	'Register Registered Entry Log Memo Update Updated Security Credential Credentials Pass ' +
	'Passcode Identifier Id ID Number Token Badge Door Lab Office Building For Also').split(' '));

function sentenceAround(text, start, end) {
	let s = start;
	const lim = Math.max(0, start - 400);
	while (s > lim) {
		const c = text[s - 1];
		if (c === '\n' || c === '。' || c === '！' || c === '？') break;
		if ((c === ' ' || c === '\t') && /[.!?]/.test(text[s - 2] || '')) break;
		s--;
	}
	let e = end;
	const elim = Math.min(text.length, end + 400);
	while (e < elim) {
		const c = text[e];
		if (c === '\n' || c === '。' || c === '！' || c === '？') { if (c !== '\n') e++; break; }
		if (/[.!?]/.test(c) && (e + 1 >= text.length || /\s/.test(text[e + 1]))) { e++; break; }
		e++;
	}
	return [s, e];
}

function projectName(sentence) {
	let m = /\b[Pp]roject\s+["“'‘]?([A-Z][\p{L}\p{N}_]*(?:-[\p{L}\p{N}_]+)*)/u.exec(sentence);
	if (m && !STOP_WORDS.has(m[1])) return m[1];
	m = /\b([A-Z][\p{L}\p{N}_]*)\s+[Pp]roject\b/u.exec(sentence);
	if (m && !STOP_WORDS.has(m[1])) return m[1];
	m = /项目\s*["“'‘「]?([A-Z][\p{L}\p{N}_]*)/u.exec(sentence);
	if (m) return m[1];
	const words = sentence.match(/(?<![\p{L}\p{N}_-])[A-Z][\p{Ll}\p{N}_]+(?:-[A-Z][\p{Ll}\p{N}_]+)*/gu) || [];
	for (const w of words) {
		const base = w.replace(/'s$/, '');
		if (!STOP_WORDS.has(base)) return base;
	}
	return null;
}

// Finds the needle sentences: every code-like string whose sentence names a project.
function findNeedles(text) {
	const needles = [];
	CODE_RE.lastIndex = 0;
	let m;
	while ((m = CODE_RE.exec(text)) !== null) {
		const code = m[0];
		if (!/[0-9]/.test(code) || !/[A-Z]/.test(code)) continue;
		const [s, e] = sentenceAround(text, m.index, m.index + code.length);
		const sentence = text.slice(s, m.index) + ' ' + text.slice(m.index + code.length, e);
		// A needle talks about a code (or a project); "Ticket INC-8385" is not one.
		if (!/\b(?:codes?|passcode|projects?)\b|代码|编码|项目|口令/i.test(sentence)) continue;
		const name = projectName(sentence);
		if (!name) continue;
		needles.push({ name, code, pos: m.index, start: s, end: e });
	}
	return needles;
}

function isWordChar(c) {
	return c !== undefined && /[\p{L}\p{N}_-]/u.test(c);
}

// Positions where `name` appears as a whole word outside every needle sentence.
function mentionsOutside(text, name, needles) {
	const found = [];
	let i = text.indexOf(name);
	while (i !== -1) {
		const before = text[i - 1];
		const after = text[i + name.length];
		const whole = !isWordChar(before) && !(isWordChar(after) && after !== '-' ) &&
			!(after === '-' && isWordChar(text[i + name.length + 1]));
		if (whole && !needles.some((n) => i >= n.start && i < n.end)) found.push(i);
		i = text.indexOf(name, i + name.length);
	}
	return found;
}

function recallAnswer(text, needles, behaviour) {
	const byName = new Map();
	for (const n of needles) if (!byName.has(n.name)) byName.set(n.name, n);
	let requested = [];
	for (const [name, n] of byName) {
		const at = mentionsOutside(text, name, needles);
		if (at.length) requested.push({ n, first: at[0] });
	}
	if (requested.length) requested.sort((a, b) => a.first - b.first);
	else requested = [...byName.values()].map((n) => ({ n, first: n.pos }));
	let list = requested.map((r) => r.n);
	if (behaviour.forgetful && list.length >= 2) {
		// Misses the middle needle of the document (by position), as a model that
		// loses the middle of a long context would.
		const byPos = [...list].sort((a, b) => a.pos - b.pos);
		const middle = byPos[Math.floor((byPos.length - 1) / 2) + (byPos.length % 2 === 0 ? 1 : 0)];
		list = list.filter((n) => n !== middle);
	}
	const obj = {};
	for (const n of list) obj[n.name] = behaviour.wrong ? mangleCode(n.code) : behaviour.wrongDigit ? mangleDigit(n.code) : n.code;
	return JSON.stringify(obj);
}

function mangleCode(code) {
	const last = code[code.length - 1];
	const repl = /[0-9]/.test(last) ? String((Number(last) + 1) % 10) : (last === 'Z' ? 'A' : String.fromCharCode(last.charCodeAt(0) + 1));
	return code.slice(0, -1) + repl;
}

function arithmetic(text, behaviour) {
	const dv = /\bDivide\s+(\d+)\s+by\s+(\d+)/i.exec(text);
	if (dv && /"quotient"/.test(text) && /"remainder"/.test(text) && BigInt(dv[2]) !== 0n) {
		const a = BigInt(dv[1]);
		const b = BigInt(dv[2]);
		return `{"quotient": ${a / b + (behaviour.wrong ? 1n : 0n)}, "remainder": ${a % b}}`;
	}
	const m = /\b(?:Compute|Calculate|What is|Evaluate)\s+(-?\d+)\s*([*×x+\-\/]|times|plus|minus|divided by)\s*(-?\d+)/i.exec(text);
	if (!m) return null;
	m[2] = { times: '*', plus: '+', minus: '-', 'divided by': '/' }[m[2].toLowerCase()] || m[2];
	const a = BigInt(m[1]);
	const b = BigInt(m[3]);
	let r;
	switch (m[2]) {
	case '+': r = a + b; break;
	case '-': r = a - b; break;
	case '/': r = b === 0n ? 0n : a / b; break;
	default: r = a * b;
	}
	if (behaviour.wrong) r += 1n;
	const shape = /\{\s*"([^"]+)"\s*:\s*<[^>]*>\s*\}/.exec(text) || /\{\s*"([^"]+)"\s*:/.exec(text);
	if (shape) return `{"${shape[1]}": ${r.toString()}}`;
	return r.toString();
}

// ---- Tool calls: a heuristic "model" that picks a tool and fills its arguments from the
// user's words, and, once tool results are in, answers with what they said.

const TOOL_STOP = new Set(['What', 'Where', 'When', 'Which', 'Who', 'How', 'Please', 'Use', 'Tell', 'Compare',
	'Call', 'The', 'Is', 'Are', 'Can', 'Could', 'Convert', 'Look', 'Find', 'Get', 'Show', 'Give', 'My', 'I',
	'Then', 'And', 'Both', 'Each', 'Hi', 'Hello', 'Thanks', 'Also', 'Next']);

function wordsOf(s) {
	return (s || '').toLowerCase().split(/[^a-z0-9]+/).filter((w) => w.length > 2);
}

// Candidate values for a string parameter: text shaped like the description's example
// ("such as ORD-12345", "e.g. Lisbon"), else capitalised words that are not sentence openers.
function stringCandidates(text, prop) {
	const desc = (prop && prop.description) || '';
	const ex = /(?:such as|e\.g\.|for example|like)\s+["']?([^\s"',;)]+)/i.exec(desc);
	if (ex && /[0-9-]/.test(ex[1])) {
		const shape = ex[1].replace(/[A-Z]/g, 'A').replace(/[a-z]/g, 'a').replace(/[0-9]/g, '9');
		const re = new RegExp('(?<![\\w-])' + shape.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
			.replace(/A+/g, (m) => `[A-Z]{${m.length}}`).replace(/a+/g, (m) => `[a-z]{${m.length}}`)
			.replace(/9+/g, () => '[0-9]+') + '(?![\\w-])', 'g');
		const found = text.match(re);
		if (found) return found;
	}
	const out = [];
	const re = /(?<![\p{L}\p{N}_])([A-Z][\p{Ll}]+(?:\s[A-Z][\p{Ll}]+)*)/gu;
	let m;
	while ((m = re.exec(text)) !== null) {
		const before = text.slice(Math.max(0, m.index - 2), m.index);
		const opener = m.index === 0 || /[.!?]\s$|\n$/.test(before);
		if (opener || TOOL_STOP.has(m[1])) continue;
		out.push(m[1]);
	}
	return out;
}

function argumentsFor(fn, text, nth) {
	const params = (fn.parameters && fn.parameters.properties) || {};
	const args = {};
	const numbers = (text.match(/-?\d+(?:\.\d+)?/g) || []).map(Number);
	let numberAt = 0;
	for (const [name, prop] of Object.entries(params)) {
		if (Array.isArray(prop.enum)) {
			const low = text.toLowerCase();
			let best = null;
			let bestAt = Infinity;
			for (const v of prop.enum) {
				const at = low.indexOf(String(v).toLowerCase());
				if (at >= 0 && at < bestAt) { best = v; bestAt = at; }
			}
			// "from"/"to" style pairs: the n-th enum value mentioned, in order of mention.
			const mentioned = prop.enum.map((v) => [v, low.indexOf(String(v).toLowerCase())])
				.filter((x) => x[1] >= 0).sort((a, b) => a[1] - b[1]).map((x) => x[0]);
			const taken = Object.values(args);
			const free = mentioned.filter((v) => !taken.includes(v));
			args[name] = free.length ? free[0] : (best !== null ? best : prop.enum[0]);
		} else if (prop.type === 'integer' || prop.type === 'number') {
			const n = numbers[numberAt++];
			if (n !== undefined) args[name] = prop.type === 'integer' ? Math.trunc(n) : n;
		} else if (prop.type === 'boolean') {
			args[name] = true;
		} else {
			const c = stringCandidates(text, prop);
			if (c.length) args[name] = c[Math.min(nth, c.length - 1)];
		}
	}
	return args;
}

function planToolCalls(req, lastUser) {
	const tools = (Array.isArray(req.tools) ? req.tools : []).filter((t) => t && t.function && t.function.name);
	if (!tools.length || req.tool_choice === 'none') return null;
	const msgs = req.messages || [];
	const last = msgs[msgs.length - 1];
	if (!last || last.role !== 'user') return null;
	if (/\b(do not|don't|without) (call|use|using|calling)\b[^.]*\btools?\b|answer it yourself/i.test(lastUser)) return null;
	const low = wordsOf(lastUser);
	let chosen = null;
	let score = 0;
	const named = req.tool_choice && req.tool_choice.function && req.tool_choice.function.name;
	for (const t of tools) {
		const f = t.function;
		const w = wordsOf(f.name.replace(/_/g, ' ') + ' ' + (f.description || ''));
		const sc = (named === f.name ? 1000 : 0) + w.filter((x) => low.includes(x)).length +
			(lastUser.includes(f.name) ? 10 : 0);
		if (sc > score) { chosen = f; score = sc; }
	}
	if (!chosen) return null;
	// "each city", "both", "and in X": one call per candidate value of the first string parameter.
	const params = (chosen.parameters && chosen.parameters.properties) || {};
	const firstString = Object.entries(params).find(([, p]) => p.type === 'string' && !p.enum);
	let n = 1;
	if (firstString && /\b(each|both|all|every|parallel|same turn)\b/i.test(lastUser)) {
		n = Math.max(1, stringCandidates(lastUser, firstString[1]).length);
	}
	const calls = [];
	for (let i = 0; i < n; i++) calls.push({ name: chosen.name, arguments: JSON.stringify(argumentsFor(chosen, lastUser, i)) });
	return calls;
}

// After tool results: repeat what the tools returned, so a check for their values passes.
function answerFromToolResults(msgs) {
	let i = msgs.length - 1;
	const results = [];
	while (i >= 0 && msgs[i] && msgs[i].role === 'tool') results.unshift(textOfContent(msgs[i--].content, '\n'));
	if (!results.length) return null;
	return 'Here is what the tool returned: ' + results.join('; ');
}

// What the model says: {reasoning, content}. `text` is all the prompt text the model sees.
function think(text, lastUser, behaviour, wantsReasoning, req) {
	let content = null;
	let topic = 'the question';
	const calls = req ? planToolCalls(req, lastUser) : null;
	if (calls) {
		const reasoning = wantsReasoning ? `The user needs ${calls[0].name}; I will call it ${calls.length === 1 ? 'once' : calls.length + ' times'}.` : '';
		return { reasoning, content: '', toolCalls: calls };
	}
	if (req && Array.isArray(req.messages)) {
		const fromTools = answerFromToolResults(req.messages);
		if (fromTools !== null) { content = fromTools; topic = 'the tool results'; }
	}
	if (content === null) {
		content = structured.answer(req, lastUser, behaviour);
		if (content !== null) topic = 'the schema and the values the request gives';
	}
	const needles = content === null ? findNeedles(text) : [];
	if (needles.length) {
		content = recallAnswer(text, needles, behaviour);
		topic = `${needles.length} access code sentence(s)`;
	}
	if (content === null) {
		content = tasks.answer(req, lastUser, behaviour);
		if (content !== null) topic = 'the task and the data it gives';
	}
	if (content === null) {
		content = arithmetic(lastUser, behaviour);
		if (content !== null) topic = 'an arithmetic question';
	}
	if (content === null) {
		const short = lastUser.slice(0, 400).replace(/\s+/g, ' ').trim().slice(0, 80);
		content = short ? `You said: ${short}` : 'Hello.';
	}
	if (behaviour.fenced) content = '```json\n' + content + '\n```';
	if (behaviour.prose) content = `Here is the answer: ${content}\nLet me know if you need anything else.`;
	if (behaviour.escapes) content = ESCAPES + content + ESCAPES;
	const reasoning = wantsReasoning
		? `The prompt has ${text.length} characters. I looked for ${topic} and will answer in the requested format.`
		: '';
	return { reasoning, content, toolCalls: null };
}

// ---------------------------------------------------------------------------------------
// Behaviours, chosen by model name "ref-NAME[:k=v,...]"

const BEHAVIOURS = {
	good: {},
	forgetful: { forgetful: true },            // misses the middle needle
	wrong: { wrong: true },                    // wrong values
	'schema-break': { schemaBreak: true },     // structured outputs: valid JSON outside the schema
	'parity-drift': { parityDrift: true },     // stream: false answers otherwise (a tool argument, the content)
	'stream-only': { streamOnly: true },       // stream: false is refused (HTTP 400)
	fenced: { fenced: true },                  // answer inside ```json fences
	prose: { prose: true },                    // answer wrapped in prose
	empty: { empty: true },                    // 200, usage counts tokens, no visible text
	'error-frame': { errorFrame: true },       // error frame mid-stream, then [DONE]
	'no-done': { noDone: true },               // stream ends without data: [DONE]
	disconnect: { disconnect: true },          // socket closed mid-stream
	'bad-usage': { badUsage: true },           // total_tokens != prompt + completion
	'no-usage': { noUsage: true },             // no usage chunk even when asked
	'usage-off': { usageOff: 1 },              // prompt_tokens off by one (audit delta)
	slow: { delay: 1500 },                     // slow first token
	keepalive: { delay: 1500, keepalive: 250 },// ": keep-alive" comments while waiting
	reasoning: { reasoning: true },            // reasons first, then answers
	'reasoning-only': { reasoningOnly: true }, // spends the whole budget reasoning
	stall: { stall: true },                    // stops sending, keeps the connection open
	short: { short: true },                    // ignores ignore_eos: fewer tokens than asked
	truncated: { truncated: true },            // one frame of truncated JSON
	'http-500': { status: 500 },
	'http-400': { status: 400 },
	'http-503': { status: 503 },
	html: { html: 502 },                       // a proxy's HTML error page
	'html-200': { html: 200 },                 // 200 with an HTML page, not SSE
	'cache-drift': { cacheDrift: true },       // wrong codes when most of the prompt is a cache hit
	'busy-cache-drift': { busyCacheDrift: true }, // the same, only while other requests are in flight
	'evict-drift': { evictDrift: true },       // wrong codes when the prompt's cached prefix was evicted since
	residue: { residue: true },                // a code's last digit wrong when prompt tokens % 4 == 3
	'load-forget': { loadForget: true },       // misses the middle needle while others are in flight
	escapes: { escapes: true },                // terminal escape sequences around the answer
	'escapes-500': { status: 500, escapes: true }, // an HTTP 500 whose message holds them
};

// What a hostile endpoint sends a terminal: clear the screen, retitle the window (OSC ...
// BEL), move the cursor up and erase the line, and the same clear as a C1 CSI (U+009B).
const ESCAPES = '\x1b[2J\x1b]0;pwned\x07\x1b[1A\x1b[K\u009b2J\r';

// The serving-stack bugs needle's probes look for (issue 12), turned into the plain
// misbehaviours above for this one request: `b` is the request's own copy.
function probeMisbehave(o, b, promptTokens) {
	if (b.cacheDrift && b.cachedTokens * 2 > promptTokens) b.wrong = true;
	if (b.busyCacheDrift && b.cachedTokens * 2 > promptTokens && o.inflight > 1) b.wrong = true;
	if (b.evictDrift && b.prefixEvicted) b.wrong = true;
	if (b.residue && promptTokens % 4 === 3) b.wrongDigit = true;
	if (b.loadForget && o.inflight > 1) b.forgetful = true; // another request in flight
}

// Sampled wrong answers (a model at temperature > 0 that errs now and then):
// wrong_p=P makes each generation request's answer wrong with probability P, drawn from
// one generator per model name seeded by wrong_seed=N (1), so a name repeats its draws
// on a new server and continues them on the same; wrong_case=TEXT makes every answer
// to a prompt containing TEXT wrong (one task always wrong).
const wrongDraws = new Map();
function sampledWrong(name, b, text) {
	if (b.wrong_case !== undefined && text.includes(String(b.wrong_case))) b.wrong = true;
	const p = Number(b.wrong_p);
	if (!(p > 0)) return;
	let st = wrongDraws.get(name);
	if (st === undefined) { // the seed mixed with the name: two names draw apart
		st = Math.imul((Number(b.wrong_seed) || 1) >>> 0, 0x9E3779B1) >>> 0;
		for (const ch of String(name)) st = Math.imul(st ^ ch.codePointAt(0), 0x01000193) >>> 0;
	}
	// mulberry32: a 32-bit state, one draw per request
	st = (st + 0x6D2B79F5) >>> 0;
	wrongDraws.set(name, st);
	let t = st;
	t = Math.imul(t ^ (t >>> 15), t | 1);
	t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
	const u = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	if (u < p) b.wrong = true;
}

// Replaces the last digit of `code` (a corrupted digit, as in the residue fault of docs/cutover.md "Where the rule comes from").
function mangleDigit(code) {
	const m = /[0-9](?=[^0-9]*$)/.exec(code);
	if (!m) return mangleCode(code);
	return code.slice(0, m.index) + String((Number(m[0]) + 1) % 10) + code.slice(m.index + 1);
}

function parseBehaviour(name) {
	const m = /^ref-([a-z0-9-]+)(?::(.*))?$/.exec(name || '');
	if (!m || !BEHAVIOURS[m[1]]) return null;
	const b = Object.assign({ name: m[1] }, BEHAVIOURS[m[1]]);
	if (m[2]) {
		for (const kv of m[2].split(',')) {
			const [k, v] = kv.split('=');
			if (!k) continue;
			if (v === undefined || v === '1' || v === 'true') b[k] = v === undefined ? true : (v === '1' ? 1 : true);
			else if (/^-?\d+$/.test(v)) b[k] = Number(v);
			else b[k] = v;
		}
	}
	return b;
}

// ---------------------------------------------------------------------------------------
// Generation: the answer as token-sized text pieces

const PAD_TEXT = ' The model keeps writing because it was told to ignore the end of sequence token.';

// Splits `text` into one piece per token. Where a token ends inside a character (byte-level
// BPE splits multi-byte characters), the character is held back until the token that
// completes it, as vLLM's incremental detokenizer does.
async function tokenPieces(model, text) {
	if (!text) return [];
	const enc = await model.tok.encode(text, null, { addSpecialTokens: false });
	const offs = enc.getOffsets();
	const cps = Array.from(text);
	const pieces = [];
	let done = 0;
	for (let i = 0; i < offs.length; i++) {
		let end = offs[i][1];
		if (i + 1 < offs.length && offs[i + 1][0] < end) end = offs[i + 1][0];
		if (i + 1 === offs.length) end = cps.length;
		if (end < done) end = done;
		pieces.push(cps.slice(done, end).join(''));
		done = end;
	}
	return pieces;
}

async function padPieces(model, n) {
	const unit = await tokenPieces(model, PAD_TEXT);
	const out = [];
	while (out.length < n) out.push(unit[out.length % unit.length]);
	return out;
}

// Builds the token stream: [{kind:'reasoning'|'content', text}] plus finish_reason.
async function generate(model, said, req, behaviour, promptTokens, maxModelLen) {
	const room = maxModelLen - promptTokens;
	let maxTokens = req.max_completion_tokens ?? req.max_tokens;
	if (maxTokens === undefined || maxTokens === null) maxTokens = req._isCompletion ? 16 : room;
	const minTokens = Number(req.min_tokens) || 0;
	const ignoreEos = !!req.ignore_eos;
	let toks = [];
	for (const p of await tokenPieces(model, said.reasoning)) toks.push({ kind: 'reasoning', text: p });
	if (behaviour.reasoningOnly) {
		const budget = Math.min(maxTokens, 4096);
		const pad = await padPieces(model, Math.max(0, budget - toks.length));
		for (const p of pad) toks.push({ kind: 'reasoning', text: p });
		return { toks: toks.slice(0, budget), finish: 'length' };
	}
	if (said.toolCalls) {
		said.toolCalls.forEach((c, ci) => { c.id = null; c.index = ci; });
		if (said.blankBeforeCalls)
			for (const p of await tokenPieces(model, '\n\n')) toks.push({ kind: 'content', text: p });
		for (const c of said.toolCalls) {
			toks.push({ kind: 'tool', call: c, first: true, text: '' });
			for (const p of await tokenPieces(model, c.arguments)) toks.push({ kind: 'tool', call: c, first: false, text: p });
		}
		if (toks.length + 1 > maxTokens) return { toks: toks.slice(0, maxTokens), finish: 'length' };
		toks.push({ kind: 'eos', text: '' });
		const named = req.tool_choice && typeof req.tool_choice === 'object';
		return { toks, finish: named ? 'stop' : 'tool_calls' };
	}
	for (const p of await tokenPieces(model, said.content)) toks.push({ kind: 'content', text: p });
	let target = 0;
	if (ignoreEos && !behaviour.short) target = Math.min(maxTokens, Math.max(0, room));
	else if (minTokens > toks.length + 1) target = minTokens - 1;
	if (target > toks.length) {
		for (const p of await padPieces(model, target - toks.length)) toks.push({ kind: 'content', text: p });
	}
	if (ignoreEos && !behaviour.short) {
		return { toks: toks.slice(0, maxTokens), finish: 'length' };
	}
	if (behaviour.short && ignoreEos) toks = toks.slice(0, Math.max(1, Math.floor(maxTokens / 2)));
	if (toks.length + 1 > maxTokens) return { toks: toks.slice(0, maxTokens), finish: 'length' };
	// Stopped on EOS: the EOS token counts as generated (vLLM output token ids include it).
	toks.push({ kind: 'eos', text: '' });
	return { toks, finish: 'stop' };
}

// ---------------------------------------------------------------------------------------
// HTTP plumbing

function sleep(ms) {
	return new Promise((r) => setTimeout(r, ms));
}

function readBody(req) {
	return new Promise((resolve, reject) => {
		const chunks = [];
		req.on('data', (c) => chunks.push(c));
		req.on('end', () => resolve(Buffer.concat(chunks)));
		req.on('error', reject);
	});
}

function sendJson(res, status, obj, o) {
	const body = JSON.stringify(obj);
	res.writeHead(status, {
		'content-type': 'application/json',
		'content-length': Buffer.byteLength(body),
		server: o.dialect === 'sglang' ? 'uvicorn' : 'uvicorn',
	});
	res.end(body);
}

function sendError(res, o, err) {
	if (res.headersSent) { res.destroy(); return; }
	sendJson(res, err.status, errorBody(o, err), o);
}

function htmlPage(status) {
	const title = status === 200 ? 'Welcome' : `${status} Bad Gateway`;
	return `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n<hr><center>nginx/1.24.0</center>\r\n</body>\r\n</html>\r\n`;
}

function randomHex(n) {
	return crypto.randomBytes(n).toString('hex');
}

// ---------------------------------------------------------------------------------------
// Streams in each dialect

class Stream {
	constructor(res, o, kind, modelName, behaviour) {
		this.res = res;
		this.o = o;
		this.kind = kind; // 'chat' | 'completion'
		this.model = modelName;
		this.b = behaviour;
		this.created = Math.floor(Date.now() / 1000);
		this.id = o.dialect === 'sglang' ? randomHex(16)
			: (kind === 'chat' ? 'chatcmpl-' : 'cmpl-') + randomHex(16);
		this.closed = false;
		res.on('close', () => { this.closed = true; });
		this.field = behaviour.field || o.reasoningField;
		this.eosId = null;
	}

	start() {
		this.res.writeHead(200, {
			'content-type': this.o.dialect === 'sglang' ? 'text/event-stream' : 'text/event-stream; charset=utf-8',
			'cache-control': 'no-cache',
			server: 'uvicorn',
		});
		// Send headers now: a client sees first_byte when the status line arrives.
		this.res.flushHeaders();
	}

	write(s) {
		if (!this.closed) this.res.write(s);
	}

	frame(obj) {
		this.write('data: ' + JSON.stringify(obj) + '\n\n');
	}

	head() {
		const h = { id: this.id, object: this.kind === 'chat' ? 'chat.completion.chunk' : 'text_completion',
			created: this.o.dialect === 'sglang' ? Math.floor(Date.now() / 1000) : this.created,
			model: this.model };
		return h;
	}

	choice(delta, finish, extra) {
		const sg = this.o.dialect === 'sglang';
		let c;
		if (this.kind === 'chat') c = { index: 0, delta, logprobs: null, finish_reason: finish };
		else c = { index: 0, text: delta.content || '', logprobs: null, finish_reason: finish };
		if (sg) c.matched_stop = extra && extra.matched !== undefined ? extra.matched
			: (finish === 'stop' ? this.eosId : null);
		else if (this.kind === 'completion' || finish) c.stop_reason = null;
		return c;
	}

	roleChunk(usage) {
		if (this.kind !== 'chat') return;
		const sg = this.o.dialect === 'sglang';
		const delta = sg ? { role: 'assistant', content: '', reasoning_content: null }
			: { role: 'assistant', content: '' };
		if (!sg && this.field === 'both') delta.reasoning_content = null;
		const f = Object.assign(this.head(), { choices: [this.choice(delta, null)] });
		if (usage) f.usage = usage;
		this.frame(f);
	}

	// A text delta in this dialect; kind is 'content' or 'reasoning'.
	delta(kind, text) {
		const sg = this.o.dialect === 'sglang';
		if (this.kind !== 'chat') return { content: text };
		if (kind === 'reasoning') {
			if (sg || this.field === 'reasoning_content') return { reasoning_content: text };
			if (this.field === 'both') return { reasoning: text, reasoning_content: text };
			return { reasoning: text };
		}
		if (sg) return { reasoning_content: null, content: text };
		if (this.field === 'both') return { content: text, reasoning_content: null };
		return { content: text };
	}

	chunk(kind, text, finish, usage) {
		const f = Object.assign(this.head(), { choices: [this.choice(this.delta(kind, text), finish)] });
		if (usage) f.usage = usage;
		this.frame(f);
	}

	// A tool-call delta. vLLM (tool parsers): the first chunk of a call has id, type and
	// the name, later ones only arguments fragments. SGLang: every chunk is a full pydantic
	// dump (null fields kept); the first has id "call_<24 hex>", name and arguments "".
	toolChunk(t, finish, usage) {
		const sg = this.o.dialect === 'sglang';
		const c = t.call;
		if (t.first && !c.id) c.id = sg ? 'call_' + randomHex(12) : 'chatcmpl-tool-' + randomHex(16);
		let tc;
		if (sg) {
			tc = { id: t.first ? c.id : null, index: c.index, type: 'function',
				function: { name: t.first ? c.name : null, arguments: t.first ? '' : t.text } };
		} else if (t.first) tc = { index: c.index, id: c.id, type: 'function', function: { name: c.name } };
		else tc = { index: c.index, function: { arguments: t.text } };
		const delta = sg ? { role: null, content: null, reasoning_content: null, tool_calls: [tc] } : { tool_calls: [tc] };
		const f = Object.assign(this.head(), { choices: [this.choice(delta, finish)] });
		if (usage) f.usage = usage;
		this.frame(f);
	}

	// SGLang chat: finish_reason travels in its own chunk after generation ends.
	finishChunk(finish, matched, usage) {
		const delta = { reasoning_content: null };
		const f = Object.assign(this.head(), { choices: [this.choice(delta, finish, { matched })] });
		if (usage) f.usage = usage;
		this.frame(f);
	}

	usageChunk(usage) {
		this.frame(Object.assign(this.head(), { choices: [], usage }));
	}

	errorFrame(message, status) {
		if (this.o.dialect === 'sglang') {
			const type = status === 503 ? 'SERVICE_UNAVAILABLE' : 'BadRequestError';
			this.frame({ error: { object: 'error', message, type, param: null, code: status } });
		} else {
			this.frame({ error: { message, type: status >= 500 ? 'InternalServerError' : 'BadRequestError', param: null, code: status } });
		}
	}

	done() {
		this.write('data: [DONE]\n\n');
	}

	end() {
		if (!this.closed) this.res.end();
	}
}

async function waitWithKeepalive(stream, ms, every) {
	const until = Date.now() + ms;
	while (!stream.closed && Date.now() < until) {
		const step = every ? Math.min(every, until - Date.now()) : until - Date.now();
		await sleep(Math.max(0, step));
		if (every && Date.now() < until) stream.write(': keep-alive\n\n');
	}
}

function usageObj(o, promptTokens, completion, reasoningTokens, b) {
	const prompt = promptTokens + (b.usageOff || 0);
	const u = { prompt_tokens: prompt, total_tokens: prompt + completion + (b.badUsage ? 7 : 0),
		completion_tokens: completion };
	if (o.dialect === 'sglang') {
		u.prompt_tokens_details = null;
		u.reasoning_tokens = reasoningTokens;
	}
	if (o.cacheReport && b.cachedTokens !== undefined) u.prompt_tokens_details = { cached_tokens: b.cachedTokens };
	return u;
}

async function streamResponse(res, o, model, kind, req, b, promptTokens, gen) {
	const s = new Stream(res, o, kind, req.model, b);
	s.eosId = model.eosId;
	const sg = o.dialect === 'sglang';
	const so = req.stream_options || {};
	// SGLang: include_usage or continuous stats; vLLM: continuous only with include_usage.
	const wantUsage = !!so.include_usage;
	const continuous = sg ? !!so.continuous_usage_stats : wantUsage && !!so.continuous_usage_stats;
	const reasoningCount = gen.toks.filter((t) => t.kind === 'reasoning').length;
	s.start();
	const job = await o.engine.begin(req.model, b, promptTokens, res.arrivalMs, gen.toks.length);
	try {
		await streamTokens(s, o, model, kind, req, b, promptTokens, gen, job, { sg, wantUsage, continuous, reasoningCount });
	} finally {
		o.engine.finish(job, s.closed ? null : gen.finish);
	}
}

// The chunks of a stream after the headers, each token when the engine says it is due.
async function streamTokens(s, o, model, kind, req, b, promptTokens, gen, job, f) {
	const { sg, wantUsage, continuous, reasoningCount } = f;
	const res = s.res;
	s.roleChunk(continuous ? usageObj(o, promptTokens, 0, 0, b) : null);
	if (b.delay) await waitWithKeepalive(s, b.delay, b.keepalive);
	const visible = gen.toks.filter((t) => t.kind !== 'eos');
	const n = gen.toks.length;
	// The token after which a scripted fault happens: the second visible token.
	const faultAt = Math.min(1, Math.max(0, visible.length - 1));
	for (let i = 0; i < n && !s.closed; i++) {
		await o.engine.gate(job, i);
		const t = gen.toks[i];
		const last = i === n - 1;
		const text = b.empty || t.kind === 'eos' ? '' : t.text;
		const afterTools = t.kind === 'eos' && i > 0 && gen.toks[i - 1].kind === 'tool';
		const kindOf = t.kind === 'eos' ? 'content' : t.kind;
		// vLLM sends a chunk per engine step, even when the step's text is empty, and the
		// finish_reason rides on the last one. SGLang skips empty steps, and its chat
		// content chunks never carry finish_reason (a separate chunk follows).
		const finishHere = last && !(sg && kind === 'chat') ? gen.finish : null;
		if (t.kind === 'tool') {
			if (t.first || t.text !== '')
				s.toolChunk(t, finishHere, continuous ? usageObj(o, promptTokens, i + 1, 0, b) : null);
			else if (finishHere) s.chunk('content', '', finishHere, null);
		} else if (afterTools) {
			if (finishHere) s.frame(Object.assign(s.head(), { choices: [s.choice({}, finishHere)] }));
		} else if (!sg || text !== '' || finishHere)
			s.chunk(kindOf, text, finishHere, continuous ? usageObj(o, promptTokens, i + 1, 0, b) : null);
		if (i === faultAt) {
			if (b.truncated) {
				s.write('data: {"id":"' + s.id + '","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"x\n\n');
			}
			if (b.errorFrame) {
				s.errorFrame('The engine hit an internal error while generating (refserver ref-error-frame).', sg ? 503 : 500);
				if (sg && wantUsage) s.usageChunk(usageObj(o, promptTokens, i + 1, 0, b));
				s.done();
				s.end();
				return;
			}
			if (b.disconnect) {
				await sleep(20);
				res.socket.destroy();
				return;
			}
			if (b.stall) {
				// Holds the connection open and silent until the client gives up.
				await new Promise((r) => { if (s.closed) r(); else res.on('close', r); });
				return;
			}
		}
	}
	if (s.closed) return;
	if (sg && kind === 'chat') {
		const matched = gen.finish === 'stop' ? model.eosId : null;
		s.finishChunk(gen.finish, matched, continuous ? usageObj(o, promptTokens, n, reasoningCount, b) : null);
	}
	if (wantUsage && !b.noUsage) s.usageChunk(usageObj(o, promptTokens, n, reasoningCount, b));
	if (!b.noDone) s.done();
	s.end();
}

async function nonStreamResponse(res, o, model, kind, req, b, promptTokens, gen) {
	const job = await o.engine.begin(req.model, b, promptTokens, res.arrivalMs, gen.toks.length);
	let closed = false;
	res.on('close', () => { closed = true; });
	try {
		for (let i = 0; i < gen.toks.length && !closed; i++) await o.engine.gate(job, i);
		if (!closed) nonStreamBody(res, o, model, kind, req, b, promptTokens, gen);
	} finally {
		o.engine.finish(job, closed ? null : gen.finish);
	}
}

// parity-drift: the non-streamed answer differs from the streamed one as engines' two
// paths have (a tool call parsed otherwise): the first tool call's first argument
// changes (a string gets " (whole)", a number one more), else the content gets a space.
function driftWhole(message, calls) {
	if (calls.length) {
		let args;
		try { args = JSON.parse(calls[0].function.arguments); } catch (e) { args = null; }
		const k = args && typeof args === 'object' ? Object.keys(args)[0] : undefined;
		if (k !== undefined) {
			args[k] = typeof args[k] === 'number' ? args[k] + 1 : String(args[k]) + ' (whole)';
			calls[0].function.arguments = JSON.stringify(args);
			return;
		}
	}
	message.content = (message.content || '') + ' ';
}

function nonStreamBody(res, o, model, kind, req, b, promptTokens, gen) {
	const sg = o.dialect === 'sglang';
	const content = b.empty ? '' : gen.toks.filter((t) => t.kind === 'content').map((t) => t.text).join('');
	const reasoning = gen.toks.filter((t) => t.kind === 'reasoning').map((t) => t.text).join('');
	const reasoningCount = gen.toks.filter((t) => t.kind === 'reasoning').length;
	const created = Math.floor(Date.now() / 1000);
	const usage = usageObj(o, promptTokens, gen.toks.length, reasoningCount, b);
	let body;
	if (kind === 'chat') {
		const message = { role: 'assistant', content: content === '' && reasoning ? null : content };
		const field = b.field || o.reasoningField;
		if (sg || field === 'reasoning_content') message.reasoning_content = reasoning || null;
		else if (field === 'both') { message.reasoning = reasoning || null; message.reasoning_content = reasoning || null; }
		else message.reasoning = reasoning || null;
		const calls = [];
		for (const t of gen.toks) {
			if (t.kind !== 'tool' || !t.first) continue;
			const c = t.call;
			calls.push({ id: c.id || (sg ? 'call_' + randomHex(12) : 'chatcmpl-tool-' + randomHex(16)), type: 'function',
				function: { name: c.name, arguments: gen.toks.filter((x) => x.kind === 'tool' && x.call === c).map((x) => x.text).join('') } });
		}
		if (b.parityDrift) driftWhole(message, calls);
		message.tool_calls = calls.length ? calls : (sg ? null : []);
		if (calls.length && content.trim() === '') message.content = null;
		const choice = { index: 0, message, logprobs: null, finish_reason: gen.finish };
		if (sg) choice.matched_stop = gen.finish === 'stop' ? model.eosId : null;
		else choice.stop_reason = null;
		body = { id: sg ? randomHex(16) : 'chatcmpl-' + randomHex(16), object: 'chat.completion', created,
			model: req.model, choices: [choice], usage };
	} else {
		const choice = { index: 0, text: content, logprobs: null, finish_reason: gen.finish };
		if (sg) choice.matched_stop = gen.finish === 'stop' ? model.eosId : null;
		else choice.stop_reason = null;
		body = { id: sg ? randomHex(16) : 'cmpl-' + randomHex(16), object: 'text_completion', created,
			model: req.model, choices: [choice], usage };
	}
	if (b.noUsage) delete body.usage;
	sendJson(res, 200, body, o);
}

// ---------------------------------------------------------------------------------------
// Endpoints

function contextError(o, P, M, maxTokensGiven) {
	const N = o.maxModelLen;
	if (o.dialect === 'sglang') {
		if (P >= N) return new ApiError(400, `The input (${P} tokens) is longer than the model's context length (${N} tokens).`);
		if (maxTokensGiven && P + M >= N) {
			return new ApiError(400, `Requested token count exceeds the model's maximum context length of ${N} tokens. You requested a total of ${P + M} tokens: ${P} tokens from the input messages and ${M} tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.`);
		}
		return null;
	}
	if (!maxTokensGiven) {
		if (P >= N) return new ApiError(400, `Input length (${P}) exceeds model's maximum context length (${N}).`, 'input_tokens');
		return null;
	}
	// vLLM's limit check is prompt + max_tokens <= max_model_len.
	if (P + M > N) {
		return new ApiError(400, `This model's maximum context length is ${N} tokens. However, you requested ${M} output tokens and your prompt contains at least ${P} input tokens, for a total of at least ${P + M} tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=${P})`, 'input_tokens');
	}
	return null;
}

function requireObject(body) {
	let req;
	try {
		req = JSON.parse(body.toString('utf8'));
	} catch (e) {
		throw new ApiError(400, `JSON decode error: ${e.message}`);
	}
	if (!req || typeof req !== 'object' || Array.isArray(req))
		throw new ApiError(400, 'Input should be a valid dictionary');
	return req;
}

function resolveBehaviour(o, name) {
	const b = parseBehaviour(name);
	if (b) return b;
	if (o.served && name === o.served) return Object.assign({ name: 'good' }, BEHAVIOURS.good);
	// SGLang echoes whatever model string it gets; vLLM rejects unknown models.
	if (o.dialect === 'sglang' || name === undefined) return Object.assign({ name: 'good' }, BEHAVIOURS.good);
	return null;
}

// Counts the generation requests in flight, from arrival (before tokenizing) to the end
// of the response, for ref-load-forget: "others in flight" then cannot depend on how far
// another request's tokenizing or admission got when this one is judged.
async function handleGenerate(res, o, model, body, kind, logRec) {
	o.inflight = (o.inflight || 0) + 1;
	try {
		return await serveGenerate(res, o, model, body, kind, logRec);
	} finally {
		o.inflight--;
	}
}

async function serveGenerate(res, o, model, body, kind, logRec) {
	const req = requireObject(body);
	if (req.model === undefined) req.model = o.served || (o.dialect === 'sglang' ? 'default' : 'ref-good');
	const b = resolveBehaviour(o, req.model);
	logRec.model = req.model;
	logRec.stream = !!req.stream;
	logRec.stream_options = req.stream_options === undefined ? null : req.stream_options;
	for (const k of ['max_tokens', 'max_completion_tokens', 'min_tokens', 'ignore_eos', 'temperature',
		'top_p', 'seed', 'reasoning_effort', 'chat_template_kwargs', 'response_format'])
		if (req[k] !== undefined) logRec[k] = req[k];
	if (!b) throw new ApiError(404, `The model \`${req.model}\` does not exist.`, 'model');
	if (b.html) {
		const page = htmlPage(b.html);
		res.writeHead(b.html, { 'content-type': 'text/html', 'content-length': Buffer.byteLength(page), server: 'nginx/1.24.0' });
		res.end(page);
		return;
	}
	if (b.status) throw new ApiError(b.status, `refserver: scripted HTTP ${b.status} for model ${req.model}${b.escapes ? ESCAPES : ''}`);
	if (b.streamOnly && !req.stream) throw new ApiError(400, 'refserver: this deployment only streams', 'stream');
	if (o.dialect === 'vllm' && req.stream_options && !req.stream)
		throw new ApiError(400, 'Stream options can only be defined when `stream=True`.', 'stream_options');
	let prompt;
	let text;
	let lastUser = '';
	if (kind === 'chat') {
		if (!Array.isArray(req.messages)) throw new ApiError(400, 'Field required: messages', 'messages');
		if (req.messages.length === 0 && o.dialect === 'sglang') throw new ApiError(400, 'Messages cannot be empty.');
		prompt = await renderChat(model, req, o.dialect);
		text = req.messages.map((m) => textOfContent(m && m.content, '\n')).join('\n');
		for (const m of req.messages) if (m && m.role === 'user') lastUser = textOfContent(m.content, '\n');
	} else {
		if (typeof req.prompt !== 'string') {
			if (Array.isArray(req.prompt) && req.prompt.length === 1 && typeof req.prompt[0] === 'string') req.prompt = req.prompt[0];
			else throw new ApiError(400, 'prompt must be a string', 'prompt');
		}
		prompt = req.prompt;
		text = prompt;
		lastUser = prompt;
		req._isCompletion = true;
		if (req.max_tokens !== undefined && req.max_tokens !== null && o.dialect === 'sglang' && req.max_tokens <= 0)
			throw new ApiError(400, 'max_tokens must be positive', 'max_tokens');
	}
	const addSpecial = kind === 'chat' ? !!req.add_special_tokens : req.add_special_tokens !== false;
	const ids = await encodePrompt(model, prompt, addSpecial);
	const promptTokens = ids.length;
	logRec.prompt_tokens = promptTokens;
	logRec.prompt_bytes = Buffer.byteLength(prompt, "utf8");
	logRec.prompt_head = ids.slice(0, 48); // the first tokens: where a cache probe's nonce line is
	logRec.prompt_sha256 = crypto.createHash('sha256').update(prompt).digest('hex');
	const maxGiven = (req.max_completion_tokens ?? req.max_tokens) !== undefined && (req.max_completion_tokens ?? req.max_tokens) !== null;
	const M = maxGiven ? Number(req.max_completion_tokens ?? req.max_tokens) : (kind === 'chat' ? 0 : 16);
	const cerr = contextError(o, promptTokens, M, maxGiven || kind !== 'chat');
	if (cerr) throw cerr;
	const minErr = minTokensError(o, req, M, maxGiven);
	if (minErr) throw minErr;
	const nth = o.engine.nth(req.model);
	if ((b.empty_every > 0 && nth % b.empty_every === 0) || (b.empty_at > 0 && nth === b.empty_at)) {
		b.empty = true;
		logRec.empty = true;
	}
	const cached = o.engine.prefix(ids);
	b.cachedTokens = cached.hits;
	b.prefixEvicted = cached.evicted;
	probeMisbehave(o, b, promptTokens);
	sampledWrong(req.model, b, text);
	const kw = req.chat_template_kwargs || {};
	const wantsReasoning = kind === 'chat' && (b.reasoning || b.reasoningOnly || kw.thinking === true || kw.enable_thinking === true);
	const said = think(text, lastUser, b, wantsReasoning, kind === 'chat' ? req : null);
	// vLLM's reasoning and tool parsers stream the blank line between the end of
	// the reasoning and the first call as content; its non-streamed message has
	// content null (nonStreamBody).
	said.blankBeforeCalls = !!(said.toolCalls && said.reasoning && o.dialect !== 'sglang');
	const gen = await generate(model, said, req, b, promptTokens, o.maxModelLen);
	logRec.completion_tokens = gen.toks.length;
	logRec.finish_reason = gen.finish;
	if (req.stream) await streamResponse(res, o, model, kind, req, b, promptTokens, gen);
	else await nonStreamResponse(res, o, model, kind, req, b, promptTokens, gen);
}

// vLLM SamplingParams and SGLang's sampling checks refuse min_tokens > max_tokens.
function minTokensError(o, req, M, maxGiven) {
	const min = req.min_tokens;
	if (min === undefined || min === null) return null;
	if (!Number.isInteger(min) || min < 0)
		return new ApiError(400, `min_tokens must be greater than or equal to 0, got ${min}.`, 'min_tokens');
	if (maxGiven && min > M) {
		return o.dialect === 'sglang'
			? new ApiError(400, `min_new_tokens must be in [0, max_new_tokens(${M})], got ${min}.`)
			: new ApiError(400, `min_tokens must be less than or equal to max_tokens=${M}, got ${min}.`, 'min_tokens');
	}
	return null;
}

async function handleTokenize(res, o, model, body) {
	const req = requireObject(body);
	let text;
	let addSpecial;
	if (Array.isArray(req.messages)) {
		if (req.add_generation_prompt && req.continue_final_message)
			throw new ApiError(400, 'Cannot set both `continue_final_message` and `add_generation_prompt` to True.');
		text = await renderChat(model, req, o.dialect);
		addSpecial = !!req.add_special_tokens;
	} else if (typeof req.prompt === 'string') {
		text = req.prompt;
		addSpecial = req.add_special_tokens !== false;
	} else throw new ApiError(400, 'Either prompt or messages must be given');
	const enc = await model.tok.encode(text, null, { addSpecialTokens: addSpecial });
	let tokens = enc.getIds();
	if (addSpecial && model.addsBos && tokens[0] !== model.bosId)
		tokens = [model.bosId].concat(tokens);
	if (o.dialect === 'sglang') {
		sendJson(res, 200, { tokens, count: tokens.length, max_model_len: o.maxModelLen }, o);
		return;
	}
	const out = { count: tokens.length, max_model_len: o.maxModelLen, tokens, token_strs: null };
	if (req.return_token_strs) out.token_strs = tokens.map((t) => model.tok.idToToken(t));
	sendJson(res, 200, out, o);
}

function modelList(o) {
	const names = o.served ? [o.served] : Object.keys(BEHAVIOURS).map((k) => `ref-${k}`);
	const created = Math.floor(Date.now() / 1000);
	return {
		object: 'list',
		data: names.map((id) => ({
			id, object: 'model', created, owned_by: o.dialect === 'sglang' ? 'sglang' : 'vllm',
			root: 'refserver/' + id, parent: null, max_model_len: o.maxModelLen,
			permission: o.dialect === 'vllm' ? [{ id: 'modelperm-' + randomHex(8), object: 'model_permission',
				created, allow_create_engine: false, allow_sampling: true, allow_logprobs: true,
				allow_search_indices: false, allow_view: true, allow_fine_tuning: false,
				organization: '*', group: null, is_blocking: false }] : undefined,
		})),
	};
}

function makeHandler(o, model, logStream) {
	return async (req, res) => {
		res.arrivalMs = Date.now();
		const url = new URL(req.url, 'http://x');
		const p = url.pathname;
		const logRec = { t: new Date().toISOString(), method: req.method, path: p,
			auth: req.headers.authorization ? true : false };
		try {
			// vLLM guards /v1 paths only; /tokenize, /version, /health stay open.
			if (o.apiKey && p.startsWith('/v1')) {
				if (req.headers.authorization !== `Bearer ${o.apiKey}`) {
					await readBody(req);
					sendJson(res, 401, { error: 'Unauthorized' }, o);
					logRec.status = 401;
					return;
				}
			}
			const body = req.method === 'POST' ? await readBody(req) : Buffer.alloc(0);
			logRec.body_bytes = body.length;
			if (Date.now() < o.readyAt) throw new ApiError(503, 'the server is starting');
			if (req.method === 'GET' && p === '/v1/models') sendJson(res, 200, modelList(o), o);
			else if (req.method === 'GET' && p === '/metrics' && (o.dialect === 'vllm' || o.enableMetrics)) {
				const text = o.engine.render(o.served || 'refserver');
				res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8',
					'content-length': Buffer.byteLength(text) });
				res.end(text);
			}
			else if (req.method === 'GET' && p === '/health') { res.writeHead(200, { 'content-length': 0 }); res.end(); }
			else if (req.method === 'GET' && p === '/version' && o.dialect === 'vllm')
				sendJson(res, 200, { version: o.serverVersion }, o);
			else if (req.method === 'GET' && (p === '/server_info' || p === '/get_server_info') && o.dialect === 'sglang') {
				sendJson(res, 200, { version: o.serverVersion, model_path: model.file,
					tokenizer_path: model.file, context_length: o.maxModelLen, served_model_name: o.served || 'default',
					reasoning_parser: 'deepseek-v3' }, o);
			} else if (req.method === 'GET' && (p === '/model_info' || p === '/get_model_info') && o.dialect === 'sglang') {
				sendJson(res, 200, { model_path: model.file, tokenizer_path: model.file, is_generation: true,
					preferred_sampling_params: null, weight_version: 'default',
					has_image_understanding: false, has_audio_understanding: false }, o);
			} else if (req.method === 'POST' && p === '/v1/chat/completions')
				await handleGenerate(res, o, model, body, 'chat', logRec);
			else if (req.method === 'POST' && p === '/v1/completions')
				await handleGenerate(res, o, model, body, 'completion', logRec);
			else if (req.method === 'POST' && (p === '/tokenize' || (o.dialect === 'sglang' && p === '/v1/tokenize')))
				await handleTokenize(res, o, model, body);
			else sendJson(res, 404, { detail: 'Not Found' }, o);
			logRec.status = res.statusCode;
		} catch (e) {
			const err = e instanceof ApiError ? e : new ApiError(500, `internal error: ${e.message}`);
			logRec.status = err.status;
			logRec.error = err.message.slice(0, 300);
			sendError(res, o, err);
		} finally {
			if (logStream) logStream.write(JSON.stringify(logRec) + '\n');
		}
	};
}

function main() {
	const o = parseArgs(process.argv.slice(2));
	const model = loadModel(o);
	o.engine = new Engine(o);
	o.readyAt = Date.now() + o.startDelay;
	const logStream = o.log ? fs.createWriteStream(o.log, { flags: 'a' }) : null;
	const server = http.createServer({ requestTimeout: 0, headersTimeout: 60000, keepAliveTimeout: 5000 },
		makeHandler(o, model, logStream));
	server.on('clientError', (err, socket) => { socket.destroy(); });
	server.listen(o.port, o.host, () => {
		const addr = server.address();
		process.stdout.write(`refserver listening on http://${o.host}:${addr.port}\n`);
	});
	const stop = () => {
		if (logStream) logStream.end();
		process.exit(0);
	};
	process.on('SIGTERM', stop);
	process.on('SIGINT', stop);
}

main();
