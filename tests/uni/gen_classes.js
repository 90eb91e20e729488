// Generates the character-class part of harness/tok/uni_data.c by probing the HF
// oracle, `tokenizers` 0.23.2 (tests/node_modules), over every Unicode scalar
// value. Run once, by hand, and commit the output; the build never runs it:
//   node tests/uni/gen_classes.js > build/uni_classes.inc
// (tests/uni/gen_data.sh glues this and gen_nfc.pl into harness/tok/uni_data.c).
// Probes, all on the string of every scalar value U+0000..U+10FFFF in order:
//   - Oniguruma classes (what Split patterns see): a Split pre-tokenizer with
//     pattern {"Regex": "\\p{X}"} and behaviour Removed; the scalars left in
//     the remaining pieces are the non-members;
//   - Rust char::is_numeric (the Digits pre-tokenizer): text "a c a c ..." ,
//     a piece without 'a' is a numeric char;
//   - Rust regex \w (added-token single_word): a single_word added token "@" in
//     "c@\x01c@\x01...": "@" is matched iff c is not \w;
//   - Rust regex \s (added-token lstrip): an lstrip added token "@" in
//     "c@\x01c@\x01...": the match swallows c iff c is \s.
// The probes are those of tests/uni/oracle.js, which check.js also uses.
'use strict';
const { onigProbe, numericProbe, addedProbe } = require('./oracle');

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

// Rust regex \w: '@' and U+0001 (the probe's own text) are not \w; the test checks them.
const rustWord = () => addedProbe({ single_word: true, lstrip: false }, ALL);
const rustSpace = () => addedProbe({ single_word: false, lstrip: true }, ALL);

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
		tables.push(emit(c, onigProbe(`\\p{${c}}`, ALL)));
	for (const [n, re] of Object.entries(ESCAPES))
		tables.push(emit('onig_' + n, onigProbe(re, ALL)));
	tables.push(emit('rust_numeric', numericProbe(ALL)));
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
