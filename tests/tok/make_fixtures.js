// Writes the hand-made tokenizer.json fixtures of fixtures/tokenizers/, each
// pinning one behaviour of docs/tokenizers.md "How a count is made", and cases.json (strings aimed at
// each). Run once; the output is committed. compare.js checks every fixture
// against the `tokenizers` binding.
//   node tests/tok/make_fixtures.js
'use strict';
const fs = require('fs');
const path = require('path');

const dir = require('../lib/fixture').fixture('tokenizers');

// GPT-2 byte -> char table.
function byteChars() {
  const bs = [];
  for (let b = 0x21; b <= 0x7e; b++) bs.push(b);
  for (let b = 0xa1; b <= 0xac; b++) bs.push(b);
  for (let b = 0xae; b <= 0xff; b++) bs.push(b);
  const map = {};
  let n = 0;
  for (let b = 0; b < 256; b++) map[b] = String.fromCodePoint(bs.includes(b) ? b : 256 + n++);
  return map;
}
const BC = byteChars();
const bl = (s) => Array.from(Buffer.from(s, 'utf8'), (b) => BC[b]).join('');

// A byte-level vocab: 256 byte chars, then each merge's result.
function byteLevelModel(merges, opts = {}) {
  const vocab = {};
  for (let b = 0; b < 256; b++) vocab[BC[b]] = b;
  const ms = [];
  for (const [a, b] of merges) {
    const A = bl(a), B = bl(b);
    if (!(A + B in vocab)) vocab[A + B] = Object.keys(vocab).length;
    ms.push(opts.pairs ? [A, B] : A + ' ' + B);
  }
  for (const extra of opts.extraVocab || []) if (!(bl(extra) in vocab)) vocab[bl(extra)] = Object.keys(vocab).length;
  return {
    type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null,
    end_of_word_suffix: null, fuse_unk: false, byte_fallback: false,
    ignore_merges: !!opts.ignoreMerges, vocab, merges: ms,
  };
}

// A character-level vocab (no ByteLevel): given chars, merges, extras.
function charModel(chars, merges, opts = {}) {
  const vocab = {};
  for (const t of opts.first || []) vocab[t] = Object.keys(vocab).length;
  for (const c of chars) if (!(c in vocab)) vocab[c] = Object.keys(vocab).length;
  if (opts.byteTokens) for (let b = 0; b < 256; b++) vocab['<0x' + b.toString(16).toUpperCase().padStart(2, '0') + '>'] = Object.keys(vocab).length;
  for (const [a, b] of merges) if (!(a + b in vocab)) vocab[a + b] = Object.keys(vocab).length;
  return {
    type: 'BPE', dropout: null, unk_token: opts.unk || null, continuing_subword_prefix: null,
    end_of_word_suffix: null, fuse_unk: !!opts.fuseUnk, byte_fallback: !!opts.byteFallback,
    ignore_merges: false, vocab, merges: merges.map(([a, b]) => [a, b]),
  };
}

function tok(model, parts) {
  return Object.assign({
    version: '1.0', truncation: null, padding: null, added_tokens: [], normalizer: null,
    pre_tokenizer: null, post_processor: null, decoder: null,
  }, parts, { model });
}

const added = (id, content, o = {}) => Object.assign({
  id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true,
}, o);

const BYTE_LEVEL = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false };
const COMMON_MERGES = [['a', 'b'], ['ab', 'c'], ['-', '-'], [' ', 'a'], ['e', 'e'], ['ee', 'e'], ['1', '2'], ['x', 'y']];

const out = {};
const cases = {};
function write(name, t, strings) {
  out[name] = t;
  cases[name] = strings || [];
}

