// The assertions and small helpers of tests/vllm/run.sh (make test-vllm), one
// subcommand each; an assertion that fails throws (exit 1, "FAIL: ..." on
// stderr), a helper prints what run.sh needs on stdout.
//   audit RUN [ID...]         every attempt (but those of cases ID): transport
//                             checks passed, audit enabled with usage_delta 0
//   own-template RUN CONFIG   the run rendered from CONFIG's chat_template (no
//                             --template): the manifest names it and its SHA-256
//   cache RUN                 warm cache steps report cached_tokens > 0
//   load RUN                  every load cell valid, and per level the server's
//                             /metrics prompt and generation tokens equal the
//                             sums of needle's records of that level
//   parity RUN                every attempt of a parity suite passed: streamed
//                             and non-streamed answers alike, the latter kept
//   spec RUN K                every load cell has the server's speculative
//                             decoding (n-gram, K draft tokens): drafts made,
//                             acceptance in [0, 1], tokens a step in [1, K + 1],
//                             K positions
//   boundary RUN FIT          the FIT-token recall attempt was sent and passed
//                             transport and audit; the FIT+1 one was not sent,
//                             by the max_model_len pre-flight
//   served CODE RESP P C      vLLM's answer: 200, P prompt and C completion tokens
//   refused CODE RESP TEXT    vLLM's answer: 400 whose message holds TEXT
//   context-cut RUN           needle named vLLM's shortened max_tokens
//                             (truncated / length_mismatch, "context limit")
//   killed RUN                the attempt cut by the server's death failed
//                             transport (not a grade, not an audit)
//   bos RUN_BOS RUN_NOBOS TOKENIZE BOS_ID  /v1/completions: vLLM adds no BOS of
//                             add_bos_token's, needle asked (manifest) and counts
//                             none (delta 0), /tokenize agrees
//   versions RUNS_DIR         every run folder's manifest names the real vLLM
//                             version (/version), at least 3 of them
//   graded RUN [reasoning]    against the rule-answering engine: every graded
//                             attempt passed, tool calls came back parsed
//                             (the stream's tool_calls); with "reasoning",
//                             every answer's <think> block came back as
//                             reasoning, split off by vLLM, none in content
//   planted RUN...            against the engine's wrong mode: every graded
//                             attempt failed its grade (transport and audit
//                             passed) with the reason of its planted defect,
//                             and every kind of defect was planted
//   cutover AA EXIT CC EXIT SLOW EXIT  needle diff --gate cutover as JSON:
//                             of two pairs of the same server that share no
//                             run, at least one fails no cell (exit 0 or 4;
//                             one pair failing alone is a false alarm the
//                             gate makes now and then on a shared machine,
//                             printed); the server with --max-num-seqs 1
//                             fails (exit 1) on the concurrency-4 cell; every
//                             cell's verdict is printed (concurrency 1 of the
//                             slow server is not asserted)
//   graded-suite SMOKE.json   prints the smoke suite for the rule engine
//   smoke-suite SMOKE.json    prints the smoke suite for random weights
//   parity-suite SMOKE.json   prints the smoke suite for stream parity
//   boundary-suite FIT MAX    prints a recall suite at FIT and FIT+1 tokens
//   long-suite                prints a one-case suite that streams for a while
//   near-suite PROMPT         prints the near-full cases of gen haystack's prompt.json
//   chat-body PROMPT MODEL MAX  prints a chat request body of gen haystack's
//                             prompt.json
//   wait-running URL SEC      waits until vLLM's /metrics shows a request running
'use strict';
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const http = require('http');

const records = (run) => fs.readFileSync(path.join(run, 'results.jsonl'), 'utf8')
	.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
const manifest = (run) => JSON.parse(fs.readFileSync(path.join(run, 'manifest.json'), 'utf8'));
const need = (ok, msg) => { if (!ok) throw new Error(msg); };
const brief = (r) => JSON.stringify({ transport: r.transport, audit: r.audit, http: r.http_status });

