#!/bin/sh
# tests/cli/structure.sh catches what it promises, whatever today's tree
# holds: on a copy of harness/ and generators/ with one violation of each
# kind planted, it exits 1 and names every one by its key; a function of
# exactly 80 lines and a repeated run of 9 lines are not violations; with five
# stage folders it says there are fewer than six. The calls between files are
# read from objects: the build's, and those of the planted files compiled
# here (two in a circle, two in a circle declared one module).
set -eu
. "$TESTS/lib/cli.sh"
t=$tmp/tree
mkdir -p "$t/tests/cli" "$t/tests/lib"
cp -R "$ROOT/harness" "$ROOT/generators" "$t/"
cp "$TESTS/cli/structure.sh" "$t/tests/cli/"
cp "$TESTS/lib/cli.sh" "$t/tests/lib/"
cp "$ROOT/ARCHITECTURE.md" "$t/"

# structure: runs the copy's check; output in $tmp/st, status in st.
structure() {
	st=0
	env TESTS="$t/tests" BUILD="$t/build" sh "$t/tests/cli/structure.sh" > "$tmp/st" 2>&1 || st=$?
}
# func NAME LINES FILE: appends function NAME of LINES lines, brace to brace.
func() {
	{
		echo "int $1(void)"
		echo '{'
		echo '	int x = 0;'
		_i=4
		while [ $_i -lt "$2" ]; do
			echo "	x += $_i + (int)sizeof(\"$1\");"
			_i=$((_i + 1))
		done
		echo '	return x;'
		echo '}'
	} >> "$3"
}
# repeat NAME LINES FILE: appends function NAME whose body is the same run of
# LINES statements as any other function repeat writes, then its own line.
repeat() {
	{
		echo "int $1(int a)"
		echo '{'
		_i=0
		while [ $_i -lt "$2" ]; do
			echo "	a = a * $_i + 1; /* $1 */"
			_i=$((_i + 1))
		done
		echo "	return a + (int)sizeof(\"$1\");"
		echo '}'
	} >> "$3"
}
# calls NAME OTHER: harness/base/NAME.c, whose function NAME calls OTHER, and
# its object.
calls() {
	printf 'int %s(void);\nint %s(void)\n{\n\treturn %s();\n}\n' "$2" "$1" "$2" > "$t/harness/base/$1.c"
	"${CC:-cc}" -c -o "$t/build/obj/harness/base/$1.o" "$t/harness/base/$1.c" || fail "cannot compile $1.c"
}
# pad FILE N: N more comment lines.
pad() {
	_i=0
	while [ $_i -lt "$2" ]; do
		echo "/* line $_i */"
		_i=$((_i + 1))
	done >> "$1"
}

echo 'int loose;' > "$t/harness/loose.c"
mkdir "$t/harness/extra"
echo 'int extra;' > "$t/harness/extra/extra.c"
echo '#include "run/run.h"' >> "$t/harness/base/buf.c"
echo '#include "generators/haystack.h"' >> "$t/harness/net/http.c"
echo '#include "generators/prng.h"' >> "$t/harness/report/report.c"
echo '#include "generators/filler.h"' >> "$t/harness/report/diff.c"
echo '#include "generators/prng.h"' >> "$t/harness/report/gate.c"
pad "$t/harness/run/run.c" 1501
pad "$t/harness/cli/cmd_run.c" 401
func planted_long 81 "$t/harness/base/mem.c"
func planted_fits 80 "$t/harness/base/mem.c"
repeat dup_one 10 "$t/harness/load/arrival.c"
repeat dup_two 10 "$t/generators/prng.c"
repeat near_one 9 "$t/harness/tok/tok.c"
repeat near_two 9 "$t/harness/tok/tok.c"
# the build's objects, newer than the sources (the edits above change no
# calls between files); extra/extra.c has none
mkdir "$t/build"
cp -R "$BUILD/obj" "$t/build/"
calls planted_a planted_b
calls planted_b planted_a
calls planted_c planted_d
calls planted_d planted_c
{
	echo '`base/` — planted'
	echo '- one module: `planted_c`, `planted_d` (they call each other)'
	echo '- one module: `buf`, `mem` (buf calls mem, not back)'
} >> "$t/ARCHITECTURE.md"

structure
[ "$st" = 1 ] || fail "planted violations: exit $st: $(cat "$tmp/st")"
for key in loose:harness/loose.c stage:extra \
	include:harness/base/buf.c-\>run/run.h cycle:base-\>run \
	include:harness/net/http.c-\>generators/haystack.h cycle:net-\>generators \
	generators:harness/report/report.c-\>generators/prng.h \
	generators:harness/report/diff.c-\>generators/filler.h \
	generators:harness/report/gate.c-\>generators/prng.h \
	length:harness/run/run.c length:harness/cli/cmd_run.c \
	function:harness/base/mem.c:planted_long \
	dup:generators/prng.c:dup_two+harness/load/arrival.c:dup_one \
	circle:base:planted_a+planted_b module:base:buf+mem object:harness/extra/extra.c; do
	grep -qF "FAIL: $key: " "$tmp/st" || fail "planted '$key' not named: $(cat "$tmp/st")"
done
grep -qF 'function planted_long is 81 lines, more than 80' "$tmp/st" || fail "function length: $(cat "$tmp/st")"
! grep -q 'planted_fits\|near_one\|near_two' "$tmp/st" || fail "80 lines or a 9-line run flagged: $(cat "$tmp/st")"
! grep -q 'planted_c' "$tmp/st" || fail "a circle declared one module flagged: $(cat "$tmp/st")"
grep -qF 'FAIL: structure: ' "$tmp/st" || fail "no summary line: $(cat "$tmp/st")"

rm -rf "$t/harness/jinja" "$t/harness/tpl" "$t/harness/tok" "$t/harness/load" "$t/harness/extra"
structure
[ "$st" = 1 ] && grep -qF 'FAIL: stages: harness/ has 5 stage folders (base, cli, net, report, run), fewer than six' "$tmp/st" ||
	fail "five folders: exit $st: $(cat "$tmp/st")"
echo "structure.sh: every planted violation named"
