#!/bin/sh
# slow: runs against slow reference models
# The runner's command line a person expects: 'needle run smoke' finds the
# shipped suite; --case repeats (any pattern); --repeat 0 is refused; default
# results folders carry the model and never collide in a loop; the end of a
# failing run names each failing case with its reasons and says what to do
# (a wrong --model: the 404 and the served names; ref-forgetful: the lost
# fact); Ctrl-C stops cleanly, prints the command that finishes the run, the
# report says INCOMPLETE, and that command completes it.
set -eu
. "$TESTS/lib/cli.sh"
refserver_start
mkdir "$tmp/cwd"
cd "$tmp/cwd"

check_exit 2 "option '--repeat' wants 1 to" "$NEEDLE" run smoke --base-url "$REF_URL/v1" --repeat 0
check_one_line "--repeat 0"

# a wrong model: the terminal names the cases, the 404 and the served models
check_exit 1 "" "$NEEDLE" run smoke --base-url "$REF_URL/v1" --model nope --case 'json-a*' --case 'tool-w*'
grep -q '^  json-arith-19x23: 3 of 3 failed (transport: http_status 404 x3): transport: HTTP 404' "$tmp/err" ||
	fail "404 case line: $(cat "$tmp/err")"
grep -q '^  tool-weather: 1 of 1 failed' "$tmp/err" || fail "second --case: $(cat "$tmp/err")"
grep -q "^what to do: every request got HTTP 404: the server serves 'ref-good', .* not 'nope'" "$tmp/err" ||
	fail "404 advice: $(cat "$tmp/err")"
[ "$(grep -c '^  ' "$tmp/err")" = 2 ] || fail "not 2 failing cases: $(cat "$tmp/err")"
dir=$(ls -d results/smoke-nope-*)
grep -q "^\*\*What to do:\*\* every request got HTTP 404: the server serves" "$dir/summary.md" || fail "summary.md advice"

# ref-forgetful: the lost fact, by case
check_exit 1 "" "$NEEDLE" run smoke --base-url "$REF_URL/v1" --model ref-forgetful --case 'multiturn-en-*'
grep -q "^  multiturn-en-facts: 1 of 1 failed (grade: missing key 'city' x1" "$tmp/err" || fail "forgetful: $(cat "$tmp/err")"

# default folders in a loop: all distinct, each with its own journal
i=0
while [ $i -lt 4 ]; do
	"$NEEDLE" run smoke --base-url "$REF_URL/v1" --model ref-good --case json-arith-19x23 --repeat 1 2> /dev/null
	i=$((i + 1))
done
[ "$(ls -d results/smoke-ref-good-*Z* | wc -l)" = 4 ] || fail "folders collided: $(ls results)"
for d in results/smoke-ref-good-*; do [ "$(wc -l < "$d/results.jsonl")" = 1 ] || fail "$d: $(wc -l < "$d/results.jsonl") records"; done

# Ctrl-C: stops at the next poll, keeps what finished, prints how to finish
"$NEEDLE" run smoke --base-url "$REF_URL/v1" --model ref-slow --case 'json-*' --out "$tmp/cut" 2> "$tmp/cut.err" &
pid=$!
sleep 2.5
kill -INT $pid
rc=0; wait $pid || rc=$?
[ $rc = 5 ] || fail "interrupted run: exit $rc: $(cat "$tmp/cut.err")"
grep -q '^INCOMPLETE: ' "$tmp/cut.err" || fail "no INCOMPLETE line: $(cat "$tmp/cut.err")"
grep -q '^\*\*INCOMPLETE\*\*' "$tmp/cut/summary.md" || fail "summary.md not INCOMPLETE"
hint=$(sed -n 's/^  needle run /run /p' "$tmp/cut.err")
case "$hint" in *"--case 'json-*'"*"--resume") ;; *) fail "resume hint: $(cat "$tmp/cut.err")" ;; esac
n=$(wc -l < "$tmp/cut/results.jsonl")
[ "$n" -ge 1 ] && [ "$n" -lt 36 ] || fail "$n records after the interrupt"
eval "set -- $hint"
# another model is another experiment: --resume refuses it and names the change
! "$NEEDLE" "$@" --model ref-good 2> "$tmp/other.err" || fail "resumed against another model"
grep -q 'the served model changed' "$tmp/other.err" || fail "resume refusal: $(cat "$tmp/other.err")"
"$NEEDLE" "$@" 2> "$tmp/resume.err" || fail "the resume hint did not finish the run: $(cat "$tmp/resume.err")"
[ "$(wc -l < "$tmp/cut/results.jsonl")" = 36 ] || fail "resumed run has $(wc -l < "$tmp/cut/results.jsonl") records"
! grep -q 'INCOMPLETE' "$tmp/cut/summary.md" || fail "finished run still INCOMPLETE"
echo "ux_run: shipped name, --case x2, --repeat 0, unique folders, failing cases named, Ctrl-C and resume"
