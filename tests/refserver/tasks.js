'use strict';
// The reference server's reasoning for everyday requests: a strict-JSON task (extract
// fields, add up, sort, count, dates, units, lists of people), a question about facts told
// earlier in the conversation (English or Chinese, a correction replacing the old value),
// and a question about attached pictures (vision.js). Each reads the request as a person
// would: the JSON shape it asks for ({"key": <type>} or `"key" (type)`), the data in the
// text, and answers in that shape. None knows needle's suites; what it cannot read it
// leaves to the caller (null).
const vision = require('./vision');

// The keys and types a prompt asks for, in order: [{key, type}] from `{"k": <type>}` or
// from `"k" (type, ...)` / `"k"（类型）`; null when it asks for neither.
function askedShape(text) {
	const out = [];
	let m;
	const angle = /"([\w]+)"\s*:\s*\[?\s*<([^>]+)>/g;
	while ((m = angle.exec(text)) !== null) out.push({ key: m[1], type: m[2].toLowerCase() });
	if (out.length) return out;
	const paren = /"([\w]+)"\s*[（(]([^)）]*)[)）]/g;
	while ((m = paren.exec(text)) !== null) out.push({ key: m[1], type: m[2].toLowerCase() });
	return out.length ? out : null;
}

function isInteger(type) {
	return /^(?:an? )?integer|整数/.test(type);
}

function isNumber(type) {
	return isInteger(type) || /^(?:a )?number/.test(type);
}

// The text after "Sentence:", "Ticket:", "Text:", "句子：" ..., or the whole text.
function dataPart(text) {
	const m = /(?:^|\n)\s*(?:[A-Z][a-z]+|句子|文本)\s*[:：]\s*(.+)$/s.exec(text);
	return m ? m[1].trim() : text;
}

// ---- one-shot tasks: each returns the answer object or null

function people(text) {
	const key = /"(\w+)"\s*:\s*\[\s*\{/.exec(text);
	if (!key) return null;
	const list = [];
	const re = /\b([A-Z][a-z]+) is (\d+)/g;
	let m;
	while ((m = re.exec(dataPart(text))) !== null) list.push({ name: m[1], age: Number(m[2]) });
	return list.length ? { [key[1]]: list } : null;
}

function orderTotal(text, shape) {
	const re = /(\d+) ([a-z]+?)s? at (\d+) ([a-z]+?)s? each/g;
	let m, units = 0, total = 0, any = false;
	while ((m = re.exec(text)) !== null) {
		units += Number(m[1]);
		total += Number(m[1]) * Number(m[3]);
		any = true;
	}
	if (!any || shape.length !== 2) return null;
	const itemsKey = shape.find((s) => /item|unit|count/.test(s.key)) || shape[0];
	const totalKey = shape.find((s) => s !== itemsKey) || shape[1];
	return { [itemsKey.key]: units, [totalKey.key]: total };
}

function addUp(text, shape) {
	const m = /\b(?:add up|sum|total)\b[^:]*:\s*([\d.,\s]+(?:and\s+[\d.]+)?)/i.exec(text);
	if (!m || shape.length !== 1) return null;
	const nums = m[1].match(/\d+(?:\.\d+)?/g) || [];
	const cents = nums.reduce((a, n) => a + Math.round(Number(n) * 100), 0);
	return nums.length ? { [shape[0].key]: cents / 100 } : null;
}

function sortNumbers(text, shape) {
	const m = /\bsort these (?:integers|numbers)? ?in (ascending|descending) order:\s*([-\d,\s]+)/i.exec(text);
	if (!m || shape.length !== 1) return null;
	const nums = (m[2].match(/-?\d+/g) || []).map(Number).sort((a, b) => a - b);
	if (m[1].toLowerCase() === 'descending') nums.reverse();
	return { [shape[0].key]: nums };
}

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

function dateAdd(text, shape) {
	const m = /(\d+) days (after|before) (\d{4})-(\d{2})-(\d{2})/.exec(text);
	if (!m) return null;
	const sign = m[2] === 'after' ? 1 : -1;
	const t = Date.UTC(Number(m[3]), Number(m[4]) - 1, Number(m[5])) + sign * Number(m[1]) * 86400000;
	const d = new Date(t);
	const out = {};
	for (const s of shape) {
		if (/date/.test(s.key)) out[s.key] = d.toISOString().slice(0, 10);
		else if (/day/.test(s.key)) out[s.key] = WEEKDAYS[d.getUTCDay()];
		else return null;
	}
	return out;
}

const UNITS = { kilometres: 1000, kilometers: 1000, metres: 1, meters: 1, centimetres: 0.01,
	centimeters: 0.01, millimetres: 0.001, millimeters: 0.001, kilograms: 1000, grams: 1 };

function convert(text, shape) {
	const m = /\bconvert (-?\d+(?:\.\d+)?) ([a-z]+) to ([a-z]+)/i.exec(text);
	if (!m || shape.length !== 1 || !UNITS[m[2]] || !UNITS[m[3]]) return null;
	const v = Number(m[1]) * UNITS[m[2]] / UNITS[m[3]];
	return { [shape[0].key]: isInteger(shape[0].type) ? Math.round(v) : Math.round(v * 1e6) / 1e6 };
}

function countWord(text, shape) {
	const m = /how many times does the word "([^"]+)" appear in this list:\s*([^?]+)/i.exec(text);
	if (!m || shape.length !== 1) return null;
	const n = m[2].split(/\s*,\s*/).filter((w) => w.trim().toLowerCase() === m[1].toLowerCase()).length;
	return { [shape[0].key]: n };
}

