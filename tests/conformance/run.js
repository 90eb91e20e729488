// Conformance runner: replays every scenario of scenarios.js on loopback through
//   needle run SUITE --base-url http://127.0.0.1:PORT/NAME/v1 --model NAME --out DIR --timeout 5
// with the one-case suite below, and checks needle's exit code and its results.jsonl
// record (docs/runs.md "The files of a run folder"): verdict, transport failures, content, reasoning, grade,
// http_status, finish_reason, usage, timings, and that raw/ holds the bytes sent.
//
//   node tests/conformance/run.js --needle build/needle [--only NAME[,NAME]] [--jobs N] [--keep]
// Exit 0 if every scenario behaved as expected.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const net = require('net');
const { spawn } = require('child_process');
const { start, bodyBytes } = require('./scripted');
const { scenarios } = require('./scenarios');

const SUITE = { suite: 'x', cases: [{ id: 'arith', kind: 'chat', messages: [{ role: 'user',
	content: 'Compute 19 * 23. Reply with only a JSON object {"answer": <integer>}.' }], max_tokens: 64,
	expect: { json: { answer: 437 } } }] };

function args() {
	const o = { needle: process.env.NEEDLE || 'build/needle', only: null, jobs: 10, keep: false };
	const a = process.argv.slice(2);
	for (let i = 0; i < a.length; i++) {
		if (a[i] === '--needle') o.needle = a[++i];
		else if (a[i] === '--only') o.only = a[++i].split(',');
		else if (a[i] === '--jobs') o.jobs = Number(a[++i]);
		else if (a[i] === '--keep') o.keep = true;
		else { process.stderr.write(`conformance: unknown option ${a[i]}\n`); process.exit(2); }
	}
	return o;
}

function findFiles(dir, pred, out) {
	const acc = out || [];
	let ents = [];
	try { ents = fs.readdirSync(dir, { withFileTypes: true }); } catch (e) { return acc; }
	for (const e of ents) {
		const p = path.join(dir, e.name);
		if (e.isDirectory()) findFiles(p, pred, acc);
		else if (pred(p)) acc.push(p);
	}
	return acc;
}

