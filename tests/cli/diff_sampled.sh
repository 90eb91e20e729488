#!/bin/sh
# The functional gates against sampling noise (fungate.h), end to end on the strict-JSON
# tasks (suites/json-tasks.json: 12 tasks x 3 repeats at temperature 1) through the
# reference server making answers wrong at random (wrong_p, wrong_seed, wrong_case). One
# fresh server and every run at --concurrency 1, each model name drawing from its own
# seeded generator: the answers, and so every verdict below, are the same on every run
# of this test (tests/bench/fungate_rates.sh measures the rates over many seeds).
#  - records keep the temperature; diff marks sampled flips and per-case samples;
#  - the same model twice (10% wrong) never fails; 50% wrong fails; one task always
#    wrong never passes, and the diff names that task with its counts;
#  - what is not sampling stays a hard fail: the same suite at temperature 0, and a
#    transport failure (an empty answer) in B;
#  - pass_rate_delta judges its samples too.
set -eu
. "$TESTS/lib/cli.sh"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
suite=$(fixture suites/json-tasks.json)
refserver_start

run() { # OUT MODEL [SUITE]
	st=0
	"$NEEDLE" run "${3:-$suite}" --base-url "$REF_URL/v1" --model "$2" --tokenizer "$ds" \
		--template deepseek-v3 --concurrency 1 --out "$tmp/$1" >"$tmp/$1.log" 2>&1 || st=$?
	[ "$st" -le 1 ] || fail "run $1 ($2): exit $st: $(tail -3 "$tmp/$1.log")"
}
gate() { # A B GATE...: the diff's exit status in $g, its JSON in $tmp/diff.json
	a=$1 b=$2
	shift 2
	g=0
	"$NEEDLE" diff "$tmp/$a" "$tmp/$b" --format json "$@" >"$tmp/diff.json" 2>"$tmp/diff.err" || g=$?
	case $g in 0 | 1 | 4) ;; *) fail "diff $a $b: exit $g: $(cat "$tmp/diff.err")" ;; esac
}

for i in 1 2 3; do
	run "a$i" "ref-good:wrong_p=0.1,wrong_seed=$i"
	run "aa$i" "ref-good:wrong_p=0.1,wrong_seed=$i"
	run "w50_$i" "ref-good:wrong_p=0.5,wrong_seed=$i"
	run "one$i" "ref-good:wrong_p=0.1,wrong_seed=$i,wrong_case=Compute 19 * 23"
	gate "a$i" "aa$i" --gate no_new_failures
	[ "$g" != 1 ] || fail "A/A pair $i failed: $(cat "$tmp/diff.err")"
	gate "a$i" "w50_$i" --gate no_new_failures
	[ "$g" = 1 ] || fail "50% wrong, pair $i: exit $g, expected 1"
	grep -q 'pooled one-sided mid-p' "$tmp/diff.err" || fail "50% wrong: no pooled test named: $(cat "$tmp/diff.err")"
	gate "a$i" "one$i" --gate no_new_failures
	[ "$g" != 0 ] || fail "one task always wrong passed, pair $i"
	node -e '
const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const c = d.gates[0].cases || [];
const x = c.find(k => k.case === "json-arith-19x23");
if (!x || x.b_pass !== 0 || x.n !== 3 || !(x.p < 0.05) || !(x.verdict === "fail" || x.verdict === "underpowered"))
	throw new Error("the always-wrong task is not named with its counts: " + JSON.stringify(c));
if (x.verdict === "underpowered" && !(x.repeats > 3 && x.repeats <= 100))
	throw new Error("no repeats that would settle it: " + JSON.stringify(x));
const row = d.cases.find(k => k.id === "json-arith-19x23");
if (!row || !row.sampled || row.sampled.total !== 3 || row.sampled.b_pass !== 0)
	throw new Error("the per-case table lacks the samples: " + JSON.stringify(row));
' "$tmp/diff.json" || fail "pair $i: $(cat "$tmp/diff.err")"
	grep -q 'json-arith-19x23: A [0-9]/3, B 0/3' "$tmp/diff.err" || fail "the detail does not name the task: $(cat "$tmp/diff.err")"
done
node "$TESTS/refserver/records.js" "$tmp/a1" 'recs.length === 36 && recs.every(r => r.temperature === 1)' "temperature kept" ||
	fail "records lack the temperature"

# pass_rate_delta judges samples: the same model twice is not a failure, 50% wrong is
gate a1 aa1 --gate 'pass_rate_delta>=0'
[ "$g" != 1 ] || fail "pass_rate_delta on A/A failed: $(cat "$tmp/diff.err")"
gate a1 w50_1 --gate 'pass_rate_delta>=-0.05'
[ "$g" = 1 ] || fail "pass_rate_delta on 50% wrong: exit $g"

# not sampling: at temperature 0 every flip counts, as it always did
node -e '
const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
for (const c of s.cases) c.temperature = 0;
process.stdout.write(JSON.stringify(s));' "$suite" >"$tmp/t0.json"
run t0a "ref-good:wrong_p=0.1,wrong_seed=11" "$tmp/t0.json"
run t0b "ref-good:wrong_p=0.1,wrong_seed=11" "$tmp/t0.json"
gate t0a t0b --gate no_new_failures
node -e '
const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const pf = d.flips.pass_to_fail;
if (!pf.length || pf.some(f => f.sampled)) throw new Error("temperature 0: " + JSON.stringify(pf));
if (d.cases.some(c => c.sampled)) throw new Error("temperature 0 cases counted as samples");' "$tmp/diff.json" ||
	fail "temperature 0 flips"
[ "$g" = 1 ] || fail "temperature 0 flips: exit $g, expected 1"
grep -q 'no sampled attempt' "$tmp/diff.err" || fail "temperature 0: $(cat "$tmp/diff.err")"

# not sampling: an empty answer (a transport failure) in B fails however the rest went
run tra "ref-good"
run trb "ref-good:empty_at=5"
gate tra trb --gate no_new_failures
[ "$g" = 1 ] || fail "a transport failure in B: exit $g, expected 1"
grep -q '^gate failed: no_new_failures: 1 pass->fail flips not explained by sampling' "$tmp/diff.err" ||
	fail "a transport failure in B: $(cat "$tmp/diff.err")"
echo "diff sampled: 3 pairs each: A/A never fails, 50% wrong fails, one task always wrong never passes; temperature 0 and transport failures stay hard"
