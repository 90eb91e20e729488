// Checks of the reference server's timing model and /metrics (no needle involved): TTFT,
// TPOT and E2E against the analytic values of README.md "Timing model", queueing
// behind max_num_seqs, the noise model (README.md "Noise": its draws, seeded; a
// regression and a stall over HTTP), exact completion_tokens with ignore_eos /
// min_tokens, the empty 200 one in N, metrics in both dialects, and a booting
// server's 503.
//   node tests/refserver/timing_test.js
'use strict';

const http = require('http');
const path = require('path');
const { spawn } = require('child_process');
const { Engine } = require('./engine');

let failures = 0;
function check(cond, what) {
	if (!cond) {
		failures++;
		console.log(`FAIL ${what}`);
	}
}

function startServer(args) {
	return new Promise((resolve, reject) => {
		const p = spawn(process.execPath, [path.join(__dirname, 'server.js'), '--port', '0'].concat(args),
			{ stdio: ['ignore', 'pipe', 'inherit'] });
		let buf = '';
		p.stdout.on('data', (d) => {
			buf += d;
			const m = /^refserver listening on http:\/\/127\.0\.0\.1:(\d+)\n$/.exec(buf);
			if (m) resolve({ proc: p, port: Number(m[1]) });
		});
		p.on('exit', (c) => reject(new Error(`server exited ${c}: ${buf}`)));
	});
}

function get(port, p) {
	return new Promise((resolve, reject) => {
		http.get({ host: '127.0.0.1', port, path: p }, (res) => {
			let t = '';
			res.on('data', (c) => { t += c; });
			res.on('end', () => resolve({ status: res.statusCode, text: t }));
		}).on('error', reject);
	});
}

// One streamed completion; times (ms) of the send, each non-empty text, and the end.
function stream(port, body) {
	return new Promise((resolve, reject) => {
		const data = Buffer.from(JSON.stringify(Object.assign({ stream: true,
			stream_options: { include_usage: true } }, body)));
		const t0 = Date.now();
		const times = [];
		let rest = '';
		let usage = null;
		let status = 0;
		const req = http.request({ host: '127.0.0.1', port, path: '/v1/completions', method: 'POST',
			headers: { 'content-type': 'application/json' } }, (res) => {
			status = res.statusCode;
			res.on('data', (c) => {
				rest += c;
				let at;
				while ((at = rest.indexOf('\n\n')) >= 0) {
					const ev = rest.slice(0, at);
					rest = rest.slice(at + 2);
					if (!ev.startsWith('data: ') || ev === 'data: [DONE]') continue;
					const j = JSON.parse(ev.slice(6));
					if (j.usage) usage = j.usage;
					if (j.choices && j.choices[0] && j.choices[0].text) times.push(Date.now() - t0);
				}
			});
			res.on('end', () => resolve({ status, times, usage, end: Date.now() - t0 }));
		});
		req.on('error', reject);
		req.end(data);
	});
}

const PROMPT = 'The quiet river bends past the old mill. '.repeat(100); // about 900 tokens

function near(x, want, tol, what) {
	check(Math.abs(x - want) <= tol, `${what}: ${x.toFixed(1)} ms, want ${want.toFixed(1)} +- ${tol}`);
}

async function timing(port) {
	// Calibrate the prompt's size through usage; prefill=9000 tok/s, 20 tokens at 10 ms.
	const one = await stream(port, { model: 'ref-good:prefill=9000,tpot=10', prompt: PROMPT, max_tokens: 20, ignore_eos: true });
	const P = one.usage.prompt_tokens;
	const p = P * 1000 / 9000;
	check(one.usage.completion_tokens === 20 && one.times.length === 20, `20 tokens exactly: ${JSON.stringify(one.usage)}`);
	near(one.times[0], p, 40, 'C1 TTFT = P / prefill');
	near((one.times[19] - one.times[0]) / 19, 10, 3, 'C1 TPOT');
	// C4 with batch=25: TPOT = 10 * (1 + 0.25 * 3) = 17.5 ms; TTFT unchanged.
	const m = 'ref-good:prefill=9000,tpot=10,batch=25';
	const four = await Promise.all([0, 1, 2, 3].map(() => stream(port, { model: m, prompt: PROMPT, max_tokens: 40, ignore_eos: true })));
	for (const r of four) {
		near(r.times[0], p, 60, 'C4 TTFT');
		near((r.times[39] - r.times[0]) / 39, 17.5, 3, 'C4 TPOT with batch=25');
	}
	// seqs=2: the third and fourth requests wait for a slot.
	const q = 'ref-good:prefill=9000,tpot=10,seqs=2';
	const queued = await Promise.all([0, 1, 2, 3].map(() => stream(port, { model: q, prompt: PROMPT, max_tokens: 20, ignore_eos: true })));
	const ttft = queued.map((r) => r.times[0]).sort((a, b) => a - b);
	const e2e = p + 19 * 10;
	near(ttft[1], p, 60, 'seqs=2: the second request runs at once');
	near(ttft[2], e2e + p, 80, 'seqs=2: the third waits one E2E');
	near(ttft[3], e2e + p, 80, 'seqs=2: so does the fourth');
}

