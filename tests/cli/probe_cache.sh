#!/bin/sh
# slow: 128K-token documents, cold and warm
# Issue 12 acceptance, prefix-cache consistency: suites/cache-consistency.json (32K and
# 128K, each cold, warm, warm-reordered) against the reference server.
#   ref-good (with --enable-prompt-tokens-details): all 6 steps pass, cached_tokens is
#     recorded (small cold, nearly all of the prompt warm);
#   ref-cache-drift: the cold steps pass, every warm step fails, and the report names
#     each warm step and the code that changed;
#   a server that does not report cached_tokens: null in the record, and the report
#     says which flag turns it on;
#   the nonce line: new per run (the cold requests' first tokens differ), kept on
#     --resume, and a group cut by a kill is rerun whole, cold again.
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
# The nonce: a line at the very start of the prompt, new in every run folder, kept on
# --resume. Two runs of cache-32k: different nonces in the manifests and records, the
# cold requests' first tokens differ, each warm step starts like its cold one, and every
# prompt keeps its exact length.
refserver_stop
export REF_LOG="$tmp/ref.log"
refserver_start --enable-prompt-tokens-details --log "$REF_LOG"
for n in n1 n2; do
	"$NEEDLE" run "$suite" --base-url "$REF_URL/v1" --model ref-good --case cache-32k \
		--tokenizer "$ds" --template deepseek-v3 --out "$tmp/$n" >"$tmp/$n.out" 2>&1 ||
		{ echo "$n: failed"; cat "$tmp/$n.out"; exit 1; }
done
nonce() { node -e 'const m = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).cache_probe; process.stdout.write(m && /^[0-9a-f]{16}$/.test(m.nonce) ? m.nonce + "." + m.session : "bad");' "$1/manifest.json"; }
n1=$(nonce "$tmp/n1") n2=$(nonce "$tmp/n2")
case "$n1" in *.0) ;; *) fail "manifest cache_probe of the first run: '$n1'" ;; esac
[ "$n1" != "$n2" ] || fail "two runs drew the same nonce '$n1'"
node "$TESTS/refserver/records.js" "$tmp/n1" "recs.every(r => r.probe.nonce === '$n1')" 'each record names its nonce'
node "$TESTS/refserver/records.js" "$tmp/n1" \
	'(() => { const c = log.filter(l => l.path === "/v1/chat/completions"); const h = c.map(l => JSON.stringify(l.prompt_head));
		return c.length === 6 && c.every(l => l.prompt_tokens === 32768) && h[0] !== h[3] &&
			h[0] === h[1] && h[3] === h[4] && h[0] === h[2] && h[3] === h[5]; })()' \
	'the cold requests of two runs start differently; warm steps start like their cold one; 32768 tokens each'
node "$TESTS/refserver/records.js" "$tmp/n2" \
	'recs.every(r => r.probe.step === "cold" ? r.probe.cached_tokens * 10 < r.usage.prompt_tokens : r.probe.cached_tokens * 10 > r.usage.prompt_tokens * 9)' \
	'the second run is cold again despite the first'
# needle diff of the two runs (issue 21): their prompts differ by the nonce, by design,
# so no "different documents" warning; a document made otherwise (another filler)
# is still one.
node -e 'const fs = require("fs"), sha = (d) => fs.readFileSync(d + "/results.jsonl", "utf8").trim()
		.split("\n").map((l) => JSON.parse(l).recall.prompt_sha256);
	const a = sha(process.argv[1]), b = sha(process.argv[2]);
	if (a.length !== 3 || a.some((x, i) => x === b[i])) throw new Error(JSON.stringify([a, b]));' \
	"$tmp/n1" "$tmp/n2" || fail "the prompt SHA-256 of a step is the same in two runs"
"$NEEDLE" diff "$tmp/n1" "$tmp/n2" --gate no_new_failures >"$tmp/d12.md" 2>"$tmp/d12.err" ||
	fail "diff of two runs of cache-32k: exit $?: $(cat "$tmp/d12.err")"
! grep -q "different documents" "$tmp/d12.md" "$tmp/d12.err" || fail "the nonce is reported as different documents: $(cat "$tmp/d12.err")"
node -e 'const fs = require("fs"); const s = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
	s.cases[0].recall.filler = "zh"; fs.writeFileSync(process.argv[2], JSON.stringify(s));' "$suite" "$tmp/zh.json"
