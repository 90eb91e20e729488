// The conformance scenarios: exact server behaviours (bytes, splits, delays) and what
// `needle run` must record for each, for the one-case suite in run.js (case "arith":
// "Compute 19 * 23 ...", expect {"answer": 437}, max_tokens 64).
//
// Frame shapes follow docs/protocol.md "Chat streams": vLLM (role chunk, finish_reason on the last
// delta, usage chunk with choices [], exclude_unset deltas), SGLang §1.3/§1.4 (always
// present reasoning_content, a separate finish chunk with matched_stop, per-chunk created,
// usage with reasoning_tokens), errors §1.9/§1.10, reasoning field names §1.5.
//
// Each scenario: {name, dialect, response, models?, expect}. expect:
//   exit        needle's exit code (a number, or an array of allowed codes)
//   verdict     "pass" | "fail" | null (no record expected)
//   failures    codes that must all be in transport.failures
//   optional    codes that may also be there (anything else is an error)
//   content     exact assembled content (null: none/empty)
//   reasoning   exact assembled reasoning (null: none/empty)
//   grade       true|false: grade.ok
//   http        http_status
//   finish      finish_reason
//   usage       {prompt_tokens, completion_tokens, total_tokens} to match
//   timing(t)   returns a list of complaints about the timing object
//   maxWallMs   needle's wall time bound
//   rawPrefix   raw/ may hold only the start of the body (needle stopped at a cap)
'use strict';

const ID = 'chatcmpl-5f1c0a7e9b2d4c3a8e6f1b0d2c4a6e8f';
const SGID = '9a8b7c6d5e4f30211203f4e5d6c7b8a9';
const CREATED = 1790000000;
const ANSWER = '{"answer": 437}';
const PIECES = ['{"', 'answer', '":', ' ', '437', '}'];
const REASONING = 'The user wants 19 × 23. 19 × 20 = 380 and 19 × 3 = 57, so 380 + 57 = 437.';
const REASONING_PIECES = ['The user wants 19 ', '× 23. ', '19 × 20 = 380', ' and 19 × 3 = 57,', ' so 380 + 57 = 437.'];
const USAGE = { prompt_tokens: 23, total_tokens: 30, completion_tokens: 7 };

const SSE_HEADERS_VLLM = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };
const SSE_HEADERS_SGLANG = { 'content-type': 'text/event-stream' };

// ---- vLLM frames (PROTOCOL §1.2, §1.4)
function vhead(model) {
	return { id: ID, object: 'chat.completion.chunk', created: CREATED, model };
}
function vrole(model, extra) {
	return Object.assign(vhead(model), { choices: [{ index: 0, delta: Object.assign({ role: 'assistant', content: '' }, extra || {}), logprobs: null, finish_reason: null }] });
}
function vdelta(model, delta, finish) {
	const c = { index: 0, delta, logprobs: null, finish_reason: finish || null };
	if (finish) c.stop_reason = null;
	return Object.assign(vhead(model), { choices: [c] });
}
function vusage(model, usage) {
	return Object.assign(vhead(model), { choices: [], usage: usage || USAGE });
}
// A complete, healthy vLLM stream as a list of JSON objects (plus '[DONE]').
function vllmEvents(model, opts) {
	const o = opts || {};
	const ev = [vrole(model, o.roleExtra)];
	if (o.reasoning) {
		for (const r of REASONING_PIECES) ev.push(vdelta(model, o.reasoningDelta(r)));
	}
	PIECES.forEach((p, i) => {
		const d = Object.assign({ content: p }, o.contentExtra || {});
		ev.push(vdelta(model, d, i === PIECES.length - 1 ? 'stop' : null));
	});
	if (o.usage !== false) ev.push(vusage(model, o.usage));
	if (o.done !== false) ev.push('[DONE]');
	return ev;
}

