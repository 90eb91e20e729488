// The reference server's engine: a timing model that makes load-test figures analytic,
// a noise model on top of it (per-request jitter, slow drift, rare stalls, a regression
// of chosen size, seeded), a scheduler with max_num_seqs and a FIFO waiting queue, a
// prefix cache that only counts and evicts, and the Prometheus /metrics of each dialect. See
// README.md "Timing model" and "Noise".
'use strict';

const crypto = require('crypto');

const BLOCK = 16;              // vLLM's default KV block size: prefix hits are whole blocks
const MAX_EVICTED = 1 << 18;   // evicted hashes remembered, the least recently evicted forgotten first

// Histogram bounds (seconds) as the servers declare them: vLLM v1 loggers.py
// (PrometheusStatLogger) and SGLang metrics/collector.py (TokenizerMetricsCollector).
const BOUNDS = {
	vllm: {
		ttft: [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
			7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0],
		itl: [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0,
			7.5, 10.0, 20.0, 40.0, 80.0],
		e2e: [0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0,
			60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0],
	},
	sglang: {
		ttft: [0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400],
		itl: [0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035, 0.040,
			0.060, 0.080, 0.100, 0.200, 0.400, 0.600, 0.800, 1.000, 2.000, 4.000, 6.000, 8.000],
		e2e: [0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 800],
	},
};

class Histogram {
	constructor(bounds) {
		this.bounds = bounds;
		this.counts = new Array(bounds.length).fill(0); // per bucket, not cumulative
		this.sum = 0;
		this.count = 0;
	}

	observe(v) {
		const i = this.bounds.findIndex((b) => v <= b);
		if (i >= 0) this.counts[i]++;
		this.sum += v;
		this.count++;
	}
}

function sleep(ms) {
	return new Promise((r) => setTimeout(r, ms));
}

function num(...vals) {
	for (const v of vals) {
		if (v === undefined || v === null || v === true) continue;
		const n = Number(v);
		if (Number.isFinite(n)) return n;
	}
	return 0;
}

// Python's float repr as prometheus_client prints it: 3.0, 0.25, 1.7e+09, +Inf.
function pyFloat(v) {
	if (v === Infinity) return '+Inf';
	if (v === -Infinity) return '-Inf';
	if (Number.isNaN(v)) return 'NaN';
	if (Number.isInteger(v) && Math.abs(v) < 1e16) return v.toFixed(1);
	return String(v);
}

// A seeded uniform generator in [0, 1) (mulberry32): the noise is reproducible per seed.
function rng(seed) {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6D2B79F5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

// A standard normal draw (Box-Muller) from the uniform generator `u`.
function normal(u) {
	return Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u());
}

// The oldest key of a Map or Set, from one iterator kept between calls: each
// entry deleted since is skipped once, not at every call. An entry deleted and
// added again moves to the end, where the same iterator meets it later.
class Oldest {
	next(coll) {
		let r = this.it ? this.it.next() : { done: true };
		if (r.done) {
			this.it = coll.keys();
			r = this.it.next();
		}
		return r.value;
	}
}

class Engine {
	constructor(o) {
		this.o = o;
		this.running = 0;        // requests holding a slot (prefilling or decoding)
		this.queue = [];         // FIFO of { limit, resolve } waiting for a slot
		this.kvTokens = 0;       // prompt + generated tokens of the running requests
		this.kvCapacity = o.kvCacheTokens || Math.max(o.maxModelLen, 1 << 20);
		this.blocks = new Map(); // chained hashes of full prompt blocks cached, least recently used first
		this.evicted = new Set(); // hashes pushed out of `blocks` and not sent since
		this.oldest = new Oldest(); // where `blocks`' least recently used entry is (prefix)
		this.forgotten = new Oldest(); // and `evicted`'s
		this.seen = new Map();   // generation requests per model name
		this.rngs = new Map();   // the noise's generator per model name
		this.t0 = Date.now();    // the drift's clock starts with the server
		this.promptTokens = 0;
		this.generationTokens = 0;
		this.prefixQueries = 0;
		this.prefixHits = 0;
		this.success = new Map(); // finished_reason -> count
		this.spec = null;         // speculative decoding counters, once a request drafts
		this.specRng = rng(7);
		const b = BOUNDS[o.dialect];
		this.ttft = new Histogram(b.ttft);
		this.itl = new Histogram(b.itl);
		this.e2e = new Histogram(b.e2e);
	}

