#!/bin/sh
# End to end, structured outputs (suites/structured.json): each case sends
# response_format {type: json_schema} through the case's "request" and grades the
# answer against the schema and the values the prompt gives. The reference server
# fills the schema from the prompt (tests/refserver/structured.js): right, every case
# passes in both dialects; schema-break (valid JSON outside the schema) fails each case
# naming the place in the answer; wrong (values wrong within the schema) fails on the
# values, not the schema. A schema needle cannot check, and a request member needle
# writes itself, are refused when the suite is read.
set -eu
. "$TESTS/lib/cli.sh"
suite=$ROOT/suites/structured.json
run() { # run OUT MODEL WANT [options]
	out=$1 model=$2 want=$3
	shift 3
	rc=0
	"$NEEDLE" run "$suite" --base-url "$REF_URL" --model "$model" --out "$tmp/$out" "$@" >"$tmp/$out.out" 2>&1 || rc=$?
	[ "$rc" = "$want" ] || { echo "$out: exit $rc, expected $want"; cat "$tmp/$out.out"; exit 1; }
}
# reasons RUN EXPR WHAT: EXPR over `recs` (the records) and `why(ID)` (a case's reasons)
reasons() {
	node -e '
const fs = require("fs"), [dir, expr, what] = process.argv.slice(1);
const recs = fs.readFileSync(dir + "/results.jsonl", "utf8").trim().split("\n").map(JSON.parse);
const why = id => recs.find(r => r.case === id).grade.reasons.join(" | ");
if (!eval(expr)) { console.log("FAIL " + what + ": " + recs.map(r => r.case + ": " + why(r.case)).join("; ")); process.exit(1); }' "$1" "$2" "$3"
}
refserver_start --log "$tmp/log"
run good ref-good 0
node "$TESTS/refserver/records.js" "$tmp/good" \
	'recs.length === 4 && recs.every(r => r.verdict === "pass")' 'right: every case passes'
# the schema reached the server as the case wrote it
node -e '
const fs = require("fs"), s = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const seen = fs.readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse).filter(r => r.response_format);
const want = JSON.stringify(s.cases[1].request.response_format);
if (seen.length !== 4 || !seen.some(r => JSON.stringify(r.response_format) === want)) {
	console.log("FAIL the server saw " + seen.length + " response_format members"); process.exit(1); }' "$tmp/log" "$suite"
run break ref-schema-break 1
reasons "$tmp/break" '
recs.every(r => r.verdict === "fail") &&
why("order-flat").includes("answer breaks the schema at /quantity: \"3\" is a string, not of type integer") &&
why("product-nested").includes("answer breaks the schema at /box/width: \"20\" is a string, not of type integer") &&
why("choice-anyof").includes("answer breaks the schema at /score:")' 'schema-break: every case fails at its place in the answer'
run wrong ref-wrong 1
reasons "$tmp/wrong" '
recs.filter(r => r.verdict === "fail").length === 3 && !recs.some(r => /breaks the schema/.test(r.grade.reasons.join(" "))) &&
/quantity/.test(why("order-flat")) && /priority/.test(why("ticket-zh"))' 'wrong: the values fail, the schema holds'
refserver_stop
refserver_start --dialect sglang
run sglang ref-good 0
refserver_stop
# refused when read: an unchecked keyword, at its place; a member needle writes
node -e '
const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
s.cases[0].request.response_format.json_schema.schema.properties.customer.format = "email";
require("fs").writeFileSync(process.argv[2], JSON.stringify(s));
s.cases[0].request.response_format.json_schema.schema.properties.customer.format = undefined;
s.cases[0].request.stream = false;
require("fs").writeFileSync(process.argv[3], JSON.stringify(s));' "$suite" "$tmp/format.json" "$tmp/stream.json"
check_exit 2 "" "$NEEDLE" run "$tmp/format.json" --base-url http://127.0.0.1:9 --out "$tmp/f"
grep -q "cases\[0\]\.request\.response_format\.json_schema\.schema: /properties/customer/format: 'format' is not a keyword needle checks" "$tmp/err" ||
	{ cat "$tmp/err"; exit 1; }
check_exit 2 "" "$NEEDLE" run "$tmp/stream.json" --base-url http://127.0.0.1:9 --out "$tmp/s"
grep -q "cases\[0\]\.request\.stream: 'stream' is needle's to write" "$tmp/err" || { cat "$tmp/err"; exit 1; }
echo "structured: right passes in both dialects, schema-break fails at the place, wrong fails on values, unchecked schemas refused"
