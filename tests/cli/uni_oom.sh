#!/bin/sh
# uni's entry points (pattern rewrite in both forms, NFC) under allocation
# failure: the Nth allocation and all later ones fail, for every N until a
# run needs no failing allocation; each must report ERR_NOMEM cleanly.
set -eu
. "$TESTS/lib/cli.sh"
bin="$BUILD/tests/test_uni"
asan="$BUILD/asan/tests/test_uni"
[ -x "$asan" ] && bin=$asan # the sanitizer build, when it exists, catches more
n=1
while [ $n -le 5000 ]; do
	rc=0
	NEEDLE_FAIL_ALLOC=$n "$bin" oom || rc=$?
	case $rc in
	0) echo "ok: allocation failures 1..$((n - 1)) all handled"; exit 0 ;;
	3) ;;
	*) fail "NEEDLE_FAIL_ALLOC=$n: exit $rc" ;;
	esac
	n=$((n + 1))
done
fail "still failing allocations after $n"
