#!/bin/sh
# slow: fails each allocation in turn
# 'needle report' and 'needle diff' under allocation failure: the Nth
# allocation and all later ones fail (NEEDLE_FAIL_ALLOC), for every N until
# the command needs no failing allocation (past N = 150 the step is 3%
# of N), under ASan/UBSan when that build exists. On two pairs of folders:
# the hand-written fixtures/results/a and b, and two real run folders that
# 'needle run' writes against the reference server (a recall grid and a chat
# case, the good and the forgetful model). For every N:
#  - the exit is 0 or 2, never a signal or a sanitizer report;
#  - exit 0: stdout and the written summary.json, summary.md and recall.png
#    are byte for byte those of an unhindered run;
#  - exit 2: a message on stderr, nothing on stdout, no temporary file, and
#    either no summary.*/recall.png or the whole set as an unhindered run
#    writes it (the files are staged and renamed in together; a failure while
#    rendering stdout comes after them): never a partial one.
set -eu
. "$TESTS/lib/cli.sh"
root=$ROOT
DEEPSEEK_JSON=$(fixture hf/deepseek_v3/tokenizer.json)
bin=$NEEDLE
[ -x "$BUILD/asan/needle" ] && bin=$BUILD/asan/needle

# fresh DIR SRC: DIR becomes a copy of run folder SRC without its report.
fresh() {
	rm -rf "$1" && mkdir -p "$1"
	cp "$2/results.jsonl" "$1/"
	[ ! -f "$2/manifest.json" ] || cp "$2/manifest.json" "$1/"
}

# outcome WHAT N RC: judges one run's exit status and messages.
outcome() {
	if grep -q 'runtime error\|Sanitizer' "$tmp/err"; then
		fail "$1 NEEDLE_FAIL_ALLOC=$2: $(head -20 "$tmp/err")"
	fi
	case $3 in
	0) cmp -s "$tmp/out" "$tmp/want.out" || fail "$1 NEEDLE_FAIL_ALLOC=$2: stdout differs after success" ;;
	2)
		[ -s "$tmp/err" ] || fail "$1 NEEDLE_FAIL_ALLOC=$2: exit 2 without a message"
		[ ! -s "$tmp/out" ] || fail "$1 NEEDLE_FAIL_ALLOC=$2: stdout after exit 2" ;;
	*) fail "$1 NEEDLE_FAIL_ALLOC=$2: exit $3: $(head -20 "$tmp/err")" ;;
	esac
}

# files_ok N: after a report, the folder holds its whole report, byte for
# byte that of an unhindered run, or none of it (a report that fails after
# writing, on rendering stdout, leaves the whole set).
files_ok() {
	left=$(cd "$tmp/w/a" && ls -A | grep -v '^results.jsonl$\|^manifest.json$' || true)
	[ -n "$left" ] || return 0
	for f in $left; do
		[ -f "$tmp/want/$f" ] || fail "report NEEDLE_FAIL_ALLOC=$1: left $f"
	done
	for f in summary.json summary.md recall.png; do
		[ ! -f "$tmp/want/$f" ] && continue
		cmp -s "$tmp/w/a/$f" "$tmp/want/$f" || fail "report NEEDLE_FAIL_ALLOC=$1: $f missing or differs"
	done
}

# sweep A B: sweeps 'report A' and 'diff A B' (copies in $tmp/w/a, $tmp/w/b).
sweep() {
	fresh "$tmp/w/b" "$2"
	fresh "$tmp/w/a" "$1"
	"$NEEDLE" report "$tmp/w/a" > "$tmp/want.report" 2> "$tmp/err" || fail "report $1: $(cat "$tmp/err")"
	rm -rf "$tmp/want" && cp -R "$tmp/w/a" "$tmp/want"
	rc=0
	"$NEEDLE" diff "$tmp/w/a" "$tmp/w/b" > "$tmp/want.diff" 2> "$tmp/err" || rc=$?
	[ $rc = 0 ] || [ $rc = 1 ] || fail "diff $1 $2: exit $rc: $(cat "$tmp/err")"
	n=1 rdone=0 ddone=0
	while [ $rdone = 0 ] || [ $ddone = 0 ]; do
		if [ $rdone = 0 ]; then
			fresh "$tmp/w/a" "$1"
			rc=0
			NEEDLE_FAIL_ALLOC=$n "$bin" report "$tmp/w/a" > "$tmp/out" 2> "$tmp/err" || rc=$?
			cp "$tmp/want.report" "$tmp/want.out"
			outcome report $n $rc
			files_ok $n
			[ $rc = 0 ] && rdone=$n
		fi
		if [ $ddone = 0 ]; then
			fresh "$tmp/w/a" "$1"
			rc=0
			NEEDLE_FAIL_ALLOC=$n "$bin" diff "$tmp/w/a" "$tmp/w/b" > "$tmp/out" 2> "$tmp/err" || rc=$?
			cp "$tmp/want.diff" "$tmp/want.out"
			[ $rc = 1 ] && [ -s "$tmp/out" ] && rc=0 # a failed gate is not a failure here
			outcome diff $n $rc
			[ $rc = 0 ] && ddone=$n
		fi
		[ $n -lt 150 ] && n=$((n + 1)) || n=$((n + n * 3 / 100))
		[ $n -le 200000 ] || fail "$1: still failing allocations at $n"
	done
	[ $rdone -gt 1 ] && [ $ddone -gt 1 ] || fail "$1: succeeded with the first allocation failing"
	echo "$(basename "$1"): report clean at every tried N up to $rdone, diff up to $ddone"
}

sweep "$root/fixtures/results/a" "$root/fixtures/results/b"

refserver_start --log "$tmp/server.log"
cat > "$tmp/suite.json" <<'JSON'
{"suite": "oom-small", "defaults": {"max_tokens": 64, "temperature": 0},
 "cases": [
  {"id": "hello", "kind": "chat", "messages": [{"role": "user", "content": "Say hello."}],
   "expect": {"contains": ["hello"]}},
  {"id": "r2k", "kind": "recall", "recall": {"tokens": 2048, "depths": [10, 50], "seeds": [1], "needles": 2, "filler": "prose"}}
 ]}
JSON
for m in good forgetful; do
	rc=0
	"$NEEDLE" run "$tmp/suite.json" --base-url "$REF_URL/v1" --model "ref-$m" \
		--tokenizer "$DEEPSEEK_JSON" --template deepseek-v3 --out "$tmp/run/$m" > "$tmp/run.$m" 2>&1 || rc=$?
	[ -s "$tmp/run/$m/results.jsonl" ] && [ -s "$tmp/run/$m/manifest.json" ] ||
		fail "ref-$m: run (exit $rc) wrote no run folder: $(cat "$tmp/run.$m")"
done
sweep "$tmp/run/good" "$tmp/run/forgetful"
