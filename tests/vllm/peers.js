// make bench-peers' table (tests/vllm/peers.sh): per load level, needle's
// figures and `vllm bench serve`'s side by side, the server's own view of
// the same requests (/metrics deltas: vLLM's engine timestamps), each
// client's timing error against it, and each client's CPU per request.
//   node tests/vllm/peers.js PEERS_DIR > peers.md
'use strict';
const fs = require('fs');
const path = require('path');

const dir = process.argv[2];
const read = (f) => fs.readFileSync(path.join(dir, f), 'utf8');
const num = (v, d = 1) => (typeof v === 'number' && isFinite(v) ? v.toFixed(d) : 'n/a');

// Prometheus text: the sum of every sample of family `name` (labels ignored;
// one model, one engine).
function prom(text, name) {
	let s = 0, seen = false;
	for (const line of text.split('\n')) {
		if (line.startsWith('#') || !line.startsWith(name)) continue;
		const rest = line.slice(name.length);
		if (rest[0] !== '{' && rest[0] !== ' ') continue;
		s += Number(line.trim().split(/\s+/).pop());
		seen = true;
	}
	return seen ? s : NaN;
}
// The server's mean of histogram `h` (seconds) over the window, in ms.
const mean = (a, b, h) => 1000 * (prom(b, h + '_sum') - prom(a, h + '_sum')) /
	(prom(b, h + '_count') - prom(a, h + '_count'));
const cpuOf = (f) => read(f).trim().split(/\s+/).map(Number).reduce((x, y) => x + y, 0);

const recs = read('needle/results.jsonl').trim().split('\n').map((l) => JSON.parse(l));
const cells = JSON.parse(read('needle/summary.json')).load.cells;
const needleCpu = cpuOf('needle.time') * 1000 / recs.length;
const startup = cpuOf('vllm-startup.time'); // the bench client's --help: imports alone

const out = ['# needle and vllm bench serve against one vLLM', '',
	`vLLM ${JSON.parse(read('needle/manifest.json')).endpoint.server.version}, ` +
	'tests/vllm/load.json: 512/16 tokens (exact, ignore_eos) on /v1/completions, closed loop. ' +
	'needle: 2 rounds per level, the median over rounds (its P50/P95 nearest rank per round); ' +
	'vllm bench: one pooled run of as many requests, percentiles interpolated (numpy). ' +
	'"server" is vLLM\'s own /metrics over exactly those requests (histogram means); ' +
	'"error" is the client\'s mean minus the server\'s. CPU: user + system of the client ' +
	'process, start-up included, per request it sent (needle: its pre-checks and warm-ups counted too); ' +
	`the bench client's start-up alone (its --help) takes ${num(startup * 1000, 0)} ms of CPU, ` +
	'about all of its CPU at these request counts.', ''];
for (const c of cells) {
	const lv = c.concurrency;
	const mine = recs.filter((r) => r.load && r.load.round >= 1 && r.load.concurrency === lv);
	const ttftMean = mine.reduce((a, r) => a + r.timing.ttft_ms, 0) / mine.length;
	const e2eMean = mine.reduce((a, r) => a + r.timing.e2e_ms, 0) / mine.length;
	const na = read(`needle/raw/metrics-load-512-16-c${lv}-before.prom`);
	const nb = read(`needle/raw/metrics-load-512-16-c${lv}-after.prom`);
	const v = JSON.parse(read(`vllm-c${lv}.json`));
	const va = read(`vllm-c${lv}-before.prom`), vb = read(`vllm-c${lv}-after.prom`);
	const sN = { ttft: mean(na, nb, 'vllm:time_to_first_token_seconds'),
		e2e: mean(na, nb, 'vllm:e2e_request_latency_seconds') };
	const sV = { ttft: mean(va, vb, 'vllm:time_to_first_token_seconds'),
		e2e: mean(va, vb, 'vllm:e2e_request_latency_seconds') };
	out.push(`## concurrency ${lv}`, '',
		'| client | success | output tok/s | TTFT P50 ms | TTFT P95 ms | TPOT P50 ms | E2E P50 ms | ' +
		'TTFT mean: client / server / error ms | E2E mean: client / server / error ms | CPU ms/request |',
		'|---|---|---|---|---|---|---|---|---|---|',
		`| needle | ${c.succeeded}/${c.requests} | ${num(c.output_tps)} | ${num(c.ttft_p50_ms)} | ` +
		`${num(c.ttft_p95_ms)} | ${num(c.tpot_p50_ms, 2)} | ${num(c.e2e_p50_ms)} | ` +
		`${num(ttftMean)} / ${num(sN.ttft)} / ${num(ttftMean - sN.ttft)} | ` +
		`${num(e2eMean)} / ${num(sN.e2e)} / ${num(e2eMean - sN.e2e)} | ${num(needleCpu)} |`,
		`| vllm bench serve | ${v.completed}/${v.num_prompts} | ${num(v.output_throughput)} | ` +
		`${num(v.median_ttft_ms)} | ${num(v.p95_ttft_ms)} | ${num(v.median_tpot_ms, 2)} | ` +
		`${num(v.median_e2el_ms)} | ${num(v.mean_ttft_ms)} / ${num(sV.ttft)} / ${num(v.mean_ttft_ms - sV.ttft)} | ` +
		`${num(v.mean_e2el_ms)} / ${num(sV.e2e)} / ${num(v.mean_e2el_ms - sV.e2e)} | ` +
		`${num(cpuOf(`vllm-c${lv}.time`) * 1000 / v.num_prompts)} |`, '');
}
console.log(out.join('\n'));
