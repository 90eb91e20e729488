#!/bin/sh
# make bench: runs every tests/bench/bench_*.sh section with the build directory as its
# argument (env NEEDLE, TESTS set); prints each section's own report. A section's failure
# to meet its target is reported but does not stop the others; the exit code is non-zero
# if any section failed.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
case "$build" in /*) ;; *) build="$root/$build" ;; esac
status=0
for s in "$root"/tests/bench/bench_*.sh; do
	[ -f "$s" ] || continue
	echo "== $(basename "$s" .sh)"
	env NEEDLE="$build/needle" BUILD="$build" TESTS="$root/tests" sh "$s" "$build" || status=1
done
exit $status