function audit(run, ...except) {
	const rs = records(run).filter((r) => !except.includes(r.case));
	need(rs.length > 0, `${run}: no records`);
	for (const r of rs) {
		need(r.transport && r.transport.ok, `${run}: ${r.case}: transport failed: ${brief(r)}`);
		need(r.audit && r.audit.enabled && r.audit.usage_delta === 0,
			`${run}: ${r.case}: audit not enabled with delta 0: ${brief(r)}`);
	}
	console.log(`${path.basename(run)}: ${rs.length} attempts, transport ok and audit delta 0 on all` +
		(except.length ? ` but ${except.join(', ')} (checked on their own)` : ''));
}

function ownTemplate(run, config) {
	const m = manifest(run);
	const text = JSON.parse(fs.readFileSync(config, 'utf8')).chat_template;
	const sha = crypto.createHash('sha256').update(text, 'utf8').digest('hex');
	need(m.template && path.resolve(m.template.source) === path.resolve(config) && m.template.source_sha256 === sha,
		`${run}: not rendered from ${config}: ${JSON.stringify(m.template)}`);
	need(!(m.options && m.options.template), `${run}: --template was given`);
}

function cache(run) {
	const warm = records(run).filter((r) => r.probe && r.probe.step && r.probe.step !== 'cold');
	need(warm.length >= 2, `${run}: ${warm.length} warm steps`);
	for (const r of warm)
		need(r.probe.cached_tokens > 0, `${run}: ${r.case}: cached_tokens ${r.probe.cached_tokens}`);
	console.log(`cache: warm steps cached_tokens ${warm.map((r) => r.probe.cached_tokens).join(', ')}`);
}

// Each level's /metrics window (run_load.c: before its first counted round,
// after its last) holds exactly its counted rounds' requests.
function load(run) {
	const s = JSON.parse(fs.readFileSync(path.join(run, 'summary.json'), 'utf8'));
	const cells = (s.load && s.load.cells) || [];
	need(cells.length > 0, `${run}: no load cells`);
	const rs = records(run).filter((r) => r.load && r.load.round >= 1);
	for (const c of cells) {
		need(c.rounds_valid === c.rounds_total && c.rounds_total > 0,
			`${run}: ${c.case} level ${c.concurrency ?? c.rate}: ${c.rounds_valid}/${c.rounds_total} valid rounds`);
		const level = c.concurrency !== undefined ? `c${c.concurrency}` : `r${c.rate}`;
		const mine = rs.filter((r) => r.case === c.case &&
			(c.concurrency !== undefined ? r.load.concurrency === c.concurrency : r.load.rate === c.rate));
		const p = mine.reduce((a, r) => a + r.usage.prompt_tokens, 0);
		const g = mine.reduce((a, r) => a + r.usage.completion_tokens, 0);
		const f = path.join(run, 'raw', `metrics-${c.case}-${level}.json`);
		const v = JSON.parse(fs.readFileSync(f, 'utf8')).server;
		need(v, `${f}: no server view: ${fs.readFileSync(f, 'utf8')}`);
		need(v.prompt_tokens === p && v.generation_tokens === g && v.requests === mine.length,
			`${f}: server prompt ${v.prompt_tokens} generation ${v.generation_tokens} requests ` +
			`${v.requests}, needle ${p} ${g} ${mine.length}`);
		console.log(`${path.basename(run)} ${level}: valid ${c.rounds_valid}/${c.rounds_total}, ` +
			`/metrics = needle: ${mine.length} requests, ${p} prompt, ${g} generation tokens`);
	}
}

function boundary(run, fit) {
	const rs = records(run);
	const at = (n) => rs.find((r) => r.recall && r.recall.tokens === n);
	const a = at(fit), b = at(fit + 1);
	need(a && a.transport.ok && a.audit.usage_delta === 0 && a.usage.prompt_tokens === fit,
		`${run}: ${fit} tokens: ${a && brief(a)}`);
	need(b && !b.transport.ok && b.transport.failures.includes('context_overflow') && b.http_status === 0 &&
		/max_model_len/.test(b.transport.messages.join(' ')), `${run}: ${fit + 1} tokens: ${b && brief(b)}`);
}