	// The timing parameters of a request, from its model-name options over the server's.
	timing(b) {
		return {
			prefill: num(b.prefill),                           // tokens/s; 0 = instant
			tpot: num(b.tpot, this.o.tpot),                    // ms per token at batch 1
			batch: num(b.batch) / 100,                         // TPOT growth per extra sequence
			seqs: num(b.seqs, this.o.maxNumSeqs) || Infinity,  // max_num_seqs
			jitterPrefill: num(b.jitter_prefill, b.jitter),    // lognormal sigma of the prefill
			jitterTpot: num(b.jitter_tpot, b.jitter),          // lognormal sigma of TPOT
			drift: num(b.drift) / 100,                         // peak slowdown of the drift
			driftPeriod: (num(b.drift_period) || 60) * 1000,   // ms of one drift cycle
			stallP: num(b.stall_p),                            // share of requests that stall
			stallMs: num(b.stall_ms) || 1000,                  // length of a stall
			slower: 1 + num(b.slower) / 100,                   // a regression: every time x this
			phase: num(b.phase) / 100,                         // slowdown in a slow phase
			phasePeriod: (num(b.phase_period) || 20) * 1000,   // ms of one phase cycle
			phaseShare: Math.min(1, num(b.phase_share, 0.25)), // slow share of each cycle
			phaseSeed: num(b.seed) || 1,                       // where in each cycle: per seed
			spec: Math.min(16, Math.floor(num(b.spec))),       // draft tokens per step; 0 = none
			accept: Math.min(1, num(b.accept, 0.7)),           // each draft token's acceptance
		};
	}

	// The request's draws from its model name's seeded generator (README.md "Noise"):
	// a lognormal factor (median 1) on its prefill and one on its per-token time, and
	// whether and before which of its n tokens it stalls.
	noise(model, b, t, n) {
		if (!this.rngs.has(model)) this.rngs.set(model, rng(num(b.seed) || 1));
		const u = this.rngs.get(model);
		const f = {
			prefill: Math.exp(t.jitterPrefill * normal(u)),
			tpot: Math.exp(t.jitterTpot * normal(u)),
			stallAt: -1,
		};
		if (u() < t.stallP) f.stallAt = Math.floor(u() * Math.max(1, n));
		return f;
	}

	// Every time is this much longer at `now` (ms): the drift, a slowdown of up to
	// `drift` that rises and falls once per `driftPeriod` of wall time; a slow phase,
	// `phase` longer for `phaseShare` of each `phasePeriod`, at a place in the cycle
	// drawn anew for each cycle (a neighbour's job, not a sine); and the regression
	// `slower`.
	pace(t, now) {
		const s = Math.sin(Math.PI * (now - this.t0) / t.driftPeriod);
		let p = 1;
		if (t.phase) {
			const cycle = Math.floor((now - this.t0) / t.phasePeriod);
			const at = (now - this.t0) / t.phasePeriod - cycle;
			const from = rng(cycle * 7919 + t.phaseSeed)() * (1 - t.phaseShare);
			if (at >= from && at < from + t.phaseShare) p = 1 + t.phase;
		}
		return (1 + t.drift * s * s) * p * t.slower;
	}

	// The 1-based number of this generation request among those for `model`.
	nth(model) {
		const k = (this.seen.get(model) || 0) + 1;
		this.seen.set(model, k);
		return k;
	}

	// Counts the prompt's leading full blocks cached (vLLM hashes each full block
	// chained to its prefix), then caches them as the most recently used; nothing is
	// reused, only counted. The cache holds the KV capacity's worth of blocks
	// (--kv-cache-tokens) and pushes out the least recently used ones beyond it, as
	// vLLM reuses its least recently freed blocks. Returns the tokens hit
	// (usage.prompt_tokens_details.cached_tokens) and whether the first block missed
	// had been cached and evicted since: a prefix computed again.
	prefix(ids) {
		let h = '';
		let hit = true;
		let hits = 0;
		let evicted = false;
		for (let i = 0; i + BLOCK <= ids.length; i += BLOCK) {
			h = crypto.createHash('sha1').update(h).update(Int32Array.from(ids.slice(i, i + BLOCK))).digest('hex');
			if (hit && this.blocks.has(h)) hits += BLOCK;
			else if (hit) {
				evicted = this.evicted.has(h);
				hit = false;
			}
			this.blocks.delete(h);
			this.blocks.set(h, true);
			this.evicted.delete(h);
		}
		// Both stay bounded and cost the same whatever the server's age, as
		// vLLM's free-block queue does: a second run of the same server must
		// meet the same server. The least recently used comes from one
		// iterator kept across calls (oldest): a Map iterated afresh from its
		// start skips every entry deleted before it until the table is rebuilt,
		// which made a cache at capacity 2.5 times slower at 64 tokens a
		// prompt; and the evicted hashes no longer grow to millions (hundreds of
		// MB of heap to collect) in the runs of a load case.
		const cap = Math.max(1, Math.floor(this.kvCapacity / BLOCK));
		while (this.blocks.size > cap) {
			const k = this.oldest.next(this.blocks);
			this.blocks.delete(k);
			this.evicted.add(k);
		}
		while (this.evicted.size > MAX_EVICTED) this.evicted.delete(this.forgotten.next(this.evicted));
		this.prefixQueries += ids.length;
		this.prefixHits += hits;
		return { hits, evicted };
	}

