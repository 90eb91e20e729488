#!/bin/sh
# JUnit that CI can read whatever a record holds: U+FFFE and U+FFFF (valid UTF-8, not
# XML 1.0 characters) in a case id, a suite name, a model id, an answer and a reason,
# and reasons and case ids long enough that the 512-byte cut lands inside a character,
# give a report that Python's XML parser reads, every testcase there, the characters
# replaced by U+FFFD. A results.jsonl line that is not valid UTF-8 (hand-edited) is
# refused naming the file and line, exit 2, by report, diff and run --resume, which
# keeps the line (docs/outputs.md).
set -eu
. "$TESTS/lib/cli.sh"
refserver_start
cat > "$tmp/s.json" <<'JSON'
{"suite": "xml", "cases": [{"id": "arith", "kind": "chat", "messages": [{"role": "user",
 "content": "Compute 19 * 23. Reply with only a JSON object {\"answer\": <integer>}."}], "max_tokens": 64,
 "expect": {"json": {"answer": 437}}}]}
JSON
st=0
"$NEEDLE" run "$tmp/s.json" --base-url "$REF_URL" --model ref-wrong --repeat 2 --out "$tmp/run" > /dev/null 2>&1 || st=$?
[ $st = 1 ] || fail "the wrong model's run: exit $st"
node -e '
const fs = require("fs"), dir = process.argv[1];
const bad = "\uFFFE\uFFFF", long = "漢".repeat(171) + "x" + "é".repeat(300);
const recs = fs.readFileSync(dir + "/results.jsonl", "utf8").trim().split("\n").map(JSON.parse);
for (const r of recs) {
	r.content = "answer " + bad + long;
	r.model = "m" + bad;
	r.grade.reasons = ["reason " + bad + " " + long, "x".repeat(510) + "é"];
}
fs.writeFileSync(dir + "/results.jsonl", recs.map((r) => JSON.stringify(r)).join("\n") + "\n");
const m = JSON.parse(fs.readFileSync(dir + "/manifest.json", "utf8"));
m.suite.name = "suite" + bad;
fs.writeFileSync(dir + "/manifest.json", JSON.stringify(m));
' "$tmp/run"
"$NEEDLE" report "$tmp/run" --format junit > "$tmp/junit.xml" 2> "$tmp/err" || fail "junit: $(cat "$tmp/err")"
/usr/bin/python3 - "$tmp/junit.xml" <<'PY' || fail "junit does not parse: $(head -c 2000 "$tmp/junit.xml")"
import sys
import xml.etree.ElementTree as ET
raw = open(sys.argv[1], "rb").read()
raw.decode("utf-8")  # strict: every byte is UTF-8
root = ET.fromstring(raw)
cases = root.findall(".//testcase")
assert len(cases) == 2, len(cases)
fails = [c.find("failure") for c in cases]
assert all(f is not None for f in fails)
text = "".join(f.text + f.get("message") for f in fails) + root.find(".//testsuite").get("name", "")
assert "\ufffe" not in text and "\uffff" not in text
assert "\ufffd" in text, text[:300]
assert "漢" in text and "x" * 510 in text
PY
"$NEEDLE" report "$tmp/run" --format html > "$tmp/page.html" 2> "$tmp/err" || fail "html: $(cat "$tmp/err")"
! grep -q "$(printf '\357\277\277')" "$tmp/page.html" || fail "U+FFFF in the HTML page"

# a hand-edited line that is not UTF-8: refused with its file and line, never cut
cp -r "$tmp/run" "$tmp/edited"
node -e 'const fs = require("fs"), f = process.argv[1];
	const lines = fs.readFileSync(f).toString("latin1").trim().split("\n");
	lines[1] = lines[1].replace("answer ", "answer \xff\xfe ");
	fs.writeFileSync(f, Buffer.from(lines.join("\n") + "\n", "latin1"))' "$tmp/edited/results.jsonl"
sum=$(sha256sum < "$tmp/edited/results.jsonl")
check_exit 2 "malformed results '$tmp/edited/results.jsonl' line 2: invalid UTF-8 at byte" \
	"$NEEDLE" report "$tmp/edited" --format junit
check_one_line "invalid UTF-8 in a record"
check_exit 2 "line 2: invalid UTF-8" "$NEEDLE" diff "$tmp/run" "$tmp/edited"
check_exit 2 "line 2: invalid UTF-8" "$NEEDLE" run "$tmp/s.json" --base-url "$REF_URL" --model ref-wrong --out "$tmp/edited" --resume
[ "$(sha256sum < "$tmp/edited/results.jsonl")" = "$sum" ] || fail "the journal with a bad line was changed"
echo "hostile_xml: JUnit parses whatever the records hold; invalid UTF-8 in results.jsonl is refused with its line"
