#!/bin/sh
# End to end, stream parity ("parity": true, temperature 0): each attempt asks its
# round-1 request again with stream: false, checks that answer like a stream, and
# compares content, reasoning, tool calls, finish_reason and usage. Against the
# reference server in both dialects the twins agree and every case passes (a tool case
# still goes on to its round 2; blank content beside the calls of a model that
# thinks first, streamed by vLLM only, is no difference); parity-drift (a tool argument or the content changed
# when not streamed) fails each case with the difference named; stream-only (stream:
# false refused) fails each case naming the refusal, never a silent pass. A parity
# case without temperature 0, or of a recall kind, is refused when read.
set -eu
. "$TESTS/lib/cli.sh"
cat >"$tmp/suite.json" <<'JSON'
{"suite": "parity", "defaults": {"max_tokens": 512, "temperature": 0, "parity": true},
 "cases": [
  {"id": "weather", "kind": "tool_call",
   "messages": [{"role": "user", "content": "What is the weather in Nairobi right now? Use celsius. Tell me the temperature and the report id."}],
   "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Current weather reported by a city's main weather station.",
     "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name in English, e.g. Lisbon"},
       "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city", "unit"]}}}],
   "expect": {"tool_call": {"name": "get_weather", "arguments": {"city": "Nairobi", "unit": "celsius"}},
     "tool_result": "{\"city\":\"Nairobi\",\"temperature\":15.3,\"report_id\":\"WX-TF8AVZ\"}", "final_contains": ["WX-TF8AVZ"]}},
  {"id": "arith", "kind": "chat",
   "messages": [{"role": "user", "content": "Compute 19 * 23. Reply with only a JSON object {\"answer\": <integer>}."}],
   "expect": {"json": {"answer": 437}}},
  {"id": "think", "kind": "chat", "chat_template_kwargs": {"thinking": true},
   "messages": [{"role": "user", "content": "Compute 6 * 7. Reply with only a JSON object {\"answer\": <integer>}."}],
   "expect": {"json": {"answer": 42}}}
 ]}
JSON
# why RUN EXPR WHAT [ARG]: EXPR over `recs` and `why(ID)` (a case's reasons, joined)
why() {
	node -e '
const fs = require("fs"), [dir, expr, what] = process.argv.slice(1);
const recs = fs.readFileSync(dir + "/results.jsonl", "utf8").trim().split("\n").map(JSON.parse);
const why = id => recs.find(r => r.case === id).grade.reasons.join(" | ");
if (!eval(expr)) { console.log("FAIL " + what + ": " + recs.map(r => r.case + " " + r.verdict + ": " + why(r.case)).join("; ")); process.exit(1); }' "$1" "$2" "$3"
}
run() { # run OUT MODEL WANT
	rc=0
	"$NEEDLE" run "$tmp/suite.json" --base-url "$REF_URL" --model "$2" --out "$tmp/$1" >"$tmp/$1.out" 2>&1 || rc=$?
	[ "$rc" = "$3" ] || { echo "$1: exit $rc, expected $3"; cat "$tmp/$1.out"; exit 1; }
}
for dialect in vllm sglang; do
	refserver_start --dialect "$dialect" --log "$tmp/$dialect.log"
	run "good-$dialect" ref-good 0
	refserver_stop
	why "$tmp/good-$dialect" 'recs.length === 3 && recs.every(r => r.verdict === "pass")' "$dialect: the twins agree"
	# each case was asked streamed and not: round 1 twice, the tool case's round 2 once
	node -e '
const fs = require("fs"), log = fs.readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse)
	.filter(r => r.path === "/v1/chat/completions");
const whole = log.filter(r => r.stream === false).length, streamed = log.filter(r => r.stream === true).length;
if (whole !== 3 || streamed !== 4) { console.log("FAIL " + streamed + " streamed and " + whole + " whole requests"); process.exit(1); }' "$tmp/$dialect.log"
	[ -s "$tmp/good-$dialect/raw/arith-r1-whole.json" ] || { ls "$tmp/good-$dialect/raw"; echo "no raw body of the twin"; exit 1; }
	# a model that thinks before its call: vLLM streams the blank line between the
	# reasoning and the call as content and answers content null without streaming,
	# which is no difference
	refserver_start --dialect "$dialect"
	run "think-$dialect" ref-good:reasoning=1 0
	refserver_stop
	why "$tmp/think-$dialect" 'recs.every(r => r.verdict === "pass") &&
		(process.argv[4] !== "vllm" || recs.find(r => r.case === "weather").content === "\n\n")' \
		"$dialect: blank content beside tool calls" "$dialect"
done
refserver_start
# the record is the streamed request's: the same hash as without parity
node -e '
const fs = require("fs"), s = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
s.defaults.parity = false; fs.writeFileSync(process.argv[2], JSON.stringify(s));' "$tmp/suite.json" "$tmp/plain.json"
"$NEEDLE" run "$tmp/plain.json" --base-url "$REF_URL" --model ref-good --out "$tmp/plain" >/dev/null 2>&1
node -e '
const fs = require("fs"), rec = (d) => fs.readFileSync(d + "/results.jsonl", "utf8").trim().split("\n").map(JSON.parse)
	.find((r) => r.case === "arith");
const a = rec(process.argv[1]), b = rec(process.argv[2]);
if (a.request_sha256 !== b.request_sha256 || a.raw !== b.raw) { console.log("FAIL the record does not hold the streamed request"); process.exit(1); }' \
	"$tmp/good-vllm" "$tmp/plain"
run drift ref-parity-drift 1
why "$tmp/drift" '
recs.every(r => r.verdict === "fail") &&
why("weather").includes("parity: the arguments of tool call 0 (\x27get_weather\x27) differ") && why("weather").includes("Nairobi (whole)") &&
why("arith").includes("parity: the content differs (streamed 15 bytes, non-streamed 16; first difference at byte 15)")' 'parity-drift: each difference named'
run only ref-stream-only 1
why "$tmp/only" 'recs.every(r => r.verdict === "fail" && /^parity: the non-streamed answer failed http_status: .*only streams/.test(why(r.case)))' \
	'stream-only: the refusal named'
refserver_stop
node -e '
const fs = require("fs"), s = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
s.defaults.temperature = 1; fs.writeFileSync(process.argv[2], JSON.stringify(s));' "$tmp/suite.json" "$tmp/warm.json"
check_exit 2 "'parity' compares two answers to one request: it needs \"temperature\": 0" \
	"$NEEDLE" run "$tmp/warm.json" --base-url http://127.0.0.1:9 --out "$tmp/w"
echo "parity: twins agree in both dialects; a drift and a refusal fail by name; temperature > 0 refused"
