#!/bin/sh
# slow: runs interrupted and resumed
# Issue 8 items 3, 4, 5: an incomplete run never passes a gate; --resume continues
# the same experiment or refuses, naming the difference; one writer per results
# folder. Against the loopback reference server.
set -eu
. "$TESTS/lib/cli.sh"
refserver_start
node -e '
const cases = [[19, 23], [7, 6], [12, 12], [101, 3]].map(([a, b], i) => ({
	id: "mul" + i, kind: "chat", max_tokens: 64,
	messages: [{ role: "user", content: `Compute ${a} * ${b}. Reply with only a JSON object {"answer": <integer>}.` }],
	expect: { json: { answer: a * b } } }));
process.stdout.write(JSON.stringify({ suite: "gates", cases }));' >"$tmp/suite.json"
run() { "$NEEDLE" run "$tmp/suite.json" --base-url "$REF_URL/v1" --timeout 20 "$@"; }
field() { node -e 'let v=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));for(const k of process.argv[2].split("."))v=v==null?v:v[k];console.log(JSON.stringify(v))' "$1" "$2"; }

# --- item 3: the plan, INCOMPLETE, gates -------------------------------------
check_exit 0 "" run --model ref-good --out "$tmp/a"
[ "$(field "$tmp/a/manifest.json" planned.attempts)" = 4 ] || fail "manifest: planned.attempts is not 4"
[ "$(field "$tmp/a/manifest.json" planned.keys.length)" = 4 ] || fail "manifest: not 4 planned keys"
field "$tmp/a/manifest.json" planned.keys.0 | grep -q '^"mul0\\u001f1\\u001fnull"$' ||
	fail "manifest: the first planned key is not mul0/1/null: $(field "$tmp/a/manifest.json" planned.keys.0)"
check_exit 0 "" "$NEEDLE" report "$tmp/a"
! grep -q INCOMPLETE "$tmp/out" "$tmp/err" || fail "a complete run reported INCOMPLETE"
[ "$(field "$tmp/a/summary.json" attempts.complete)" = true ] || fail "summary: a complete run is not complete"

# B: the same run stopped half-way (2 of 4 records kept, as a kill leaves it).
cp -r "$tmp/a" "$tmp/b"
head -n 2 "$tmp/a/results.jsonl" >"$tmp/b/results.jsonl"
check_exit 0 "INCOMPLETE: 2/4 planned attempts" "$NEEDLE" report "$tmp/b"
head -n 3 "$tmp/out" | grep -qF '**INCOMPLETE: 2/4**' || fail "report: INCOMPLETE is not at the top: $(head -n 5 "$tmp/out")"
head -n 3 "$tmp/b/summary.md" | grep -qF '**INCOMPLETE: 2/4**' || fail "summary.md: INCOMPLETE is not at the top"
[ "$(field "$tmp/b/summary.json" attempts.complete)" = false ] || fail "summary.json: complete is not false"
[ "$(field "$tmp/b/summary.json" attempts.planned)" = 4 ] || fail "summary.json: planned is not 4"
[ "$(field "$tmp/b/summary.json" attempts.planned_done)" = 2 ] || fail "summary.json: planned_done is not 2"

check_exit 0 "" "$NEEDLE" diff "$tmp/a" "$tmp/a" --gate 'pass_rate>=0.5' --gate no_new_failures
for gate in 'pass_rate>=0.5' no_new_failures 'flips<=0'; do
	check_exit 1 "run B is INCOMPLETE: 2/4 planned attempts recorded" "$NEEDLE" diff "$tmp/a" "$tmp/b" --gate "$gate"
	grep -qF "gate failed: $gate" "$tmp/err" || fail "diff: gate '$gate' not said to fail: $(cat "$tmp/err")"
	check_exit 1 "run A is INCOMPLETE" "$NEEDLE" diff "$tmp/b" "$tmp/a" --gate "$gate"
