// make bench-peers' table (tests/vllm/peers.sh): per load level, needle's
// figures and each peer bench client's side by side, the server's own view of
// the same requests (/metrics deltas: vLLM's engine timestamps), each
// client's timing error against it, and each client's CPU per request.
//   node tests/vllm/peers.js PEERS_DIR > peers.md
'use strict';
const fs = require('fs');
const path = require('path');

const dir = process.argv[2];
const has = (f) => fs.existsSync(path.join(dir, f));
const read = (f) => fs.readFileSync(path.join(dir, f), 'utf8');
const json = (f) => JSON.parse(read(f));
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
// The server's view of one window (the /metrics before and after a client's
// run): its request count and its histogram means, in ms.
function server(before, after) {
	const a = read(before), b = read(after);
	const d = (n) => prom(b, n) - prom(a, n);
	const mean = (h) => 1000 * d(h + '_sum') / d(h + '_count');
	return {
		requests: d('vllm:e2e_request_latency_seconds_count'),
		hits: 100 * d('vllm:prefix_cache_hits_total') / d('vllm:prefix_cache_queries_total'),
		prompt: d('vllm:prompt_tokens_total') / d('vllm:e2e_request_latency_seconds_count'),
		ttft: mean('vllm:time_to_first_token_seconds'),
		tpot: mean('vllm:request_time_per_output_token_seconds'),
		itl: mean('vllm:inter_token_latency_seconds'),
		e2e: mean('vllm:e2e_request_latency_seconds'),
	};
}
const cpuOf = (f) => read(f).trim().split(/\s+/).map(Number).reduce((x, y) => x + y, 0);

// Percentile of sorted values by linear interpolation between closest ranks
// (numpy's default, the one vllm bench serve uses).
function interp(sorted, p) {
	if (!sorted.length) return NaN;
	const h = (sorted.length - 1) * p / 100, lo = Math.floor(h);
	return lo + 1 < sorted.length ? sorted[lo] + (h - lo) * (sorted[lo + 1] - sorted[lo]) : sorted[lo];
}
const sortNum = (xs) => xs.filter((x) => typeof x === 'number' && isFinite(x)).sort((x, y) => x - y);
const sgn = (x) => (x > 0 ? '+' : '') + num(x);
const avg = (xs) => xs.reduce((a, x) => a + x, 0) / xs.length;