// One field of an extraction task, read from the data sentence by what the key and its
// description say it is.
function field(data, s) {
	const k = s.key.toLowerCase();
	const word = k.replace(/_/g, ' ');
	let m;
	if (isNumber(s.type)) {
		if (k === 'age' && (m = /(\d+)\s*(?:岁|years? old|\b)/.exec(data.replace(/^[^\d]*?(?=\d+\s*岁)/, '')))) return Number(m[1]);
		if ((m = new RegExp(`\\b${word}\\s+(?:of\\s+|is\\s+)?(-?\\d+(?:\\.\\d+)?)`, 'i').exec(data))) return Number(m[1]);
		if ((m = new RegExp(`(-?\\d+(?:\\.\\d+)?)\\s+${word}`, 'i').exec(data))) return Number(m[1]);
		return undefined;
	}
	if (/boolean/.test(s.type)) {
		if (new RegExp(`\\bnot ${word}\\b`, 'i').test(data)) return false;
		return new RegExp(`\\b${word}\\b`, 'i').test(data);
	}
	if (k === 'id' && (m = /\b[A-Z]{2,}-\d+\b/.exec(data))) return m[0];
	if (/null/.test(s.type) && /\bnobody\b|\bno one\b|\bunassigned\b/i.test(data)) return null;
	if ((m = /\bassigned to ([A-Z][a-z]+)/.exec(data)) && /assign/.test(k)) return m[1];
	if (k === 'name' && (m = /^([A-Z][a-z]+)\b/.exec(data))) return m[1];
	if (k === 'name' && (m = /^(\p{Script=Han}{2,3}?)(?:今年|住在|是)/u.exec(data))) return m[1];
	if (k === 'city' && (m = /住在(\p{Script=Han}+)/u.exec(data))) return m[1];
	if ((m = /\bworks? (?:in|on|for) (?:the )?([\w-]+)/.exec(data)) && /depart|team|group/.test(k)) return m[1];
	return undefined;
}

function extract(text, shape) {
	if (!/extract|提取/i.test(text)) return null;
	const data = dataPart(text);
	const out = {};
	for (const s of shape) {
		const v = field(data, s);
		if (v === undefined) return null;
		out[s.key] = v;
	}
	return out;
}

const SOLVERS = [people, orderTotal, addUp, sortNumbers, dateAdd, convert, countWord, extract];

// ---- memory: facts told in earlier user turns

