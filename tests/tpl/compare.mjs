// Renders the REAL chat templates (the Jinja chat_template of each npm
// tokenizer's tokenizer_config.json, and the classic ChatML template) with
// @huggingface/jinja and compares them byte for byte with
// `needle count --template NAME --messages F --print-prompt`, for every case in
// cases.json. Then, when needle's tokenizer is available, compares
// `needle count` of each rendered prompt with the HF `tokenizers` count.
//
// The messages given to Jinja are first prepared as vLLM prepares them
// (vllm/entrypoints/chat_utils.py parse_chat_messages): null content -> "",
// text parts joined with "\n", empty tool_calls dropped, tool-call arguments
// parsed to objects (invalid JSON -> {}), `reasoning_content` copied to both
// names; tools as pydantic model_dump (description/parameters null if absent).
//
// Usage: node tests/tpl/compare.mjs NEEDLE_BINARY
import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const here = path.dirname(new URL(import.meta.url).pathname);
const tests = path.dirname(here);
const require = createRequire(path.join(tests, 'package.json'));
const { Template } = await import(path.join(tests, 'node_modules/@huggingface/jinja/dist/index.js'));
const needle = process.argv[2];
const { fixture } = require('./lib/fixture.js');

// The classic ChatML template (Hugging Face's former default_chat_template).
const CHATML = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

function tokenName(t) {
	return t && typeof t === 'object' ? t.content : t;
}

function loadTemplate(pkg) {
	const cfg = JSON.parse(fs.readFileSync(fixture(`hf/${pkg}/tokenizer_config.json`), 'utf8'));
	return {
		source: cfg.chat_template,
		vars: { bos_token: tokenName(cfg.bos_token) ?? '', eos_token: tokenName(cfg.eos_token) ?? '' },
		tokenizer: fixture(`hf/${pkg}/tokenizer.json`),
	};
}

const templates = {
	'deepseek-v3': loadTemplate('deepseek_v3'),
	qwen3: loadTemplate('qwen3'),
	llama3: loadTemplate('llama3'),
	chatml: { source: CHATML, vars: {}, tokenizer: fixture('hf/qwen3/tokenizer.json') },
};

const TEXT_KEYS = { text: 'text', input_text: 'text', output_text: 'text', refusal: 'refusal', thinking: 'thinking' };

function flatten(content) {
	if (content === null || content === undefined) return '';
	if (typeof content === 'string') return content;
	const texts = [];
	for (const p of content) {
		if (typeof p === 'string') texts.push(p);
		else if (TEXT_KEYS[p.type] && typeof p[TEXT_KEYS[p.type]] === 'string') texts.push(p[TEXT_KEYS[p.type]]);
	}
	return texts.join('\n');
}

function parseArgs(a) {
	if (typeof a === 'string') {
		try { return JSON.parse(a); } catch { return {}; }
	}
	return a && typeof a === 'object' ? a : {};
}

function vllmMessages(messages) {
	return messages.map((m) => {
		const out = { role: m.role, content: flatten(m.content) };
		if (m.role === 'assistant') {
			if (Array.isArray(m.tool_calls) && m.tool_calls.length)
				out.tool_calls = m.tool_calls.map((c) => ({ ...c, function: { ...c.function, arguments: parseArgs(c.function.arguments) } }));
			const r = m.reasoning ?? m.reasoning_content;
			if (r !== undefined && r !== null) { out.reasoning = r; out.reasoning_content = r; }
		}
		if (m.role === 'tool' && m.tool_call_id !== undefined) out.tool_call_id = m.tool_call_id;
		return out;
	});
}

function vllmTools(tools) {
	if (!tools) return undefined;
	return tools.map((t) => {
		const { name, description = null, parameters = null, ...fextra } = t.function;
		const { type, function: _f, ...extra } = t;
		return { type: 'function', function: { name, description, parameters, ...fextra }, ...extra };
	});
}

