const { Tokenizer } = require('tokenizers');
let t0=Date.now();
const a=[]; for (let c=0;c<=0x10FFFF;c++) if (c<0xD800||c>0xDFFF) a.push(c);
let s=''; for (let i=0;i<a.length;i+=4096) s+=String.fromCodePoint(...a.slice(i,i+4096));
console.log('build', Date.now()-t0); t0=Date.now();
for (const re of ['\\p{L}+','[^\\p{L}]+','\\s+', '\\p{Cn}+']) {
const tk = Tokenizer.fromString(JSON.stringify({version:'1.0',truncation:null,padding:null,added_tokens:[],normalizer:null,pre_tokenizer:{type:'Split',pattern:{Regex:re},behavior:'Removed',invert:false},post_processor:null,decoder:null,model:{type:'BPE',dropout:null,unk_token:null,continuing_subword_prefix:null,end_of_word_suffix:null,fuse_unk:false,byte_fallback:false,vocab:{},merges:[]}}));
const r = tk.getPreTokenizer().preTokenizeString(s);
console.log(re, r.length, Date.now()-t0); t0=Date.now();
}
