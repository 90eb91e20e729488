#!/bin/sh
# make demo: starts the reference server (vLLM dialect, real DeepSeek V3 tokenizer and
# chat template) on a free loopback port, runs suites/recall-128k.json against it with
# the same tokenizer and template, prints where the results are and a short summary,
# stops the server and exits with needle's exit code.
#   sh tests/demo.sh BUILD_DIR [MODEL]     MODEL: ref-good (default), ref-forgetful, ...
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
model=${2:-ref-good}
case "$build" in /*) ;; *) build="$root/$build" ;; esac
NEEDLE="$build/needle"
TESTS="$root/tests"
. "$TESTS/lib/cli.sh"
trap 'exit 130' INT TERM

refserver_start --tpot 2 || exit 3
echo "reference server: $REF_URL (vLLM dialect, DeepSeek V3 tokenizer and chat template, model $model)"
out="$root/results/demo-$(date -u +%Y%m%dT%H%M%SZ)"
(set -x; exec "$NEEDLE" run "$(fixture suites/recall-128k.json)" --base-url "$REF_URL/v1" --model "$model" \
	--tokenizer "$(fixture hf/deepseek_v3/tokenizer.json)" --template deepseek-v3 --out "$out")
rc=$?
echo
echo "results: $out"
node -e '
const fs = require("fs"), path = require("path");
const find = (d) => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) =>
	e.isDirectory() ? find(path.join(d, e.name)) : e.name === "results.jsonl" ? [path.join(d, e.name)] : []);
let files = [];
try { files = find(process.argv[1]); } catch (e) { }
if (!files.length) { console.log("no results.jsonl written"); process.exit(0); }
const recs = fs.readFileSync(files[0], "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
const pass = recs.filter((r) => r.verdict === "pass").length;
console.log(`${recs.length} requests: ${pass} passed, ${recs.length - pass} failed`);
for (const r of recs) {
	const a = r.audit || {}, t = r.timing || {}, g = r.grade || {};
	const needles = (g.needles || []).map((n) => `${n.depth}%:${n.ok ? "ok" : "MISSED"}`).join(" ");
	console.log(`  ${r.case} seed ${r.seed}: ${r.verdict}  prompt ${a.local_prompt_tokens} tokens, usage_delta ${a.usage_delta}, ` +
		`ttft ${Math.round(t.ttft_ms)} ms, tpot ${t.tpot_ms === null ? "-" : Number(t.tpot_ms).toFixed(1)} ms, e2e ${Math.round(t.e2e_ms)} ms  ${needles}` +
		((r.transport && r.transport.failures.length) ? `  failures: ${r.transport.failures.join(",")}` : ""));
}' "$out"
echo "needle exit code: $rc"
exit $rc
