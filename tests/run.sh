#!/bin/sh
# Runs every test layer and prints one line per test program, then the total
# as "N passed, N failed". Usage: sh tests/run.sh BUILD_DIR [ASAN_BUILD_DIR]
#   BUILD_DIR/tests/test_*     unit tests (C)
#   tests/cli/*.sh             CLI and end-to-end tests; they get NEEDLE, BUILD
#                              and TESTS in the environment
#   ASAN_BUILD_DIR/tests/*     the unit tests again under ASan/UBSan
set -u
build=$1
asan=${2:-}
root=$(cd "$(dirname "$0")/.." && pwd)
passed=0
failed=0
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
# The tokenizer cache (harness/tok/tok_cache.h) of this run only: tests never
# write into the user's own cache folder.
XDG_CACHE_HOME=$log/cache
export XDG_CACHE_HOME
# Nor read the user's config file (harness/cli/config.h): an empty folder.
XDG_CONFIG_HOME=$log/config
export XDG_CONFIG_HOME

run() {
	name=$1
	shift
	start=$(date +%s)
	if "$@" > "$log/out" 2>&1; then
		passed=$((passed + 1))
		echo "ok   $name ($(( $(date +%s) - start ))s)"
	else
		failed=$((failed + 1))
		echo "FAIL $name"
		sed 's/^/     /' "$log/out" | tail -40
	fi
}

for t in "$build"/tests/test_*; do
	[ -x "$t" ] && run "unit/$(basename "$t")" "$t"
done
for t in "$root"/tests/cli/*.sh; do
	[ -f "$t" ] || continue
	run "cli/$(basename "$t" .sh)" env NEEDLE="$root/$build/needle" \
		BUILD="$root/$build" TESTS="$root/tests" sh "$t"
done
if [ -n "$asan" ]; then
	for t in "$asan"/tests/test_*; do
		[ -x "$t" ] && run "asan/$(basename "$t")" \
			env ASAN_OPTIONS=detect_leaks=1 "$t"
	done
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
