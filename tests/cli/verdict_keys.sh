#!/bin/sh
# Attempt keys are exact (issue 8 item 6): two case ids that differ only in
# their 1,101st byte are two cases, each run once, each with its own raw file,
# and --resume finds both; an id over the documented maximum (4096 bytes) is a
# suite error naming its JSON path, before anything is sent.
set -eu
. "$TESTS/lib/cli.sh"

fake_server "$TESTS/cli/verdict_server.js"
node -e '
const long = "x".repeat(1100);
const c = (id) => ({ id, kind: "chat", max_tokens: 8, messages: [{ role: "user", content: "Say ok." }],
	expect: { contains: ["ok"] } });
const fs = require("fs");
fs.writeFileSync(process.argv[1] + "/two.json", JSON.stringify({ suite: "keys", cases: [c(long + "a"), c(long + "b")] }));
fs.writeFileSync(process.argv[1] + "/huge.json", JSON.stringify({ suite: "keys", cases: [c("ok"), c("y".repeat(4097))] }));
' "$tmp"

check_exit 0 "" "$NEEDLE" run "$tmp/two.json" --base-url "$FAKE_URL" --out "$tmp/r"
[ "$(wc -l < "$tmp/r/results.jsonl")" -eq 2 ] || fail "expected 2 records: $(wc -l < "$tmp/r/results.jsonl")"
got=$(node -e 'const ids=require("fs").readFileSync(process.argv[1],"utf8").trim().split("\n").map((l)=>JSON.parse(l).case);
	process.stdout.write(ids.map((i)=>i.length+":"+i.slice(-1)).join(" "))' "$tmp/r/results.jsonl")
[ "$got" = "1101:a 1101:b" ] || fail "case ids recorded as '$got'"
[ "$(ls "$tmp/r/raw" | wc -l)" -eq 2 ] || fail "raw files: $(ls "$tmp/r/raw")"
check_exit 0 "" "$NEEDLE" run "$tmp/two.json" --base-url "$FAKE_URL" --out "$tmp/r" --resume
[ "$(wc -l < "$tmp/r/results.jsonl")" -eq 2 ] || fail "--resume ran a recorded case again"

check_exit 2 "cases[1].id: id of 4097 bytes is longer than 4096" \
	"$NEEDLE" run "$tmp/huge.json" --base-url "$FAKE_URL" --out "$tmp/h"
check_one_line "over-long id"
[ ! -e "$tmp/h" ] || fail "a results folder was made for a bad suite"
echo "verdict_keys: ok"
