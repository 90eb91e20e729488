// Checks a `needle gen haystack` output directory against the real chat
// template (tokenizer_config.json's chat_template through @huggingface/jinja,
// add_generation_prompt true) and the HF `tokenizers` library
// (addSpecialTokens false), independently of needle's own tok and tpl code.
//   node haystack_check.mjs OUT_DIR MODEL_DIR [--positions]
// MODEL_DIR holds tokenizer.json and tokenizer_config.json. Exit 0 = pass.
import { createRequire } from 'node:module';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const require = createRequire(import.meta.url);
const here = path.dirname(new URL(import.meta.url).pathname);
const nm = path.join(here, '..', 'node_modules');
const { Tokenizer } = require(path.join(nm, 'tokenizers'));
const { Template } = await import(path.join(nm, '@huggingface/jinja/dist/index.js'));

const [dir, modelDir, ...flags] = process.argv.slice(2);
const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); };

const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
const messages = JSON.parse(fs.readFileSync(path.join(dir, 'prompt.json'), 'utf8'));
const docBytes = fs.readFileSync(path.join(dir, 'document.txt'));
const doc = docBytes.toString('utf8');
const config = JSON.parse(fs.readFileSync(path.join(modelDir, 'tokenizer_config.json'), 'utf8'));
const tok = Tokenizer.fromFile(path.join(modelDir, 'tokenizer.json'));
const special = (t) => (t && typeof t === 'object' ? t.content : t) ?? '';

const prompt = new Template(config.chat_template).render({
  messages, add_generation_prompt: true,
  bos_token: special(config.bos_token), eos_token: special(config.eos_token),
  ...(manifest.options.chat_template_kwargs || {}),
});
const count = async (s) => (await tok.encode(s, null, { addSpecialTokens: false })).getIds().length;
const n = await count(prompt);
const sha = createHash('sha256').update(prompt, 'utf8').digest('hex');

check(n === manifest.options.tokens, `jinja+tokenizers count ${n} != requested ${manifest.options.tokens}`);
check(n === manifest.prompt_tokens, `count ${n} != manifest prompt_tokens ${manifest.prompt_tokens}`);
check(sha === manifest.prompt_sha256, `prompt sha256 ${sha} != manifest ${manifest.prompt_sha256}`);
check(messages.length === 1 && messages[0].role === 'user', 'one user message expected');
check(messages[0].content === doc + manifest.question, 'user content is not document + question');
check(manifest.document.bytes === docBytes.length, 'document byte length differs from the manifest');

const expected = {};
for (const nd of manifest.needles) {
  const hits = doc.split(nd.code).length - 1;
  check(hits === 1, `code ${nd.code} occurs ${hits} times`);
  check(doc.split(nd.project).length - 1 === 1, `project ${nd.project} is not in the document exactly once`);
  check(docBytes.subarray(nd.char_offset).toString('utf8').includes(nd.code) &&
        docBytes.subarray(nd.char_offset, nd.char_offset + 300).toString('utf8').includes(nd.code),
        `char_offset of ${nd.project} does not point at its sentence`);
  const byTokens = nd.token_offset / manifest.document.tokens * 100;
  const byChars = nd.char_offset / docBytes.length * 100;
  check(Math.abs(byTokens - nd.depth) <= 2, `${nd.project}: token depth ${byTokens.toFixed(2)}% vs ${nd.depth}%`);
  if (manifest.options.filler === 'prose')
    check(Math.abs(byChars - nd.depth) <= 2, `${nd.project}: char depth ${byChars.toFixed(2)}% vs ${nd.depth}%`);
  if (nd.asked) expected[nd.project] = nd.code;
}
for (const d of manifest.distractors)
  check(doc.split(d.code).length - 1 === 1, `distractor code ${d.code} is not there exactly once`);
check(JSON.stringify(expected) === JSON.stringify(manifest.expected), 'expected answer differs from the asked needles');

if (flags.includes('--positions')) {
  // Token offsets are exact: count the document up to each needle.
  const docTokens = await count(doc);
  check(docTokens === manifest.document.tokens, `document tokens ${docTokens} != ${manifest.document.tokens}`);
  for (const nd of [...manifest.needles, ...manifest.distractors]) {
    const before = await count(docBytes.subarray(0, nd.char_offset).toString('utf8'));
    check(before === nd.token_offset, `${nd.project}: ${before} tokens before it, manifest says ${nd.token_offset}`);
  }
}

if (failures.length) {
  for (const f of failures) console.error('FAIL ' + f);
  process.exit(1);
}
console.log(`ok ${dir}: ${n} tokens, ${manifest.needles.length} needles, sha ${sha.slice(0, 12)}`);
