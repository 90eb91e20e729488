// Generates the character-class part of harness/uni_data.c by probing the HF
// oracle, `tokenizers` 0.23.2 (tests/node_modules), over every Unicode scalar
// value. Run once, by hand, and commit the output; the build never runs it:
//   node tests/uni/gen_classes.js > build/uni_classes.inc
// (tests/uni/gen_data.sh glues this and gen_nfc.pl into harness/uni_data.c).
// Probes, all on the string of every scalar value U+0000..U+10FFFF in order:
//   - Oniguruma classes (what Split patterns see): a Split pre-tokenizer with
//     pattern {"Regex": "\\p{X}"} and behaviour Removed; the scalars left in
//     the remaining pieces are the non-members;
//   - Rust char::is_numeric (the Digits pre-tokenizer): text "a c a c ..." ,
//     a piece without 'a' is a numeric char;
//   - Rust regex \w (added-token single_word): a single_word added token "@" in
//     "c@\x01c@\x01...": "@" is matched iff c is not \w;
//   - Rust regex \s (added-token lstrip): an lstrip added token "@" in "c@c@...":
//     the match swallows c iff c is \s.
'use strict';
const { Tokenizer } = require('tokenizers');

const CLASSES = ['L', 'Lu', 'Ll', 'Lt', 'Lm', 'Lo', 'M', 'Mn', 'Mc', 'Me',
	'N', 'Nd', 'Nl', 'No', 'P', 'Pc', 'Pd', 'Ps', 'Pe', 'Pi', 'Pf', 'Po',
	'S', 'Sm', 'Sc', 'Sk', 'So', 'Z', 'Zs', 'Zl', 'Zp',
	'C', 'Cc', 'Cf', 'Co', 'Cn'];
const ESCAPES = { space: '\\s', digit: '\\d', word: '\\w' };

function scalars() {
	const a = [];
	for (let c = 0; c <= 0x10FFFF; c++)
		if (c < 0xD800 || c > 0xDFFF)
			a.push(c);
	return a;
}
const ALL = scalars();

function tokenizer(pre, added) {
	return Tokenizer.fromString(JSON.stringify({
		version: '1.0', truncation: null, padding: null,
		added_tokens: added || [], normalizer: null, pre_tokenizer: pre,
		post_processor: null, decoder: null,
		model: { type: 'BPE', dropout: null, unk_token: null,
			continuing_subword_prefix: null, end_of_word_suffix: null,
			fuse_unk: false, byte_fallback: false, ignore_merges: false,
			vocab: {}, merges: [] },
	}));
}

function str(cps) {
	let s = '';
	for (let i = 0; i < cps.length; i += 4096)
		s += String.fromCodePoint(...cps.slice(i, i + 4096));
	return s;
}

// Scalars matched by the Oniguruma pattern `re` (one character wide).
function onigClass(re) {
	const pt = tokenizer({ type: 'Split', pattern: { Regex: re },
		behavior: 'Removed', invert: false }).getPreTokenizer();
	const out = new Uint8Array(0x110000);
	for (const c of ALL)
		out[c] = 1;
	for (const [piece] of pt.preTokenizeString(str(ALL)))
		for (const ch of piece)
			out[ch.codePointAt(0)] = 0;
	return out;
}

function rustNumeric() {
	const pt = tokenizer({ type: 'Digits', individual_digits: false })
		.getPreTokenizer();
	const cps = [0x61];
	for (const c of ALL)
		if (c !== 0x61)
			cps.push(c, 0x61);
	const out = new Uint8Array(0x110000);
	for (const [piece] of pt.preTokenizeString(str(cps)))
		if (!piece.includes('a'))
			for (const ch of piece)
				out[ch.codePointAt(0)] = 1;
	return out;
}

async function addedProbe(token, unit, swallowed) {
	const tk = tokenizer(null, [{ id: 0, content: '@', single_word: token.single_word,
		lstrip: token.lstrip, rstrip: false, normalized: false, special: true }]);
	const cps = [];
	const which = [];
	for (const c of ALL)
		if (c !== 0x40 && c !== 0x01) {
			cps.push(...unit(c));
			which.push(c);
		}
	const text = str(cps);
	const enc = await tk.encode(text, null, { addSpecialTokens: false });
	// Offsets are in code points in the Node binding.
	const startOf = new Map();
	let u = 0;
	for (let i = 0, k = 0; i < cps.length; i++) {
		if (cps[i] === 0x40)
			startOf.set(u, k++);
		u += 1;
	}
	return swallowed(enc.getOffsets(), startOf, which);
}

async function rustWord() {
	return addedProbe({ single_word: true, lstrip: false },
		(c) => [c, 0x40, 0x01], (offs, startOf, which) => {
			const out = new Uint8Array(0x110000);
			for (const c of which)
				out[c] = 1;
			for (const [s] of offs)
				out[which[startOf.get(s)]] = 0;
			out[0x40] = 0; // '@' and U+0001 are not \w; checked by the test
			return out;
		});
}

async function rustSpace() {
	return addedProbe({ single_word: false, lstrip: true },
		(c) => [c, 0x40], (offs, startOf, which) => {
			const out = new Uint8Array(0x110000);
			for (const [s, e] of offs) {
				const at = e - 1;
				const k = startOf.get(at);
				if (k === undefined)
					throw new Error('unexpected offsets ' + s + ',' + e);
				if (s < at)
					out[which[k]] = 1;
			}
			return out;
		});
}

function ranges(set) {
	const r = [];
	for (let c = 0; c <= 0x10FFFF; c++) {
		if (!set[c] || (c >= 0xD800 && c <= 0xDFFF))
			continue;
		if (r.length && r[r.length - 1][1] === c - 1)
			r[r.length - 1][1] = c;
		else
			r.push([c, c]);
	}
	return r;
}

function hex(c) {
	return '0x' + c.toString(16).toUpperCase().padStart(4, '0');
}

function emit(name, set) {
	const r = ranges(set);
	const lines = [];
	for (let i = 0; i < r.length; i += 4)
		lines.push('\t' + r.slice(i, i + 4).map(([a, b]) =>
			`{${hex(a)}, ${hex(b)}}`).join(', ') + ',');
	return { name, count: r.length,
		text: `static const struct uni_range r_${name}[] = {\n${lines.join('\n')}\n};\n` };
}

(async () => {
	const tables = [];
	for (const c of CLASSES)
		tables.push(emit(c, onigClass(`\\p{${c}}`)));
	for (const [n, re] of Object.entries(ESCAPES))
		tables.push(emit('onig_' + n, onigClass(re)));
	tables.push(emit('rust_numeric', rustNumeric()));
	tables.push(emit('rust_word', await rustWord()));
	tables.push(emit('rust_space', await rustSpace()));
	let out = '';
	for (const t of tables)
		out += t.text + '\n';
	out += 'const struct uni_class uni_classes[] = {\n';
	for (const t of tables)
		out += `\t{"${t.name}", r_${t.name}, ${t.count}},\n`;
	out += '};\nconst size_t uni_classes_n = sizeof uni_classes / sizeof uni_classes[0];\n_Static_assert(sizeof uni_classes / sizeof uni_classes[0] == UNI_CLASS_COUNT,\n\t       "uni_classes does not match enum uni_class_id");\n';
	process.stdout.write(out);
})();
