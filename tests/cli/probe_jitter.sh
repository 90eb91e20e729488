#!/bin/sh
# slow: 32K and 128K documents at four lengths
# Issue 12 acceptance, length jitter: suites/recall-jitter.json's 32K and 128K cases
# (4 exact lengths each; the 1M case is left to real deployments) against
#   ref-good: all pass at every length, each length with codes of its own (their
#     final two letters differ, seeded: the same in two runs);
#   ref-residue (a digit wrong when the prompt is 3 mod 4 tokens): exactly the lengths
#     with tokens % 4 == 3 fail, and the report's residue table shows it;
#   a server whose max_model_len cannot hold the longest length: refused, with the path.
set -eu
. "$TESTS/lib/cli.sh"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
suite=$(fixture suites/recall-jitter.json)
refserver_start

for m in good residue; do
	rc=0
	"$NEEDLE" run "$suite" --base-url "$REF_URL/v1" --model "ref-$m" --case 'jitter-[13][2]*k' \
		--tokenizer "$ds" --template deepseek-v3 --out "$tmp/$m" >"$tmp/$m.out" 2>&1 || rc=$?
	want=0; [ "$m" = residue ] && want=1
	[ "$rc" = "$want" ] || { echo "ref-$m: exit $rc, expected $want"; cat "$tmp/$m.out"; exit 1; }
done
node "$TESTS/refserver/records.js" "$tmp/good" \
	'recs.length === 8 && recs.every(r => r.verdict === "pass" && r.usage.prompt_tokens === r.probe.tokens && r.recall.tokens === r.probe.tokens && r.case.endsWith("@" + r.probe.tokens))' \
	'ref-good: 8 lengths pass, each at its exact token count'
node "$TESTS/refserver/records.js" "$tmp/good" \
	'JSON.stringify(recs.map(r => r.probe.tokens)) === "[32768,32769,32770,32771,131072,131073,131074,131075]"' \
	'lengths L..L+3 of 32K and 128K'
# Each length has codes of its own: the same document (codes equal but for their final
# two letters, the same in both runs: seeded), final letters all different across L..L+3.
node "$TESTS/refserver/records.js" "$tmp/good" \
	'(() => { const of = (r) => r.grade.needles.map((n) => n.expected); const bad = [];
		for (const base of ["jitter-32k", "jitter-128k"]) {
			const g = recs.filter((r) => r.case.startsWith(base + "@")).map(of);
			for (let i = 0; i < 3; i++) {
				const col = g.map((c) => c[i]);
				if (new Set(col.map((c) => c.slice(-2))).size !== 4) bad.push(base + " needle " + i + " ends alike: " + col);
				if (new Set(col.map((c) => c.slice(0, -2))).size !== 1) bad.push(base + " needle " + i + " differs before its end: " + col);
			}
		}
		if (bad.length) console.error(bad.join("\n"));
		return bad.length === 0; })()' \
	'jitter lengths: codes differ in their final two letters only'
good_codes=$(node -e 'const fs = require("fs"); process.stdout.write(fs.readFileSync(process.argv[1], "utf8").trim().split("\n").map((l) => JSON.parse(l).grade.needles.map((n) => n.expected).join(",")).join(";"))' "$tmp/good/results.jsonl")
node "$TESTS/refserver/records.js" "$tmp/residue" \
	"recs.map((r) => r.grade.needles.map((n) => n.expected).join(',')).join(';') === '$good_codes'" \
	'the codes are the same in both runs (seeded)'
node "$TESTS/refserver/records.js" "$tmp/residue" \
	'recs.length === 8 && recs.every(r => (r.verdict === "fail") === (r.probe.tokens % 4 === 3)) && recs.every(r => r.probe.mod4 === r.probe.tokens % 4)' \
	'ref-residue: exactly the 3 mod 4 lengths fail'
"$NEEDLE" report "$tmp/residue" >"$tmp/residue.md"
for row in '| 4 | 3 | 0/2 | 0/6 |' '| 4 | 0 | 2/2 | 6/6 |' '| 4 | 1 | 2/2 | 6/6 |' '| 4 | 2 | 2/2 | 6/6 |' '| 2 | 1 | 2/4 | 6/12 |' '| 8 | 3 | 0/2 | 0/6 |'; do
	grep -qF "$row" "$tmp/residue.md" || { echo "residue table lacks '$row'"; sed -n '/residue/,$p' "$tmp/residue.md"; exit 1; }
done
# diff gates on a residue: the residue-3 recall of ref-residue is 0, the others 1.
"$NEEDLE" diff "$tmp/good" "$tmp/residue" --gate 'recall_residue@4:0>=1' >"$tmp/g0.out" 2>&1 ||
	{ echo "gate recall_residue@4:0>=1 failed"; cat "$tmp/g0.out"; exit 1; }
rc=0
"$NEEDLE" diff "$tmp/good" "$tmp/residue" --gate 'recall_residue@4:3>=1' >"$tmp/g3.out" 2>&1 || rc=$?
[ "$rc" = 1 ] || { echo "gate recall_residue@4:3>=1: exit $rc, expected 1"; cat "$tmp/g3.out"; exit 1; }
rc=0
"$NEEDLE" diff "$tmp/good" "$tmp/residue" --gate 'recall_residue@3:1>=1' >"$tmp/g9.out" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "residue '3:1' is not M:R" "$tmp/g9.out" ||
	{ echo "gate on a bad modulus: exit $rc"; cat "$tmp/g9.out"; exit 1; }
rc=0
"$NEEDLE" diff "$tmp/good" "$tmp/good" --gate 'recall_residue@4:3>=1' >"$tmp/g8.out" 2>&1 || rc=$?
[ "$rc" = 0 ] || { echo "gate recall_residue@4:3 on ref-good: exit $rc"; cat "$tmp/g8.out"; exit 1; }
# The longest length must fit: 32771 + max_tokens 4096 = 36867 tokens.
refserver_stop
refserver_start --max-model-len 36866
rc=0
"$NEEDLE" run "$suite" --base-url "$REF_URL/v1" --model ref-good --case jitter-32k \
	--tokenizer "$ds" --template deepseek-v3 --out "$tmp/tight" >"$tmp/tight.out" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "recall-jitter.json: cases\[0\].recall.jitter: the longest length, 32771 tokens (32768 + 4 - 1), plus max_tokens 4096 is 36867, over the 36866 the server allows (max_model_len 36866)" "$tmp/tight.out" ||
	{ echo "jitter over max_model_len: exit $rc"; cat "$tmp/tight.out"; exit 1; }
[ ! -e "$tmp/tight/results.jsonl" ] || { echo "a refused jitter case sent requests"; exit 1; }
refserver_stop
refserver_start --max-model-len 36867
"$NEEDLE" run "$suite" --base-url "$REF_URL/v1" --model ref-good --case jitter-32k \
	--tokenizer "$ds" --template deepseek-v3 --out "$tmp/fits" >"$tmp/fits.out" 2>&1 ||
	{ echo "jitter that just fits: refused"; cat "$tmp/fits.out"; exit 1; }
echo "recall-jitter: ref-residue fails exactly the 3 mod 4 lengths; the report shows recall by residue"
