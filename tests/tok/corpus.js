// The comparison corpus: every pitfall of docs/tokenizers.md "Pitfalls checked against the reference", random Unicode
// from all planes (Unicode 15/16/17 additions included), CJK, code, long runs
// and text containing a tokenizer's special tokens. Deterministic (seeded).
//
//   const { corpus } = require('./corpus');
//   corpus({ seed: 1, random: 2000, specials: ['<s>', ...] }) -> [string]
'use strict';

function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const cp = (...c) => String.fromCodePoint(...c);
const range = (a, b) => Array.from({ length: b - a + 1 }, (_, i) => cp(a + i)).join('');

// §7 pitfalls, each a fixed string.
const PITFALLS = [
  // 1. \s and friends
  ' \u180E', 'a \u180E b', '\u180E\u180E  x', 'x\u0085y \u0085 z', 'a\u00A0b \u00A0 c',
  '\u1680x', range(0x2000, 0x200A) + 'x', 'a\u2028b\u2029c', '\u202F\u205F\u3000x',
  'a\u200Bb \u200B c', '\uFEFFhello \uFEFF', 'a\u001Cb\u001Dc\u001Ed\u001Ff', ' \u001C x',
  '\t\u000B\u000C\r\n x', '  \u3000  x', 'x \u2028', 'end with space ', 'end with spaces   ',
  // 2. Unicode versions of \p{..}
  cp(0x1E4D0, 0x1E4D1) + 'ab', ' ' + cp(0x2EBF0, 0x2EBF1), cp(0x16100, 0x16101) + ' x',
  cp(0x1CCF0, 0x1CCF1, 0x1CCF2), 'a' + cp(0x1CCF0) + '1', cp(0x10940, 0x10941) + 'z',
  'a\u0897b', '\u0295\u0295 x', 'x ' + cp(0x11F00, 0x11F01), cp(0x1D2C0, 0x1D2C1),
  cp(0x1E030, 0x1E031) + 'q', '\u0CF3\u0ECE ', cp(0x10EFD) + 'a', cp(0x13460, 0x13461),
  // 3. NFC at Unicode 9.0
  cp(0x11935, 0x11930), 'x' + cp(0x11935, 0x11930) + 'y', cp(0x1CCF0) + 'NFKC',
  'e\u0301 A\u030A \u1100\u1161\u11A8', 'Å Ω ﬁ ａ ①', '\u0915\u093C \u0958',
  cp(0x1109A) + ' ' + cp(0x11099, 0x110BA), '\u0F73 \u0F75 \u0F81',
  // 4. (?i:) contractions
  "I'ſo", "it'ſ", "IT'S", "I'M", "we'LL", "they'RE", "it'\u212A", "'s't're've'm'll'd",
  "don't can't won't", "''s", "'S 'T 'D", "x's y'd", "John's dog's bone",
  // 5. per-piece regex
  '  123', 'a  123', '   \u4e00\u4e8c', 'x \n 12', 'trail  \n', '  \n\n  ', ' 1 2  3   4',
  'abc   ', '\n\n\n', '\r\n\r\n', ' \r\n', 'a\r\nb', '\r', 'x\t\t1',
  // 6. literal CR/LF
  '!\r\n', 'hi!!\n\n', ':\r', '.\n', 'a.\r\nb', '?\r\r\n\n',
  // 7. CJK boundaries and number classes
  '\u9FA5\u9FA6\u9FFF', '\u3400\u4e00', 'あいうカタカナ', 'ｶﾀｶﾅ', '\u309F\u30A0\u30FF\u3040',
  '１２３４', '١٢٣٤٥', '①②③④', '\u2160\u2161\u2162', '٣٤x', '12\uFF13\uFF14', '²³¹',
  // 3-byte numbers amid 3-byte non-numbers (DeepSeek's digit scanner skips
  // the latter by table): 〇, fullwidth digits, circled and Roman numbers
  // after CJK, CJK punctuation, box drawing, fullwidth letters
  '第〇章，共１２３４５页。', '┌──┐│①②│└─┘', '中文\u2160\u2161\u2162\u2163字', 'ＡＢ１２ＣＤ３',
  '「〇〇七」、１０００元', '表格│１│２│３４５６│', '一二三１２３四五六七八九〇',
  // 8. digit grouping
  '12345678', '1234567', '3.14159', '1,000,000', '0x1F2E3D', '2024-01-01T12:34:56Z',
  // 9. added-token-looking text
  '<s>', '</s>', '<unk>', '<|endoftext|>', '<|im_start|>user', '<s><s>', '< s>',
  // 10-14: prefix spaces, empties, whitespace only
  ' ', '  ', '\n', '\t', ' a', 'a', 'ab', '▁', '▁a ▁b', ' ▁', 'Ġ', 'ĠĠ', 'Ċ',
  // misc scripts
  'Привет, мир!', 'Γειά σου Κόσμε', 'مرحبا بالعالم', 'שלום עולם', 'नमस्ते दुनिया',
  '안녕하세요 세계', 'สวัสดีชาวโลก', 'ሰላም ልዑል', 'Xin chào thế giới', 'Ⴀა ჱ',
  '👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈', '🙂🙂🙂', 'a\u0300\u0301\u0302\u0303', '\u200D\u200C', 'ǅungla ǲ',
  'ℌ𝔢𝔩𝔩𝔬 𝕎𝕠𝕣𝕝𝕕', '𝟘𝟙𝟚', 'Ⅻ ⅻ', '½ ¾ ⅞', '$€£¥₹₿', '©®™', '«»„“”‘’', '…—–',
];