// vLLM's answer to a request run.sh posted itself (curl): served with
// `completion` tokens for a `prompt`-token prompt, or refused with 400 and
// `text` in its message.
function served(codeFile, respFile, prompt, completion) {
	const code = fs.readFileSync(codeFile, 'utf8').trim(), body = fs.readFileSync(respFile, 'utf8');
	const u = code === '200' && JSON.parse(body).usage;
	need(u && u.prompt_tokens === Number(prompt) && u.completion_tokens === Number(completion),
		`${prompt} prompt tokens: expected 200 with ${completion} completion tokens, got ${code} ${body.slice(0, 300)}`);
}

function refused(codeFile, respFile, text) {
	const code = fs.readFileSync(codeFile, 'utf8').trim(), body = fs.readFileSync(respFile, 'utf8');
	need(code === '400' && JSON.parse(body).error.message.includes(text),
		`expected 400 with '${text}', got ${code} ${body.slice(0, 300)}`);
}

// The near-full request (a prompt one token under max_model_len, max_tokens
// 16), free and fixed-length, sent by needle without a tokenizer (no pre-flight).
function nearSuite(prompt) {
	const m = JSON.parse(fs.readFileSync(prompt, 'utf8'));
	const messages = m.messages || m;
	console.log(JSON.stringify({ suite: 'vllm-near-full', defaults: { max_tokens: 16, temperature: 0 },
		cases: [{ id: 'near-full', messages }, { id: 'near-full-fixed', ignore_eos: true, messages }] }));
}

function contextCut(run) {
	const rs = records(run);
	const want = { 'near-full': 'truncated', 'near-full-fixed': 'length_mismatch' };
	for (const [id, code] of Object.entries(want)) {
		const r = rs.find((x) => x.case === id);
		need(r && r.transport.failures.includes(code) && /context limit/.test(r.transport.messages.join(' ')) &&
			r.usage.completion_tokens === 1, `${run}: ${id}: ${r && brief(r)}`);
	}
}

function killed(run) {
	const rs = records(run);
	need(rs.length === 1, `${run}: ${rs.length} records`);
	const r = rs[0];
	need(!r.transport.ok && r.transport.failures.length > 0, `${run}: transport passed: ${brief(r)}`);
	console.log(`killed: transport failed with ${r.transport.failures.join(', ')}: ${r.transport.messages[0]}`);
}

