// Assertions over needle run results for the shell tests:
//   node records.js DIR 'JS-EXPRESSION' [MESSAGE]
// finds the one results.jsonl under DIR, parses every line into `recs` (a torn line is
// an error), and evaluates the expression with `recs` and `log` (the refserver request
// log given in env REF_LOG, one JSON object per line, or []) in scope. A false result
// prints MESSAGE, the records' short form, and exits 1.
'use strict';
const fs = require('fs');
const path = require('path');

function find(dir, name, acc) {
	for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
		const p = path.join(dir, e.name);
		if (e.isDirectory()) find(p, name, acc);
		else if (e.name === name) acc.push(p);
	}
	return acc;
}

const [dir, expr, msg] = process.argv.slice(2);
const files = find(dir, 'results.jsonl', []);
if (files.length !== 1) {
	console.error(`expected one results.jsonl under ${dir}, found ${files.length}`);
	process.exit(1);
}
const text = fs.readFileSync(files[0], 'utf8');
if (text.length && !text.endsWith('\n')) {
	console.error(`${files[0]}: torn last line`);
	process.exit(1);
}
const recs = text.split('\n').filter(Boolean).map((l, i) => {
	try { return JSON.parse(l); } catch (e) { console.error(`${files[0]}:${i + 1}: ${e.message}`); process.exit(1); }
});
const log = process.env.REF_LOG && fs.existsSync(process.env.REF_LOG)
	? fs.readFileSync(process.env.REF_LOG, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
// eslint-disable-next-line no-new-func
const ok = new Function('recs', 'log', `return (${expr});`)(recs, log);
if (!ok) {
	console.error(`FAILED: ${msg || expr}`);
	for (const r of recs) {
		console.error(JSON.stringify({ case: r.case, repeat: r.repeat, seed: r.seed, verdict: r.verdict,
			failures: r.transport && r.transport.failures, audit: r.audit, grade: r.grade && r.grade.reasons,
			needles: r.grade && r.grade.needles, content: typeof r.content === 'string' ? r.content.slice(0, 200) : r.content }));
	}
	process.exit(1);
}