	pump() {
		while (this.queue.length && this.running < this.queue[0].limit) {
			this.running++;
			this.queue.shift().resolve();
		}
	}

	// Starts a request for `model` (its name, options included) that arrived at
	// `arrival` (ms) and will generate `n` tokens: waits for a slot, then for its
	// prefill, which ends P / prefill (times the noise) after the later of its arrival
	// and its admission (the server's own parsing and tokenizing count as prefill time,
	// as in a real server's TTFT). Returns the job that paces its tokens (gate) and
	// ends it (finish); finish must run exactly once.
	async begin(model, b, promptTokens, arrival, n) {
		const t = this.timing(b);
		const job = { t, f: this.noise(model, b, t, n), arrival: arrival || Date.now(), prompt: promptTokens,
			generated: 0, last: 0, sched: 0, ended: false };
		let granted = 0;
		const slot = new Promise((resolve) => {
			this.queue.push({ limit: t.seqs, resolve: () => { granted = Date.now(); resolve(); } });
			this.pump();
		});
		const waited = granted === 0; // not admitted on the spot: queued
		await slot;
		job.admitted = waited ? granted : job.arrival;
		this.kvTokens += promptTokens;
		const wait = t.prefill > 0 ? job.admitted + promptTokens * 1000 / t.prefill * job.f.prefill *
			this.pace(t, job.admitted) - Date.now() : 0;
		if (wait > 0) await sleep(wait);
		return job;
	}

	// Waits until token i (0-based) is due: the first at once (the end of the prefill),
	// each next one TPOT * (1 + batch * (running - 1)) (times the noise) after the
	// previous one's due time, so timer lateness never accumulates; a stall drawn for
	// token i comes before it.
	async gate(job, i) {
		const stall = i === job.f.stallAt ? job.t.stallMs : 0;
		if (i === 0) {
			if (stall) await sleep(stall);
			job.sched = Date.now();
		} else {
			job.sched += stall + job.t.tpot * (1 + job.t.batch * Math.max(0, this.running - 1)) *
				job.f.tpot * this.pace(job.t, job.sched);
			const wait = job.sched - Date.now();
			if (wait > 0) await sleep(wait);
			else if (i % 64 === 0) await new Promise((r) => setImmediate(r));
		}
		const now = Date.now();
		if (i === 0) this.ttft.observe((now - job.arrival) / 1000);
		else this.itl.observe((now - job.last) / 1000);
		job.last = now;
		job.generated++;
		this.kvTokens++;
	}

	finish(job, reason) {
		if (job.ended) return;
		job.ended = true;
		this.running--;
		this.kvTokens -= job.prompt + job.generated;
		this.promptTokens += job.prompt;
		this.generationTokens += job.generated;
		if (job.t.spec > 0) this.speculate(job.t, job.generated);
		if (reason) {
			this.success.set(reason, (this.success.get(reason) || 0) + 1);
			this.e2e.observe((Date.now() - job.arrival) / 1000);
		}
		this.pump();
	}

	// The counters of a speculative decoder for `n` generated tokens (README.md
	// `spec`): each verification step drafts t.spec tokens, accepts
	// a leading run of them (each with probability t.accept, stopping at the first
	// rejected) and yields that run plus one token of its own. Only counted: the
	// timing model is unchanged.
	speculate(t, n) {
		const x = this.spec || (this.spec = { drafts: 0, draftTokens: 0, accepted: 0, perPos: [] });
		const u = this.specRng;
		while (x.perPos.length < t.spec) x.perPos.push(0);
		for (let left = n; left > 0;) {
			let k = 0;
			while (k < t.spec && k < left - 1 && u() < t.accept) x.perPos[k++]++;
			x.drafts++;
			x.draftTokens += t.spec;
			x.accepted += k;
			left -= 1 + k;
		}
	}

	// GET /metrics in the dialect's names, labels and number format.
	render(modelName) {
		return this.o.dialect === 'sglang' ? this.renderSglang(modelName) : this.renderVllm(modelName);
	}

