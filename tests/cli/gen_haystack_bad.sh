#!/bin/sh
# needle gen haystack on bad input: one clear message and exit 2 for each of
# N smaller than template + question, depths outside 0..100 or repeated, more
# needles than the document holds, unknown filler or template, bad numbers,
# and missing required options.
set -eu
. "$TESTS/lib/cli.sh"
tok=$(fixture hf/qwen3/tokenizer.json)

# expect_fail WANT ARGS...: exit 2, stderr names WANT in one line, no output directory.
expect_fail() {
	want=$1
	shift
	check_exit 2 "$want" "$NEEDLE" gen haystack "$@"
	check_one_line "gen haystack $*"
	[ ! -e "$tmp/o" ] || fail "gen haystack $*: wrote output"
}

base="--tokenizer $tok --template qwen3 --seed 1 --out $tmp/o"
expect_fail "too small: the template and question alone take" $base --tokens 20
expect_fail "is outside 0..100" $base --tokens 4000 --depths 10,150
expect_fail "is outside 0..100" $base --tokens 4000 --depths -5,50
expect_fail "given twice" $base --tokens 4000 --depths 10,50,10
expect_fail "wants percentages" $base --tokens 4000 --depths 10,,50
expect_fail "more needles than the document can hold" $base --tokens 300 --needles 16
expect_fail "3 needles but 2 depths" $base --tokens 4000 --needles 3 --depths 10,90
expect_fail "unknown filler 'poetry'" $base --tokens 4000 --filler poetry
expect_fail "ask '4' is more than the 3 needles" $base --tokens 4000 --ask 4
expect_fail "'--tokens' wants an integer" $base --tokens lots
expect_fail "'--seed' wants an integer" --tokenizer "$tok" --template qwen3 --tokens 4000 --seed -1 --out "$tmp/o"
expect_fail "are required" --tokenizer "$tok" --template qwen3 --tokens 4000 --out "$tmp/o"
expect_fail "nosuch" --tokenizer "$tok" --template nosuch --tokens 4000 --seed 1 --out "$tmp/o"
expect_fail "$tmp/missing.json" --tokenizer "$tmp/missing.json" --template qwen3 --tokens 4000 --seed 1 --out "$tmp/o"

# Out of memory at many points (NEEDLE_FAIL_ALLOC=N fails the Nth allocation
# and all after it): a clean error and exit 2, or success, never a crash.
# The number of allocations of one run is found by bisection; the points are
# spread over all of it, denser over the last part (generation and writing).
oom() {
	st=0
	NEEDLE_FAIL_ALLOC=$1 "$NEEDLE" gen haystack --tokenizer "$tok" --template qwen3 --seed 1 \
		--tokens 3000 --distractors 2 --out "$tmp/oom" > /dev/null 2> "$tmp/err" || st=$?
	case $st in
	0) return 0 ;;
	2) grep -q '^error: ' "$tmp/err" || fail "NEEDLE_FAIL_ALLOC=$1: exit 2 without a message"
	   return 1 ;;
	*) fail "NEEDLE_FAIL_ALLOC=$1: exit $st: $(cat "$tmp/err")" ;;
	esac
}
lo=1
hi=1000000
while [ $((hi - lo)) -gt 1 ]; do
	mid=$(((lo + hi) / 2))
	if oom $mid; then hi=$mid; else lo=$mid; fi
done
[ $lo -gt 100 ] || fail "only $lo allocations: the hook is not working"
for n in 1 2 5 13 34 89; do oom $n && fail "NEEDLE_FAIL_ALLOC=$n succeeded"; done
# The last part counts filler on two threads, so how many allocations a run
# makes varies a little: there only a clean outcome (success or exit 2 with a
# message) is required, not a failure.
i=0
while [ $i -lt 16 ]; do
	oom $((lo - lo * i / 40)) || true
	i=$((i + 1))
done

# --help documents the options and the examples, exit 0.
"$NEEDLE" gen haystack --help > "$tmp/help" || fail "--help exit status"
grep -q -- '--distractors' "$tmp/help" && grep -q 'Examples:' "$tmp/help" || fail "--help text"
echo "ok"
