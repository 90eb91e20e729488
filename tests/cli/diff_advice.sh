#!/bin/sh
# Issue 21, advice that blames the right side: the same suite, tokenizer and template
# against a server whose usage counts are right (A) and one that counts one token
# more (B, ref-usage-off). B's own report can only say to check --tokenizer and
# --template; the diff knows A matched with the same files, so it says the server
# changed. With another template in B's manifest it points at B's files instead.
set -eu
. "$TESTS/lib/cli.sh"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
refserver_start
node -e '
const cases = [[19, 23], [7, 6], [12, 12]].map(([a, b], i) => ({
	id: "mul" + i, kind: "chat", max_tokens: 64,
	messages: [{ role: "user", content: `Compute ${a} * ${b}. Reply with only a JSON object {"answer": <integer>}.` }],
	expect: { json: { answer: a * b } } }));
process.stdout.write(JSON.stringify({ suite: "advice", cases }));' >"$tmp/suite.json"
run() { # OUT MODEL CODES
	check_exit "$3" "" "$NEEDLE" run "$tmp/suite.json" --base-url "$REF_URL/v1" --model "$2" \
		--tokenizer "$ds" --template deepseek-v3 --out "$tmp/$1"
}
run a ref-good 0
run b ref-usage-off 1
check_exit 0 "" "$NEEDLE" report "$tmp/b" --format json
grep -q 'check --tokenizer and --template' "$tmp/out" ||
	fail "B's own report lost its advice: $(cat "$tmp/out")"

check_exit 1 "what to do: 3 attempts that passed the usage audit in A fail it in B (usage_delta +1 on every one) with the same tokenizer and chat template (SHA-256 equal in both manifests): the server changed its tokenizer, chat template or usage counting" \
	"$NEEDLE" diff "$tmp/a" "$tmp/b" --gate no_new_failures
! grep -q "check B's --tokenizer" "$tmp/err" || fail "the diff blames the local files: $(cat "$tmp/err")"
grep -qF '**What to do:** 3 attempts that passed the usage audit in A fail it in B' "$tmp/out" ||
	fail "diff markdown: no advice in the usage section: $(cat "$tmp/out")"
check_exit 0 "" "$NEEDLE" diff "$tmp/a" "$tmp/b" --format json
node -e 'const d = JSON.parse(require("fs").readFileSync(0, "utf8"));
	if (d.advice.length !== 1 || !/the server changed/.test(d.advice[0])) throw new Error(JSON.stringify(d.advice));' \
	<"$tmp/out" || fail "diff json: advice"
# The other way round nothing broke: no advice.
check_exit 0 "" "$NEEDLE" diff "$tmp/b" "$tmp/a"
! grep -q "what to do" "$tmp/err" || fail "advice when B fixed the audit: $(cat "$tmp/err")"

# B rendered with another template (its manifest says so): B's files are the suspects.
cp -r "$tmp/b" "$tmp/c"
node -e 'const fs = require("fs"), f = process.argv[1], m = JSON.parse(fs.readFileSync(f, "utf8"));
	m.template.sha256 = "0".repeat(64); fs.writeFileSync(f, JSON.stringify(m));' "$tmp/c/manifest.json"
check_exit 0 "B used another tokenizer or chat template than A (SHA-256): check B's --tokenizer and --template against the deployment" \
	"$NEEDLE" diff "$tmp/a" "$tmp/c"
! grep -q "the server changed" "$tmp/err" || fail "the server is blamed though the template changed"
echo "diff advice: the server changed when A matched with the same files; B's files when they differ"
