const { Tokenizer } = require('tokenizers');
function split(re, s) {
  let tk; try { tk = Tokenizer.fromString(JSON.stringify({version:'1.0',truncation:null,padding:null,added_tokens:[],normalizer:null,pre_tokenizer:{type:'Split',pattern:{Regex:re},behavior:'Isolated',invert:false},post_processor:null,decoder:null,model:{type:'BPE',dropout:null,unk_token:null,continuing_subword_prefix:null,end_of_word_suffix:null,fuse_unk:false,byte_fallback:false,vocab:{},merges:[]}})); } catch (e) { return "COMPILE ERR " + e.message; }
  try { return JSON.stringify(tk.getPreTokenizer().preTokenizeString(s).map(x=>x[0])); } catch (e) { return 'ERR ' + e.message; }
}
const cases = [['^a','b\na'],['^a','b\ra'],['a$','a\nb'],['a$','a\rb'],['a$','a\r\nb'],['.','a\nb\rc\u2028d\u0085'],['a{,2}','aaaa'],['a{1,2}+','aaaaa'],['(?m).','a\nb'],['(?s).','a\nb'],['\\h','aG09 \t'],['\\Z','a\n'],['a\\z','a\n'],
['[\\w]','a_\u200c\u00b2'],['\\u0041','A'],['[a-]','a-b'],['[]a]','a]b'],['[a&&b]','ab&'],['\\v','\u000b\n'],['(?i)\\p{Lu}','aA'],['(?i:[A-Z])','aA\u212a'],['(?i:k)','\u212ak'],['\\x41','A'],['\\101','A'],['\\p{^L}','a1'],['\\p{Letter}','a1'],['\\p{lu}','aA'],['\\p{Han}','a中'],['\\b','ab cd'],['\\R','a\r\nb'],['\\X','e\u0301x'],['\\K','a'],['\\O','a\nb'], ['x*', 'abc'], ['a{2}+', 'aaaaaa'], ['\\p{L&}', 'aA1'], ['\\p{Any}', 'a'], ['[[:alpha:]]', 'a1'], ['\\e', '\u001b']];
for (const [r,s] of cases) console.log(r.padEnd(14), JSON.stringify(s).padEnd(22), split(r,s));
