// needle count --server vllm|sglang [--reasoning-effort E] against the REAL Qwen3 and
// DeepSeek V3 Jinja templates (@huggingface/jinja), with the messages and kwargs
// prepared the way each server prepares them (docs/protocol.md "Thinking switches", "Message content"):
//   vLLM: text parts joined with "\n"; reasoning_effort sets enable_thinking
//         (vLLM main) unless chat_template_kwargs has it;
//   SGLang: only "text" parts, joined with " ", other parts dropped;
//         reasoning_effort sets thinking and enable_thinking unless given.
// Usage: node tests/tpl/server_flavour.mjs NEEDLE_BINARY
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const here = path.dirname(new URL(import.meta.url).pathname);
const tests = path.dirname(here);
const { Template } = await import(path.join(tests, 'node_modules/@huggingface/jinja/dist/index.js'));
const { fixture } = createRequire(import.meta.url)('../lib/fixture.js');
const needle = process.argv[2];
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'flavour-'));
let failed = 0;

function load(pkg) {
	const cfg = JSON.parse(fs.readFileSync(fixture(`hf/${pkg}/tokenizer_config.json`), 'utf8'));
	const name = (t) => (t && typeof t === 'object' ? t.content : t) ?? '';
	return { tpl: new Template(cfg.chat_template), vars: { bos_token: name(cfg.bos_token), eos_token: name(cfg.eos_token) } };
}

function flatten(messages, server) {
	return messages.map((m) => {
		if (!Array.isArray(m.content)) return m;
		const parts = server === 'sglang'
			? m.content.filter((p) => p.type === 'text').map((p) => p.text)
			: m.content.filter((p) => typeof p === 'string' || ['text', 'input_text', 'output_text'].includes(p.type))
				.map((p) => (typeof p === 'string' ? p : p.text));
		return Object.assign({}, m, { content: parts.join(server === 'sglang' ? ' ' : '\n') });
	});
}

function serverKwargs(server, effort, kwargs) {
	const kw = Object.assign({}, kwargs);
	if (effort !== undefined) {
		const on = effort !== 'none';
		if (server === 'sglang' && !('thinking' in kw)) kw.thinking = on;
		if (!('enable_thinking' in kw)) kw.enable_thinking = on;
		kw.reasoning_effort = effort;
	}
	return kw;
}

const parts = [{ role: 'system', content: [{ type: 'text', text: 'Be brief.' }, { type: 'text', text: 'Answer in JSON.' }] },
	{ role: 'user', content: [{ type: 'text', text: 'Hello' }, { type: 'text', text: 'world.' }] }];
const cases = [];
for (const server of ['vllm', 'sglang'])
	for (const [pkg, tname] of [['qwen3', 'qwen3'], ['deepseek_v3', 'deepseek-v3']])
		for (const effort of [undefined, 'none', 'high'])
			for (const kwargs of [{}, { enable_thinking: true }, { enable_thinking: false }])
				cases.push({ server, pkg, tname, effort, kwargs, messages: parts });
// SGLang drops non-text parts; the image is refused by vLLM's flattening, so SGLang only.
cases.push({ server: 'sglang', pkg: 'qwen3', tname: 'qwen3', kwargs: {}, messages: [{ role: 'user', content: [
	{ type: 'text', text: 'Look' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
	{ type: 'input_text', text: 'dropped' }, { type: 'text', text: 'here.' }] }] });

const models = {};
for (const c of cases) {
	const m = models[c.pkg] ??= load(c.pkg);
	const kw = serverKwargs(c.server, c.effort, c.kwargs);
	const want = m.tpl.render(Object.assign({}, m.vars, kw, { messages: flatten(c.messages, c.server), add_generation_prompt: true }));
	const f = path.join(tmp, 'm.json');
	fs.writeFileSync(f, JSON.stringify(c.messages));
	const args = ['count', '--template', c.tname, '--messages', f, '--print-prompt', '--server', c.server];
	if (c.effort !== undefined) args.push('--reasoning-effort', c.effort);
	if (Object.keys(c.kwargs).length) args.push('--kwargs', JSON.stringify(c.kwargs));
	const r = spawnSync(needle, args, { encoding: 'utf8' });
	const label = `${c.server} ${c.tname} effort=${c.effort} kwargs=${JSON.stringify(c.kwargs)}`;
	if (r.status !== 0 || r.stdout !== want) {
		failed++;
		console.log(`FAIL ${label}: exit ${r.status} ${r.stderr}\n  want ${JSON.stringify(want)}\n  got  ${JSON.stringify(r.stdout)}`);
	}
}
fs.rmSync(tmp, { recursive: true, force: true });
console.log(`server flavours: ${cases.length - failed}/${cases.length} prompts match the real templates`);
process.exit(failed ? 1 : 0);