// Each client's figures at concurrency lv, by definition: TTFT and E2E per
// request; TPOT per request, (E2E - TTFT) / (output tokens - 1); ITL per gap
// between two streamed chunks. A client's own name for a figure may differ
// (see NOTES). null: the client's result is missing.
const peers = {
	vllm: {
		name: 'vllm bench serve',
		figures(lv) {
			const v = json(`vllm-c${lv}.json`);
			return { ok: v.completed, sent: v.num_prompts, tps: v.output_throughput,
				ttft50: v.median_ttft_ms, ttft95: v.p95_ttft_ms, tpot50: v.median_tpot_ms, tpot95: v.p95_tpot_ms,
				itl50: v.median_itl_ms, itl95: v.p95_itl_ms, e2e50: v.median_e2el_ms, e2e95: v.p95_e2el_ms,
				ttftMean: v.mean_ttft_ms, tpotMean: v.mean_tpot_ms, e2eMean: v.mean_e2el_ms };
		},
	},
	guidellm: {
		name: 'GuideLLM',
		figures(lv) {
			const b = json(`guidellm-c${lv}.json`).benchmarks[0];
			const m = b.metrics, s = (k) => m[k].successful;
			const t = m.request_totals;
			return { ok: t.successful, sent: t.total, tps: s('output_tokens_per_second').mean,
				ttft50: s('time_to_first_token_ms').median, ttft95: s('time_to_first_token_ms').percentiles.p95,
				tpot50: s('inter_token_latency_ms').median, tpot95: s('inter_token_latency_ms').percentiles.p95,
				itl50: NaN, itl95: NaN,
				e2e50: 1000 * s('request_latency').median, e2e95: 1000 * s('request_latency').percentiles.p95,
				ttftMean: s('time_to_first_token_ms').mean, tpotMean: s('inter_token_latency_ms').mean,
				e2eMean: 1000 * s('request_latency').mean };
		},
	},
	aiperf: {
		name: 'AIPerf',
		figures(lv) {
			const j = json(`aiperf-c${lv}/profile_export_aiperf.json`);
			const g = (k) => j[k] || {};
			return { ok: g('completed_request_count').avg ?? g('request_count').avg,
				sent: (g('request_count').avg || 0) + (g('error_request_count').avg || 0),
				tps: g('output_token_throughput').avg,
				ttft50: g('time_to_first_token').p50, ttft95: g('time_to_first_token').p95,
				tpot50: g('inter_token_latency').p50, tpot95: g('inter_token_latency').p95,
				itl50: g('inter_chunk_latency').p50, itl95: g('inter_chunk_latency').p95,
				e2e50: g('request_latency').p50, e2e95: g('request_latency').p95,
				ttftMean: g('time_to_first_token').avg, tpotMean: g('inter_token_latency').avg,
				e2eMean: g('request_latency').avg };
		},
	},
	sglang: {
		name: 'SGLang bench_serving',
		figures(lv) {
			const lines = read(`sglang-c${lv}.jsonl`).trim().split('\n');
			// Its JSON Lines hold a bare Infinity (request_rate inf).
			const v = JSON.parse(lines[lines.length - 1].replace(/\bInfinity\b/g, 'null'));
			return { ok: v.completed, sent: N, tps: v.output_throughput,
				ttft50: v.median_ttft_ms, ttft95: v.p95_ttft_ms, tpot50: v.median_tpot_ms, tpot95: v.p95_tpot_ms,
				itl50: v.median_itl_ms, itl95: v.p95_itl_ms,
				e2e50: v.median_e2e_latency_ms, e2e95: v.p95_e2e_latency_ms,
				ttftMean: v.mean_ttft_ms, tpotMean: v.mean_tpot_ms, e2eMean: v.mean_e2e_latency_ms };
		},
	},
	'inference-perf': {
		name: 'inference-perf',
		figures(lv) {
			const dirOf = `inference-perf-c${lv}`;
			const f = fs.readdirSync(path.join(dir, dirOf)).find((x) => /summary_lifecycle_metrics\.json$/.test(x));
			const j = json(`${dirOf}/${f}`);
			const L = j.successes.latency, sec = (o, k) => (o && typeof o[k] === 'number' ? 1000 * o[k] : NaN);
			return { ok: j.successes.count, sent: j.load_summary ? j.load_summary.count : j.successes.count,
				tps: j.successes.throughput ? j.successes.throughput.output_tokens_per_sec : NaN,
				ttft50: sec(L.time_to_first_token, 'median'), ttft95: sec(L.time_to_first_token, 'p95'),
				tpot50: sec(L.time_per_output_token, 'median'), tpot95: sec(L.time_per_output_token, 'p95'),
				itl50: sec(L.inter_token_latency, 'median'), itl95: sec(L.inter_token_latency, 'p95'),
				e2e50: sec(L.request_latency, 'median'), e2e95: sec(L.request_latency, 'p95'),
				ttftMean: sec(L.time_to_first_token, 'mean'), tpotMean: sec(L.time_per_output_token, 'mean'),
				e2eMean: sec(L.request_latency, 'mean') };
		},
	},
};

const recs = read('needle/results.jsonl').trim().split('\n').map((l) => JSON.parse(l));
const cells = json('needle/summary.json').load.cells;
const needleCpu = cpuOf('needle.time') * 1000 / recs.length;
const startup = has('vllm-startup.time') ? cpuOf('vllm-startup.time') : NaN;
const version = json('needle/manifest.json').endpoint.server.version;
const N = cells[0].requests; // each level's requests: needle's counted ones, as many by each peer