// ---- SGLang frames (PROTOCOL §1.3, §1.4)
function shead(model, created) {
	return { id: SGID, object: 'chat.completion.chunk', created: created || CREATED, model };
}
function schoice(delta, finish, matched) {
	return { index: 0, delta, logprobs: null, finish_reason: finish || null, matched_stop: matched === undefined ? null : matched };
}
function sglangEvents(model, opts) {
	const o = opts || {};
	let t = CREATED;
	const ev = [Object.assign(shead(model, t), { choices: [schoice({ role: 'assistant', content: '', reasoning_content: null })] })];
	if (o.reasoning) {
		for (const r of REASONING_PIECES) ev.push(Object.assign(shead(model, t), { choices: [schoice({ reasoning_content: r })] }));
	}
	for (const p of PIECES) ev.push(Object.assign(shead(model, ++t), { choices: [schoice({ reasoning_content: null, content: p })] }));
	ev.push(Object.assign(shead(model, t), { choices: [schoice({ reasoning_content: null }, 'stop', 1)] }));
	const u = Object.assign({}, o.usage || USAGE, { prompt_tokens_details: null, reasoning_tokens: o.reasoning ? 30 : 0 });
	if (o.reasoning && !o.usage) { u.completion_tokens += 30; u.total_tokens += 30; }
	if (o.usage !== false) ev.push(Object.assign(shead(model, t), { choices: [], usage: u }));
	ev.push('[DONE]');
	return ev;
}

// Serialises events: each is "data: " + JSON + "\n\n" unless told otherwise.
function sse(events, opts) {
	const o = Object.assign({ prefix: 'data: ', eol: '\n' }, opts || {});
	return events.map((e) => (typeof e === 'string' && e.startsWith(':') ? e + o.eol + o.eol
		: o.prefix + (typeof e === 'string' ? e : JSON.stringify(e)) + o.eol + o.eol));
}
// Interleaves a delay between writes.
function spaced(parts, ms) {
	const out = [];
	parts.forEach((p, i) => { if (i) out.push({ delay: ms }); out.push(p); });
	return out;
}

function stream(dialect, body, extra) {
	return Object.assign({ status: 200, headers: dialect === 'sglang' ? SSE_HEADERS_SGLANG : SSE_HEADERS_VLLM, body }, extra || {});
}

function jsonBody(status, obj) {
	return { status, headers: { 'content-type': 'application/json' }, length: true, body: [JSON.stringify(obj)] };
}

const NGINX_502 = '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.24.0</center>\r\n</body>\r\n</html>\r\n';
const UVICORN_500 = 'Internal Server Error';
const WELCOME = '<!DOCTYPE html>\n<html>\n<head><title>Welcome to nginx!</title></head>\n<body><h1>Welcome to nginx!</h1></body>\n</html>\n';

// ---- timing checks
function within(t, field, lo, hi) {
	const v = t && t[field];
	if (typeof v !== 'number') return [`timing.${field} missing (${JSON.stringify(v)})`];
	if (lo !== null && v < lo) return [`timing.${field} = ${v} < ${lo}`];
	if (hi !== null && v > hi) return [`timing.${field} = ${v} > ${hi}`];
	return [];
}
function ordered(t) {
	const c = [];
	const f = t || {};
	for (const k of ['first_byte_ms', 'ttft_ms', 'ttfc_ms', 'e2e_ms']) {
		if (typeof f[k] !== 'number' || f[k] < 0) c.push(`timing.${k} not a non-negative number`);
	}
	if (!c.length) {
		if (f.first_byte_ms > f.ttft_ms + 1) c.push('first_byte_ms > ttft_ms');
		if (f.ttft_ms > f.ttfc_ms + 1) c.push('ttft_ms > ttfc_ms');
		if (f.ttfc_ms > f.e2e_ms + 1) c.push('ttfc_ms > e2e_ms');
	}
	return c;
}
const healthyTiming = (t) => ordered(t);

const PASS = { exit: 0, verdict: 'pass', failures: [], content: ANSWER, reasoning: null, grade: true, http: 200,
	finish: 'stop', usage: USAGE, timing: healthyTiming };
function pass(extra) { return Object.assign({}, PASS, extra || {}); }
function transportFail(codes, extra) {
	return Object.assign({ exit: 1, verdict: 'fail', failures: codes, optional: [] }, extra || {});
}

const vr = (r) => ({ reasoning: r });
const vrc = (r) => ({ reasoning_content: r });
const vboth = (r) => ({ reasoning: r, reasoning_content: r });