// Split: every behaviour, with and without invert; and an empty-matching pattern.
const SPLIT_CASES = ['a-b--c-', '-a-', '--', 'abc-abc', 'a - b', '-', 'aaa---bbb', 'x-y-z--'];
for (const behavior of ['Removed', 'Isolated', 'MergedWithPrevious', 'MergedWithNext', 'Contiguous']) {
  for (const invert of [false, true]) {
    write(`split_${behavior}${invert ? '_invert' : ''}.json`, tok(byteLevelModel(COMMON_MERGES), {
      pre_tokenizer: { type: 'Sequence', pretokenizers: [
        { type: 'Split', pattern: { String: '-' }, behavior, invert }, BYTE_LEVEL] },
    }), SPLIT_CASES);
  }
}
write('split_empty_matches.json', tok(byteLevelModel(COMMON_MERGES), {
  pre_tokenizer: { type: 'Sequence', pretokenizers: [
    { type: 'Split', pattern: { Regex: 'x*' }, behavior: 'Isolated', invert: false }, BYTE_LEVEL] },
}), ['abc', 'xxabxc', 'x', '', 'axxxb', 'é x é']);
write('split_regex_lookahead.json', tok(byteLevelModel(COMMON_MERGES), {
  pre_tokenizer: { type: 'Sequence', pretokenizers: [
    { type: 'Split', pattern: { Regex: '\\d' }, behavior: 'Isolated', invert: false },
    { type: 'Split', pattern: { Regex: '\\s+(?!\\S)|\\s+|\\S+' }, behavior: 'Isolated', invert: false },
    BYTE_LEVEL] },
}), ['  123', 'a  1  b', '   ', 'x \n 12 ', '1 2  3   4']);

// Oniguruma syntax that PCRE2 reads differently even on ASCII text (the
// ASCII fast path must use the translated pattern too): `$` before any LF,
// \h = hex digit, {,n} = {0,n}, (?i) to the end of the group.
write('split_onig_ascii.json', tok(byteLevelModel(COMMON_MERGES), {
  pre_tokenizer: { type: 'Sequence', pretokenizers: [
    { type: 'Split', pattern: { Regex: '[a-z]$' }, behavior: 'Isolated', invert: false },
    { type: 'Split', pattern: { Regex: '\\h+' }, behavior: 'Isolated', invert: false },
    { type: 'Split', pattern: { Regex: 'q{,2}z' }, behavior: 'Isolated', invert: false },
    { type: 'Split', pattern: { Regex: 'k(?i)m|n' }, behavior: 'Removed', invert: false },
    BYTE_LEVEL] },
}), ['a\nb', 'xa\nyb\n', 'x\ty 9F zz', 'beef cafe\t', 'qqz qz z qqqz {,2}z',
  'kM km KM N n', 'kmnNkMn', 'a\n\nb$\n']);

// Added tokens.
write('added_tokens.json', tok(byteLevelModel(COMMON_MERGES), {
  normalizer: { type: 'Replace', pattern: { String: 'q' }, content: 'Q' },
  pre_tokenizer: BYTE_LEVEL,
  added_tokens: [
    added(300, '<a>'), added(301, '<a><b>'), added(302, 'b><'),
    added(303, 'hello', { single_word: true }), added(304, 'lo'),
    added(305, 'X>Y'), added(306, '<X>', { normalized: true }),
    added(307, '<m>', { lstrip: true, rstrip: true }), added(308, '<l>', { lstrip: true }),
    added(309, '<r>', { rstrip: true }), added(310, '<q>', { normalized: true }),
    added(311, '', {}), added(312, 'wörd', { single_word: true }),
  ],
}), ['x<ab><a>', 'x<a><b>y', 'xhello', 'hello', 'a hello b', 'hello_', 'hellox', 'a<X>Y', '<X>',
  'a  <m>  b', '<m><m>', ' <l> ', '  <r>  <l>  ', '<q>', '<Q>', 'a<q>b', 'wörd', 'awörd', 'wörd!',
  'ñwörd', '\u00a0<m>\u3000', '<m>\u180e', 'b><a>', 'lolo hello lo']);

// BPE: duplicate merges (last wins), legacy strings; pairs + ignore_merges.
write('bpe_duplicate_merges.json', tok(byteLevelModel([['a', 'b'], ['b', 'a'], ['a', 'b']]), {
  pre_tokenizer: BYTE_LEVEL,
}), ['aba', 'abab', 'baba', 'aab', 'bba']);
write('bpe_ignore_merges.json', tok(byteLevelModel([['b', 'c']], { pairs: true, ignoreMerges: true, extraVocab: ['abc', 'ab'] }), {
  pre_tokenizer: BYTE_LEVEL,
}), ['abc', 'abcabc', 'bc', 'ab']);
write('bpe_no_ignore_merges.json', tok(byteLevelModel([['b', 'c']], { pairs: true, extraVocab: ['abc'] }), {
  pre_tokenizer: BYTE_LEVEL,
}), ['abc', 'abcabc', 'bc']);
write('bpe_ties.json', tok(byteLevelModel([['a', 'a'], ['aa', 'a'], ['aa', 'aa']]), {
  pre_tokenizer: BYTE_LEVEL,
}), ['a', 'aa', 'aaa', 'aaaa', 'aaaaa', 'a'.repeat(200)]);

