// Compares needle's token ids and counts with the official `tokenizers` binding
// (addSpecialTokens false, and true where a fixture asks) on the four real
// tokenizers and on the hand-made fixtures in fixtures/tokenizers/.
//
//   node tests/tok/compare.js NEEDLE [--real-only|--fixtures-only] [--random N]
//
// Prints one line per tokenizer ("name: N strings, M mismatches") and each
// mismatch with the string escaped; exits 1 on any mismatch.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');
const { corpus } = require('./corpus');
const { fixture } = require('../lib/fixture');

const root = path.resolve(__dirname, '..', '..');
const nm = path.join(root, 'tests', 'node_modules');
const { Tokenizer } = require(path.join(nm, 'tokenizers'));

const REAL = ['deepseek_v3', 'qwen3', 'llama3', 'gpt4o'];
const args = process.argv.slice(2);
const needle = args[0];
const randomN = args.includes('--random') ? Number(args[args.indexOf('--random') + 1]) : 2000;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'needle-tok-'));

function shorten(s) {
  const j = JSON.stringify(s);
  return j.length > 300 ? j.slice(0, 200) + `... (${s.length} chars)` : j;
}

// needle keeps a binary copy of each loaded tokenizer (harness/tok/tok_cache.h):
// the first needle run of each tokenizer below loads the JSON and writes the
// copy, the later ones read it, so both paths are compared.
process.env.XDG_CACHE_HOME = tmp;
let needleEnv = process.env;

function runNeedle(tokPath, file, extra) {
  return execFileSync(needle, ['count', '--tokenizer', tokPath, '--jsonl', file, ...extra], {
    maxBuffer: 1 << 30,
    encoding: 'utf8',
    env: needleEnv,
  }).split('\n').slice(0, -1);
}

async function compare(name, tokPath, strings, withSpecial) {
  const hf = Tokenizer.fromFile(tokPath);
  const file = path.join(tmp, name.replace(/\W/g, '_') + '.jsonl');
  fs.writeFileSync(file, strings.map((s) => JSON.stringify(s)).join('\n') + '\n');
  const counts = runNeedle(tokPath, file, []);
  const ids = runNeedle(tokPath, file, ['--ids']);
  const sp = withSpecial ? runNeedle(tokPath, file, ['--ids', '--add-special']) : null;
  let bad = 0;
  for (let i = 0; i < strings.length; i++) {
    const want = (await hf.encode(strings[i], null, { addSpecialTokens: false })).getIds();
    const wantLine = Array.from(want).join(' ');
    const problems = [];
    if (Number(counts[i]) !== want.length) problems.push(`count ${counts[i]} != ${want.length}`);
    if (ids[i] !== wantLine) problems.push(`ids [${(ids[i] || '').slice(0, 120)}] != [${wantLine.slice(0, 120)}]`);
    if (sp) {
      const w2 = Array.from((await hf.encode(strings[i], null, { addSpecialTokens: true })).getIds()).join(' ');
      if (sp[i] !== w2) problems.push(`with specials [${sp[i]}] != [${w2}]`);
    }
    if (problems.length) {
      if (process.env.NEEDLE_TOK_DUMP) fs.appendFileSync(process.env.NEEDLE_TOK_DUMP, JSON.stringify([name, strings[i]]) + '\n');
      if (++bad <= 25) console.log(`  MISMATCH ${name} #${i} ${shorten(strings[i])}: ${problems.join('; ')}`);
    }
  }
  console.log(`${name}: ${strings.length} strings, ${bad} mismatches`);
  return bad;
}

function specialsOf(tokPath) {
  const j = JSON.parse(fs.readFileSync(tokPath, 'utf8'));
  return (j.added_tokens || []).map((t) => t.content).filter((c) => c.length);
}

async function main() {
  let bad = 0;
  let total = 0;
  if (!args.includes('--fixtures-only')) {
    for (const [k, name] of REAL.entries()) {
      const p = fixture(`hf/${name}/tokenizer.json`);
      const strings = corpus({ seed: 100 + k, random: randomN, specials: specialsOf(p), natural: true });
      bad += await compare(name, p, strings, false);
      total += strings.length;
      // The same with PCRE2 instead of the hand-written scanners (tok_scan.c).
      needleEnv = Object.assign({}, process.env, { NEEDLE_NO_SCAN: '1' });
      bad += await compare(name + ' (PCRE2, no scanners)', p, strings, false);
      total += strings.length;
      needleEnv = process.env;
    }
  }
  if (!args.includes('--real-only')) {
    const dir = fixture('tokenizers');
    const cases = JSON.parse(fs.readFileSync(path.join(dir, 'cases.json'), 'utf8'));
    for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.json') && f !== 'cases.json').sort()) {
      const p = path.join(dir, f);
      const own = cases[f] || [];
      const strings = own.concat(corpus({ seed: 7, random: 150, english: 20, cjk: 20, long: false,
        specials: specialsOf(p) }));
      bad += await compare(f, p, strings, true);
      total += strings.length;
    }
  }
  console.log(`total: ${total} strings, ${bad} mismatches`);
  fs.rmSync(tmp, { recursive: true, force: true });
  process.exit(bad ? 1 : 0);
}

main().catch((e) => {
  console.error(e);
  process.exit(2);
});