const head = '| client | success (server saw) | prompt tokens, cache hits % | output tok/s | TTFT P50 / P95 ms | TPOT P50 / P95 ms | ' +
	'ITL P50 / P95 ms | E2E P50 / P95 ms | TTFT mean: client / server / error ms | ' +
	'TPOT mean: client / server ms | E2E mean: client / server / error ms | CPU ms/request |';
const row = (name, f, s, cpu) => `| ${name} | ${f.ok}/${f.sent} (${num(s.requests, 0)}) | ${num(s.prompt)}, ${num(s.hits, 0)} | ${num(f.tps)} | ` +
	`${num(f.ttft50)} / ${num(f.ttft95)} | ${num(f.tpot50, 2)} / ${num(f.tpot95, 2)} | ` +
	`${num(f.itl50, 2)} / ${num(f.itl95, 2)} | ${num(f.e2e50)} / ${num(f.e2e95)} | ` +
	`${num(f.ttftMean)} / ${num(s.ttft)} / ${num(f.ttftMean - s.ttft)} | ` +
	`${num(f.tpotMean, 2)} / ${num(s.tpot, 2)} | ` +
	`${num(f.e2eMean)} / ${num(s.e2e)} / ${num(f.e2eMean - s.e2e)} | ${num(cpu)} |`;

const out = ['# needle and the peers\' bench clients against one vLLM', '',
	`vLLM ${version}, tests/vllm/peers.json: 512/16 tokens (exact, ignore_eos) on /v1/completions, ` +
	'closed loop at concurrency 1, 2 and 4, 192 requests a level by every client. ' +
	'needle: 3 rounds of 64 after one warm-up, the median over rounds of per-round figures ' +
	'(P50/P95 nearest rank); the row "needle, pooled" is the same 192 requests of needle pooled and ' +
	'interpolated (numpy\'s rule), the peers\' definition. Each peer: one run of 192 requests, no warm-up. ' +
	'"server saw" and "server" are vLLM\'s own /metrics over exactly each client\'s requests ' +
	'(histogram counts and means: TTFT, time per output token, E2E; prompt tokens a request and ' +
	'the prefix cache\'s hits); "error" is the client\'s mean minus the server\'s. ' +
	'TPOT is per request, (E2E - TTFT) / 15; ITL per gap between two streamed chunks. ' +
	'CPU: user + system of the client process and its children, start-up included, per request it sent ' +
	'(needle: its pre-checks and warm-ups counted too)' +
	(isFinite(startup) ? `; vllm bench serve's start-up alone (its --help) takes ${num(startup * 1000, 0)} ms of CPU.` : '.'),
	''];
