#!/bin/sh
# Runs test programs and prints one line per test, then the total as
# "N passed, N failed" (", N skipped" when any were).
# Usage: sh tests/run.sh [--fast] BUILD_DIR [ASAN_BUILD_DIR] [NAME...]
#   BUILD_DIR/tests/test_*     unit tests (C), named unit/test_NAME
#   tests/cli/*.sh             CLI and end-to-end tests, named cli/NAME; they
#                              get NEEDLE, BUILD and TESTS in the environment
#   ASAN_BUILD_DIR/tests/*     the unit tests again under ASan/UBSan, asan/test_NAME
# NAME (shell patterns, e.g. 'cli/shard_*' unit/test_jinja) runs only the tests
# whose name matches one; a pattern without a slash matches the part after it
# (shard_* is cli/shard_*). No test matching a NAME is an error (exit 2).
# --fast leaves out the CLI tests marked "# slow: WHY" in their first lines
# (`make check`).
# A test that exits 77 was skipped: it printed "skip: needs X" (an optional
# tool such as Chromium, Slurm or the pandas venv is missing; tests/lib/cli.sh
# `need`). Under CI=true a skip counts as a failure, so CI proves everything.
set -u
fast=0
if [ "${1:-}" = --fast ]; then
	fast=1
	shift
fi
[ $# -ge 1 ] || { echo "usage: sh tests/run.sh [--fast] BUILD_DIR [ASAN_BUILD_DIR] [NAME...]" >&2; exit 2; }
build=$1
shift
asan=
if [ $# -ge 1 ] && [ -d "$1" ]; then
	asan=$1
	shift
fi
root=$(cd "$(dirname "$0")/.." && pwd)
case $build in /*) ;; *) build=$root/$build ;; esac
case $asan in /*|"") ;; *) asan=$root/$asan ;; esac
passed=0
failed=0
skipped=0
matched=
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
# The tokenizer cache (harness/tok/tok_cache.h) of this run only: tests never
# write into the user's own cache folder.
XDG_CACHE_HOME=$log/cache
export XDG_CACHE_HOME
# Nor read the user's config file (harness/cli/config.h): an empty folder.
XDG_CONFIG_HOME=$log/config
export XDG_CONFIG_HOME

# wanted NAME: whether NAME (unit/test_x, cli/x, asan/test_x) is selected.
wanted() {
	_name=$1
	shift
	[ $# = 0 ] && return 0
	_hit=1
	for _p in "$@"; do
		case $_p in
		*/*) _in=$_name ;;
		*) _in=${_name#*/} ;;
		esac
		# shellcheck disable=SC2254
		case $_in in
		$_p) matched="$matched
$_p"
			_hit=0 ;;
		esac
	done
	return $_hit
}

run() {
	name=$1
	shift
	start=$(date +%s)
	st=0
	"$@" > "$log/out" 2>&1 || st=$?
	if [ $st = 0 ]; then
		passed=$((passed + 1))
		echo "ok   $name ($(( $(date +%s) - start ))s)"
	elif [ $st = 77 ] && [ "${CI:-}" != true ]; then
		skipped=$((skipped + 1))
		echo "skip $name: $(sed -n 's/^skip: //p' "$log/out" | head -1)"
	else
		failed=$((failed + 1))
		if [ $st = 77 ]; then
			echo "FAIL $name (skipped, and CI=true counts a skip as a failure)"
		else
			echo "FAIL $name"
		fi
		sed 's/^/     /' "$log/out" | tail -40
	fi
}

for t in "$build"/tests/test_*; do
	[ -x "$t" ] && wanted "unit/$(basename "$t")" "$@" && run "unit/$(basename "$t")" "$t"
done
for t in "$root"/tests/cli/*.sh; do
	[ -f "$t" ] || continue
	n=cli/$(basename "$t" .sh)
	wanted "$n" "$@" || continue
	[ $fast = 1 ] && sed -n 1,12p "$t" | grep -q '^# slow: ' && continue
	run "$n" env NEEDLE="$build/needle" BUILD="$build" TESTS="$root/tests" sh "$t"
done
if [ -n "$asan" ]; then
	for t in "$asan"/tests/test_*; do
		[ -x "$t" ] && wanted "asan/$(basename "$t")" "$@" &&
			run "asan/$(basename "$t")" env ASAN_OPTIONS=detect_leaks=1 "$t"
	done
fi
st=0
for p in "$@"; do
	if ! printf '%s\n' "$matched" | grep -qxF -- "$p"; then
		echo "no test matches '$p' (names: unit/test_NAME, cli/NAME, asan/test_NAME)" >&2
		st=2
	fi
done
if [ $skipped -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" = 0 ] || exit 1
exit $st
