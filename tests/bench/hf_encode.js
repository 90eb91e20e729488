// The HF side of `make bench`: encodes FILE with the official `tokenizers`
// binding (addSpecialTokens false) RUNS times and prints one JSON line with
// the count and each run's encode wall time and CPU time (user + system) in
// ms, loading excluded.
//   node tests/bench/hf_encode.js TOKENIZER FILE RUNS
'use strict';
const fs = require('fs');
const path = require('path');
const { Tokenizer } = require(path.join(__dirname, '..', 'node_modules', 'tokenizers'));

(async () => {
  const [tokPath, file, runs] = process.argv.slice(2);
  const tok = Tokenizer.fromFile(tokPath);
  const text = fs.readFileSync(file, 'utf8');
  const ms = [];
  const cpu = [];
  let count = 0;
  for (let i = 0; i < Number(runs || 3); i++) {
    const t0 = process.hrtime.bigint();
    const c0 = process.cpuUsage();
    const enc = await tok.encode(text, null, { addSpecialTokens: false });
    const c1 = process.cpuUsage(c0);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    cpu.push((c1.user + c1.system) / 1e3);
    count = enc.getIds().length;
  }
  console.log(JSON.stringify({ count, ms, cpu }));
})().catch((e) => {
  console.error(e);
  process.exit(2);
});