const CODE = [
  'int main(void) {\n\treturn 0;\n}\n',
  'def f(x):\n    return x**2  # square\n',
  'for (size_t i = 0; i < n; i++) a[i] += b[i] * 3.5e-7;',
  'const re = /^\\s*(?:[a-z]+)\\d{1,3}$/gi;',
  '<div class="x">&amp;&lt;</div>\n<!-- c -->',
  '{"key": [1, 2.5, "three", null, true], "k2": {"a": "\\u00e9"}}',
  'SELECT id, name FROM users WHERE age >= 18 ORDER BY name;',
  '#!/bin/sh\nset -eu\necho "$HOME" | tr a-z A-Z >/dev/null 2>&1\n',
  'fn main() { println!("{:?}", vec![1u8; 4]); }',
  '    \n        x = 1\n\t\ty = 2\n',
  '        x', '         \n', '                ', '        \u3000 x', ' '.repeat(17) + 'y',
  'a        \n\n        b', '\u4e00        \u4e8c', ' '.repeat(23) + '\r\n' + ' '.repeat(8),
  '/* comment */ // line\n#include <stdio.h>\n',
  'a=>b; c->d; e::f; g!=h; i<=j; k>>=1; l&&m||n',
  'https://example.com/path?q=1&r=two#frag',
  'user@example.org, +1 (555) 123-4567',
];

const WORDS = ('the of and to in is was that for on with as by at from his her they ' +
  'which be this have are had not but it one all were when we there can an your more ' +
  'would their if has will about who been out them into do time only other said its ' +
  'could new some these may than first any like people water over also years two ' +
  'quick brown fox jumps lazy dog tokenizer counting exactly server prompt').split(' ');

const POOLS = [
  range(0x20, 0x7E), range(0xA0, 0x17F), range(0x370, 0x3FF), range(0x400, 0x4FF),
  range(0x590, 0x6FF), range(0x900, 0x97F), range(0xE00, 0xE7F), range(0x1100, 0x11FF),
  range(0x2000, 0x206F), range(0x2100, 0x21FF), range(0x2460, 0x24FF), range(0x3000, 0x30FF),
  range(0x4E00, 0x4E80), range(0x9F80, 0x9FFF), range(0x3400, 0x3440), range(0xAC00, 0xAC80),
  range(0xFF00, 0xFFEF), range(0x1F300, 0x1F64F), range(0x1D400, 0x1D4FF),
  range(0x10900, 0x1097F), range(0x11900, 0x1195F), range(0x16100, 0x1613F),
  range(0x1CC00, 0x1CCFF), range(0x1E4D0, 0x1E4FF), range(0x1E5D0, 0x1E5FF),
  range(0x2EBF0, 0x2EC10), range(0x31350, 0x31380), range(0x0880, 0x08FF),
  range(0x0300, 0x036F), range(0xFE00, 0xFE0F), range(0x1F1E6, 0x1F1FF),
  ' \n\t\r\u00A0\u3000\u180E\u2028\u0085\u200B',
];

function pick(r, a) {
  return a[Math.floor(r() * a.length)];
}

function randomScalar(r) {
  // Any plane, skipping surrogates and NUL.
  for (;;) {
    const plane = r() < 0.7 ? 0 : Math.floor(r() * 17);
    const c = plane * 0x10000 + Math.floor(r() * 0x10000);
    if (c > 0 && (c < 0xD800 || c > 0xDFFF)) return cp(c);
  }
}

