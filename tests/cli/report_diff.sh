#!/bin/sh
# needle report / needle diff on the hand-written run folders in
# fixtures/results: files written, formats, gates and exit codes, bad input.
set -eu
. "$TESTS/lib/cli.sh"
for run in a b bad garbled; do
	cp -R "$(fixture "results/$run")" "$tmp/"
done

# report: all three files, the chosen format on stdout, exit 0 with failures
"$NEEDLE" report "$tmp/a" > "$tmp/a.md" || fail "report a: exit $?"
for f in summary.json summary.md recall.png; do
	[ -s "$tmp/a/$f" ] || fail "report a: no $f"
done
cmp -s "$tmp/a.md" "$tmp/a/summary.md" || fail "stdout differs from summary.md"
grep -q '5/10 (0.500' "$tmp/a.md" || fail "overall denominator"
node -e '
const s = JSON.parse(require("fs").readFileSync(process.argv[1] + "/summary.json"));
const ok = s.attempts.total === 10 && s.attempts.pass === 5 &&
	s.latency.ttft_ms.n === 9 && s.latency.ttft_ms.p50 === 500 &&
	s.recall.by_depth.find(d => d.depth === 50).found === 2;
if (!ok) { console.error(JSON.stringify(s)); process.exit(1); }' "$tmp/a" || fail "summary.json values"
"$NEEDLE" report "$tmp/a" --format json | node -e '
let t = ""; process.stdin.on("data", c => t += c).on("end", () => {
	const s = JSON.parse(t); process.exit(s.needle_summary === 1 ? 0 : 1); });' || fail "--format json"
"$NEEDLE" report "$tmp/a" --format csv | head -1 | grep -q '^run,model,case,kind,repeat,seed,verdict,' || fail "--format csv"
rc=0; "$NEEDLE" report "$tmp/a" --format xml 2> "$tmp/err" || rc=$?
[ $rc = 2 ] && grep -q "'--format'" "$tmp/err" || fail "bad --format: exit $rc"

# a malformed line: exit 2, the file and line named; a torn last line is fine
rc=0; "$NEEDLE" report "$tmp/bad" 2> "$tmp/err" > /dev/null || rc=$?
[ $rc = 2 ] || fail "bad results: exit $rc"
grep -q "bad/results.jsonl' line 2: no \"verdict\"" "$tmp/err" || fail "bad results message: $(cat "$tmp/err")"
"$NEEDLE" report "$tmp/b" > /dev/null || fail "torn last line: exit $?"
rc=0; "$NEEDLE" report "$tmp/missing" 2> /dev/null > /dev/null || rc=$?
[ $rc = 2 ] || fail "missing folder: exit $rc"

# diff: no gates -> 0; warnings on stderr
"$NEEDLE" diff "$tmp/a" "$tmp/b" > "$tmp/d.md" 2> "$tmp/d.err" || fail "diff without gates: exit $?"
grep -q 'template SHA-256 differs' "$tmp/d.err" || fail "no template warning"
grep -q "### pass -> fail: 2" "$tmp/d.md" && grep -q "^- chat-1 repeat 4 seed - \[http_status\]" "$tmp/d.md" || fail "flip count"
grep -q 'chat-1 repeat 1 seed -: expected 437, got 436' "$tmp/d.md" || fail "flip reason"
# gates: hold -> 0, any failing -> 1, bad spec -> 2
"$NEEDLE" diff "$tmp/a" "$tmp/b" --gate 'pass_rate>=0.6' --gate 'recall@10>=0.75' \
	--gate=ttft_p50_ratio'<=2' > /dev/null 2>&1 || fail "holding gates: exit $?"
rc=0; "$NEEDLE" diff "$tmp/a" "$tmp/b" --gate 'pass_rate>=0.6' --gate no_new_failures \
	> "$tmp/g.md" 2> "$tmp/g.err" || rc=$?
[ $rc = 1 ] || fail "no_new_failures: exit $rc"
grep -q 'gate failed: no_new_failures' "$tmp/g.err" || fail "failed gate not named"
grep -q 'PASS `pass_rate>=0.6`' "$tmp/g.md" || fail "gate list"
rc=0; "$NEEDLE" diff "$tmp/a" "$tmp/b" -g 'ttft_p50_ratio<=1.2' > /dev/null 2>&1 || rc=$?
[ $rc = 1 ] || fail "ttft ratio 2.0 > 1.2: exit $rc"
rc=0; "$NEEDLE" diff "$tmp/a" "$tmp/a" --gate no_new_failures --gate 'flips==0' \
	--gate 'pass_rate_delta==0' > /dev/null 2>&1 || rc=$?
[ $rc = 0 ] || fail "a vs a: exit $rc"
for bad in 'speed>=1' 'pass_rate' 'recall@x>=1' 'ttft_p95<=1' 'pass_rate>=abc'; do
	rc=0; "$NEEDLE" diff "$tmp/a" "$tmp/b" --gate "$bad" > /dev/null 2> "$tmp/err" || rc=$?
	[ $rc = 2 ] || fail "gate '$bad': exit $rc"
	grep -q "gate '$bad'" "$tmp/err" || fail "gate '$bad' not named: $(cat "$tmp/err")"
done
rc=0; "$NEEDLE" diff "$tmp/a" "$tmp/garbled" --gate no_new_failures > /dev/null 2> "$tmp/err" || rc=$?
[ $rc = 2 ] && grep -q "garbled/results.jsonl' line 2: not JSON: column 20 (byte 19): expected a member name" "$tmp/err" || fail "garbled: exit $rc"
rc=0; "$NEEDLE" diff "$tmp/a" > /dev/null 2>&1 || rc=$?
[ $rc = 2 ] || fail "one folder: exit $rc"
"$NEEDLE" diff "$tmp/a" "$tmp/b" --format json 2>/dev/null | node -e '
let t = ""; process.stdin.on("data", c => t += c).on("end", () => {
	const d = JSON.parse(t);
	process.exit(d.flips.pass_to_fail.length === 2 && d.flips.fail_to_pass.length === 4 &&
		d.overall.only_b_failed === 1 ? 0 : 1); });' || fail "diff --format json"
# served model names that differ late are quoted near the difference
long='ref-good:prefill=10000,tpot=2,batch=10,seqs=8,jitter=0.1,drift=10,drift_period=2,phase=30,seed=1'
sed -i "s/\"served_model\": \"m\"/\"served_model\": \"$long\"/" "$tmp/a/manifest.json"
sed -i "s/\"served_model\": \"m\"/\"served_model\": \"$long,slower=15\"/" "$tmp/b/manifest.json"
"$NEEDLE" diff "$tmp/a" "$tmp/b" --format json 2>/dev/null | grep -q "served model differs: '\.\.\.[^']*seed=1' in A, '\.\.\.[^']*seed=1,slower=15' in B" ||
	fail "long model names: the difference not shown"
"$NEEDLE" diff --help | grep -q 'GATE   := no_new_failures | METRIC OP NUMBER' || fail "help grammar"
echo "report/diff: files, formats, flips, gates 0/1/2, malformed input named"
