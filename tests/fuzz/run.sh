#!/bin/sh
# `make fuzz`: links each tests/fuzz/fuzz_NAME.c with libFuzzer and the clang
# sanitizer build of the library in FUZZ_BUILD, then fuzzes it for SECONDS,
# starting from the committed seeds tests/fuzz/corpus/NAME/. New inputs go to
# FUZZ_BUILD/corpus/NAME (the committed corpus is not touched); crashes to
# FUZZ_BUILD/artifacts/NAME-*. Exit 1 when any target found something.
# Usage: sh tests/fuzz/run.sh FUZZ_BUILD SECONDS [NAME...]
set -eu
build=$1
seconds=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
pkgs="libcurl libcjson libpcre2-8 libpng openssl sentencepiece libutf8proc"
names=${*:-$(cd "$here" && ls fuzz_*.c | sed 's/^fuzz_//; s/\.c$//')}
failed=""
mkdir -p "$build/bin" "$build/artifacts"
for name in $names; do
	# shellcheck disable=SC2046
	clang -std=c11 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-fno-omit-frame-pointer -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE \
		-I"$root/harness" -I"$root" $(pkg-config --cflags $pkgs) \
		-o "$build/bin/$name" "$here/init.c" "$here/fuzz_$name.c" "$build/libneedle-cli.a" "$build/libneedle.a" \
		$(pkg-config --libs $pkgs) -lstdc++ -lm
	mkdir -p "$build/corpus/$name"
	echo "fuzz: $name for ${seconds}s"
	if ! "$build/bin/$name" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
		-max_len=65536 -print_final_stats=1 \
		-artifact_prefix="$build/artifacts/$name-" \
		"$build/corpus/$name" "$here/corpus/$name" > "$build/$name.log" 2>&1; then
		failed="$failed $name"
		grep -A30 'ERROR\|deadly signal\|runtime error' "$build/$name.log" | head -40 >&2
	fi
	grep -E '^stat::number_of_executed_units|^stat::new_units_added' "$build/$name.log" |
		sed "s/^/  $name /"
done
[ -z "$failed" ] || { echo "fuzz: findings in:$failed (see $build/artifacts)" >&2; exit 1; }