function poolChar(r) {
  const p = [...pick(r, POOLS)];
  return pick(r, p);
}

function randomString(r, specials) {
  const n = 1 + Math.floor(r() * 40);
  let s = '';
  for (let i = 0; i < n; i++) {
    const k = r();
    if (k < 0.25) s += (r() < 0.5 ? ' ' : '') + pick(r, WORDS);
    else if (k < 0.5) s += poolChar(r);
    else if (k < 0.6) s += randomScalar(r);
    else if (k < 0.7) s += pick(r, [' ', '  ', '\n', '\r\n', '\t', '   ', '\n\n', ' \n']);
    else if (k < 0.78) s += String(Math.floor(r() * 1e6));
    else if (k < 0.84) s += pick(r, ["'s", "'t", "'re", "'LL", "'ſ", "'\u212A", "'d", "'"]);
    else if (k < 0.9 && specials.length) s += pick(r, specials);
    else if (k < 0.95) s += pick(r, PITFALLS);
    else s += pick(r, '.,;:!?-_()[]{}<>"\'`~@#$%^&*+=|\\/'.split(''));
  }
  return s;
}

function longRuns() {
  return [
    ' '.repeat(100000), 'a'.repeat(60000), '7'.repeat(30000), '\n'.repeat(20000),
    '\u4e00'.repeat(20000), '!'.repeat(30000), 'ab'.repeat(20000), ' \n'.repeat(10000),
    'x '.repeat(30000), '\u00e9'.repeat(20000), '🙂'.repeat(5000), '\t'.repeat(20000) + 'x',
    ' '.repeat(50000) + '123', 'abc'.repeat(5000) + ' ' + 'def'.repeat(5000),
    'A'.repeat(1000), '1'.repeat(1000), '-'.repeat(1000), '='.repeat(5000),
  ];
}

function english(r, n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    let s = '';
    const len = 5 + Math.floor(r() * 60);
    for (let j = 0; j < len; j++) {
      let w = pick(r, WORDS);
      if (j === 0 || r() < 0.05) w = w[0].toUpperCase() + w.slice(1);
      s += (j ? ' ' : '') + w;
      if (r() < 0.08) s += pick(r, [',', '.', ';', ':', '!', '?']);
    }
    out.push(s + '.');
  }
  return out;
}

function cjk(r, n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    let s = '';
    const len = 3 + Math.floor(r() * 50);
    for (let j = 0; j < len; j++) {
      const k = r();
      if (k < 0.6) s += cp(0x4E00 + Math.floor(r() * 0x51A6));
      else if (k < 0.75) s += cp(0x3040 + Math.floor(r() * 0xC0));
      else if (k < 0.85) s += pick(r, ['，', '。', '、', '！', '？', '「', '」', ' ', '\n']);
      else if (k < 0.92) s += cp(0x3400 + Math.floor(r() * 0x19B0));
      else s += String(Math.floor(r() * 1000));
    }
    out.push(s);
  }
  return out;
}

// Natural Chinese: every entry of Debian's fortunes-zh (sayings, Debian tips,
// Tang and Song poems; tests/setup.sh installs it), colour escapes removed.
// Common characters and words, where random CJK is mostly rare characters.
const FORTUNES_ZH = ['chinese', 'tang300', 'song100'].map((f) => '/usr/share/games/fortunes/' + f);

function naturalChinese() {
  const fs = require('fs');
  const out = [];
  for (const f of FORTUNES_ZH) {
    if (!fs.existsSync(f)) throw new Error(`${f} is missing: run 'sh tests/setup.sh system' as root`);
    const text = fs.readFileSync(f, 'utf8').replace(/\x1b\[[^m]*m/g, '');
    for (const entry of text.split('\n%\n')) if (entry.trim()) out.push(entry);
  }
  return out;
}

function corpus(opt) {
  const r = rng(opt.seed || 1);
  const specials = opt.specials || [];
  const out = [''];
  for (const p of PITFALLS) out.push(p, p + p, 'x' + p + 'y', ' ' + p + ' ');
  for (const c of CODE) out.push(c);
  for (const s of specials) out.push(s, 'a' + s + 'b', ' ' + s + ' ', s + s, '  ' + s + '\n');
  out.push(...english(r, opt.english || 300));
  out.push(...cjk(r, opt.cjk || 300));
  for (let i = 0; i < (opt.random || 2000); i++) out.push(randomString(r, specials));
  if (opt.long !== false) out.push(...longRuns());
  if (opt.natural) out.push(...naturalChinese());
  return out;
}

module.exports = { corpus, rng };
