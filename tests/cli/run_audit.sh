#!/bin/sh
# Token audit and recall against the reference server with the real DeepSeek V3
# tokenizer and template: usage_delta 0 when the server counts like vLLM, an
# audit failure when it is off by one, per-depth recall with the forgetful
# model failing only the 50% needle (exit 1).
set -eu
. "$TESTS/lib/cli.sh"
tokdir=$(fixture hf/deepseek_v3)
refserver_start --tokenizer "$tokdir"
url=$REF_URL
audit="--tokenizer $tokdir/tokenizer.json --template deepseek-v3"

cat > "$tmp/chat.json" <<'JSON'
{"suite":"audit","defaults":{"max_tokens":64},"cases":[
 {"id":"arith","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Compute 19 * 23. Reply with only a JSON object {\"answer\": <integer>}."}],"expect":{"json":{"answer":437}}},
 {"id":"zh","messages":[{"role":"user","content":"Compute 12 * 12. 只回答 JSON {\"answer\": <integer>}。"}],"expect":{"json":{"answer":144}}},
 {"id":"raw","prompt":"Compute 7 * 8. Reply with only a JSON object {\"answer\": <integer>}.","expect":{"json":{"answer":56}}},
 {"id":"tolerant","messages":[{"role":"user","content":"Compute 3 * 4. Reply with only a JSON object {\"answer\": <integer>}."}],"usage_tolerance":1,"expect":{"json":{"answer":12}}}]}
JSON
"$NEEDLE" run "$tmp/chat.json" --base-url "$url" --model ref-good --out "$tmp/good" $audit 2> "$tmp/good.err" \
	|| { cat "$tmp/good.err"; fail "audit with ref-good"; }
node -e '
const rs = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
for (const r of rs) {
	if (!r.audit.enabled || r.audit.usage_delta !== 0 || r.audit.local_prompt_tokens !== r.usage.prompt_tokens)
		throw new Error(r.case + " " + JSON.stringify(r.audit));
}' "$tmp/good/results.jsonl" || fail "usage_delta not 0"
grep -q '"sha256"' "$tmp/good/manifest.json" || fail "manifest lacks hashes"
grep -q '"endpoint":"/v1/completions"' "$tmp/good/results.jsonl" || fail "raw prompt not sent to /v1/completions"
grep -q '"deepseek-v3"' "$tmp/good/manifest.json" || fail "manifest lacks the template"

st=0
"$NEEDLE" run "$tmp/chat.json" --base-url "$url" --model ref-usage-off --out "$tmp/off" $audit 2> "$tmp/off.err" || st=$?
[ "$st" = 1 ] || fail "ref-usage-off exit $st"
node -e '
const rs = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
const by = Object.fromEntries(rs.map((r) => [r.case, r]));
if (by.arith.audit.ok || by.arith.audit.usage_delta !== 1 || by.arith.verdict !== "fail") throw new Error("arith " + JSON.stringify(by.arith.audit));
if (!by.tolerant.audit.ok || by.tolerant.verdict !== "pass") throw new Error("tolerant " + JSON.stringify(by.tolerant.audit));
' "$tmp/off/results.jsonl" || fail "audit delta"

# recall: small documents so the test stays fast
cat > "$tmp/recall.json" <<'JSON'
{"suite":"recall-small","defaults":{"max_tokens":256},"cases":[
 {"id":"r","kind":"recall","recall":{"tokens":6000,"depths":[10,50,90],"seeds":[1,2]}}]}
JSON
st=0
"$NEEDLE" run "$tmp/recall.json" --base-url "$url" --model ref-good --out "$tmp/rg" 2> "$tmp/rg.err" || st=$?
[ "$st" = 2 ] || fail "recall without a tokenizer: exit $st"
grep -q "needs '--tokenizer' and '--template'" "$tmp/rg.err" || fail "recall without tokenizer message"
"$NEEDLE" run "$tmp/recall.json" --base-url "$url" --model ref-good --out "$tmp/rg" $audit 2> "$tmp/rg.err" \
	|| { cat "$tmp/rg.err"; fail "recall with ref-good"; }
st=0
"$NEEDLE" run "$tmp/recall.json" --base-url "$url" --model ref-forgetful --out "$tmp/rf" $audit 2> "$tmp/rf.err" || st=$?
[ "$st" = 1 ] || fail "ref-forgetful exit $st"
node -e '
const rs = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
if (rs.length !== 2) throw new Error("records " + rs.length);
for (const r of rs) {
	if (r.audit.usage_delta !== 0 || r.audit.local_prompt_tokens !== 6000) throw new Error("audit " + JSON.stringify(r.audit));
	const ok = r.grade.needles.map((n) => n.depth + ":" + n.ok).join(",");
	if (ok !== "10:true,50:false,90:true") throw new Error("seed " + r.seed + " needles " + ok);
	if (r.recall.tokens !== 6000) throw new Error("recall block");
}' "$tmp/rf/results.jsonl" || fail "forgetful per-depth grade"
echo ok
