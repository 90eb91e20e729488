#!/bin/sh
# Terminal escapes from a hostile endpoint (the reference server's ref-escapes and
# ref-escapes-500: ESC[2J, an OSC title ended by BEL, a cursor move, the C1 CSI
# U+009B, a carriage return, in an answer and in an HTTP error's message) reach
# neither needle run's stderr, nor needle report's and needle diff's Markdown, nor
# summary.md raw: each is shown escaped (\x1b, \u009b), base/ctl.h.
set -eu
. "$TESTS/lib/cli.sh"
refserver_start
cat > "$tmp/s.json" <<'JSON'
{"suite": "esc", "cases": [{"id": "arith", "kind": "chat", "messages": [{"role": "user",
 "content": "Compute 19 * 23. Reply with only a JSON object {\"answer\": <integer>}."}], "max_tokens": 64,
 "expect": {"json": {"answer": 437}}}]}
JSON
# raw FILE: 0 when FILE holds a C0 control but tab and line feed, DEL, or a C1 control
raw() {
	node -e 'const t = require("fs").readFileSync(process.argv[1], "utf8");
		process.exit(/[\x00-\x08\x0b-\x1f\x7f\u0080-\u009f]/.test(t) ? 0 : 1)' "$1"
}
for m in escapes escapes-500; do
	st=0
	"$NEEDLE" run "$tmp/s.json" --base-url "$REF_URL" --model "ref-$m" --out "$tmp/$m" > "$tmp/$m.out" 2> "$tmp/$m.err" || st=$?
	[ $st = 1 ] || fail "$m: exit $st, want 1: $(cat "$tmp/$m.err")"
	grep -q 'x1b\[2J' "$tmp/$m/results.jsonl" "$tmp/$m/raw"/* 2>/dev/null || grep -q '\\u001b\[2J' "$tmp/$m/results.jsonl" ||
		fail "$m: the server's escapes are not in the record (the test sees nothing)"
	for f in "$tmp/$m.err" "$tmp/$m.out" "$tmp/$m/summary.md"; do
		! raw "$f" || fail "$m: raw control characters in $f: $(od -c "$f" | head -20)"
	done
	[ $m = escapes ] || grep -qF '\x1b[2J' "$tmp/$m.err" || fail "$m: the failure lines do not show the escape: $(cat "$tmp/$m.err")"
	grep -qF '\x1b[2J' "$tmp/$m/summary.md" || fail "$m: summary.md does not show the escape: $(cat "$tmp/$m/summary.md")"
	"$NEEDLE" report "$tmp/$m" > "$tmp/$m.md" 2> "$tmp/$m.rerr" || true
	! raw "$tmp/$m.md" && ! raw "$tmp/$m.rerr" || fail "$m: raw control characters in needle report's output"
	grep -qF '\u009b2J' "$tmp/$m.md" || fail "$m: needle report does not show the C1 control: $(cat "$tmp/$m.md")"
done
# a comparison of the two quotes both runs' answers and errors
st=0
"$NEEDLE" diff "$tmp/escapes" "$tmp/escapes-500" --gate 'pass_rate >= 0' > "$tmp/diff.md" 2> "$tmp/diff.err" || st=$?
! raw "$tmp/diff.md" && ! raw "$tmp/diff.err" || fail "raw control characters in needle diff's output: $(od -c "$tmp/diff.md" | head)"
# the server's model id and error bodies in an error message are escaped too
check_exit 1 "ref-nope\\x1b[2J" "$NEEDLE" run "$tmp/s.json" --base-url "$REF_URL" --model "ref-nope$(printf '\033')[2J" --out "$tmp/none"
! raw "$tmp/err" || fail "raw control characters in an error: $(od -c "$tmp/err" | head)"
echo "hostile_escapes: a server's terminal escapes are shown escaped on stderr, in summary.md, report and diff"