function runNeedle(needle, argv, timeoutMs) {
	return new Promise((resolve) => {
		const t0 = Date.now();
		const env = Object.assign({}, process.env);
		delete env.OPENAI_API_KEY;
		delete env.OPENAI_BASE_URL;
		const p = spawn(needle, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
		let out = '';
		let err = '';
		p.stdout.on('data', (d) => { out += d; });
		p.stderr.on('data', (d) => { err += d; });
		const killer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
		p.on('close', (code, sig) => {
			clearTimeout(killer);
			resolve({ code: sig ? `signal ${sig}` : code, out, err, wallMs: Date.now() - t0 });
		});
	});
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const emptyish = (v) => v === null || v === undefined || v === '';

// Returns a list of complaints (empty = the scenario behaved).
function check(sc, res, outDir) {
	const e = sc.expect;
	const c = [];
	const exits = Array.isArray(e.exit) ? e.exit : [e.exit];
	if (!exits.includes(res.code)) c.push(`exit code ${res.code}, expected ${exits.join(' or ')}`);
	if (res.wallMs > (e.maxWallMs || 8000)) c.push(`needle took ${res.wallMs} ms`);
	const files = findFiles(outDir, (p) => path.basename(p) === 'results.jsonl');
	if (e.verdict === null) {
		// No usable endpoint: a record, if any, must not claim a pass.
		for (const f of files) {
			for (const line of fs.readFileSync(f, 'utf8').split('\n').filter(Boolean)) {
				try { if (JSON.parse(line).verdict === 'pass') c.push('a record says pass'); } catch (x) { /* torn */ }
			}
		}
		return c;
	}
	if (files.length !== 1) { c.push(`expected one results.jsonl under --out, found ${files.length}`); return c; }
	const lines = fs.readFileSync(files[0], 'utf8').split('\n').filter(Boolean);
	if (lines.length !== 1) { c.push(`expected 1 record, found ${lines.length}`); return c; }
	let r;
	try { r = JSON.parse(lines[0]); } catch (x) { c.push(`record is not JSON: ${x.message}`); return c; }
	if (r.case !== 'arith') c.push(`case ${JSON.stringify(r.case)}`);
	if (r.kind !== 'chat') c.push(`kind ${JSON.stringify(r.kind)}`);
	if (r.verdict !== e.verdict) c.push(`verdict ${JSON.stringify(r.verdict)}, expected ${e.verdict}`);
	const tr = r.transport || {};
	const got = Array.isArray(tr.failures) ? tr.failures : null;
	if (!got) c.push('transport.failures is not an array');
	else {
		for (const f of e.failures) if (!got.includes(f)) c.push(`missing failure code ${f} (got ${JSON.stringify(got)})`);
		const allowed = new Set(e.failures.concat(e.optional || []));
		for (const f of got) if (!allowed.has(f)) c.push(`unexpected failure code ${f} (got ${JSON.stringify(got)})`);
		if (tr.ok !== (got.length === 0)) c.push(`transport.ok ${tr.ok} with failures ${JSON.stringify(got)}`);
	}
	if (e.http !== undefined && r.http_status !== e.http) c.push(`http_status ${r.http_status}, expected ${e.http}`);
	if (e.content !== undefined) {
		if (e.content === null ? !emptyish(r.content) : r.content !== e.content)
			c.push(`content ${JSON.stringify(r.content)}, expected ${JSON.stringify(e.content)}`);
	}
	if (e.reasoning !== undefined) {
		if (e.reasoning === null ? !emptyish(r.reasoning) : r.reasoning !== e.reasoning)
			c.push(`reasoning ${JSON.stringify(r.reasoning)}, expected ${JSON.stringify(e.reasoning)}`);
	}
	if (e.grade !== undefined && e.grade !== null) {
		const g = r.grade || {};
		if (g.ok !== e.grade) c.push(`grade.ok ${JSON.stringify(g.ok)}, expected ${e.grade}`);
		if (e.grade === false && e.verdict === 'fail' && e.failures.length === 0 &&
			!(Array.isArray(g.reasons) && g.reasons.length && g.reasons.every((x) => typeof x === 'string' && x.length)))
			c.push(`grade.reasons should explain the failure: ${JSON.stringify(g.reasons)}`);
	}
	if (e.finish !== undefined && r.finish_reason !== e.finish) c.push(`finish_reason ${JSON.stringify(r.finish_reason)}, expected ${e.finish}`);
	if (e.usage) {
		const u = r.usage || {};
		for (const k of Object.keys(e.usage)) if (u[k] !== e.usage[k]) c.push(`usage.${k} ${u[k]}, expected ${e.usage[k]}`);
	}
	if (e.timing) c.push(...e.timing(r.timing));
	if (typeof r.request_sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(r.request_sha256)) c.push('request_sha256 missing');
	// raw/: the bytes of the response body exactly as sent.
	const raws = findFiles(outDir, (p) => p.split(path.sep).includes('raw'));
	const sent = bodyBytes(sc.response);
	if ((sc.response.status || 200) === 200) {
		if (raws.length !== 1) c.push(`expected one file in raw/, found ${raws.length}`);
		else if (e.rawPrefix) {
			// needle stopped reading at one of its caps: raw/ holds what it read
			const have = fs.readFileSync(raws[0]);
			if (!have.length || !sent.subarray(0, have.length).equals(have)) c.push('raw/ is not a prefix of the bytes sent');
		} else if (!fs.readFileSync(raws[0]).equals(sent)) {
			const have = fs.readFileSync(raws[0]);
			c.push(`raw/ differs from the bytes sent (${have.length} vs ${sent.length} bytes)`);
		}
	}
	return c;
}

async function refusedPort() {
	return new Promise((resolve) => {
		const s = net.createServer();
		s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
	});
}

async function main() {
	const o = args();
	if (!fs.existsSync(o.needle)) { process.stderr.write(`conformance: no needle binary at ${o.needle}\n`); process.exit(2); }
	const server = await start(0);
	const port = server.address().port;
	const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'needle-conf-'));
	const suitePath = path.join(tmp, 'suite.json');
	fs.writeFileSync(suitePath, JSON.stringify(SUITE));
	const list = scenarios.filter((s) => !o.only || o.only.includes(s.name));
	const deadPort = await refusedPort();
	const jobs = list.map((sc) => ({ sc, base: `http://127.0.0.1:${port}/${sc.name}/v1` }));
	if (!o.only || o.only.includes('connect-refused')) {
		jobs.push({ sc: { name: 'connect-refused', desc: 'nothing listens on the port', response: { status: 0, body: [] },
			expect: { exit: 3, verdict: null } }, base: `http://127.0.0.1:${deadPort}/v1` });
	}
	const t0 = Date.now();
	let failed = 0;
	let next = 0;
	const worker = async () => {
		while (next < jobs.length) {
			const j = jobs[next++];
			const out = path.join(tmp, j.sc.name);
			const res = await runNeedle(o.needle, ['run', suitePath, '--base-url', j.base, '--model', j.sc.name,
				'--out', out, '--timeout', '5'], 20000);
			const complaints = check(j.sc, res, out);
			if (complaints.length) {
				failed++;
				process.stdout.write(`FAIL ${j.sc.name}: ${j.sc.desc}\n`);
				for (const x of complaints) process.stdout.write(`     - ${x}\n`);
				const tail = (res.err || '').trim().split('\n').slice(-3).join('\n       ');
				if (tail) process.stdout.write(`       needle stderr: ${tail}\n`);
			} else process.stdout.write(`ok   ${j.sc.name} (${res.wallMs} ms)\n`);
		}
	};
	await Promise.all(Array.from({ length: Math.max(1, o.jobs) }, worker));
	server.close();
	process.stdout.write(`${jobs.length - failed} of ${jobs.length} scenarios conform (${Date.now() - t0} ms)\n`);
	if (!o.keep && !failed) fs.rmSync(tmp, { recursive: true, force: true });
	else process.stdout.write(`outputs kept in ${tmp}\n`);
	process.exit(failed ? 1 : 0);
}

main();