	renderVllm(modelName) {
		const L = `model_name="${modelName}",engine="0"`;
		const out = [];
		const one = (name, type, help, v, extra) => {
			out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
			out.push(`${name}{${L}${extra || ''}} ${pyFloat(v)}`);
		};
		one('vllm:num_requests_running', 'gauge', 'Number of requests in model execution batches.', this.running);
		one('vllm:num_requests_waiting', 'gauge', 'Number of requests waiting to be processed.', this.queue.length);
		one('vllm:kv_cache_usage_perc', 'gauge', 'KV-cache usage. 1 means 100 percent usage.',
			Math.min(1, this.kvTokens / this.kvCapacity));
		one('vllm:prefix_cache_queries_total', 'counter', 'Prefix cache queries, in terms of number of queried tokens.', this.prefixQueries);
		one('vllm:prefix_cache_hits_total', 'counter', 'Prefix cache hits, in terms of number of cached tokens.', this.prefixHits);
		one('vllm:prompt_tokens_total', 'counter', 'Number of prefill tokens processed.', this.promptTokens);
		one('vllm:generation_tokens_total', 'counter', 'Number of generation tokens processed.', this.generationTokens);
		out.push('# HELP vllm:request_success_total Count of successfully processed requests.',
			'# TYPE vllm:request_success_total counter');
		for (const r of ['stop', 'length', 'abort'])
			out.push(`vllm:request_success_total{${L},finished_reason="${r}"} ${pyFloat(this.success.get(r) || 0)}`);
		this.histogram(out, 'vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', this.ttft, L);
		this.histogram(out, 'vllm:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', this.itl, L);
		this.histogram(out, 'vllm:e2e_request_latency_seconds', 'Histogram of e2e request latency in seconds.', this.e2e, L);
		if (this.spec) {
			const x = this.spec;
			one('vllm:spec_decode_num_drafts_total', 'counter', 'Number of spec decoding drafts.', x.drafts);
			one('vllm:spec_decode_num_draft_tokens_total', 'counter', 'Number of draft tokens.', x.draftTokens);
			one('vllm:spec_decode_num_accepted_tokens_total', 'counter', 'Number of accepted tokens.', x.accepted);
			out.push('# HELP vllm:spec_decode_num_accepted_tokens_per_pos_total Accepted tokens per draft position.',
				'# TYPE vllm:spec_decode_num_accepted_tokens_per_pos_total counter');
			x.perPos.forEach((v, i) =>
				out.push(`vllm:spec_decode_num_accepted_tokens_per_pos_total{${L},position="${i}"} ${pyFloat(v)}`));
		}
		return out.join('\n') + '\n';
	}

	renderSglang(modelName) {
		const L = `model_name="${modelName}"`;
		const out = [];
		const one = (name, type, help, v) => {
			out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name}{${L}} ${pyFloat(v)}`);
		};
		one('sglang:prompt_tokens_total', 'counter', 'Number of prefill tokens processed.', this.promptTokens);
		one('sglang:generation_tokens_total', 'counter', 'Number of generation tokens processed.', this.generationTokens);
		one('sglang:cached_tokens_total', 'counter', 'Number of cached prompt tokens.', this.prefixHits);
		one('sglang:num_running_reqs', 'gauge', 'The number of running requests.', this.running);
		one('sglang:num_queue_reqs', 'gauge', 'The number of requests in the waiting queue.', this.queue.length);
		one('sglang:token_usage', 'gauge', 'The token usage.', Math.min(1, this.kvTokens / this.kvCapacity));
		one('sglang:cache_hit_rate', 'gauge', 'The prefix cache hit rate.',
			this.prefixQueries ? this.prefixHits / this.prefixQueries : 0);
		this.histogram(out, 'sglang:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', this.ttft, L);
		this.histogram(out, 'sglang:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', this.itl, L);
		this.histogram(out, 'sglang:e2e_request_latency_seconds', 'Histogram of End-to-end request latency in seconds', this.e2e, L);
		if (this.spec) {
			one('sglang:spec_accept_rate', 'gauge', 'The average acceptance rate of speculative decoding.',
				this.spec.draftTokens ? this.spec.accepted / this.spec.draftTokens : 0);
			one('sglang:spec_accept_length', 'gauge', 'The average acceptance length of speculative decoding.',
				this.spec.drafts ? 1 + this.spec.accepted / this.spec.drafts : 0);
		}
		return out.join('\n') + '\n';
	}

	// prometheus_client's histogram lines: cumulative buckets with le after the labels,
	// then _count and _sum.
	histogram(out, name, help, h, L) {
		out.push(`# HELP ${name} ${help}`, `# TYPE ${name} histogram`);
		let cum = 0;
		h.bounds.forEach((b, i) => {
			cum += h.counts[i];
			out.push(`${name}_bucket{${L},le="${pyFloat(b)}"} ${pyFloat(cum)}`);
		});
		out.push(`${name}_bucket{${L},le="+Inf"} ${pyFloat(h.count)}`);
		out.push(`${name}_count{${L}} ${pyFloat(h.count)}`);
		out.push(`${name}_sum{${L}} ${pyFloat(h.sum)}`);
	}
}

module.exports = { Engine, pyFloat };
