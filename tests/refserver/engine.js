// The reference server's engine: a timing model that makes load-test figures analytic,
// a scheduler with max_num_seqs and a FIFO waiting queue, a prefix cache that only
// counts, and the Prometheus /metrics of each dialect. See README.md "Timing model".
'use strict';

const crypto = require('crypto');

const BLOCK = 16;              // vLLM's default KV block size: prefix hits are whole blocks
const MAX_BLOCKS = 1 << 22;    // hashes kept before the counting cache is emptied

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

class Engine {
	constructor(o) {
		this.o = o;
		this.running = 0;        // requests holding a slot (prefilling or decoding)
		this.queue = [];         // FIFO of { limit, resolve } waiting for a slot
		this.kvTokens = 0;       // prompt + generated tokens of the running requests
		this.kvCapacity = o.kvCacheTokens || Math.max(o.maxModelLen, 1 << 20);
		this.blocks = new Set(); // chained hashes of full prompt blocks seen
		this.seen = new Map();   // generation requests per model name
		this.promptTokens = 0;
		this.generationTokens = 0;
		this.prefixQueries = 0;
		this.prefixHits = 0;
		this.success = new Map(); // finished_reason -> count
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
		};
	}

	// The 1-based number of this generation request among those for `model`.
	nth(model) {
		const k = (this.seen.get(model) || 0) + 1;
		this.seen.set(model, k);
		return k;
	}

	// Counts the prompt's leading full blocks already seen (vLLM hashes each full block
	// chained to its prefix), then remembers them; nothing is reused, only counted.
	// Returns the tokens hit (usage.prompt_tokens_details.cached_tokens).
	prefix(ids) {
		let h = '';
		let hit = true;
		let hits = 0;
		if (this.blocks.size > MAX_BLOCKS) this.blocks.clear();
		for (let i = 0; i + BLOCK <= ids.length; i += BLOCK) {
			h = crypto.createHash('sha1').update(h).update(Int32Array.from(ids.slice(i, i + BLOCK))).digest('hex');
			if (hit && this.blocks.has(h)) hits += BLOCK;
			else hit = false;
			this.blocks.add(h);
		}
		this.prefixQueries += ids.length;
		this.prefixHits += hits;
		return hits;
	}

	pump() {
		while (this.queue.length && this.running < this.queue[0].limit) {
			this.running++;
			this.queue.shift().resolve();
		}
	}

	// Starts a request that arrived at `arrival` (ms): waits for a slot, then for its
	// prefill, which ends P / prefill after the later of its arrival and its admission
	// (the server's own parsing and tokenizing count as prefill time, as in a real
	// server's TTFT). Returns the job that paces its tokens (gate) and ends it
	// (finish); finish must run exactly once.
	async begin(b, promptTokens, arrival) {
		const t = this.timing(b);
		const job = { t, arrival: arrival || Date.now(), prompt: promptTokens, generated: 0, last: 0,
			sched: 0, ended: false };
		let granted = 0;
		const slot = new Promise((resolve) => {
			this.queue.push({ limit: t.seqs, resolve: () => { granted = Date.now(); resolve(); } });
			this.pump();
		});
		const waited = granted === 0; // not admitted on the spot: queued
		await slot;
		job.admitted = waited ? granted : job.arrival;
		this.kvTokens += promptTokens;
		const wait = t.prefill > 0 ? job.admitted + promptTokens * 1000 / t.prefill - Date.now() : 0;
		if (wait > 0) await sleep(wait);
		return job;
	}

	// Waits until token i (0-based) is due: the first at once (the end of the prefill),
	// each next one TPOT * (1 + batch * (running - 1)) after the previous one's due time,
	// so timer lateness never accumulates.
	async gate(job, i) {
		if (i === 0) {
			job.sched = Date.now();
		} else {
			job.sched += job.t.tpot * (1 + job.t.batch * Math.max(0, this.running - 1));
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
		if (reason) {
			this.success.set(reason, (this.success.get(reason) || 0) + 1);
			this.e2e.observe((Date.now() - job.arrival) / 1000);
		}
		this.pump();
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
