// Compares uni (through build/tests/test_uni, see its header) with the HF
// oracle, `tokenizers` 0.23.2:
//   node tests/uni/check.js classes DUMP [K/N] every class, code point by code
//                                              point (see PROBES); DUMP is the
//                                              output of `test_uni classes`
//   node tests/uni/check.js split TEST_UNI     the real tokenizers' Split
//                                              patterns on a fuzz corpus
//   node tests/uni/check.js fuzz TEST_UNI      random patterns on a small corpus
//   node tests/uni/check.js nfc TEST_UNI       NFC of every scalar value and
//                                              of a combining-sequence corpus
// Prints one summary line per check and the differences (at most 20 each);
// exits 1 on any difference.
'use strict';
const { execFileSync } = require('child_process');
const path = require('path');
const tokenizers = require('tokenizers');
const { tokenizer, str, onigProbe, numericProbe, addedProbe } = require('./oracle');

const { fixture } = require('../lib/fixture');
let failed = 0;

function report(name, diffs, checked) {
	console.log(`${diffs.length ? 'FAIL' : 'ok  '} ${name}: ${checked} checked, ${diffs.length} differ`);
	for (const d of diffs.slice(0, 20))
		console.log('     ' + d);
	if (diffs.length)
		failed = 1;
}

const hex = (c) => 'U+' + c.toString(16).toUpperCase().padStart(4, '0');

// ---- classes ----------------------------------------------------------

// Long runs of unassigned (Cn) or private-use (Co) code points are probed by
// one representative each: every class here is a function of a character's
// properties, which are the same across such a run. The runs come from
// test_uni's own Cn and Co (which the oracle checks over every scalar), cut
// further to what Node's Unicode (17.0) leaves unassigned, because the Rust
// std tables behind char::is_numeric are newer than Oniguruma's; test_uni's
// answer must then be uniform over each run.
function regionsOf(mine) {
	const cn = mine.get('Cn');
	const co = mine.get('Co');
	const kind = (c) => (c >= 0xD800 && c <= 0xDFFF ? 0 :
		cn[c] && /\p{Cn}/u.test(String.fromCodePoint(c)) ? 1 : co[c] ? 2 : 0);
	const regions = [];
	for (let c = 0; c <= 0x10FFFF;) {
		const k = kind(c);
		let e = c;
		while (e + 1 <= 0x10FFFF && kind(e + 1) === k)
			e++;
		if (k && e - c >= 63)
			regions.push([c, e, c]);
		c = e + 1;
	}
	return regions;
}

function scalars(regions) {
	const a = [];
	let r = 0;
	for (let c = 0; c <= 0x10FFFF; c++) {
		if (c >= 0xD800 && c <= 0xDFFF)
			continue;
		while (r < regions.length && regions[r][1] < c)
			r++;
		if (r < regions.length && c >= regions[r][0] && c !== regions[r][2])
			continue;
		a.push(c);
	}
	return a;
}

// name in test_uni's output -> how to probe the oracle, full range or not
const PROBES = [
	['L', '\\p{L}', 0], ['Lu', '\\p{Lu}', 0], ['Ll', '\\p{Ll}', 0],
	['Lt', '\\p{Lt}', 0], ['Lm', '\\p{Lm}', 0], ['Lo', '\\p{Lo}', 0],
	['M', '\\p{M}', 0], ['Mn', '\\p{Mn}', 0], ['Mc', '\\p{Mc}', 0],
	['Me', '\\p{Me}', 0], ['N', '\\p{N}', 0], ['Nd', '\\p{Nd}', 0],
	['Nl', '\\p{Nl}', 0], ['No', '\\p{No}', 0], ['P', '\\p{P}', 0],
	['Pc', '\\p{Pc}', 0], ['Pd', '\\p{Pd}', 0], ['Ps', '\\p{Ps}', 0],
	['Pe', '\\p{Pe}', 0], ['Pi', '\\p{Pi}', 0], ['Pf', '\\p{Pf}', 0],
	['Po', '\\p{Po}', 0], ['S', '\\p{S}', 0], ['Sm', '\\p{Sm}', 0],
	['Sc', '\\p{Sc}', 0], ['Sk', '\\p{Sk}', 0], ['So', '\\p{So}', 0],
	['Z', '\\p{Z}', 0], ['Zs', '\\p{Zs}', 0], ['Zl', '\\p{Zl}', 0],
	['Zp', '\\p{Zp}', 0], ['C', '\\p{C}', 0], ['Cc', '\\p{Cc}', 0],
	['Cf', '\\p{Cf}', 0], ['Co', '\\p{Co}', 1], ['Cn', '\\p{Cn}', 1],
	['onig_space', '\\s', 0], ['onig_nonspace', '\\S', 0],
	['onig_digit', '\\d', 0], ['onig_word', '\\w', 0],
	['rust_numeric', numericProbe, 0],
	['rust_word', (cps) => addedProbe({ single_word: true, lstrip: false }, cps), 0],
	['rust_space', (cps) => addedProbe({ single_word: false, lstrip: true }, cps), 0],
];

