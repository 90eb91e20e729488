'use strict';
// The reference server's structured outputs: a request whose response_format is
// {"type": "json_schema", "json_schema": {"schema": S}} is answered with an instance of S
// whose values come from the request's text, as "name: value" pairs ("quantity: 3;
// status: shipped", "城市：上海"), the way a model constrained by the engine's grammar
// fills a form from what it read. A real engine's grammar never lets the answer leave
// the schema; the misbehaviours plant what breaks after an upgrade (README.md):
//   schema-break  valid JSON that leaves the schema: the first integer as a string, or
//                 with none, a property the schema does not allow
//   wrong         a value wrong within the schema: numbers one off, the next enum value

// The schema `s` with a local $ref ("#/$defs/X") followed, against the root `root`.
function deref(root, s) {
	for (let n = 0; s && typeof s.$ref === 'string' && n < 32; n++) {
		let at = root;
		for (const seg of s.$ref.replace(/^#\/?/, '').split('/').filter(Boolean))
			at = at && at[seg.replace(/~1/g, '/').replace(/~0/g, '~')];
		s = at;
	}
	return s || {};
}

function typeOf(s) {
	if (Array.isArray(s.type)) return s.type.find((t) => t !== 'null') || 'null';
	if (s.type) return s.type;
	if (s.properties) return 'object';
	if (s.items || s.prefixItems) return 'array';
	if (Array.isArray(s.enum) && s.enum.length) return typeof s.enum[0] === 'number' ? 'number' : 'string';
	return 'string';
}

// The text written after "KEY:" (or "KEY：", "KEY ="; underscores may be spaces), up to
// ";" or the end of the line; null when the text has no such pair.
function said(text, key) {
	const k = key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/_/g, '[_ ]');
	const m = new RegExp(`(?<![\\p{L}\\p{N}_])${k}\\s*[:：=]\\s*([^;；\\n]+)`, 'iu').exec(text);
	return m ? m[1].trim().replace(/[.。]$/, '') : null;
}

function scalar(s, raw) {
	const t = typeOf(s);
	if (Array.isArray(s.enum)) {
		const hit = s.enum.find((v) => String(v).toLowerCase() === String(raw).toLowerCase());
		return hit !== undefined ? hit : s.enum[0];
	}
	if (t === 'integer') return parseInt(raw, 10) || 0;
	if (t === 'number') return Number(raw) || 0;
	if (t === 'boolean') return /^(?:true|yes|是)$/i.test(raw);
	if (t === 'null') return null;
	return String(raw);
}

// An instance of `s` for property `key` (null at the top), read from `text`.
function build(root, s, key, text) {
	s = deref(root, s);
	const t = typeOf(s);
	if (t === 'object') {
		const out = {};
		const req = new Set(s.required || []);
		for (const [k, ps] of Object.entries(s.properties || {})) {
			const v = build(root, ps, k, text);
			if (v !== undefined) out[k] = v;
			else if (req.has(k)) out[k] = scalar(deref(root, ps), '');
		}
		return out;
	}
	const raw = key === null ? null : said(text, key);
	if (raw === null) return undefined;
	if (t === 'array') {
		const items = deref(root, s.items || {});
		return raw.split(/\s*[,，、]\s*/).filter((x) => x !== '').map((x) => scalar(items, x));
	}
	return scalar(s, raw);
}

// The first path (list of keys) to a value of `type` in `v`, or null.
function firstOf(v, type) {
	if (type === 'integer' ? Number.isInteger(v) : typeof v === type) return [];
	if (v && typeof v === 'object')
		for (const [k, x] of Object.entries(v)) {
			const p = firstOf(x, type);
			if (p) return [k, ...p];
		}
	return null;
}

function setAt(v, p, f) {
	if (!p || !p.length) return f(v);
	v[p[0]] = setAt(v[p[0]], p.slice(1), f);
	return v;
}

// Values wrong within the schema: each number one off (down when one up would pass a
// maximum), each enum value the next one.
function mangle(root, s, v) {
	s = deref(root, s);
	if (Array.isArray(s.enum) && s.enum.length > 1) return s.enum[(s.enum.indexOf(v) + 1) % s.enum.length];
	if (typeof v === 'number') return typeof s.maximum === 'number' && v + 1 > s.maximum ? v - 1 : v + 1;
	if (Array.isArray(v)) return v.map((x) => mangle(root, s.items || {}, x));
	if (v && typeof v === 'object') {
		for (const k of Object.keys(v)) v[k] = mangle(root, (s.properties || {})[k] || {}, v[k]);
	}
	return v;
}

// The answer's text for a json_schema request, or null for any other request.
function answer(req, text, behaviour) {
	const rf = req && req.response_format;
	const schema = rf && rf.type === 'json_schema' && rf.json_schema && rf.json_schema.schema;
	if (!schema || typeof schema !== 'object') return null;
	let v = build(schema, schema, null, text);
	if (v === undefined) v = {};
	if (behaviour.wrong) v = mangle(schema, schema, v);
	if (behaviour.schemaBreak) {
		const p = firstOf(v, 'integer');
		if (p) v = setAt(v, p, (x) => String(x));
		else if (v && typeof v === 'object') v.note = 'extra';
	}
	return JSON.stringify(v);
}

module.exports = { answer };
