#!/bin/sh
# End to end, the fixed-length pre-check: the first request of a load case goes alone;
# a server that returns fewer output tokens than asked (ref-short) stops the case there:
# the server sees that one request and no other, every other request is recorded as
# not_sent with the pre-check's reason (the success counts keep them, so every cell is
# invalid and the cutover gate fails), and the run exits 1. A server that holds the
# lengths passes the pre-check, which stays out of every cell.
set -eu
. "$TESTS/lib/cli.sh"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
cat >"$tmp/s.json" <<'JSON'
{"suite": "p", "cases": [{"id": "p", "kind": "load", "load": {"input_tokens": 200, "output_tokens": 8,
 "concurrency": [1, 2], "requests": 2, "rounds": 2, "warmup": 1}}]}
JSON
refserver_start --log "$tmp/log"
check_exit 1 "" "$NEEDLE" run "$tmp/s.json" --base-url "$REF_URL" --model ref-short --tokenizer "$ds" \
	--template deepseek-v3 --out "$tmp/short"
n=$(grep -c '"path":"/v1/completions"' "$tmp/log")
[ "$n" = 1 ] || fail "a failed pre-check: the server saw $n requests, expected 1"
grep -q "not_sent x10" "$tmp/err" || fail "the end-of-run lines do not count the requests not sent: $(cat "$tmp/err")"
node "$TESTS/refserver/records.js" "$tmp/short" \
	'recs.length === 11 && recs[0].load.precheck === true && recs[0].load.round === -1 &&
	 recs[0].transport.failures.join() === "length_mismatch" &&
	 recs.slice(1).every(r => r.verdict === "fail" && r.transport.failures.join() === "not_sent" &&
	   /stopped at its fixed-length pre-check: its first request got prompt_tokens 200 and completion_tokens \d+, not exactly 200 and 8/.test(r.transport.messages[0]))' \
	'the pre-check fails alone; the rest are not sent, with its reason'
node -e '
const s = JSON.parse(require("fs").readFileSync(process.argv[1] + "/summary.json", "utf8"));
const c = s.load.cells;
if (!(c.length === 2 && c.every(x => x.rounds_valid === 0 && x.succeeded === 0 && x.requests === 4 && x.output_tps === null) &&
      s.attempts.complete === true)) { console.log("FAIL cells: " + JSON.stringify(c)); process.exit(1); }' "$tmp/short"
check_exit 1 "gate failed: output_tps_ratio>=0.9" "$NEEDLE" diff "$tmp/short" "$tmp/short" --gate cutover
# the lengths held: the pre-check passes and counts in no cell
check_exit 0 "" "$NEEDLE" run "$tmp/s.json" --base-url "$REF_URL" --model 'ref-good:tpot=1' --tokenizer "$ds" \
	--template deepseek-v3 --out "$tmp/good"
node -e '
const fs = require("fs"), d = process.argv[1];
const recs = fs.readFileSync(d + "/results.jsonl", "utf8").trim().split("\n").map(JSON.parse);
const c = JSON.parse(fs.readFileSync(d + "/summary.json", "utf8")).load.cells;
if (!(recs.length === 1 + 2 * (1 + 4) && recs[0].load.precheck && recs[0].verdict === "pass" &&
      c.every(x => x.requests === 4 && x.succeeded === 4 && x.rounds_valid === 2)))
	{ console.log("FAIL good run: " + JSON.stringify(c)); process.exit(1); }' "$tmp/good"
echo "load pre-check: a wrong length stops the case before its rounds, the rest not sent and counted"