const notes = [];
for (const c of cells) {
	const lv = c.concurrency;
	const mine = recs.filter((r) => r.load && r.load.round >= 1 && r.load.concurrency === lv);
	const T = (k) => sortNum(mine.map((r) => r.timing[k]));
	const itls = sortNum(mine.flatMap((r) => r.load.itl_ms || []));
	const sN = server(`needle/raw/metrics-load-512-16-c${lv}-before.prom`, `needle/raw/metrics-load-512-16-c${lv}-after.prom`);
	const needle = { ok: c.succeeded, sent: c.requests, tps: c.output_tps,
		ttft50: c.ttft_p50_ms, ttft95: c.ttft_p95_ms, tpot50: c.tpot_p50_ms, tpot95: c.tpot_p95_ms,
		itl50: c.itl_p50_ms, itl95: c.itl_p95_ms, e2e50: c.e2e_p50_ms, e2e95: c.e2e_p95_ms,
		ttftMean: avg(T('ttft_ms')), tpotMean: avg(T('tpot_ms')), e2eMean: avg(T('e2e_ms')) };
	const pooled = { ...needle,
		tps: mine.reduce((a, r) => a + (r.usage ? r.usage.completion_tokens : 0), 0) /
			(c.rounds.reduce((a, r) => a + r.wall_ms, 0) / 1000),
		ttft50: interp(T('ttft_ms'), 50), ttft95: interp(T('ttft_ms'), 95),
		tpot50: interp(T('tpot_ms'), 50), tpot95: interp(T('tpot_ms'), 95),
		itl50: interp(itls, 50), itl95: interp(itls, 95),
		e2e50: interp(T('e2e_ms'), 50), e2e95: interp(T('e2e_ms'), 95) };
	const rows = [row('needle', needle, sN, needleCpu), row('needle, pooled', pooled, sN, needleCpu)];
	for (const [key, p] of Object.entries(peers)) {
		if (has(`${key}-c${lv}.failed`)) {
			notes.push(`- ${p.name} at concurrency ${lv} failed: ${read(`${key}-c${lv}.failed`).trim().split('\n').slice(-1)[0]}`);
			continue;
		}
		if (!has(`${key}-c${lv}.time`)) continue;
		let f;
		try {
			f = p.figures(lv);
		} catch (e) {
			notes.push(`- ${p.name} at concurrency ${lv}: no result read (${e.message.split('\n')[0]})`);
			continue;
		}
		const s = server(`${key}-c${lv}-before.prom`, `${key}-c${lv}-after.prom`);
		rows.push(row(p.name, f, s, cpuOf(`${key}-c${lv}.time`) * 1000 / (f.sent || NaN)));
		// Figures more than 5% away from needle's pooled ones (the same
		// definition): the part that is the server's (its own mean moved
		// between the two windows) against the part that is the client's
		// timing (its mean's error against the server differs from needle's).
		for (const [k, label, sk] of [['ttft50', 'TTFT P50', 'ttft'], ['tpot50', 'TPOT P50', 'tpot'], ['e2e50', 'E2E P50', 'e2e']]) {
			const d = (f[k] - pooled[k]) / pooled[k];
			if (!isFinite(d) || Math.abs(d) <= 0.05) continue;
			const km = sk + 'Mean';
			const srv = s[sk] - sN[sk], cli = (f[km] - s[sk]) - (needle[km] - sN[sk]);
			notes.push(`- c${lv} ${p.name} ${label} ${num(f[k])} against needle pooled ${num(pooled[k])} ` +
				`(${d > 0 ? '+' : ''}${num(100 * d, 0)}%): the server's mean moved ${sgn(srv)} ms between the windows ` +
				`(${num(sN[sk])} to ${num(s[sk])}), the client's error against it differs by ${sgn(cli)} ms ` +
				`(${num(needle[km] - sN[sk])} needle, ${num(f[km] - s[sk])} ${p.name}): ` +
				(Math.abs(srv) >= Math.abs(cli) ? 'mostly the server, not the client' : 'mostly the client\'s timing'));
		}
	}
	// needle's own figures against the same requests pooled: by definition
	// alone (median of per-round nearest ranks against one interpolated pool).
	for (const [k, label] of [['ttft50', 'TTFT P50'], ['ttft95', 'TTFT P95'], ['tpot50', 'TPOT P50'], ['tpot95', 'TPOT P95'],
		['itl50', 'ITL P50'], ['itl95', 'ITL P95'], ['e2e50', 'E2E P50'], ['e2e95', 'E2E P95'], ['tps', 'output tok/s']]) {
		const d = (needle[k] - pooled[k]) / pooled[k];
		if (isFinite(d) && Math.abs(d) > 0.05)
			notes.push(`- c${lv} needle ${label} ${num(needle[k])} against ${num(pooled[k])} pooled ` +
				`(${d > 0 ? '+' : ''}${num(100 * d, 0)}%): by definition, the same requests (the median over 3 rounds ` +
				(k === 'tps' ? 'of each round\'s tokens over its wall time, against all tokens over the rounds\' wall time)' :
					'of per-round nearest ranks, against one pool interpolated)'));
	}
	out.push(`## concurrency ${lv}`, '', head, '|---|---|---|---|---|---|---|---|---|---|---|---|', ...rows, '');
}
if (notes.length) out.push('## Differences over 5% and failures', '', ...notes, '');
console.log(out.join('\n'));
