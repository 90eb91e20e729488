#!/bin/sh
# The token audit and recall end to end with a model folder and no
# --template: for the Qwen3 and Llama 3 folders (tokenizer.json +
# tokenizer_config.json), the reference server renders the folder's own
# chat_template and needle must count exactly what it counts (usage_delta 0),
# build recall documents of the exact length, and record the template's
# source file and the SHA-256 of its text in the manifest.
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
		2> "$tmp/err" || { cat "$tmp/err"; fail "$pkg: audit with a model folder"; }
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
' "$tmp/$pkg" "$dir" "$pkg" || fail "$pkg: audit results or manifest"
	"$NEEDLE" run "$tmp/recall.json" --base-url "$url" --model ref-good --out "$tmp/$pkg-r" --tokenizer "$dir" \
		2> "$tmp/err" || { cat "$tmp/err"; fail "$pkg: recall with a model folder"; }
	node -e '
const rs = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
for (const r of rs)
	if (r.audit.usage_delta !== 0 || r.audit.local_prompt_tokens !== 3000) throw new Error(JSON.stringify(r.audit));
' "$tmp/$pkg-r/results.jsonl" || fail "$pkg: recall audit"
	refserver_stop
done
echo ok
