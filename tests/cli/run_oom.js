// The file checks of run_oom.sh, over every folder of one sweep at once:
//   node run_oom.js BASELINE_DIR LIST [KEPT]
// LIST holds one line per allocation-failure run, "N EXIT DIR". For each DIR:
// results.jsonl, when present, is whole JSON lines ending in a newline (or empty);
// manifest.json and summary.json, when present, are whole JSON; recall.png, when
// present, ends with its IEND chunk; no temporary file (NAME.tmp.PID) is left (a DIR
// that was never created is fine). A run
// that exited as the baseline did recorded the baseline's verdicts, attempt for
// attempt. With KEPT (a file), every results.jsonl begins with KEPT's bytes.
// Prints one line per bad N and exits 1 if there is any.
'use strict';
const fs = require('fs');
const path = require('path');

function files(dir, acc) {
	for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
		const p = path.join(dir, e.name);
		if (e.isDirectory()) files(p, acc);
		else acc.push(p);
	}
	return acc;
}

function records(dir) {
	const p = path.join(dir, 'results.jsonl');
	if (!fs.existsSync(p)) return null;
	const text = fs.readFileSync(p, 'utf8');
	if (text.length && !text.endsWith('\n')) throw new Error('results.jsonl: torn last line');
	return text.split('\n').filter(Boolean).map((l, i) => {
		try { return JSON.parse(l); } catch (e) { throw new Error(`results.jsonl line ${i + 1}: ${e.message}`); }
	});
}

function verdicts(recs) {
	return (recs || []).map((r) => `${r.case}#${r.repeat}#${r.seed}:${r.verdict}`).sort().join(' ');
}

function check(dir, exit, base, kept) {
	if (!fs.existsSync(dir)) {
		if (kept) throw new Error('the results folder is gone');
		return;
	}
	const leftover = files(dir, []).filter((f) => /\.tmp\.\d+$/.test(f));
	if (leftover.length) throw new Error('temporary files left: ' + leftover.join(', '));
	for (const f of ['manifest.json', 'summary.json']) {
		const p = path.join(dir, f);
		if (fs.existsSync(p)) {
			try { JSON.parse(fs.readFileSync(p, 'utf8')); } catch (e) { throw new Error(`${f}: ${e.message}`); }
		}
	}
	const png = path.join(dir, 'recall.png');
	if (fs.existsSync(png) && !fs.readFileSync(png).subarray(-8, -4).equals(Buffer.from('IEND')))
		throw new Error('recall.png: incomplete');
	const recs = records(dir);
	if (kept) {
		const have = fs.readFileSync(path.join(dir, 'results.jsonl'));
		if (!have.subarray(0, kept.length).equals(kept)) throw new Error('the records kept from before were changed');
	}
	if (exit === base.exit && verdicts(recs) !== base.verdicts)
		throw new Error(`exit ${exit} as unhindered, but verdicts [${verdicts(recs)}], not [${base.verdicts}]`);
}

const [baseDir, list, keptFile] = process.argv.slice(2);
const kept = keptFile ? fs.readFileSync(keptFile) : null;
const lines = fs.readFileSync(list, 'utf8').split('\n').filter(Boolean).map((l) => l.split(' '));
const base = { exit: Number(fs.readFileSync(path.join(baseDir, 'exit'), 'utf8')), verdicts: verdicts(records(baseDir)) };
let bad = 0;
for (const [n, exit, dir] of lines) {
	try {
		check(dir, Number(exit), base, kept);
	} catch (e) {
		console.error(`FAIL: NEEDLE_FAIL_ALLOC=${n} (exit ${exit}): ${e.message}`);
		bad++;
	}
}
if (bad) process.exit(1);
console.log(`${lines.length} runs: files whole, verdicts as unhindered where the exit was`);
