#!/bin/sh
# slow: fails each allocation in turn
# Out of memory at every allocation (SQLite-style fault injection, harness/base/mem.c:
# NEEDLE_FAIL_ALLOC=N fails the Nth allocation and all after it), under the
# ASan/UBSan build with leak detection, for real commands: `count` on two
# small tokenizers, `gen image`, `gen cases`. For every N the command must
# either succeed with exactly the output of an unhindered run, or exit 2 with
# an "out of memory" message, no sanitizer report, nothing on stdout (count),
# and no partial output: no temporary file, no suite file, no manifest, and
# every image it did write complete (io_write_file renames whole files in).
set -eu
. "$TESTS/lib/cli.sh"
needle=$BUILD/asan/needle
[ -x "$needle" ] || fail "$needle missing (run 'make asan' or 'make test')"
fix=$(fixture tokenizers)
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1

# run N DIR ARGS...: runs needle ARGS with the Nth allocation failing, in DIR
# (emptied first); sets st, and checks the outcome is success or a clean exit 2.
run() {
	n=$1 dir=$2
	shift 2
	rm -rf "$dir" && mkdir -p "$dir"
	st=0
	(cd "$dir" && NEEDLE_FAIL_ALLOC=$n "$needle" "$@" > "$tmp/out" 2> "$tmp/err") || st=$?
	if grep -q 'Sanitizer\|runtime error' "$tmp/err"; then
		fail "NEEDLE_FAIL_ALLOC=$n needle $*: sanitizer report: $(head -20 "$tmp/err")"
	fi
	case $st in
	0) ;;
	2)
		grep -q 'out of memory' "$tmp/err" ||
			fail "NEEDLE_FAIL_ALLOC=$n needle $*: exit 2 without 'out of memory': $(cat "$tmp/err")"
		[ -z "$(find "$dir" -name '*.tmp.*')" ] ||
			fail "NEEDLE_FAIL_ALLOC=$n needle $*: temporary files left: $(find "$dir" -name '*.tmp.*')"
		;;
	*) fail "NEEDLE_FAIL_ALLOC=$n needle $*: exit $st: $(head -20 "$tmp/err")" ;;
	esac
}

# sweep FIRST STEP CHECK ARGS...: N = FIRST, FIRST+STEP, ... until the command
# succeeds (N is then past its last allocation); CHECK judges each outcome.
# Fails when no N up to 2000 succeeds.
sweep() {
	n=$1 step=$2 check=$3
	shift 3
	while :; do
		run "$n" "$tmp/w" "$@"
		"$check" "$@"
		[ "$st" = 0 ] && break
		n=$((n + step))
		[ "$n" -le 2000 ] || fail "needle $*: still failing at NEEDLE_FAIL_ALLOC=$n"
	done
	[ "$n" -gt 1 ] || fail "needle $*: succeeded with the first allocation failing"
	echo "needle $*: clean at every tried N up to $n (step $step)"
}

printf 'Hello world, this is a test of 123 words.\n' > "$tmp/text"

check_count() {
	if [ "$st" = 0 ]; then
		cmp -s "$tmp/out" "$tmp/count.want" || fail "count: output differs after success"
	else
		[ ! -s "$tmp/out" ] || fail "count: stdout after exit 2: $(cat "$tmp/out")"
	fi
}
for t in split_Isolated added_tokens; do
	"$needle" count --tokenizer "$fix/$t.json" "$tmp/text" > "$tmp/count.want"
	sweep 1 1 check_count count --tokenizer "$fix/$t.json" "$tmp/text"
done

check_image() {
	if [ "$st" = 0 ]; then
		diff -r "$tmp/w/imgs" "$tmp/image.want/imgs" > /dev/null ||
			fail "gen image: output differs after success"
		return
	fi
	[ ! -e "$tmp/w/imgs/manifest.json" ] || fail "gen image: manifest written by a failed run"
	for f in "$tmp"/w/imgs/*.png; do
		[ -e "$f" ] || continue
		cmp -s "$f" "$tmp/image.want/imgs/$(basename "$f")" ||
			fail "gen image: incomplete $(basename "$f") left by a failed run"
	done
}
mkdir -p "$tmp/image.want"
(cd "$tmp/image.want" && "$needle" gen image --seed 3 --count 3 --numbers --size 64 --out imgs > /dev/null)
sweep 1 1 check_image gen image --seed 3 --count 3 --numbers --size 64 --out imgs

check_cases() {
	if [ "$st" = 0 ]; then
		cmp -s "$tmp/w/s.json" "$tmp/cases.want/s.json" || fail "gen cases: output differs"
	else
		[ ! -e "$tmp/w/s.json" ] || fail "gen cases: suite file written by a failed run"
	fi
}
for k in json all; do
	mkdir -p "$tmp/cases.want"
	(cd "$tmp/cases.want" && "$needle" gen cases --seed 1 --kind $k --out s.json > /dev/null)
	[ $k = json ] && step=1 || step=5
	sweep 1 $step check_cases gen cases --seed 1 --kind $k --out s.json
done
echo ok