const scenarios = [
	// ------------------------------------------------------------ dialects
	{ name: 'vllm-basic', desc: 'vLLM, one write per frame, 25 ms apart',
		response: stream('vllm', spaced(sse(vllmEvents('vllm-basic')), 25)),
		expect: pass({ timing: (t) => ordered(t).concat(within(t, 'tpot_ms', 1, 200), within(t, 'e2e_ms', 150, null)) }) },
	{ name: 'vllm-one-write', desc: 'vLLM, the whole stream in one write',
		response: stream('vllm', [sse(vllmEvents('vllm-one-write')).join('')]), expect: pass() },
	{ name: 'vllm-finish-empty-delta', desc: 'vLLM: finish_reason on a chunk with delta {} and extras (stop_reason, metrics, system_fingerprint)',
		response: stream('vllm', sse([vrole('m')].concat(PIECES.map((p) => vdelta('m', { content: p })),
			[Object.assign(vdelta('m', {}, 'stop'), { metrics: { ttft: 0.01 } }),
				Object.assign(vusage('m'), { system_fingerprint: 'fp_ref', kv_transfer_params: null }), '[DONE]']))),
		expect: pass() },
	{ name: 'vllm-continuous-usage', desc: 'vLLM continuous_usage_stats: cumulative usage on every chunk',
		response: stream('vllm', sse((() => {
			const ev = [Object.assign(vrole('m'), { usage: { prompt_tokens: 23, total_tokens: 23, completion_tokens: 0 } })];
			PIECES.forEach((p, i) => {
				const n = i === PIECES.length - 1 ? i + 2 : i + 1;
				ev.push(Object.assign(vdelta('m', { content: p }, i === PIECES.length - 1 ? 'stop' : null),
					{ usage: { prompt_tokens: 23, total_tokens: 23 + n, completion_tokens: n } }));
			});
			return ev.concat([vusage('m'), '[DONE]']);
		})())),
		expect: pass() },
	{ name: 'sglang-basic', dialect: 'sglang', desc: 'SGLang: null reasoning_content, separate finish chunk, usage with reasoning_tokens',
		response: stream('sglang', spaced(sse(sglangEvents('sglang-basic')), 10)), expect: pass() },
	{ name: 'sglang-pydantic-nulls', dialect: 'sglang', desc: 'SGLang pydantic path: "usage": null and tool_calls null on every chunk',
		response: stream('sglang', sse(sglangEvents('m').map((e) => {
			if (typeof e === 'string' || e.usage) return e;
			const c = Object.assign({}, e, { usage: null });
			c.choices = e.choices.map((ch) => Object.assign({}, ch, { delta: Object.assign({ role: null, content: null, tool_calls: null }, ch.delta) }));
			return c;
		}))), expect: pass() },

	// ------------------------------------------------------------ reasoning fields
	{ name: 'vllm-reasoning', desc: 'vLLM >= 0.11.2 "reasoning" field, content 800 ms after the reasoning',
		response: stream('vllm', (() => {
			const ev = sse(vllmEvents('m', { reasoning: true, reasoningDelta: vr, usage: { prompt_tokens: 23, total_tokens: 60, completion_tokens: 37 } }));
			return ev.slice(0, 6).concat([{ delay: 800 }], ev.slice(6));
		})()),
		expect: pass({ reasoning: REASONING, usage: { prompt_tokens: 23, total_tokens: 60, completion_tokens: 37 },
			timing: (t) => ordered(t).concat(within(t, 'ttft_ms', 0, 750), within(t, 'ttfc_ms', 790, null),
				t && t.ttfc_ms - t.ttft_ms >= 600 ? [] : ['ttfc_ms - ttft_ms < 600']) }) },
	{ name: 'vllm-legacy-reasoning-content', desc: 'vLLM <= 0.11.0: reasoning_content',
		response: stream('vllm', sse(vllmEvents('m', { reasoning: true, reasoningDelta: vrc }))),
		expect: pass({ reasoning: REASONING }) },
	{ name: 'vllm-both-fields', desc: 'transitional vLLM: reasoning and reasoning_content both carry the text; content deltas carry reasoning_content null',
		response: stream('vllm', sse(vllmEvents('m', { reasoning: true, reasoningDelta: vboth, roleExtra: { reasoning_content: null }, contentExtra: { reasoning_content: null } }))),
		expect: pass({ reasoning: REASONING }) },
	{ name: 'sglang-reasoning', dialect: 'sglang', desc: 'SGLang reasoning_content chunks, then content',
		response: stream('sglang', sse(sglangEvents('m', { reasoning: true }))),
		expect: pass({ reasoning: REASONING, usage: { prompt_tokens: 23, total_tokens: 60, completion_tokens: 37 } }) },

	// ------------------------------------------------------------ SSE framing
	{ name: 'sse-crlf', desc: 'CRLF line ends',
		response: stream('vllm', sse(vllmEvents('m'), { eol: '\r\n' })), expect: pass() },
	{ name: 'sse-cr', desc: 'bare CR line ends',
		response: stream('vllm', sse(vllmEvents('m'), { eol: '\r' })), expect: pass() },
	{ name: 'sse-mixed-eol', desc: 'LF, CRLF and CR mixed in one stream, split between CR and LF',
		response: stream('vllm', (() => {
			const ev = vllmEvents('m');
			const eols = ['\n', '\r\n', '\r'];
			const out = [];
			ev.forEach((e, i) => {
				const eol = eols[i % 3];
				const s = 'data: ' + (typeof e === 'string' ? e : JSON.stringify(e));
				if (eol === '\r\n') out.push(s + '\r', { delay: 5 }, '\n\r\n');
				else out.push(s + eol + eol);
			});
			return out;
		})()), expect: pass() },
	{ name: 'sse-no-space', desc: '"data:" without the space',
		response: stream('vllm', sse(vllmEvents('m'), { prefix: 'data:' })), expect: pass() },
	{ name: 'sse-comments-fields', desc: 'comment lines, event/id/retry and unknown fields',
		response: stream('vllm', vllmEvents('m').map((e, i) => `: comment ${i}\nevent: message\nid: ${i}\nretry: 3000\nfoo: bar\ndata: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`)),
		expect: pass() },
	{ name: 'sse-keepalive', desc: '": keep-alive" comments for 1.2 s before the first token',
		response: stream('vllm', (() => {
			const ev = sse(vllmEvents('m'));
			return [ev[0], { delay: 300 }, ': keep-alive\n\n', { delay: 300 }, ': keep-alive\n\n', { delay: 300 },
				': keep-alive\n\n', { delay: 300 }].concat(ev.slice(1));
		})()),
		expect: pass({ timing: (t) => ordered(t).concat(within(t, 'first_byte_ms', 0, 900), within(t, 'ttft_ms', 1190, null)) }) },
	{ name: 'sse-multiline-data', desc: 'each JSON payload split over two data: lines',
		response: stream('vllm', vllmEvents('m').map((e) => {
			if (typeof e === 'string') return `data: ${e}\n\n`;
			const j = JSON.stringify(e);
			const k = j.indexOf(',"choices"') + 1;
			return `data: ${j.slice(0, k)}\ndata: ${j.slice(k)}\n\n`;
		})), expect: pass() },
	{ name: 'sse-bom', desc: 'a UTF-8 BOM before the first field',
		response: stream('vllm', ['\uFEFF'].concat(sse(vllmEvents('m')))), expect: pass() },
	{ name: 'sse-one-byte-writes', desc: 'every byte in its own write (reasoning with multi-byte characters)',
		response: stream('vllm', [{ bytewise: true }].concat(sse(vllmEvents('m', { reasoning: true, reasoningDelta: vr })))),
		expect: pass({ reasoning: REASONING }) },
	{ name: 'sse-utf8-split', desc: 'multi-byte UTF-8 characters split across writes 40 ms apart',
		response: stream('vllm', (() => {
			const whole = Buffer.from(sse(vllmEvents('m', { reasoning: true, reasoningDelta: vr })).join(''), 'utf8');
			const out = [];
			let last = 0;
			for (let i = 0; i < whole.length; i++) {
				if (whole[i] === 0xC3 || whole[i] === 0xE2 || whole[i] === 0xC2) {
					out.push(whole.subarray(last, i + 1), { delay: 40 });
					last = i + 1;
				}
			}
			out.push(whole.subarray(last));
			return out;
		})()),
		expect: pass({ reasoning: REASONING }) },

	// ------------------------------------------------------------ broken streams
	{ name: 'empty-200', desc: 'HTTP 200, [DONE] and usage (128 tokens) but no text (a failure: docs/cutover.md "Where the rule comes from")',
		response: stream('vllm', sse([vrole('m')].concat(Array.from({ length: 5 }, () => vdelta('m', { content: '' })),
			[vdelta('m', { content: '' }, 'stop'), vusage('m', { prompt_tokens: 23, total_tokens: 151, completion_tokens: 128 }), '[DONE]']))),
		expect: transportFail(['empty_output'], { content: null, reasoning: null, http: 200, grade: false }) },
	{ name: 'reasoning-only', desc: 'the whole budget spent on reasoning: finish_reason length, no content',
		response: stream('vllm', sse([vrole('m')].concat(REASONING_PIECES.map((r, i) => vdelta('m', { reasoning: r }, i === 4 ? 'length' : null)),
			[vusage('m', { prompt_tokens: 23, total_tokens: 87, completion_tokens: 64 }), '[DONE]']))),
		expect: transportFail(['reasoning_only'], { optional: ['empty_output'], content: null, reasoning: REASONING, finish: 'length', grade: false }) },
	{ name: 'no-done', desc: 'everything but data: [DONE]; the body ends cleanly',
		response: stream('vllm', sse(vllmEvents('m', { done: false }))),
		expect: transportFail(['no_done'], { content: ANSWER }) },
	{ name: 'vllm-error-frame', desc: 'vLLM >= 0.10.1 error frame mid-stream, then [DONE]',
		response: stream('vllm', sse([vrole('m'), vdelta('m', { content: '{"' }), vdelta('m', { content: 'answer' }),
			{ error: { message: 'CUDA error: an illegal memory access was encountered', type: 'InternalServerError', param: null, code: 500 } }, '[DONE]'])),
		expect: transportFail(['sse_error_frame'], { optional: ['missing_usage'], grade: false }) },
	{ name: 'vllm-error-frame-legacy', desc: 'vLLM < 0.10.1: flat ErrorResponse wrapped in "error", before any token; a context-length text is context_overflow, as its 400 is',
		response: stream('vllm', sse([vrole('m'),
			{ error: { object: 'error', message: 'The decoder prompt is longer than the maximum model length', type: 'BadRequestError', param: null, code: 400 } }, '[DONE]'])),
		expect: transportFail(['context_overflow'], { optional: ['missing_usage', 'empty_output'], content: null, grade: false }) },
	{ name: 'sglang-error-frame', dialect: 'sglang', desc: 'SGLang abort with status: type SERVICE_UNAVAILABLE, then usage and [DONE]',
		response: stream('sglang', sse([sglangEvents('m')[0], sglangEvents('m')[1],
			{ error: { object: 'error', message: 'Request aborted: KV cache pool is full', type: 'SERVICE_UNAVAILABLE', param: null, code: 503 } },
			Object.assign(shead('m'), { choices: [], usage: { prompt_tokens: 23, total_tokens: 24, completion_tokens: 1, prompt_tokens_details: null, reasoning_tokens: 0 } }),
			'[DONE]'])),
		expect: transportFail(['sse_error_frame'], { grade: false }) },
	{ name: 'truncated-json-frame', desc: 'one data: line holds truncated JSON; the rest is fine',
		response: stream('vllm', (() => {
			const ev = sse(vllmEvents('m'));
			return ev.slice(0, 3).concat(['data: {"id":"' + ID + '","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"x\n\n'], ev.slice(3));
		})()),
		expect: transportFail(['malformed_sse'], { optional: [], grade: null }) },
	{ name: 'truncated-stream', desc: 'the body ends in the middle of a JSON frame (clean end of body)',
		response: stream('vllm', sse(vllmEvents('m')).slice(0, 4).concat(['data: {"id":"' + ID + '","object":"chat.comp'])),
		expect: transportFail(['no_done'], { optional: ['malformed_sse', 'missing_usage'], grade: false }) },
	{ name: 'disconnect', desc: 'the socket is dropped mid-stream, without the final chunk',
		response: stream('vllm', sse(vllmEvents('m')).slice(0, 4), { end: 'destroy' }),
		expect: transportFail(['no_done'], { optional: ['malformed_sse', 'missing_usage'], grade: false }) },
	{ name: 'missing-usage', desc: 'include_usage asked for, no usage chunk sent',
		response: stream('vllm', sse(vllmEvents('m', { usage: false }))),
		expect: transportFail(['missing_usage'], { content: ANSWER, grade: true }) },
	{ name: 'inconsistent-usage', desc: 'usage.total_tokens != prompt_tokens + completion_tokens',
		response: stream('vllm', sse(vllmEvents('m', { usage: { prompt_tokens: 23, total_tokens: 31, completion_tokens: 7 } }))),
		expect: transportFail(['bad_usage'], { content: ANSWER, grade: true }) },
	{ name: 'sglang-inconsistent-usage', dialect: 'sglang', desc: 'SGLang usage chunk with total_tokens smaller than the sum',
		response: stream('sglang', sse(sglangEvents('m', { usage: { prompt_tokens: 23, total_tokens: 23, completion_tokens: 7 } }))),
		expect: transportFail(['bad_usage'], { content: ANSWER, grade: true }) },

	// ------------------------------------------------------------ HTTP errors
	{ name: 'http-400-context', desc: 'vLLM 400, nested error (context length)',
		response: jsonBody(400, { error: { message: "This model's maximum context length is 163840 tokens. However, you requested 64 output tokens and your prompt contains at least 163800 input tokens, for a total of at least 163864 tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=163800)", type: 'BadRequestError', param: 'input_tokens', code: 400 } }),
		expect: transportFail(['context_overflow'], { http: 400, content: null, grade: false }) },
	{ name: 'http-400-flat', dialect: 'sglang', desc: 'SGLang 400, flat error object',
		response: jsonBody(400, { object: 'error', message: 'The input (163900 tokens) is longer than the model\'s context length (163840 tokens).', type: 'BadRequestError', param: null, code: 400 }),
		expect: transportFail(['context_overflow'], { http: 400, content: null, grade: false }) },
	{ name: 'http-400-renderer', desc: 'vLLM renderer TokenizeParams 400 (Python json.dumps spacing)',
		response: { status: 400, headers: { 'content-type': 'application/json' }, length: true,
			body: ['{"error": {"message": "You passed 163841 input tokens and requested 64 output tokens. However, the model\'s context length is only 163840 tokens, resulting in a maximum input length of 163776 tokens. Please reduce the length of the input prompt. (parameter=input_tokens, value=163841)", "type": "BadRequestError", "param": "input_tokens", "code": 400}}'] },
		expect: transportFail(['context_overflow'], { http: 400, content: null, grade: false }) },
	{ name: 'http-400-vllm-legacy', desc: 'vLLM ~0.10 flat 400: \'max_tokens\' ... is too large (with the trailing None)',
		response: jsonBody(400, { object: 'error', message: "'max_tokens' or 'max_completion_tokens' is too large: 64. This model's maximum context length is 163840 tokens and your request has 163800 input tokens (64 > 163840 - 163800). None", type: 'BadRequestError', param: null, code: 400 }),
		expect: transportFail(['context_overflow'], { http: 400, content: null, grade: false }) },
	{ name: 'http-400-sglang-total', dialect: 'sglang', desc: 'SGLang 400: input plus output over the context',
		response: jsonBody(400, { object: 'error', message: "Requested token count exceeds the model's maximum context length of 163840 tokens. You requested a total of 163864 tokens: 163800 tokens from the input messages and 64 tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.", type: 'BadRequestError', param: null, code: 400 }),
		expect: transportFail(['context_overflow'], { http: 400, content: null, grade: false }) },
	{ name: 'http-400-other', desc: 'a 400 that is not about the context stays http_status',
		response: jsonBody(400, { error: { message: 'Messages cannot be empty.', type: 'BadRequestError', param: null, code: 400 } }),
		expect: transportFail(['http_status'], { http: 400, content: null, grade: false }) },
	{ name: 'http-401', desc: 'vLLM --api-key: 401 {"error":"Unauthorized"} on every /v1 path',
		models: jsonBody(401, { error: 'Unauthorized' }),
		response: jsonBody(401, { error: 'Unauthorized' }),
		expect: { exit: 3, verdict: null } },
	{ name: 'http-500-json', desc: 'vLLM 500 InternalServerError JSON',
		response: jsonBody(500, { error: { message: 'EngineCore encountered an issue. See stack trace (above) for the root cause.', type: 'InternalServerError', param: null, code: 500 } }),
		expect: transportFail(['http_status'], { exit: [1, 3], http: 500, content: null, grade: false }) },
	{ name: 'http-500-text', desc: 'uvicorn 500 with a text/plain body',
		response: { status: 500, headers: { 'content-type': 'text/plain; charset=utf-8' }, length: true, body: [UVICORN_500] },
		expect: transportFail(['http_status'], { exit: [1, 3], http: 500, content: null, grade: false }) },
	{ name: 'http-502-html', desc: 'a proxy\'s 502 HTML page',
		response: { status: 502, headers: { 'content-type': 'text/html' }, length: true, body: [NGINX_502] },
		expect: transportFail(['http_status'], { exit: [1, 3], http: 502, content: null, grade: false }) },
	{ name: 'html-200', desc: 'HTTP 200 with an HTML page instead of an event stream',
		response: { status: 200, headers: { 'content-type': 'text/html' }, length: true, body: [WELCOME] },
		expect: transportFail(['malformed_sse'], { optional: ['no_done', 'empty_output', 'missing_usage'], http: 200, content: null, grade: false }) },

	// ------------------------------------------------------------ answers
	{ name: 'answer-wrong', desc: 'a clean stream with the wrong number',
		response: stream('vllm', sse(vllmEvents('m').map((e) => (e.choices && e.choices[0] && e.choices[0].delta && e.choices[0].delta.content === '437'
			? vdelta('m', { content: '438' }) : e)))),
		expect: { exit: 1, verdict: 'fail', failures: [], content: '{"answer": 438}', grade: false, http: 200 } },
	{ name: 'answer-string-type', desc: '"437" as a string where an integer is expected',
		response: stream('vllm', sse([vrole('m'), vdelta('m', { content: '{"answer": "437"}' }, 'stop'), vusage('m'), '[DONE]'])),
		expect: { exit: 1, verdict: 'fail', failures: [], content: '{"answer": "437"}', grade: false } },
	{ name: 'answer-fenced', desc: 'the JSON inside a ```json fence',
		response: stream('vllm', sse([vrole('m'), vdelta('m', { content: '```json\n' }), vdelta('m', { content: ANSWER }), vdelta('m', { content: '\n```' }, 'stop'), vusage('m'), '[DONE]'])),
		expect: { exit: 1, verdict: 'fail', failures: [], content: '```json\n' + ANSWER + '\n```', grade: false } },
	{ name: 'answer-prose', desc: 'the JSON wrapped in prose',
		response: stream('vllm', sse([vrole('m'), vdelta('m', { content: 'Sure! Here is the answer: ' }), vdelta('m', { content: ANSWER }), vdelta('m', { content: ' Hope this helps.' }, 'stop'), vusage('m'), '[DONE]'])),
		expect: { exit: 1, verdict: 'fail', failures: [], content: 'Sure! Here is the answer: ' + ANSWER + ' Hope this helps.', grade: false } },
	{ name: 'answer-extra-key', desc: 'a JSON object with an extra key',
		response: stream('vllm', sse([vrole('m'), vdelta('m', { content: '{"answer": 437, "confidence": 1}' }, 'stop'), vusage('m'), '[DONE]'])),
		expect: { exit: 1, verdict: 'fail', failures: [], content: '{"answer": 437, "confidence": 1}', grade: false } },

	// ------------------------------------------------------------ finish_reason
	{ name: 'vllm-abort', desc: 'vLLM aborts the request (weight reload): finish_reason abort after a full answer',
		response: stream('vllm', sse(vllmEvents('m').map((e) => (e.choices && e.choices[0] && e.choices[0].finish_reason === 'stop'
			? vdelta('m', e.choices[0].delta, 'abort') : e)))),
		expect: transportFail(['aborted'], { content: ANSWER, finish: 'abort', grade: true }) },
	{ name: 'sglang-abort', dialect: 'sglang', desc: 'SGLang graceful abort: a finish chunk with finish_reason abort, usage, [DONE]',
		response: stream('sglang', sse([sglangEvents('m')[0], sglangEvents('m')[1],
			Object.assign(shead('m'), { choices: [schoice({ reasoning_content: null }, 'abort', null)] }),
			Object.assign(shead('m'), { choices: [], usage: { prompt_tokens: 23, total_tokens: 24, completion_tokens: 1, prompt_tokens_details: null, reasoning_tokens: 0 } }),
			'[DONE]'])),
		expect: transportFail(['aborted'], { finish: 'abort', grade: false }) },
	{ name: 'length-cut', desc: 'finish_reason length on a case that is not fixed-length: truncated, even though the answer parsed',
		response: stream('vllm', sse(vllmEvents('m').map((e) => (e.choices && e.choices[0] && e.choices[0].finish_reason === 'stop'
			? vdelta('m', e.choices[0].delta, 'length') : e)))),
		expect: transportFail(['truncated'], { content: ANSWER, finish: 'length', grade: true }) },
	{ name: 'sglang-length', dialect: 'sglang', desc: 'SGLang separate finish chunk with finish_reason length',
		response: stream('sglang', sse(sglangEvents('m').map((e) => (e.choices && e.choices[0] && e.choices[0].finish_reason === 'stop'
			? Object.assign(shead('m'), { choices: [schoice({ reasoning_content: null }, 'length', null)] }) : e)))),
		expect: transportFail(['truncated'], { content: ANSWER, finish: 'length', grade: true }) },
	{ name: 'finish-unknown', desc: 'an unknown finish_reason is recorded and fails',
		response: stream('vllm', sse(vllmEvents('m').map((e) => (e.choices && e.choices[0] && e.choices[0].finish_reason === 'stop'
			? vdelta('m', e.choices[0].delta, 'repetition') : e)))),
		expect: transportFail(['bad_finish_reason'], { content: ANSWER, finish: 'repetition', grade: true }) },

	// ------------------------------------------------------------ bytes the grade must see
	{ name: 'nul-escape-content', desc: 'content with \\u0000 then junk: the whole text is kept and graded',
		response: stream('vllm', sse([vrole('m'), vdelta('m', { content: ANSWER }), vdelta('m', { content: '\u0000 junk' }, 'stop'), vusage('m'), '[DONE]'])),
		expect: { exit: 1, verdict: 'fail', failures: [], content: ANSWER + '\u0000 junk', grade: false, http: 200 } },
	{ name: 'nul-in-reasoning', desc: 'reasoning with a \\u0000 inside is kept whole',
		response: stream('vllm', sse([vrole('m'), vdelta('m', { reasoning: 'a\u0000b' }), vdelta('m', { content: ANSWER }, 'stop'), vusage('m'), '[DONE]'])),
		expect: pass({ reasoning: 'a\u0000b' }) },
	{ name: 'huge-tool-deltas', desc: '3 MB of tool-call deltas, each with a new index: needle\'s cap on tool calls, within the deadline',
		response: stream('vllm', (() => {
			const out = [sse([vrole('m')]).join('')];
			let part = '';
			for (let i = 0; i < 10000; i++) {
				part += 'data: ' + JSON.stringify(vdelta('m', { tool_calls: [{ index: i, id: 'call_' + i, type: 'function', function: { name: 'f', arguments: '{}' } }] })) + '\n\n';
				if (part.length > 65536) { out.push(part); part = ''; }
			}
			out.push(part, sse([vusage('m'), '[DONE]']).join(''));
			return out;
		})()),
		expect: transportFail(['response_too_large'], { grade: false, maxWallMs: 7000, rawPrefix: true }) },
	{ name: 'finish-reason-too-long', desc: 'a 1 KB finish_reason exceeds needle\'s cap: response_too_large, not no_done',
		response: stream('vllm', sse([vrole('m'), vdelta('m', { content: ANSWER }, 'x'.repeat(1000)), vusage('m'), '[DONE]'])),
		expect: transportFail(['response_too_large'], { grade: null, rawPrefix: true }) },

	// ------------------------------------------------------------ time
	{ name: 'slow-first-token', desc: 'role chunk at once, first token after 1.5 s',
		response: stream('vllm', (() => { const ev = sse(vllmEvents('m')); return [ev[0], { delay: 1500 }].concat(ev.slice(1)); })()),
		expect: pass({ timing: (t) => ordered(t).concat(within(t, 'first_byte_ms', 0, 1000), within(t, 'ttft_ms', 1490, 4000),
			t && Math.abs(t.ttfc_ms - t.ttft_ms) <= 5 ? [] : ['ttfc_ms != ttft_ms without reasoning']) }) },
	{ name: 'slow-headers', desc: 'the status line itself comes after 1.2 s',
		response: stream('vllm', sse(vllmEvents('m')), { headerDelay: 1200 }),
		expect: pass({ timing: (t) => ordered(t).concat(within(t, 'first_byte_ms', 1190, 4000)) }) },
	{ name: 'stall', desc: 'two tokens, then silence with the connection open',
		response: stream('vllm', sse(vllmEvents('m')).slice(0, 3).concat([{ stall: true }])),
		expect: transportFail(['timeout'], { optional: ['no_done', 'missing_usage'], grade: false, maxWallMs: 9000,
			timing: (t) => within(t, 'e2e_ms', 900, 7000) }) },
	{ name: 'stall-before-body', desc: 'headers, then nothing at all',
		response: stream('vllm', [{ stall: true }]),
		expect: transportFail(['timeout'], { optional: ['no_done', 'missing_usage', 'empty_output'], content: null, grade: false, maxWallMs: 9000 }) },
];

module.exports = { scenarios, ANSWER, REASONING };