"$NEEDLE" run "$tmp/zh.json" --base-url "$REF_URL/v1" --model ref-good --case cache-32k \
	--tokenizer "$ds" --template deepseek-v3 --out "$tmp/zh" >"$tmp/zh.out" 2>&1 || { echo "zh: failed"; cat "$tmp/zh.out"; exit 1; }
"$NEEDLE" diff "$tmp/n1" "$tmp/zh" >"$tmp/dzh.md" 2>"$tmp/dzh.err" || fail "diff n1 zh: exit $?"
grep -q "warning: 3 matched recall attempts were sent different documents" "$tmp/dzh.err" ||
	fail "another filler is not reported as different documents: $(cat "$tmp/dzh.err")"

# Resume: killed while the second group (seed 2) is half done, its steps are not
# journalled; --resume keeps the nonce, reruns that group whole in session 1, and its
# cold step is cold again (a new first line).
cat >"$tmp/resume.json" <<'JSON'
{"suite": "cache-resume", "defaults": {"temperature": 0, "max_tokens": 256},
 "cases": [{"id": "c", "kind": "recall",
   "recall": {"tokens": 4096, "depths": [10, 50, 90], "needles": 3, "seeds": [1, 2], "cache": true}}]}
JSON
: >"$REF_LOG"
run="$NEEDLE run $tmp/resume.json --base-url $REF_URL/v1 --model ref-slow:delay=1200 --tokenizer $ds --template deepseek-v3 --out $tmp/res"
$run >"$tmp/res.out" 2>&1 &
npid=$!
track "$npid"
i=0
while [ "$(grep -c chat/completions "$REF_LOG" || true)" -lt 4 ]; do
	i=$((i + 1))
	[ $i -lt 600 ] || fail "the cache group did not start: $(cat "$tmp/res.out")"
	sleep 0.05
done
kill -9 "$npid"
wait "$npid" 2>/dev/null || true
node "$TESTS/refserver/records.js" "$tmp/res" \
	'recs.length === 3 && recs.every(r => r.seed === 1) && log.filter(l => l.path === "/v1/chat/completions").length < 6' \
	'killed mid-group: only the finished group is journalled'
before=$(nonce "$tmp/res")
cp "$REF_LOG" "$tmp/ref.before"
$run --resume >"$tmp/res2.out" 2>&1 || { echo "resume failed"; cat "$tmp/res2.out"; exit 1; }
after=$(nonce "$tmp/res")
[ "$after" = "${before%.0}.1" ] || fail "resume: cache_probe '$after', expected '${before%.0}.1'"
node "$TESTS/refserver/records.js" "$tmp/res" \
	"JSON.stringify(recs.map(r => r.case + '#' + r.seed + '#' + r.probe.nonce)) === JSON.stringify(['c/cold#1#$before', 'c/warm#1#$before', 'c/warm-reordered#1#$before', 'c/cold#2#$after', 'c/warm#2#$after', 'c/warm-reordered#2#$after'])" \
	'resume: the cut group rerun whole, with the same nonce in its next session'
node "$TESTS/refserver/records.js" "$tmp/res" \
	'(() => { const c = log.filter(l => l.path === "/v1/chat/completions"); const cold = c[3], again = c[c.length - 3];
		return recs.every(r => r.verdict === "pass") && JSON.stringify(cold.prompt_head) !== JSON.stringify(again.prompt_head) &&
			again.prompt_tokens === 4096 && recs[3].probe.cached_tokens * 10 < recs[3].usage.prompt_tokens; })()' \
	'the rerun cold step starts with a new line and is cold'
# A manifest whose cache_probe is damaged: --resume refuses it, naming the file.
node -e 'const fs = require("fs"); const m = JSON.parse(fs.readFileSync(process.argv[1], "utf8")); m.cache_probe.nonce = "XYZ"; fs.writeFileSync(process.argv[1], JSON.stringify(m));' "$tmp/res/manifest.json"
rc=0
$run --resume >"$tmp/res3.out" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -qF "res/manifest.json: \"cache_probe\" is not {\"nonce\": 16 hex digits" "$tmp/res3.out" ||
	{ echo "damaged cache_probe: exit $rc"; cat "$tmp/res3.out"; exit 1; }
echo "cache-consistency: ref-good passes with cached_tokens; ref-cache-drift fails the warm steps by name; the nonce line is new per run, kept on --resume, a cut group rerun whole"