// The noise's draws, straight from the engine: lognormal factors with the asked sigma
// and median 1, the asked share of stalls, reproducible per seed and model name, and
// the drift and regression factors at known times.
function draws() {
	const mk = () => new Engine({ dialect: 'vllm', maxModelLen: 1 << 20 });
	const b = { jitter: '0.3', stall_p: '0.1', seed: 7 };
	const e = mk();
	const t = e.timing(b);
	const f = [];
	for (let i = 0; i < 4000; i++) f.push(e.noise('m', b, t, 100));
	const logs = f.map((x) => Math.log(x.prefill));
	const mean = logs.reduce((a, x) => a + x, 0) / logs.length;
	const sd = Math.sqrt(logs.reduce((a, x) => a + (x - mean) ** 2, 0) / (logs.length - 1));
	check(Math.abs(mean) < 0.02 && Math.abs(sd - 0.3) < 0.02, `jitter=0.3: log prefill factor mean ${mean.toFixed(3)}, sd ${sd.toFixed(3)}`);
	const share = f.filter((x) => x.stallAt >= 0).length / f.length;
	check(Math.abs(share - 0.1) < 0.015 && f.every((x) => x.stallAt < 100), `stall_p=0.1: ${share} of requests stall`);
	const again = mk();
	const same = again.noise('m', b, t, 100);
	const other = mk().noise('m', Object.assign({}, b, { seed: 8 }), t, 100);
	check(same.prefill === f[0].prefill && same.tpot === f[0].tpot && other.prefill !== same.prefill,
		'the same seed and name repeat their draws on a new server; another seed does not');
	check(again.noise('m2', b, t, 100).prefill !== again.noise('m', b, t, 100).prefill, 'one generator per model name');
	const d = e.timing({ drift: 20, drift_period: 60, slower: 25 });
	near(e.pace(d, e.t0), 1.25, 1e-9, 'pace at the start: the regression alone');
	near(e.pace(d, e.t0 + 30000), 1.25 * 1.2, 1e-9, 'pace at half a drift period: +20% and the regression');
	near(e.pace(e.timing({}), e.t0 + 12345), 1, 0, 'no noise asked: no change');
}

// Over HTTP: slower=50 makes TTFT and TPOT 1.5 times longer; stall_p=1 adds one
// stall_ms pause to every request.
async function noisy(port) {
	const base = 'ref-good:prefill=9000,tpot=10';
	const one = await stream(port, { model: base, prompt: PROMPT, max_tokens: 20, ignore_eos: true });
	const slow = await stream(port, { model: base + ',slower=50', prompt: PROMPT, max_tokens: 20, ignore_eos: true });
	near(slow.times[0], 1.5 * one.times[0], 40, 'slower=50: TTFT');
	near((slow.times[19] - slow.times[0]) / 19, 15, 3, 'slower=50: TPOT');
	const st = await stream(port, { model: base + ',stall_p=1,stall_ms=300', prompt: PROMPT, max_tokens: 20, ignore_eos: true });
	near(st.end - one.end, 300, 60, 'stall_p=1,stall_ms=300: one 300 ms stall');
}