function parseRanges(line) {
	const [name, ...rs] = line.split(' ');
	const set = new Uint8Array(0x110000);
	for (const r of rs) {
		const [a, b] = r.split('-').map((x) => parseInt(x, 16));
		for (let c = a; c <= b; c++)
			set[c] = 1;
	}
	return [name, set];
}

// `dump` is the output of `test_uni classes`; shard "k/n" checks every n-th
// probe from the k-th on, so that two processes can share the work.
async function checkClasses(dump, shard) {
	const mine = new Map(require('fs').readFileSync(dump, 'utf8')
		.trim().split('\n').map(parseRanges));
	const regions = regionsOf(mine);
	const all = [scalars(regions), scalars([])];
	const [k, n] = (shard || '0/1').split('/').map(Number);
	let total = 0;
	for (const [name, probe, full] of PROBES.filter((_, i) => i % n === k)) {
		const cps = all[full];
		const hf = typeof probe === 'string' ? onigProbe(probe, cps) : await probe(cps);
		const me = mine.get(name);
		const diffs = [];
		if (!me) {
			diffs.push('missing from test_uni classes');
		} else {
			for (const c of cps)
				if (hf[c] !== me[c])
					diffs.push(`${hex(c)}: oracle ${hf[c]}, needle ${me[c]}`);
			if (!full)
				for (const [lo, hi, rep] of regions)
					for (let c = lo; c <= hi; c++)
						if (me[c] !== hf[rep])
							diffs.push(`${hex(c)}: needle ${me[c]}, oracle ${hf[rep]} at ${hex(rep)}`);
		}
		total += cps.length;
		report(`class ${name} (${cps.length} probed, ${regions.length} runs by representative)`,
			diffs, 1112064);
	}
	console.log(`${total} code points probed in the oracle in all`);
}

// ---- split patterns on a fuzz corpus ----------------------------------

