// The HF oracle's probes, shared by check.js (the test) and gen_classes.js (the
// generator of harness/tok/uni_data.c's classes): each answers, for the code points
// `cps` (an array of scalar values), which of them are in a class, as a
// Uint8Array indexed by code point.
//   tokenizer(pre, added)    an empty BPE tokenizer with that pre-tokenizer and
//                            those added tokens
//   str(cps)                 the string of the code points
//   onigProbe(re, cps)       matched by the Oniguruma pattern re (one character)
//   numericProbe(cps)        Rust char::is_numeric (the Digits pre-tokenizer)
//   addedProbe(opts, cps)    Rust \w (opts.single_word) or \s (opts.lstrip), as
//                            added-token matching sees them (a Promise)
'use strict';
const { Tokenizer } = require('tokenizers');

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

function onigProbe(re, cps) {
	const pt = tokenizer({ type: 'Split', pattern: { Regex: re },
		behavior: 'Removed', invert: false }).getPreTokenizer();
	const out = new Uint8Array(0x110000);
	for (const c of cps)
		out[c] = 1;
	for (const [piece] of pt.preTokenizeString(str(cps)))
		for (const ch of piece)
			out[ch.codePointAt(0)] = 0;
	return out;
}

function numericProbe(cps) {
	const pt = tokenizer({ type: 'Digits', individual_digits: false }).getPreTokenizer();
	const text = [0x61];
	for (const c of cps)
		if (c !== 0x61)
			text.push(c, 0x61);
	const out = new Uint8Array(0x110000);
	for (const [piece] of pt.preTokenizeString(str(text)))
		if (!piece.includes('a'))
			for (const ch of piece)
				out[ch.codePointAt(0)] = 1;
	return out;
}

// An added token "@" (single_word or lstrip) after each code point c; the
// match offsets (in code points) tell whether c is \w (no match) or \s
// (swallowed).
async function addedProbe(opts, cps) {
	const tk = tokenizer(null, [{ id: 0, content: '@', single_word: opts.single_word,
		lstrip: opts.lstrip, rstrip: false, normalized: false, special: true }]);
	const which = cps.filter((c) => c !== 0x40 && c !== 0x01);
	const text = [];
	for (const c of which)
		text.push(c, 0x40, 0x01);
	const enc = await tk.encode(str(text), null, { addSpecialTokens: false });
	const out = new Uint8Array(0x110000);
	if (opts.single_word)
		for (const c of which)
			out[c] = 1;
	for (const [s, e] of enc.getOffsets()) {
		const k = (e - 2) / 3; // '@' of unit k sits at 3k+1
		if (!Number.isInteger(k))
			throw new Error(`unexpected offsets ${s},${e}`);
		if (opts.single_word)
			out[which[k]] = 0;
		else if (s < e - 1)
			out[which[k]] = 1;
	}
	return out;
}

module.exports = { tokenizer, str, onigProbe, numericProbe, addedProbe };
