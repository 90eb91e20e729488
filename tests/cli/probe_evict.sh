#!/bin/sh
# slow: a cache probe while a load case floods the cache
# The prefix-cache probe under eviction: a cache probe run "during" a load case whose
# prompts add up past the server's KV cache. The reference server with
# --kv-cache-tokens 4096 holds 256 blocks of 16 tokens and evicts the least recently
# used; the load's 1,024-token prompts (64 blocks each, about a dozen a second at
# concurrency 4) push the 2,000-token document out while its cold step still answers,
# so its warm steps are computed again:
#   ref-good: cold, warm and warm-reordered all pass, and the warm steps' cached_tokens
#     show the eviction (below half the prompt): the probe measured what it claims;
#   ref-evict-drift (wrong codes when a prefix evicted since is computed again): the
#     warm steps fail with their wrong needles, the cold step passes;
#   the same probe with no load: the warm steps hit the cache and pass on
#     ref-evict-drift.
set -eu
. "$TESTS/lib/cli.sh"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
refserver_start --tpot 20 --kv-cache-tokens 4096 --enable-prompt-tokens-details

cat >"$tmp/evict.json" <<'JSON'
{"suite": "evict", "defaults": {"temperature": 0, "max_tokens": 256},
 "cases": [
  {"id": "flood", "kind": "load", "load": {"input_tokens": 1024, "output_tokens": 16,
   "endpoint": "completions", "concurrency": [4], "requests": [96], "rounds": 1, "seed": 1}},
  {"id": "cache-evicted", "kind": "recall", "during": "flood",
   "recall": {"tokens": 2000, "depths": [20, 80], "cache": true}}]}
JSON
node -e 'const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); s.cases = s.cases.filter((c) => c.kind !== "load"); delete s.cases[0].during; process.stdout.write(JSON.stringify(s));' \
	"$tmp/evict.json" >"$tmp/idle.json"

run() { # SUITE MODEL OUT EXPECTED-EXIT
	rc=0
	"$NEEDLE" run "$1" --base-url "$REF_URL/v1" --model "$2" --concurrency 2 \
		--tokenizer "$ds" --template deepseek-v3 --out "$tmp/$3" >"$tmp/$3.out" 2>&1 || rc=$?
	[ "$rc" = "$4" ] || { echo "$2 $3: exit $rc, expected $4"; cat "$tmp/$3.out"; exit 1; }
}

run "$tmp/evict.json" ref-good good 0
node "$TESTS/refserver/records.js" "$tmp/good" \
	'recs.filter(r => r.kind === "recall").map(r => r.probe.step + ":" + r.verdict + ":" + r.during.under_load).join() === "cold:pass:true,warm:pass:true,warm-reordered:pass:true"' \
	'ref-good: cold, warm and warm-reordered all under the flood, all pass'
node "$TESTS/refserver/records.js" "$tmp/good" \
	'recs.filter(r => r.kind === "recall" && r.probe.step !== "cold").every(r => typeof r.probe.cached_tokens === "number" && r.probe.cached_tokens * 2 < r.usage.prompt_tokens)' \
	'ref-good: the warm steps found their prefix evicted (cached_tokens below half the prompt)'

run "$tmp/evict.json" ref-evict-drift drift 1
node "$TESTS/refserver/records.js" "$tmp/drift" \
	'recs.filter(r => r.kind === "recall").map(r => r.probe.step + ":" + r.verdict).join() === "cold:pass,warm:fail,warm-reordered:fail" && recs.filter(r => r.kind === "recall" && r.verdict === "fail").every(r => r.grade.needles.some(n => !n.ok))' \
	'ref-evict-drift: the warm steps computed again after eviction fail'

run "$tmp/idle.json" ref-evict-drift idle 0
node "$TESTS/refserver/records.js" "$tmp/idle" \
	'recs.length === 3 && recs.every(r => r.verdict === "pass") && recs.filter(r => r.probe.step !== "cold").every(r => r.probe.cached_tokens * 2 > r.usage.prompt_tokens)' \
	'ref-evict-drift: with no flood the warm steps hit the cache and pass'
echo "evict: a warm step computed again after eviction is checked against the cold answer"