done
grep -qF '**INCOMPLETE:** run A is INCOMPLETE' "$tmp/out" || fail "diff markdown: no INCOMPLETE line"
check_exit 0 "warning: run B is INCOMPLETE" "$NEEDLE" diff "$tmp/a" "$tmp/b" --gate 'pass_rate>=0.5' --allow-incomplete
check_exit 0 "" "$NEEDLE" diff "$tmp/a" "$tmp/b" # no gate: a comparison only
"$NEEDLE" diff "$tmp/a" "$tmp/b" --gate 'pass_rate>=0.5' --format json >"$tmp/d.json" 2>/dev/null || true
[ "$(field "$tmp/d.json" gates.0.ok)" = false ] || fail "diff json: the gate is not false"
field "$tmp/d.json" gates.0.detail | grep -q 'allow-incomplete' || fail "diff json: the detail lacks the reason"

# No attempt matched: C ran other case ids, complete.
sed 's/"mul/"other/g' "$tmp/suite.json" >"$tmp/other.json"
check_exit 0 "" "$NEEDLE" run "$tmp/other.json" --base-url "$REF_URL/v1" --model ref-good --out "$tmp/c" --timeout 20
check_exit 1 "no attempt of B matched one of A" "$NEEDLE" diff "$tmp/a" "$tmp/c" --gate 'pass_rate>=0.5'
# A gate on a case neither run has is a usage error; one B has is fine.
check_exit 2 "gate 'pass_rate@nope>=1': case 'nope' is in neither run" "$NEEDLE" diff "$tmp/a" "$tmp/a" --gate 'pass_rate@nope>=1'
check_exit 0 "" "$NEEDLE" diff "$tmp/a" "$tmp/a" --gate 'pass_rate@mul1>=1'

# --- item 4: --resume continues the same experiment or refuses --------------
check_exit 2 "the served model changed since the run started (was \"ref-good\", now \"ref-prose\")" \
	run --model ref-prose --out "$tmp/b" --resume
check_one_line "resume, other model"
# A narrower --case resumes the same experiment but never shrinks the plan.
check_exit 0 "" run --model ref-good --out "$tmp/b" --resume --case 'mul1'
[ "$(field "$tmp/b/manifest.json" planned.attempts)" = 4 ] || fail "resume --case shrank the plan"
check_exit 0 "INCOMPLETE: 2/4" "$NEEDLE" report "$tmp/b"
check_exit 2 "option '--server' changed" run --model ref-good --out "$tmp/b" --resume --server sglang
port=${REF_URL##*:}
refserver_stop
refserver_start --port "$port" --dialect sglang
check_exit 2 "the server flavour changed since the run started (was \"vllm\", now \"sglang\")" \
	run --model ref-good --out "$tmp/b" --resume
refserver_stop
refserver_start
check_exit 2 "the endpoint changed since the run started" run --model ref-good --out "$tmp/b" --resume
[ "$(wc -l <"$tmp/b/results.jsonl" | tr -d ' ')" = 2 ] || fail "a refused resume changed the journal"
# the same experiment resumes and completes
refserver_stop
refserver_start --port "$port"
check_exit 0 "2 recorded before" run --model ref-good --out "$tmp/b" --resume
[ "$(wc -l <"$tmp/b/results.jsonl" | tr -d ' ')" = 4 ] || fail "resume did not complete the run"
check_exit 0 "" "$NEEDLE" diff "$tmp/a" "$tmp/b" --gate 'pass_rate>=1' --gate no_new_failures

# --- item 5: one writer per folder --------------------------------------------
run --model ref-slow:delay=1500 --out "$tmp/locked" >"$tmp/first.out" 2>&1 &
first=$!
track "$first"
i=0
until [ -f "$tmp/locked/manifest.json" ]; do
	i=$((i + 1)); [ $i -lt 200 ] || fail "the first run did not start: $(cat "$tmp/first.out")"; sleep 0.05
done
for flag in "" --resume; do
	t0=$(date +%s)
	check_exit 2 "is in use by another needle run" run --model ref-slow:delay=1500 --out "$tmp/locked" $flag
	check_one_line "second writer $flag"
	[ $(( $(date +%s) - t0 )) -le 3 ] || fail "the second writer was not refused at once"
done
wait "$first" || fail "the first run failed: $(cat "$tmp/first.out")"
[ "$(wc -l <"$tmp/locked/results.jsonl" | tr -d ' ')" = 4 ] || fail "the first run's journal is not 4 records"
check_exit 0 "4 recorded before" run --model ref-slow:delay=1500 --out "$tmp/locked" --resume
echo "incomplete runs fail every gate; resume refuses other experiments; a second writer is refused"
