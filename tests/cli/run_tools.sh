#!/bin/sh
# Tool-call round trip against a scripted server: the streamed call is graded
# (name and arguments, any order for parallel calls), the tool result goes back
# with the call ids as received, and the final answer must contain the
# final_contains strings; a wrong call stops before round 2; no_tool_call.
# Also: the only served model is picked without --model, --case and --repeat.
set -eu
. "$TESTS/lib/cli.sh"
fake_server "$TESTS/cli/run_tools.js"
url=$FAKE_URL

cat > "$tmp/suite.json" <<'JSON'
{"suite":"tools","defaults":{"kind":"tool_call","max_tokens":64,
  "tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"},"unit":{"type":"string"}}}}}]},
 "cases":[
  {"id":"one","messages":[{"role":"user","content":"What is the weather in Paris?"}],
   "expect":{"tool_call":{"name":"get_weather","arguments":{"city":"Paris","unit":"celsius"}},
             "tool_result":"{\"temp\":21,\"report\":\"WX-7781\"}","final_contains":["WX-7781"]}},
  {"id":"wrong-args","messages":[{"role":"user","content":"What is the weather in Rome?"}],
   "expect":{"tool_call":{"name":"get_weather","arguments":{"city":"Rome","unit":"celsius"}},
             "tool_result":"{\"report\":\"WX-1\"}","final_contains":["WX-1"]}},
  {"id":"parallel","messages":[{"role":"user","content":"Weather in Paris and Oslo, both please"}],
   "expect":{"tool_calls":[{"name":"get_weather","arguments":{"city":"Paris","unit":"celsius"},"tool_result":"P-REPORT-1"},
                           {"name":"get_weather","arguments":{"city":"Oslo","unit":"celsius"},"tool_result":"O-REPORT-2"}],
             "final_contains":["P-REPORT-1","O-REPORT-2"]}},
  {"id":"none-ok","messages":[{"role":"user","content":"What is 6 times 7?"}],
   "expect":{"no_tool_call":true,"json":{"answer":42}}},
  {"id":"none-called","messages":[{"role":"user","content":"Is it weather or arithmetic? 6 times 7"}],
   "expect":{"no_tool_call":true,"json":{"answer":42}}}]}
JSON

st=0
"$NEEDLE" run "$tmp/suite.json" --base-url "$url" --out "$tmp/r" --timeout 10 2> "$tmp/r.err" || st=$?
[ "$st" = 1 ] || { cat "$tmp/r.err"; fail "exit $st"; }
node -e '
const rs = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
const by = Object.fromEntries(rs.map((r) => [r.case, r]));
const want = { one: "pass", "wrong-args": "fail", parallel: "pass", "none-ok": "pass", "none-called": "fail" };
for (const [k, v] of Object.entries(want))
	if (!by[k] || by[k].verdict !== v) throw new Error(k + ": " + JSON.stringify(by[k] && by[k].grade));
if (by.one.model !== "scripted") throw new Error("model not picked");
if (!by.one.content.includes("WX-7781") || by.one.rounds.length !== 1) throw new Error("round 2 content");
if (by.one.tool_calls[0].function.arguments !== "{\"city\":\"Paris\",\"unit\":\"celsius\"}") throw new Error("arguments merged");
if (by.one.rounds[0].finish_reason !== "tool_calls") throw new Error("round 1 finish");
if (!by["wrong-args"].grade.reasons.some((s) => s.includes("arguments.city") && s.includes("Rome")))
	throw new Error("wrong-args reason " + by["wrong-args"].grade.reasons);
if (by["wrong-args"].rounds) throw new Error("round 2 sent after a wrong call");
if (!by.parallel.content.includes("O-REPORT-2 | P-REPORT-1")) throw new Error("parallel results in call order: " + by.parallel.content);
if (!by["none-called"].grade.reasons.some((s) => s.includes("unexpected tool call")))
	throw new Error("none-called reason");
' "$tmp/r/results.jsonl" || fail "tool records"
ls "$tmp/r/raw/one-r1-round1.sse" "$tmp/r/raw/one-r1.sse" > /dev/null || fail "raw files of both rounds"

# --case and --repeat
"$NEEDLE" run "$tmp/suite.json" --base-url "$url" --out "$tmp/c" --case 'none-o*' --repeat 3 2> "$tmp/c.err" \
	|| { cat "$tmp/c.err"; fail "--case"; }
[ "$(wc -l < "$tmp/c/results.jsonl")" = 3 ] || fail "--case/--repeat count"
st=0
"$NEEDLE" run "$tmp/suite.json" --base-url "$url" --out "$tmp/d" --case 'nothing*' 2> "$tmp/d.err" || st=$?
[ "$st" = 2 ] || fail "--case without a match: exit $st"
echo ok