function render(tpl, c) {
	const ctx = { messages: vllmMessages(c.messages), add_generation_prompt: true, ...tpl.vars, ...(c.kwargs ?? {}) };
	const tools = vllmTools(c.tools);
	if (tools) ctx.tools = tools;
	tpl.compiled ??= new Template(tpl.source);
	return tpl.compiled.render(ctx);
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'needle-tpl-'));
function needleArgs(name, c) {
	const mf = path.join(tmp, `${c.id}.messages.json`);
	fs.writeFileSync(mf, JSON.stringify(c.messages));
	const args = ['count', '--template', name, '--messages', mf];
	if (c.kwargs) args.push('--kwargs', JSON.stringify(c.kwargs));
	if (c.tools) {
		const tf = path.join(tmp, `${c.id}.tools.json`);
		fs.writeFileSync(tf, JSON.stringify(c.tools));
		args.push('--tools', tf);
	}
	return args;
}

// needle's tokenizer lands on another branch; until then only strings compare.
function tokenizerReady(tokPath) {
	const f = path.join(tmp, 'probe.txt');
	fs.writeFileSync(f, 'probe');
	return spawnSync(needle, ['count', '--tokenizer', tokPath, f]).status === 0;
}

// Seeded random conversations on top of the hand-picked cases: role orders,
// think tags, wrapped tool responses, whitespace, parts, tool calls, kwargs.
function randomCases(count, seed) {
	let x = seed >>> 0;
	const rnd = (n) => { x = (x * 1103515245 + 12345) >>> 0; return (x >>> 8) % n; };
	const pick = (a) => a[rnd(a.length)];
	const bits = ['hello', ' world', '\n', '\n\n', '<think>', '</think>', '<tool_response>', '</tool_response>',
		'你好', '😀', '\t', '  x  ', 'é', '{"a": 1}', '<|im_end|>', '<｜User｜>', ' ', 'Ωμέγα', '42'];
	const text = () => Array.from({ length: rnd(6) }, () => pick(bits)).join('');
	const content = () => {
		const k = rnd(10);
		if (k === 0) return null;
		if (k === 1) return [{ type: 'text', text: text() }, { type: 'text', text: text() }];
		return text();
	};
	const out = [];
	for (let i = 0; i < count; i++) {
		const messages = [];
		if (rnd(2)) messages.push({ role: 'system', content: content() });
		const n = 1 + rnd(6);
		for (let j = 0; j < n; j++) {
			const role = pick(['user', 'user', 'assistant', 'assistant', 'tool', 'system']);
			const m = { role, content: content() };
			if (role === 'assistant' && rnd(3) === 0) m.reasoning_content = text();
			if (role === 'assistant' && rnd(3) === 0)
				m.tool_calls = Array.from({ length: 1 + rnd(2) }, (_, k) => ({
					id: `c${k}`, type: 'function',
					function: { name: pick(['f', 'get_weather', '搜索']), arguments: JSON.stringify({ q: text(), n: rnd(100), ok: !!rnd(2), l: [rnd(9), null] }) },
				}));
			messages.push(m);
		}
		if (rnd(3)) messages.push({ role: 'user', content: content() });
		const c = { id: `random${i}`, messages };
		const kw = rnd(4);
		if (kw === 1) c.kwargs = { enable_thinking: false, thinking: false };
		if (kw === 2) c.kwargs = { enable_thinking: true, thinking: true };
		if (rnd(5) === 0) c.tools = [{ type: 'function', function: { name: 'f', description: text(), parameters: { type: 'object' } } }];
		out.push(c);
	}
	return out;
}

const cases = [...JSON.parse(fs.readFileSync(path.join(here, 'cases.json'), 'utf8')), ...randomCases(40, 20261129)];
let failures = 0, compared = 0, counted = 0, viaJinja = 0, jinjaRefused = 0;

// A model folder holding the template text changed by a trailing comment, so
// that no descriptor records it and needle's Jinja interpreter renders it:
// the interpreter and the descriptor must give the same prompt.
function jinjaFolder(name, tpl) {
	const dir = path.join(tmp, `folder-${name}`);
	fs.mkdirSync(dir, { recursive: true });
	fs.symlinkSync(tpl.tokenizer, path.join(dir, 'tokenizer.json'));
	fs.writeFileSync(path.join(dir, 'tokenizer_config.json'),
		JSON.stringify({ chat_template: tpl.source + '{# not the recorded text #}', ...tpl.vars }));
	return dir;
}
const { Tokenizer } = require('tokenizers');