// Character-level models: byte fallback, unk (fused or not), dropped unknowns.
const CH = ['a', 'b', 'c', ' ', '▁', 'é'];
const CM = [['a', 'b'], ['ab', 'c'], ['▁', 'a']];
write('byte_fallback.json', tok(charModel(CH, CM, { byteTokens: true, byteFallback: true, unk: '<unk>', first: ['<unk>'] }), {}),
  ['abc', 'abxc', 'é日本', 'a🙂b', 'zz']);
write('unk_fuse.json', tok(charModel(CH, CM, { unk: '<unk>', fuseUnk: true, first: ['<unk>'] }), {}),
  ['abxyzc', 'xyz', 'a日本語b', 'xaxbx']);
write('unk_no_fuse.json', tok(charModel(CH, CM, { unk: '<unk>', first: ['<unk>'] }), {}),
  ['abxyzc', 'xyz', 'a日本語b', 'xaxbx']);
write('unknown_dropped.json', tok(charModel(CH, CM, {}), {}), ['abcab', 'abxab', 'xyz', 'a日b']);

// Metaspace and the Prepend/Replace normalizers.
for (const scheme of ['always', 'first', 'never']) {
  write(`metaspace_${scheme}.json`, tok(charModel(CH, CM, { byteTokens: true, byteFallback: true, unk: '<unk>', first: ['<unk>', '<s>', '</s>'] }), {
    pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: scheme, split: true },
    added_tokens: [added(1, '<s>'), added(2, '</s>')],
  }), ['ab<s>ab', 'ab c', ' ab', '▁ab', '<s>ab', 'a  b', '  ', 'ab</s> c']);
}
write('metaspace_nosplit.json', tok(charModel(CH, CM, { byteTokens: true, byteFallback: true, first: ['<s>'] }), {
  pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: false },
}), ['ab c', 'a  b c', ' ab']);
write('prepend_replace.json', tok(charModel(CH, CM, { byteTokens: true, byteFallback: true, unk: '<unk>', first: ['<unk>', '<s>', '</s>'] }), {
  normalizer: { type: 'Sequence', normalizers: [
    { type: 'Prepend', prepend: '▁' }, { type: 'Replace', pattern: { String: ' ' }, content: '▁' }] },
  added_tokens: [added(1, '<s>'), added(2, '</s>')],
  post_processor: { type: 'TemplateProcessing',
    single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
    pair: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }],
    special_tokens: { '<s>': { id: '<s>', ids: [1], tokens: ['<s>'] } } },
}), ['ab<s>ab', 'ab c', '<s>ab', 'a b c', '', ' ']);

// Digits; ByteLevel with prefix space and the GPT-2 regex; templates.
for (const individual of [true, false]) {
  write(`digits_${individual ? 'individual' : 'contiguous'}.json`, tok(byteLevelModel(COMMON_MERGES), {
    pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'Digits', individual_digits: individual }, BYTE_LEVEL] },
  }), ['a123b', '12 34', '١٢٣x', '①②', '12ab12']);
}
write('bytelevel_gpt2.json', tok(byteLevelModel(COMMON_MERGES.concat([[' ', 'ab'], [' ', 'hello']]), { extraVocab: ['hello'] }), {
  pre_tokenizer: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
  added_tokens: [added(400, '<s>')],
  post_processor: { type: 'Sequence', processors: [
    { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    { type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '</s>', type_id: 0 } }],
      pair: [{ Sequence: { id: 'A', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }],
      special_tokens: { '<s>': { id: '<s>', ids: [400], tokens: ['<s>'] }, '</s>': { id: '</s>', ids: [401, 402], tokens: ['</s>', 'x'] } } }] },
}), ['ab<s>ab', "it's ab", ' ab', 'ab  ', "I'M 12 ab!!", '<s>']);
write('bert_post.json', tok(byteLevelModel(COMMON_MERGES), {
  pre_tokenizer: BYTE_LEVEL,
  post_processor: { type: 'BertProcessing', sep: ['[SEP]', 102], cls: ['[CLS]', 101] },
}), ['ab c', '']);

fs.mkdirSync(dir, { recursive: true });
for (const [name, t] of Object.entries(out)) fs.writeFileSync(path.join(dir, name), JSON.stringify(t, null, 1) + '\n');
fs.writeFileSync(path.join(dir, 'cases.json'), JSON.stringify(cases, null, 1) + '\n');
console.log(`${Object.keys(out).length} fixtures written to ${dir}`);
