#!/bin/sh
# Issue 12 acceptance, prefix-cache consistency: suites/cache-consistency.json (32K and
# 128K, each cold, warm, warm-reordered) against the reference server.
#   ref-good (with --enable-prompt-tokens-details): all 6 steps pass, cached_tokens is
#     recorded (small cold, nearly all of the prompt warm);
#   ref-cache-drift: the cold steps pass, every warm step fails, and the report names
#     each warm step and the code that changed;
#   a server that does not report cached_tokens: null in the record, and the report
#     says which flag turns it on.
set -eu
. "$TESTS/lib/cli.sh"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
suite=$(fixture suites/cache-consistency.json)
refserver_start --enable-prompt-tokens-details

run() { # MODEL OUT EXPECTED-EXIT
	rc=0
	"$NEEDLE" run "$suite" --base-url "$REF_URL/v1" --model "$1" \
		--tokenizer "$ds" --template deepseek-v3 --out "$tmp/$2" >"$tmp/$2.out" 2>&1 || rc=$?
	[ "$rc" = "$3" ] || { echo "$1: exit $rc, expected $3"; cat "$tmp/$2.out"; exit 1; }
}

run ref-good good 0
node "$TESTS/refserver/records.js" "$tmp/good" \
	'recs.length === 6 && recs.every(r => r.verdict === "pass" && r.probe && typeof r.probe.ttft_ms === "number")' \
	'ref-good: 6 steps pass, each with a probe object'
node "$TESTS/refserver/records.js" "$tmp/good" \
	'JSON.stringify(recs.map(r => r.case)) === JSON.stringify(["cache-32k/cold","cache-32k/warm","cache-32k/warm-reordered","cache-128k/cold","cache-128k/warm","cache-128k/warm-reordered"])' \
	'the steps run in order, under their own ids'
node "$TESTS/refserver/records.js" "$tmp/good" \
	'recs.every(r => typeof r.probe.cached_tokens === "number" && (r.probe.step === "cold" ? r.probe.cached_tokens * 10 < r.usage.prompt_tokens : r.probe.cached_tokens * 10 > r.usage.prompt_tokens * 9))' \
	'cached_tokens recorded: under 10% cold, over 90% warm'
node "$TESTS/refserver/records.js" "$tmp/good" \
	'recs[0].seed === recs[1].seed && recs[0].grade.needles.every((n, i) => n.expected === recs[2].grade.needles[i].expected)' \
	'the three steps ask about the same needles'

run ref-cache-drift drift 1
node "$TESTS/refserver/records.js" "$tmp/drift" \
	'recs.every(r => (r.verdict === "pass") === (r.probe.step === "cold"))' \
	'ref-cache-drift: exactly the warm steps fail'
"$NEEDLE" report "$tmp/drift" >"$tmp/drift.md"
for id in cache-32k/warm cache-32k/warm-reordered cache-128k/warm cache-128k/warm-reordered; do
	grep -q "^| $id | fail | [0-9]* | [0-9]* | .*expected .*, got " "$tmp/drift.md" ||
		{ echo "report does not name the failed step $id with its changed code"; cat "$tmp/drift.md"; exit 1; }
done
grep -q "^| cache-32k/cold | pass |" "$tmp/drift.md" || { echo "report lacks the cold step"; exit 1; }

# No --enable-prompt-tokens-details: cached_tokens is null, and the report says so.
refserver_stop
refserver_start
rc=0
"$NEEDLE" run "$suite" --base-url "$REF_URL/v1" --model ref-good --case 'cache-32k' \
	--tokenizer "$ds" --template deepseek-v3 --out "$tmp/plain" >"$tmp/plain.out" 2>&1 || rc=$?
[ "$rc" = 0 ] || { echo "plain: exit $rc"; cat "$tmp/plain.out"; exit 1; }
node "$TESTS/refserver/records.js" "$tmp/plain" \
	'recs.length === 3 && recs.every(r => r.probe.cached_tokens === null)' 'cached_tokens null when not reported'
"$NEEDLE" report "$tmp/plain" | grep -q "enable-prompt-tokens-details, SGLang with --enable-cache-report" ||
	{ echo "report does not say how to turn cached_tokens on"; exit 1; }
echo "cache-consistency: ref-good passes with cached_tokens; ref-cache-drift fails the warm steps by name"
