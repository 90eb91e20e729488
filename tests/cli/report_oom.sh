#!/bin/sh
# 'needle report' and 'needle diff' under allocation failure: the Nth
# allocation and all later ones fail (NEEDLE_FAIL_ALLOC), for every N until
# both need no failing allocation; each run must end cleanly with exit 0 or 2
# (under ASan/UBSan when that build exists), never crash.
set -eu
root=$(cd "$TESTS/.." && pwd)
bin=$NEEDLE
[ -x "$BUILD/asan/needle" ] && bin=$BUILD/asan/needle
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -R "$root/fixtures/results/a" "$root/fixtures/results/b" "$tmp/"
n=1
while [ $n -le 2000 ]; do
	rc=0
	NEEDLE_FAIL_ALLOC=$n "$bin" report "$tmp/a" > /dev/null 2> "$tmp/err" || rc=$?
	rc2=0
	NEEDLE_FAIL_ALLOC=$n "$bin" diff "$tmp/a" "$tmp/b" > /dev/null 2> "$tmp/err2" || rc2=$?
	for r in $rc $rc2; do
		case $r in 0|2) ;; *) echo "FAIL: NEEDLE_FAIL_ALLOC=$n exit $rc/$rc2"; cat "$tmp/err" "$tmp/err2"; exit 1 ;; esac
	done
	if grep -q 'runtime error\|Sanitizer' "$tmp/err" "$tmp/err2"; then
		echo "FAIL: NEEDLE_FAIL_ALLOC=$n"; cat "$tmp/err" "$tmp/err2"; exit 1
	fi
	if [ $rc = 0 ] && [ $rc2 = 0 ]; then
		echo "report/diff: allocation failures 1..$((n - 1)) all handled"
		exit 0
	fi
	n=$((n + 1))
done
echo "FAIL: still failing allocations after $n"
exit 1