// Counting loads the tokenizer once per template (--jsonl over all prompts);
// a few cases also go through the whole --template --messages --tokenizer path.
const DIRECT = new Set(['unicode', 'tool_round', 'thinking_off']);
for (const [name, tpl] of Object.entries(templates)) {
	// The descriptor names the template text it is checked against here.
	const desc = JSON.parse(fs.readFileSync(path.join(tests, '..', 'fixtures/templates', `${name}.json`), 'utf8'));
	const sha = crypto.createHash('sha256').update(tpl.source, 'utf8').digest('hex');
	if (!(desc.template_sha256 || []).includes(sha)) {
		failures++;
		console.log(`FAIL ${name}: template_sha256 lacks ${sha}, the text compared below`);
	}
	const countable = tokenizerReady(tpl.tokenizer);
	const hf = countable ? Tokenizer.fromFile(tpl.tokenizer) : null;
	const prompts = [];
	const folder = jinjaFolder(name, tpl);
	for (const c of cases) {
		const want = render(tpl, c);
		const args = needleArgs(name, c);
		const got = spawnSync(needle, [...args, '--print-prompt']);
		const viaTpl = spawnSync(needle, [...args.slice(0, 1), '--tokenizer', folder, ...args.slice(3), '--print-prompt']);
		compared++;
		if (viaTpl.status !== 0) {
			jinjaRefused++;
			if (viaTpl.status !== 2 || viaTpl.stderr.toString().split('\n').filter(Boolean).length !== 1) {
				failures++;
				console.log(`FAIL ${name}/${c.id} through Jinja: exit ${viaTpl.status} ${viaTpl.stderr}`);
			}
		} else if (viaTpl.stdout.toString('utf8') !== want) {
			failures++;
			console.log(`FAIL ${name}/${c.id} through Jinja differs`);
			console.log(`  jinja:  ${JSON.stringify(want)}`);
			console.log(`  needle: ${JSON.stringify(viaTpl.stdout.toString('utf8'))}`);
		} else {
			viaJinja++;
		}
		if (got.status !== 0 || got.stdout.toString('utf8') !== want) {
			failures++;
			console.log(`FAIL ${name}/${c.id}: exit ${got.status} ${got.stderr}`);
			console.log(`  jinja:  ${JSON.stringify(want)}`);
			console.log(`  needle: ${JSON.stringify(got.stdout.toString('utf8'))}`);
			continue;
		}
		if (!countable) continue;
		const n = (await hf.encode(want, null, { addSpecialTokens: false })).getIds().length;
		prompts.push({ id: c.id, text: want, n });
		if (DIRECT.has(c.id)) {
			const direct = Number(execFileSync(needle, [...args, '--tokenizer', tpl.tokenizer]).toString().trim());
			counted++;
			if (direct !== n) {
				failures++;
				console.log(`FAIL ${name}/${c.id}: needle count --messages gives ${direct}, tokenizers ${n}`);
			}
		}
	}
	if (!countable) {
		console.log(`note: needle cannot load ${path.basename(path.dirname(path.dirname(tpl.tokenizer)))} yet; strings only for ${name}`);
		continue;
	}
	const jf = path.join(tmp, `${name}.jsonl`);
	fs.writeFileSync(jf, prompts.map((p) => JSON.stringify(p.text)).join('\n') + '\n');
	const got = execFileSync(needle, ['count', '--tokenizer', tpl.tokenizer, '--jsonl', jf]).toString().trim().split('\n').map(Number);
	prompts.forEach((p, i) => {
		counted++;
		if (got[i] !== p.n) {
			failures++;
			console.log(`FAIL ${name}/${p.id}: needle counts ${got[i]}, tokenizers ${p.n}`);
		}
	});
}
fs.rmSync(tmp, { recursive: true, force: true });
console.log(`${compared} prompts compared (${viaJinja} also identical through needle's Jinja interpreter, ` +
	`${jinjaRefused} refused there), ${counted} counts compared, ${failures} failed`);
process.exit(failures ? 1 : 0);
