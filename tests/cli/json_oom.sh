#!/bin/sh
# json's builder, printer and parser under allocation failure: the Nth
# allocation and all later ones fail (NEEDLE_FAIL_ALLOC, which json_init
# extends to cJSON's own allocations), for every N until a run needs no
# failing allocation; each must end in ERR_NOMEM cleanly (test_json oom exits
# 3), never in a half-built value, a parse error or a leak.
set -eu
. "$TESTS/lib/cli.sh"
bin="$BUILD/tests/test_json"
asan="$BUILD/asan/tests/test_json"
[ -x "$asan" ] && bin=$asan # the sanitizer build, when it exists, catches more
export ASAN_OPTIONS=detect_leaks=1
n=1
while [ $n -le 1000 ]; do
	rc=0
	NEEDLE_FAIL_ALLOC=$n "$bin" oom || rc=$?
	case $rc in
	0) [ $n -gt 10 ] || fail "only $n allocations: is cJSON on mem's hooks?"
	   echo "ok: allocation failures 1..$((n - 1)) all handled"; exit 0 ;;
	3) ;;
	*) fail "failed with NEEDLE_FAIL_ALLOC=$n (exit $rc)" ;;
	esac
	n=$((n + 1))
done
fail "still failing allocations after $n"