// /v1/completions and the BOS. needle counts the BOS that add_bos_token in
// tokenizer_config.json asks for (DeepSeek V3: true); vLLM 0.32 with
// transformers 5.19 does not add it, so its count is one lower (delta -1):
// TOKENIZE is vLLM's /tokenize of the same prompt, which must show no BOS
// (id BOS_ID). Qwen3 (no BOS) counts alike (delta 0).
function bos(runBos, runPlain, tokenize, bosId) {
	const t = JSON.parse(fs.readFileSync(tokenize, 'utf8'));
	const said = manifest(runBos).tokenizer.completions_bos_server || '';
	need(/^not added \(its \/tokenize: /.test(said), `${runBos}: the manifest says the BOS is ${said}`);
	for (const id of ['completions', 'completions-special']) {
		const a = records(runBos).find((r) => r.case === id);
		need(a && a.endpoint === '/v1/completions' && a.transport.ok && a.audit.usage_delta === 0,
			`${runBos}: ${id}: expected needle to count as vLLM does (no BOS): ${a && brief(a)}`);
		const b = records(runPlain).find((r) => r.case === id);
		need(b && b.audit.usage_delta === 0, `${runPlain}: ${id}: ${b && brief(b)}`);
	}
	const a = records(runBos).find((r) => r.case === 'completions');
	need(t.count === a.usage.prompt_tokens && t.tokens[0] !== Number(bosId),
		`${tokenize}: ${JSON.stringify(t)}, completions prompt_tokens ${a.usage.prompt_tokens}`);
	console.log(`completions: vLLM adds no BOS to the DeepSeek V3 prompt (${a.usage.prompt_tokens} tokens, ` +
		`/tokenize agrees); needle asked, counts ${a.audit.local_prompt_tokens}, delta 0 (manifest: ${said}); ` +
		`Qwen3 (no BOS) delta 0`);
}

function versions(dir) {
	const runs = fs.readdirSync(dir).filter((d) => fs.existsSync(path.join(dir, d, 'manifest.json')));
	const seen = new Set();
	for (const d of runs) {
		const s = manifest(path.join(dir, d)).endpoint.server || {};
		need(typeof s.version === 'string' && /^\d+\.\d+/.test(s.version) && s.version_from === '/version',
			`${d}: manifest names no vLLM version: ${JSON.stringify(s)}`);
		seen.add(s.version);
	}
	need(runs.length >= 3, `${dir}: ${runs.length} run folders`);
	console.log(`versions: ${runs.length} run folders, vLLM ${[...seen].join(', ')}`);
}

// Random weights never end a turn: every request is fixed-length
// (ignore_eos, a short max_tokens), so finish_reason "length" is expected, and
// image cases are left out (the toy model is text-only; vLLM refuses images).
function smokeSuite(file) {
	const s = JSON.parse(fs.readFileSync(file, 'utf8'));
	const image = (c) => c.kind === 'image_order' || JSON.stringify(c.messages || []).includes('"image_url"');
	s.suite = 'vllm-smoke';
	s.defaults = Object.assign({}, s.defaults, { max_tokens: 16, ignore_eos: true });
	s.cases = s.cases.filter((c) => !image(c)).map((c) => {
		const o = Object.assign({}, c);
		delete o.max_tokens;
		return o;
	});
	console.log(JSON.stringify(s));
}

// The smoke suite for the rule-answering engine: as shipped but the image
// cases (the toy model is text-only) and with max_tokens 512.
function gradedSuite(file) {
	const s = JSON.parse(fs.readFileSync(file, 'utf8'));
	const image = (c) => c.kind === 'image_order' || JSON.stringify(c.messages || []).includes('"image_url"');
	s.suite = 'vllm-graded-smoke';
	s.defaults = Object.assign({}, s.defaults, { max_tokens: 512 });
	s.cases = s.cases.filter((c) => !image(c)).map((c) => {
		const o = Object.assign({}, c);
		delete o.max_tokens;
		return o;
	});
	console.log(JSON.stringify(s));
}

const graded = (run) => records(run).filter((r) => !r.load);
const why = (r) => (r.grade && r.grade.reasons || []).join('; ');

function gradedPass(run, reasoning) {
	const rs = graded(run);
	need(rs.length > 0, `${run}: no graded attempts`);
	let calls = 0;
	for (const r of rs) {
		need(r.verdict === 'pass', `${run}: ${r.case}: ${r.verdict}: ${brief(r)} ${why(r)}`);
		calls += (r.tool_calls || []).length;
		if (reasoning)
			need((r.reasoning || '').trim() === 'Answering by rule.' && !/<\/?think>/.test(r.content || ''),
				`${run}: ${r.case}: reasoning ${JSON.stringify(r.reasoning)}, content ${JSON.stringify(r.content)}`);
	}
	const tools = rs.filter((r) => r.kind === 'tool_call');
	need(tools.length === 0 || calls > 0, `${run}: no tool call came back parsed`);
	console.log(`${path.basename(run)}: ${rs.length} graded attempts passed` +
		(tools.length ? `, ${calls} tool calls parsed by vLLM` : '') +
		(reasoning ? ', reasoning split off by vLLM on every answer' : ''));
}

// The defects of needle_rules.py's wrong mode, each with the reason needle
// gives for it; `kind` says which attempts may carry it.
const PLANTED = [
	['swapped code', 'recall', /: key '.*': expected ".*", got ".*"/],
	['missed middle needle', 'recall', /needle at depth \d+%: missing key/],
	['fenced JSON', 'chat', /answer is wrapped in a code fence/],
	['JSON in prose', 'chat', /answer has prose around the JSON value/],
	['wrong tool argument', 'tool_call', /key 'arguments\..*': expected/],
	['missing tool call', 'tool_call', /expected 1 tool call, got 0/],
	['lost parallel call', 'tool_call', /expected 2 tool calls, got 1/],
	['tool call where none is allowed', 'tool_call', /unexpected tool call/],
	['forgotten fact', 'multi_turn', /fact '.*' was planted at messages/],
];

function planted(...runs) {
	const seen = new Set();
	let n = 0;
	for (const run of runs) {
		const rs = graded(run);
		need(rs.length > 0, `${run}: no graded attempts`);
		n += rs.length;
		for (const r of rs) {
			const kind = r.recall ? 'recall' : r.kind;
			const hit = PLANTED.filter(([, k, re]) => k === kind && r.grade.reasons.some((x) => re.test(x)));
			need(r.verdict === 'fail' && r.transport.ok && r.audit.usage_delta === 0 && hit.length > 0,
				`${run}: ${r.case}: ${r.verdict}, no planted reason: ${brief(r)} ${why(r)}`);
			for (const [name] of hit)
				seen.add(name);
		}
	}
	const missing = PLANTED.map(([name]) => name).filter((x) => !seen.has(x));
	need(missing.length === 0, `${runs.join(', ')}: never caught: ${missing.join(', ')}`);
	console.log(`${runs.map((r) => path.basename(r)).join(', ')}: ${n} graded attempts failed, each with ` +
		`its planted defect (${[...seen].join(', ')})`);
}

function cutover(aaFile, aaExit, ccFile, ccExit, slowFile, slowExit) {
	const cells = (f) => JSON.parse(fs.readFileSync(f, 'utf8')).load || [];
	const show = (c) => `c${c.concurrency} ${c.verdict} (` +
		c.gates.map((g) => `${g.gate} ${g.verdict} ${Number(g.value).toFixed(3)}`).join(', ') + ')';
	const aa = cells(aaFile), cc = cells(ccFile), slow = cells(slowFile);
	const held = (p, exit) => p.length === 2 && ['0', '4'].includes(exit) && p.every((c) => c.verdict !== 'fail');
	need(held(aa, aaExit) || held(cc, ccExit),
		`the same server twice, both pairs: exit ${aaExit}: ${aa.map(show).join('; ')}; ` +
		`exit ${ccExit}: ${cc.map(show).join('; ')}`);
	const c4 = slow.find((c) => c.concurrency === 4);
	need(slowExit === '1' && c4 && c4.verdict === 'fail', `--max-num-seqs 1: exit ${slowExit}: ${slow.map(show).join('; ')}`);
	console.log(`cutover: the same server twice exit ${aaExit} (${aa.map(show).join('; ')}) and ` +
		`exit ${ccExit} (${cc.map(show).join('; ')}); ` +
		`--max-num-seqs 1 exit 1 (${slow.map(show).join('; ')})`);
}

// The smoke suite for stream parity on random weights: every text case at
// temperature 0 with "parity", ungraded (random answers), the tool cases as chat
// cases that offer their tools.
function paritySuite(file) {
	const s = JSON.parse(fs.readFileSync(file, 'utf8'));
	const image = (c) => c.kind === 'image_order' || JSON.stringify(c.messages || []).includes('"image_url"');
	s.suite = 'vllm-parity';
	s.defaults = { max_tokens: 16, ignore_eos: true, temperature: 0, parity: true };
	s.cases = s.cases.filter((c) => !image(c)).map((c) => {
		const o = { id: c.id, kind: c.kind === 'tool_call' ? 'chat' : c.kind, messages: c.messages };
		if (c.tools) o.tools = c.tools;
		return o;
	});
	console.log(JSON.stringify(s));
}

// Every attempt asked twice agreed: passed, its non-streamed body kept.
function parity(run) {
	const rs = records(run);
	need(rs.length > 0, `${run}: no records`);
	for (const r of rs) {
		need(r.verdict === 'pass', `${run}: ${r.case}: ${brief(r)} ${r.grade.reasons.join('; ')}`);
		const whole = path.join(run, r.raw.replace(/\.sse$/, '-whole.json'));
		need(fs.existsSync(whole) && JSON.parse(fs.readFileSync(whole, 'utf8')).object === 'chat.completion',
			`${run}: ${r.case}: no non-streamed answer at ${whole}`);
	}
	console.log(`${path.basename(run)}: ${rs.length} attempts, streamed and not streamed alike`);
}

function boundarySuite(fit, max) {
	const c = (n) => ({ id: `recall-${n}`, kind: 'recall', recall: { tokens: n, depths: [50], seeds: [1] } });
	console.log(JSON.stringify({ suite: 'vllm-boundary', defaults: { max_tokens: max, ignore_eos: true,
		temperature: 0 }, cases: [c(fit), c(fit + 1)] }));
}

function longSuite() {
	console.log(JSON.stringify({ suite: 'vllm-killed', cases: [{ id: 'long', max_tokens: 3000,
		ignore_eos: true, messages: [{ role: 'user', content: 'Count to a million.' }] }] }));
}

function chatBody(prompt, model, max) {
	const messages = JSON.parse(fs.readFileSync(prompt, 'utf8'));
	console.log(JSON.stringify({ model, messages: messages.messages || messages, max_tokens: max }));
}

// Waits until the server is streaming an answer: its num_requests_running
// gauge is 1 or more, or its log has, past byte `from`, the access line of a
// completion answered 200 (uvicorn writes it when the response starts, so a
// streamed answer is under way). Either one: in one run the gauge read 0 at
// every poll for the last seconds of a 3,000-token stream that the server's
// own log counted as running.
function waitRunning(url, sec, log, from) {
	const until = Date.now() + sec * 1000;
	const streaming = () => {
		if (!log) return false;
		const fd = fs.openSync(log, 'r');
		try {
			const n = fs.fstatSync(fd).size - Number(from);
			if (n <= 0) return false;
			const b = Buffer.alloc(n);
			fs.readSync(fd, b, 0, n, Number(from));
			return /"POST \/v1\/(chat\/)?completions HTTP\/1\.1" 200/.test(b.toString('latin1'));
		} finally {
			fs.closeSync(fd);
		}
	};
	const poll = () => http.get(url + '/metrics', (res) => {
		let body = '';
		res.on('data', (b) => { body += b; });
		res.on('end', () => {
			const m = /^vllm:num_requests_running\{[^}]*\} ([0-9.e+]+)/m.exec(body);
			if (!(m && Number(m[1]) >= 1)) retry();
		});
	}).on('error', retry);
	const retry = () => {
		if (streaming()) return;
		if (Date.now() > until) {
			process.stderr.write(`FAIL: no request running on ${url} after ${sec} s\n`);
			process.exit(1);
		}
		setTimeout(poll, 100);
	};
	poll();
}