function rng(seed) {
	return () => {
		seed = (seed + 0x6D2B79F5) | 0;
		let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
		t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

const POOLS = [
	// whitespace pitfalls (docs/tokenizers.md "Pitfalls checked against the reference")
	[' ', '  ', '\t', '\n', '\r', '\r\n', '\n\n', '\u000B', '\u000C', '\u0085',
		'\u00A0', '\u1680', '\u2000', '\u200A', '\u2028', '\u2029', '\u202F',
		'\u205F', '\u3000', '\u180E', '\u200B', '\uFEFF', '\u001C', '\u001D',
		'\u001E', '\u001F', ' \u180E', '\u180E ', '   '],
	// contractions and case folding (§7.4)
	["'s", "'S", "'\u017F", "'t", "'T", "'re", "'RE", "'ve", "'m", "'ll", "'LL",
		"'d", "'D", "'\u212A", "I'\u017Fo", "don't", "'", "''", "'x"],
	// post-14.0 characters and U+0295 (§7.2)
	['\u{1E4D0}', '\u{1E4F9}', '\u{11F00}', '\u{2EBF0}', '\u{16100}', '\u{1CCF0}',
		'\u{1CCF9}', '\u0897', '\u{10940}', '\u{1E5D0}', '\u{105C0}', '\u0295',
		'\u{31350}', '\u{1FAE9}', '\u{11B60}', '\u{1F8B0}', '\u{16D40}', '\u0C5C',
		'\u{13460}', '\u{1E030}'],
	// CJK boundaries of DeepSeek (§7.7)
	['\u4E00', '\u9FA5', '\u9FA6', '\u9FFF', '\u3400', '\u3041', '\u309F', '\u30A0',
		'\u30FF', '\uFF66', '中文', '日本語のテキスト', 'カタカナ', '한국어', '\u3001', '\u3002'],
	// digits (§7.7, 7.8)
	['1', '12', '123', '1234', '12345678', '\uFF11\uFF12\uFF13\uFF14', '\u0661\u0662',
		'\u2460', '\u00B2', '\u2155', '\u216B', '3.14', '1,000'],
	// letters, marks, symbols, punctuation
	['hello', 'World', 'ABC', 'x', 'e\u0301', '\u00E9', 'na\u00EFve', 'Stra\u00DFe',
		'\u0416\u0438\u0437\u043D\u044C', '\u0645\u0631\u062D\u0628\u0627',
		'\u0928\u092E\u0938\u094D\u0924\u0947', '\u0E2A\u0E27\u0E31\u0E2A\u0E14\u0E35',
		'\u{1F600}', '\u{1F44D}\u{1F3FD}', '\u2764\uFE0F', '\u{1F468}\u200D\u{1F469}',
		'\u20AC', '\u2211', '$', '%', '...', '!!', '?', '-', '--', '/', '//', '\\',
		'(', ')', '[x]', '{', '}', '<', '>', '@', '#', '_', '__init__', '`',
		'\u2014', '\u2026', '\u00AB', '\u00BB', '\u201C', '\u201D', '\uE000',
		'\u{E0100}', '\u{F0000}', '\u0300', '\u20DD', '\u00AD', '\u0600'],
];

function randomScalar(r) {
	for (;;) {
		const c = r() < 0.7 ? Math.floor(r() * 0x10000) : Math.floor(r() * 0x110000);
		if (c !== 0 && (c < 0xD800 || c > 0xDFFF))
			return String.fromCodePoint(c);
	}
}

function corpus(n) {
	const r = rng(20260601);
	const out = [];
	for (let i = 0; i < n; i++) {
		const len = 1 + Math.floor(r() * (r() < 0.1 ? 60 : 12));
		let s = '';
		for (let k = 0; k < len; k++) {
			if (r() < 0.12) {
				s += randomScalar(r);
			} else {
				const pool = POOLS[Math.floor(r() * POOLS.length)];
				s += pool[Math.floor(r() * pool.length)];
			}
		}
		out.push(s);
	}
	return out;
}

function realSplits(model) {
	const j = require(fixture(`hf/${model}/tokenizer.json`));
	const pt = j.pre_tokenizer;
	const list = pt.type === 'Sequence' ? pt.pretokenizers : [pt];
	// Isolated whatever the file says: it shows every match boundary
	return list.filter((p) => p.type === 'Split').map((p) => p.pattern.Regex);
}

// Oniguruma (Ruby syntax) constructs the rewriter translates rather than
// passes through, and classes in every position.
const SYNTAX = ['.', '^.|.$', '\\w\\Z', 'a{,2}', 'x(?i)s|t', '\\h+', '\\d+|\\w+',
	'\\v|\\u0041|\\x{42}|\\x43', '[^\\s\\p{L}]+', '\\P{L}+', '\\p{^N}+', '(?i:st|k)+',
	'\\S+', '[\\S\\d]', '[^\\S]+', '\\D\\W', '[\\p{Lu}\\p{Nd}_-]+', '\\p{Letter}+',
	'[a-c\\-]+', '[]a]', '(?<n>a|b)(?=c)', '(?#c)b(?!c)', '(?<=a)b|(?<!a)c', 'a*?b', 'a++',
	'\\s*$', '^\\s+', '\\p{Lowercase_Letter}+', '\\p{Other}+', '\\p{Separator}+',
	'\\p{Combining_Mark}', '\\p{Modifier Letter}|\\p{control}', '\\p{Decimal-Number}+',
	'(?i:[a-z]+)', '(?i)[^a-c]+', '(?i:[sk])', "(?i:'[st]|x)", '(?i)[S-Z]'];
const SYNTAX_POOL = ['a', 'b', 'c', 'A', 'B', 'C', 's', 'S', 't', 'x', 'X', 'k', 'K', "'",
	'\u212A', '\u017F', '1', '2', '_', '-', ' ', '\n', '\r', '\r\n', '\u000B', '{', '}',
	',', '.', 'F', 'g', '\u00E9', '\u0661', '\u180E', '\u3000', '\u{1CCF0}', '\u{16100}',
	']', '[', '\\u02B0', '\\u0301', '\\u0007', '\\u2028', '\\u00AD'];

function syntaxCorpus(n) {
	const r = rng(7);
	const out = [];
	for (let i = 0; i < n; i++) {
		let s = '';
		const len = 1 + Math.floor(r() * 12);
		for (let k = 0; k < len; k++)
			s += SYNTAX_POOL[Math.floor(r() * SYNTAX_POOL.length)];
		out.push(s);
	}
	return out;
}

const GPT2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

function checkSplit(bin) {
	const fuzz = corpus(3000);
	const syn = syntaxCorpus(500);
	const configs = [['deepseek_v3', realSplits('deepseek_v3'), fuzz],
		['llama3', realSplits('llama3'), fuzz], ['qwen3', realSplits('qwen3'), fuzz],
		['gpt4o', realSplits('gpt4o'), fuzz], ['gpt2', [GPT2], fuzz],
		...SYNTAX.map((p) => [`/${p}/`, [p], syn])];
	for (const [name, pats, strings] of configs) {
		const input = strings.map((s) => JSON.stringify(s)).join('\n') + '\n';
		const pt = tokenizer({ type: 'Sequence', pretokenizers: pats.map((p) => ({
			type: 'Split', pattern: { Regex: p }, behavior: 'Isolated', invert: false,
		})) }).getPreTokenizer();
		const want = strings.map((s) => JSON.stringify(pt.preTokenizeString(s).map((p) => p[0])));
		for (const form of ['', 'ranges']) {
			const mine = execFileSync(bin, ['split', ...pats], { input, maxBuffer: 1 << 28,
				env: { ...process.env, UNI_FORM: form } }).toString().split('\n');
			const diffs = [];
			strings.forEach((s, i) => {
				if (mine[i] !== want[i])
					diffs.push(`${JSON.stringify(s)}: oracle ${want[i]}, needle ${mine[i]}`);
			});
			report(`split ${name} (${pats.length} pattern${pats.length > 1 ? 's' : ''}` +
				`${form ? ', ' + form + ' form' : ''})`, diffs, strings.length);
		}
	}
}

// Random patterns built from the constructs above (groups, lookarounds,
// alternation, every quantifier kind): wherever both HF and needle accept a
// pattern, the splits of a small corpus must agree. (needle refuses, rather
// than mistranslates, what PCRE2 cannot express, such as Ruby's stacked
// quantifiers "a{,2}*+" or variable-length lookbehind.)
function checkFuzz(bin, n) {
	const r = rng(4242);
	const atoms = ['a', 'b', 's', 'S', 'k', '\\s', '\\S', '\\d', '\\w', '\\W', '\\D', '\\h',
		'\\p{L}', '\\P{N}', '\\p{^P}', '.', '^', '$', '\\Z', '\\A', '\\z', '[ab]',
		'[^a\\s]', '[\\p{L}\\d]', '[a-c]', '[^\\S\\n]', '\\n', '\\r', ' ', '\\u00e9', '\u00e9',
		'\u4e2d', '\\x{1CCF0}', '(?i:s)', '(?i)', '\\{', '{', '}', ',', '1', '-', '\\-', ']',
		'\\]', '\\\\', '\\.', '\\t', '\\v', '\\e', '\\0', '\\x41'];
	const quants = ['', '', '', '*', '+', '?', '{2}', '{1,3}', '{,2}', '{2,}', '*?', '+?',
		'??', '*+', '++', '?+'];
	const pick = (a) => a[Math.floor(r() * a.length)];
	const gen = (d) => {
		let s = '';
		for (let i = 1 + Math.floor(r() * 4); i > 0; i--) {
			const k = r();
			const a = k < 0.15 && d < 3 ? '(' + pick(['', '?:', '?=', '?!', '?<=', '?<!', '?>']) +
				gen(d + 1) + ')' : k < 0.2 && d < 3 ? gen(d + 1) + '|' + gen(d + 1) : pick(atoms);
			s += a + pick(quants);
		}
		return s;
	};
	const pool = ['a', 'b', 's', 'S', 'k', 'K', '\u212a', '\u017f', ' ', '\n', '\r', '1', '\u00e9',
		'e\u0301', '\u4e2d', '\u180e', '\u3000', '{', '}', ',', '-', '.', '\\', ']', '\t', '\u000b',
		'A', 'F', 'g', '\u{1CCF0}', '\u0661', '_'];
	const strings = [];
	for (let i = 0; i < 60; i++) {
		let s = '';
		for (let k = 1 + Math.floor(r() * 10); k > 0; k--)
			s += pick(pool);
		strings.push(s);
	}
	const input = strings.map((s) => JSON.stringify(s)).join('\n') + '\n';
	const diffs = [];
	let both = 0;
	for (let i = 0; i < n; i++) {
		const pat = gen(0);
		let pt;
		try {
			pt = tokenizer({ type: 'Split', pattern: { Regex: pat }, behavior: 'Isolated',
				invert: false }).getPreTokenizer();
		} catch (e) {
			continue; // Oniguruma refuses it: HF cannot load such a file
		}
		const res = require('child_process').spawnSync(bin, ['split', pat], { input });
		if (res.status !== 0)
			continue; // needle refuses it
		both++;
		const mine = res.stdout.toString().split('\n');
		const bad = strings.findIndex((s, k) =>
			JSON.stringify(pt.preTokenizeString(s).map((p) => p[0])) !== mine[k]);
		if (bad >= 0)
			diffs.push(`/${pat}/ on ${JSON.stringify(strings[bad])}: needle ${mine[bad]}`);
	}
	report(`split with random patterns (${n} made, ${both} accepted by both)`, diffs, both);
}

// ---- NFC ----------------------------------------------------------------

function nfcCorpus(n) {
	const r = rng(99);
	// decomposable characters, marks, Hangul jamo and syllables, and the
	// post-9.0 cases (U+11935 U+11930, Unicode 13)
	const marks = [];
	const comps = [];
	for (let c = 0xA0; c < 0x30000; c++) {
		if (c >= 0xD800 && c <= 0xDFFF)
			continue;
		const s = String.fromCodePoint(c);
		if (/\p{M}/u.test(s))
			marks.push(s);
		else if (s.normalize('NFD') !== s)
			comps.push(s, s.normalize('NFD'));
	}
	const pool = [marks, comps,
		['a', 'e', 'o', 'u', 'A', 'E', 'K', 'i', 'n', 's', 'x', ' ', '\u0391', '\u03B1',
			'\u0430', '\u05D0', '\u0627', '\u0915', '\u0B47', '\u0BC6', '\u0DD9'],
		['\u1100', '\u1112', '\u1161', '\u1175', '\u11A7', '\u11A8', '\u11C2', '\u11C3',
			'\uAC00', '\uAC01', '\uD7A3', '\u3131', '\u{11935}', '\u{11930}', '\u{11938}',
			'\u{1133B}', '\u{11347}', '\u{1133E}', '\u{113C2}', '\u{113B8}', '\u{1611E}',
			'\u{16121}', '\u0C5C', '\u0897', '\u{1E4EC}']];
	const out = [];
	for (let i = 0; i < n; i++) {
		const long = r() < 0.02; // long runs of marks take the counting sort
		const len = 1 + Math.floor(r() * (long ? 200 : 10));
		let s = '';
		for (let k = 0; k < len; k++) {
			const p = long && k ? marks : pool[Math.floor(r() * pool.length)];
			s += p[Math.floor(r() * p.length)];
		}
		out.push(s);
	}
	return out;
}

// Longer strings, as uni_nfc skips them 16 bytes at a time: runs of ASCII,
// CJK ideographs (U+4000..U+9FFF and their neighbours), kana, fullwidth and
// CJK punctuation, with marks, decomposed and composed characters placed at
// every offset of a block.
function nfcLong(n) {
	const r = rng(7);
	const runs = [
		() => String.fromCodePoint(0x4000 + Math.floor(r() * 0x6000)),
		() => String.fromCodePoint([0x3FFF, 0xA000, 0x4E00, 0x9FFF][Math.floor(r() * 4)]),
		() => 'abcdefghijklmnopqrstuvwxyz '[Math.floor(r() * 27)],
		() => String.fromCodePoint(0x3000 + Math.floor(r() * 0x100)),
		() => String.fromCodePoint(0xFF00 + Math.floor(r() * 0xF0)),
		() => ['\u00e9', 'e\u0301', '\u0301', '\u3099', '\u30B3\u3099', '\uAC00\u11A8',
			'\u1100\u1161', '\u00C5', '\u212B', '\u{1F600}'][Math.floor(r() * 10)],
	];
	const out = [];
	for (let i = 0; i < n; i++) {
		let s = '';
		const len = 20 + Math.floor(r() * 300);
		while (s.length < len) {
			const kind = Math.floor(r() * runs.length);
			const k = kind === 5 ? 1 : 1 + Math.floor(r() * 24);
			for (let j = 0; j < k; j++)
				s += runs[kind]();
		}
		out.push(s);
	}
	for (let k = 0; k < 40; k++)
		out.push('e'.repeat(k) + '\u0301x', '\u4E2D'.repeat(k) + 'e\u0301', '\u4E2D'.repeat(k) + '\u0301',
			'a\u4E2D'.repeat(k) + '\u30B3\u3099');
	return out;
}

function checkNfc(bin) {
	const nfc = tokenizers.nfcNormalizer();
	const sets = [];
	// every scalar but NUL, each after a space (nothing composes with a space)
	const lines = [];
	const cps = scalars([]).filter((c) => c !== 0);
	for (let i = 0; i < cps.length; i += 2048)
		lines.push(cps.slice(i, i + 2048).map((c) => ' ' + String.fromCodePoint(c)).join(''));
	sets.push(['every scalar value', lines, cps.length]);
	const seq = nfcCorpus(20000);
	sets.push(['combining sequences, Hangul, post-9.0 characters', seq, seq.length]);
	const long = nfcLong(3000);
	sets.push(['long mixed text (CJK, ASCII, kana, marks at every offset)', long, long.length]);
	for (const [name, strings, count] of sets) {
		const input = strings.map((s) => JSON.stringify(s)).join('\n') + '\n';
		const mine = execFileSync(bin, ['nfc'], { input, maxBuffer: 1 << 28 })
			.toString().split('\n');
		const diffs = [];
		strings.forEach((s, i) => {
			const want = JSON.stringify(nfc.normalizeString(s));
			if (mine[i] !== want) {
				const cp = (x) => [...JSON.parse(x)].map((ch) => hex(ch.codePointAt(0))).join(' ');
				diffs.push(strings === lines ? `line ${i}` :
					`${cp(JSON.stringify(s))}: oracle ${cp(want)}, needle ${mine[i] && cp(mine[i])}`);
			}
		});
		report(`nfc ${name}`, diffs, count);
	}
}

(async () => {
	const [mode, bin, shard] = process.argv.slice(2);
	if (mode === 'classes')
		await checkClasses(bin, shard);
	else if (mode === 'split')
		checkSplit(bin);
	else if (mode === 'fuzz')
		checkFuzz(bin, 300);
	else if (mode === 'nfc')
		checkNfc(bin);
	else
		throw new Error('usage: check.js classes DUMP [K/N] | split|fuzz|nfc TEST_UNI');
	process.exit(failed);
})();