// [{topic, value, turn}] stated in the user turns before the last, in order.
function factsOf(turns) {
	const facts = [];
	const add = (topic, value, turn) => facts.push({ topic: topic.toLowerCase(), value, turn });
	turns.forEach((t, turn) => {
		let m;
		const en = /\bmy ((?:[a-z]+'s |[a-z]+ ){0,3}?[a-z]+) (?:is|was) (?:now |called |named )?(\d+|[A-Z][\p{L}-]*)/gu;
		while ((m = en.exec(t)) !== null) add(m[1], m[2], turn);
		const fresh = /\bnew ((?:[a-z]+ ){0,2}?[a-z]+) is (\d+|[A-Z][\p{L}-]*)/gu;
		while ((m = fresh.exec(t)) !== null) add(m[1], m[2], turn);
		const trip = /\b(?:flying|travelling|traveling|going|driving|moving) to ([A-Z][\p{L}-]+)/gu;
		while ((m = trip.exec(t)) !== null) add('city trip destination', m[1], turn);
		const zh = /(?:我的|新)(\p{Script=Han}{1,6}?)(?:是|叫)\s*([\p{Script=Han}\d]+?)(?=[\s，。！？,.]|$)/gu;
		while ((m = zh.exec(t)) !== null) add(m[1], m[2], turn);
		const zhTrip = /去(\p{Script=Han}{2,6}?)(?:出差|旅行|旅游|开会)/gu;
		while ((m = zhTrip.exec(t)) !== null) add('城市 出差', m[1], turn);
	});
	return facts;
}

function words(s) {
	return s.toLowerCase().replace(/'s\b/g, '').split(/[^a-z\p{Script=Han}]+/u).filter(Boolean);
}

// The latest fact whose topic shares a word with `hint` (a key, or a Chinese question).
function recallFact(facts, hint) {
	const hw = words(hint);
	let best = null;
	for (const f of facts) {
		const tw = words(f.topic);
		const hit = tw.some((w) => hw.includes(w) || (/\p{Script=Han}/u.test(w) && hint.includes(w)));
		if (hit) best = f;
	}
	return best;
}

// The questions of a Chinese message, one clause per key, in order.
function zhQuestions(text) {
	return text.split(/[？?]/).map((q) => q.trim()).filter((q) => /\p{Script=Han}/u.test(q) && !/JSON/.test(q));
}

function memory(msgs, lastUser, shape, behaviour) {
	const users = msgs.filter((m) => m && m.role === 'user').map((m) => typeof m.content === 'string' ? m.content : '');
	if (users.length < 2) return null;
	let earlier = users.slice(0, -1);
	// forgetful loses what was said in the middle of the conversation
	if (behaviour.forgetful && earlier.length >= 3) earlier = earlier.map((t, i) => (i === Math.floor(earlier.length / 2) ? '' : t));
	const facts = factsOf(earlier);
	const zh = /\p{Script=Han}/u.test(lastUser) ? zhQuestions(lastUser) : null;
	const out = {};
	for (let i = 0; i < shape.length; i++) {
		const f = recallFact(facts, zh && zh[i] ? zh[i] : shape[i].key);
		if (!f && behaviour.forgetful) continue; /* answers what it still knows */
		if (!f) return null;
		out[shape[i].key] = isNumber(shape[i].type) && /^\d+$/.test(f.value) ? Number(f.value) : f.value;
	}
	return Object.keys(out).length ? out : null;
}

// ---- pictures

function images(msgs) {
	const out = [];
	for (const m of msgs) {
		if (!m || !Array.isArray(m.content)) continue;
		for (const part of m.content) {
			const png = part && part.type === 'image_url' && part.image_url ? vision.pngOfDataUrl(part.image_url.url) : null;
			if (png) out.push(png);
		}
	}
	return out;
}

// {"first": {...}, "second": {...}} for the attached pictures, in the order sent, with
// the fields the prompt names (colour, shape, number).
function pictures(msgs, text) {
	const pngs = images(msgs);
	if (!pngs.length) return null;
	const seen = pngs.map((p) => { try { return vision.look(p); } catch (e) { return null; } });
	const slots = ['first', 'second', 'third', 'fourth'];
	const want = ['colour', 'color', 'shape', 'number'].filter((k) => new RegExp(`"${k}"`).test(text));
	const out = {};
	for (let i = 0; i < seen.length && i < slots.length; i++) {
		if (!seen[i]) return null;
		out[slots[i]] = {};
		for (const k of want) out[slots[i]][k] = k === 'color' ? seen[i].colour : seen[i][k];
	}
	return out;
}

// Makes an answer wrong the way a careless model would: the first number off by one, or
// else the first string's last letter changed.
function spoil(v) {
	let done = false;
	const walk = (x) => {
		if (done) return x;
		if (typeof x === 'number') { done = true; return x + 1; }
		if (typeof x === 'string' && x) { done = true; return x.slice(0, -1) + (x.endsWith('x') ? 'y' : 'x'); }
		if (Array.isArray(x)) return x.map(walk);
		if (x && typeof x === 'object') return Object.fromEntries(Object.entries(x).map(([k, y]) => [k, walk(y)]));
		return x;
	};
	return walk(v);
}

// The answer to the request as JSON text, or null when none of the above applies.
function answer(req, lastUser, behaviour) {
	const msgs = (req && Array.isArray(req.messages)) ? req.messages : [];
	let out = pictures(msgs, lastUser);
	const shape = askedShape(lastUser);
	if (!out && shape) out = memory(msgs, lastUser, shape, behaviour);
	for (let i = 0; !out && shape && i < SOLVERS.length; i++) out = SOLVERS[i](lastUser, shape);
	if (!out) return null;
	return JSON.stringify(behaviour.wrong ? spoil(out) : out);
}

module.exports = { answer, askedShape };
