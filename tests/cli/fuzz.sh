#!/bin/sh
# slow: replays every fuzz target against the ASan build
# Fuzz targets under ASan/UBSan, bounded: each tests/fuzz/fuzz_NAME.c is linked
# with the plain driver (tests/fuzz/driver.c) and the sanitizer build of the
# library ($BUILD/asan/libneedle.a, and libneedle-cli.a for the command line's
# config file, made by `make test`), then replays its seed
# corpus tests/fuzz/corpus/NAME/ and runs deterministic mutations of it
# (FUZZ_ITERATIONS, default 10000, or FUZZ_SECONDS_EACH, default 3, per target,
# whichever ends first). Any sanitizer report or abort fails the test and
# leaves the input in $FUZZ_KEEP (default build/fuzz-crashes). Real libFuzzer
# runs: `make fuzz`.
set -eu
. "$TESTS/lib/cli.sh"
lib=$BUILD/asan/libneedle.a
need "the ASan build $lib" "make asan" test -f "$lib"
clilib=$BUILD/asan/libneedle-cli.a
need "the ASan build $clilib" "make asan" test -f "$clilib"
keep=${FUZZ_KEEP:-$BUILD/fuzz-crashes}

pkgs="libcurl libcjson libpcre2-8 libpng openssl sentencepiece libutf8proc"
san="-fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer"
cflags="-std=c11 -O1 -g -Wall -Wextra -Werror -Wshadow -Wno-missing-field-initializers
-D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I$ROOT/harness -I$ROOT
$(pkg-config --cflags $pkgs)"
# libcurl is loaded at run time (harness/net/curlapi.c), never linked
libs="$(pkg-config --libs ${pkgs#libcurl }) -lstdc++ -lm"

failed=0
ran=0
for src in "$TESTS"/fuzz/fuzz_*.c; do
	name=$(basename "$src" .c)
	name=${name#fuzz_}
	corpus=$TESTS/fuzz/corpus/$name
	[ -d "$corpus" ] || { echo "FAIL: $name has no corpus $corpus" >&2; failed=1; continue; }
	# shellcheck disable=SC2086
	${CC:-cc} $cflags $san -o "$tmp/$name" "$TESTS/fuzz/driver.c" "$TESTS/fuzz/init.c" "$src" "$clilib" "$lib" $libs
	mkdir -p "$tmp/crash-$name"
	if FUZZ_CRASH_DIR="$tmp/crash-$name" \
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
		UBSAN_OPTIONS=print_stacktrace=1 \
		"$tmp/$name" "$corpus" "${FUZZ_ITERATIONS:-10000}" "${FUZZ_SECONDS_EACH:-3}" \
		> "$tmp/$name.log" 2>&1; then
		tail -1 "$tmp/$name.log"
		ran=$((ran + 1))
	else
		mkdir -p "$keep"
		cp "$tmp/crash-$name/fuzz-crash-input" "$keep/$name-crash" 2>/dev/null || true
		echo "FAIL: fuzz target '$name' (input kept in $keep/$name-crash):" >&2
		head -40 "$tmp/$name.log" >&2
		failed=1
	fi
done
[ "$ran" -gt 0 ] || fail "no fuzz target ran"
exit "$failed"