// Every load cell's server view holds vLLM's speculative decoding counters.
function spec(run, k) {
	const s = JSON.parse(fs.readFileSync(path.join(run, 'summary.json'), 'utf8'));
	const cells = (s.load && s.load.cells) || [];
	need(cells.length > 0, `${run}: no load cells`);
	for (const c of cells) {
		const v = c.server || {};
		need(v.spec_drafts > 0 && v.spec_draft_tokens >= v.spec_drafts && v.spec_accept_rate >= 0 &&
			v.spec_accept_rate <= 1 && v.spec_accept_length >= 1 && v.spec_accept_length <= k + 1 &&
			Array.isArray(v.spec_accept_by_pos) && v.spec_accept_by_pos.length === k,
		`${run}: ${c.case}/c${c.concurrency}: no speculative decoding view: ${JSON.stringify(v)}`);
		console.log(`${path.basename(run)} c${c.concurrency}: ${v.spec_drafts} drafts, acceptance ` +
			`${v.spec_accept_rate.toFixed(3)}, ${v.spec_accept_length.toFixed(2)} tokens a step, by position ` +
			v.spec_accept_by_pos.map((x) => x.toFixed(2)).join(' '));
	}
}

const cmds = { audit, 'own-template': ownTemplate, cache, load, killed, bos, versions,
	spec: (run, k) => spec(run, Number(k)), parity, 'parity-suite': paritySuite,
	served, refused, 'near-suite': nearSuite, 'context-cut': contextCut,
	boundary: (run, fit) => boundary(run, Number(fit)), 'smoke-suite': smokeSuite,
	graded: gradedPass, planted, 'graded-suite': gradedSuite, cutover,
	'boundary-suite': (fit, max) => boundarySuite(Number(fit), Number(max)), 'long-suite': longSuite,
	'chat-body': (p, m, max) => chatBody(p, m, Number(max)), 'wait-running': (u, s, log, from) => waitRunning(u, Number(s), log, from) };
const [cmd, ...args] = process.argv.slice(2);
try {
	if (!cmds[cmd]) throw new Error(`unknown check '${cmd}'`);
	cmds[cmd](...args);
} catch (e) {
	process.stderr.write(`FAIL: ${e.message}\n`);
	process.exit(1);
}