async function exact(port) {
	for (const [body, want] of [
		[{ max_tokens: 300, ignore_eos: true }, 300],
		[{ max_tokens: 64, min_tokens: 64, ignore_eos: true }, 64],
		[{ max_tokens: 500, min_tokens: 250 }, 250],
	]) {
		const r = await stream(port, Object.assign({ model: 'ref-good', prompt: 'Say hi.' }, body));
		check(r.usage && r.usage.completion_tokens === want, `completion_tokens ${r.usage && r.usage.completion_tokens} = ${want} for ${JSON.stringify(body)}`);
	}
	const bad = await stream(port, { model: 'ref-good', prompt: 'x', max_tokens: 4, min_tokens: 8 });
	check(bad.status === 400, 'min_tokens > max_tokens is a 400');
	// empty_every=3: requests 3 and 6 of this name are empty 200s with full usage.
	const res = [];
	for (let i = 0; i < 6; i++)
		res.push(await stream(port, { model: 'ref-good:empty_every=3', prompt: 'Say hi.', max_tokens: 8, ignore_eos: true }));
	const empty = res.map((r) => r.status === 200 && r.times.length === 0 && r.usage.completion_tokens === 8);
	check(JSON.stringify(empty) === '[false,false,true,false,false,true]', `one empty 200 in 3: ${JSON.stringify(empty)}`);
}

function sample(text, re) {
	const m = re.exec(text);
	return m ? Number(m[1]) : NaN;
}

async function metrics(vport, sport, plainSport) {
	let r = await get(vport, '/metrics');
	check(r.status === 200, 'vllm /metrics');
	const t = r.text;
	check(/^# TYPE vllm:time_to_first_token_seconds histogram$/m.test(t), 'vllm TTFT histogram');
	check(/^vllm:inter_token_latency_seconds_bucket\{model_name="refserver",engine="0",le="\+Inf"\} \d+\.0$/m.test(t), 'vllm ITL +Inf bucket');
	const gen = sample(t, /^vllm:generation_tokens_total\{[^}]*\} (\S+)$/m);
	const n = sample(t, /^vllm:time_to_first_token_seconds_count\{[^}]*\} (\S+)$/m);
	check(gen > 0 && n > 0, `vllm counters: generation ${gen}, requests ${n}`);
	check(sample(t, /^vllm:num_requests_running\{[^}]*\} (\S+)$/m) === 0, 'vllm idle: nothing running');
	check(sample(t, /^vllm:prefix_cache_hits_total\{[^}]*\} (\S+)$/m) > 0, 'vllm repeated prompts hit the prefix cache');
	r = await get(plainSport, '/metrics');
	check(r.status === 404, 'sglang without --enable-metrics has no /metrics');
	await stream(sport, { model: 'x', prompt: PROMPT, max_tokens: 5, ignore_eos: true });
	r = await get(sport, '/metrics');
	check(r.status === 200 && /^sglang:num_queue_reqs\{model_name="refserver"\} 0\.0$/m.test(r.text) &&
		sample(r.text, /^sglang:generation_tokens_total\{[^}]*\} (\S+)$/m) === 5 &&
		/^sglang:inter_token_latency_seconds_count\{[^}]*\} 4\.0$/m.test(r.text), 'sglang metrics');
}

async function booting() {
	const b = await startServer(['--start-delay', '400']);
	try {
		const early = await get(b.port, '/health');
		await new Promise((res) => setTimeout(res, 500));
		const late = await get(b.port, '/health');
		check(early.status === 503 && late.status === 200, `start-delay: ${early.status} then ${late.status}`);
	} finally {
		b.proc.kill();
	}
}

// Wall-clock checks on a shared machine: another process can steal the core the
// server needs for a few hundred ms. The timing block counts when one of three
// tries meets every bound (a wrong model misses all three); its failures from the
// last try are reported.
async function timed(block) {
	const before = failures;
	for (let i = 1; i <= 3; i++) {
		failures = before;
		await block();
		if (failures === before)
			return;
		if (i < 3)
			console.log(`timing try ${i} missed a bound (machine busy?); trying again`);
	}
}

async function main() {
	const v = await startServer([]);
	const s = await startServer(['--dialect', 'sglang', '--enable-metrics']);
	const plain = await startServer(['--dialect', 'sglang']);
	try {
		await timed(() => timing(v.port));
		draws();
		await timed(() => noisy(v.port));
		await exact(v.port);
		await metrics(v.port, s.port, plain.port);
		await booting();
	} finally {
		for (const p of [v, s, plain]) p.proc.kill();
	}
	console.log(failures ? `${failures} check(s) failed` : 'refserver timing test passed');
	process.exit(failures ? 1 : 0);
}

main().catch((e) => { console.log(`FAIL ${e.stack}`); process.exit(1); });
