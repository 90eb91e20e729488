#!/bin/sh
# The report a person acts on: runs against ref-forgetful (a missed depth)
# and with a --model the server does not serve (every request 404); the
# summary names the failing cases and their reasons, the advice names the
# served models, the per-attempt CSV loads with Python's csv module (one row
# per attempt, the documented columns), JSON Lines has the same rows, and a
# folder that cannot be written still gets its report printed.
set -eu
. "$TESTS/lib/cli.sh"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
refserver_start --log "$tmp/server.log"
cat > "$tmp/grid.json" <<'JSON'
{"suite": "grid-ux", "defaults": {"max_tokens": 256, "temperature": 0},
 "cases": [
  {"id": "g2k", "kind": "recall", "recall": {"tokens": 2048, "depths": [10, 50, 90], "seeds": [1, 2], "needles": 3, "filler": "prose"}},
  {"id": "sum", "kind": "chat", "messages": [{"role": "user", "content": "Say OK."}], "expect": {"contains": ["OK"]}}
 ]}
JSON
run() { # MODEL OUT
	rc=0
	"$NEEDLE" run "$tmp/grid.json" --base-url "$REF_URL/v1" --model "$1" \
		--tokenizer "$ds" --template deepseek-v3 --out "$2" > "$2.out" 2>&1 || rc=$?
	[ -s "$2/summary.md" ] && [ -s "$2/attempts.csv" ] || { cat "$2.out"; fail "$1: no report (exit $rc)"; }
}
run ref-forgetful "$tmp/forgetful"
md="$tmp/forgetful/summary.md"
grep -q '^## Failures$' "$md" || fail "no Failures section"
grep -q '^### grade: needle at depth 50% (2 attempts, 1 case)$' "$md" || fail "missed depth not named: $(sed -n '/## Failures/,$p' "$md")"
grep -q '| g2k | recall | 0/2 .* | grade: needle at depth 50% (2) |' "$md" || fail "case row reasons"
grep -q 'Raw stream: `.*/forgetful/raw/g2k-r1-s1.sse`' "$md" || fail "raw stream path"
! grep -q '| g2k |.*| none |' "$md" || fail "a grade failure reads as none"

run nope "$tmp/wrong"
md="$tmp/wrong/summary.md"
grep -q "^\*\*What to do:\*\* every request got HTTP 404: the server serves 'ref-good', .* not 'nope'; pass one of those to --model\.$" "$md" ||
	fail "404 advice: $(sed -n '/## Failures/,$p' "$md")"
grep -q '^### transport: http_status 404 (3 attempts, 2 cases)$' "$md" || fail "404 group"
node -e '
const s = JSON.parse(require("fs").readFileSync(process.argv[1]));
const f = s.failures[0];
if (s.failures.length !== 1 || f.stage !== "transport" || f.count !== 3 || f.cases.join() !== "g2k,sum" ||
    !/404/.test(f.example.reason) || !/raw\/g2k-r1-s1\.sse$/.test(f.example.raw) || s.advice.length !== 1)
	{ console.error(JSON.stringify(s.failures), s.advice); process.exit(1); }' "$tmp/wrong/summary.json" ||
	fail "summary.json failures"

# every prompt too long for the server, and a server that is not ready
run ref-http-503 "$tmp/busy"
grep -q "^\*\*What to do:\*\* every request got HTTP 503: the server is up but not serving" "$tmp/busy/summary.md" ||
	fail "503 advice: $(grep -A3 '## Failures' "$tmp/busy/summary.md")"
refserver_stop
refserver_start --max-model-len 1024
run ref-good "$tmp/long"
grep -q "^\*\*What to do:\*\* 2 of 3 requests did not fit the context: .*(max_model_len 1024); restart it with a larger --max-model-len" \
	"$tmp/long/summary.md" || fail "context-length advice: $(grep -A3 '## Failures' "$tmp/long/summary.md")"

# the CSV: a real parser, one row per attempt, the documented columns
"$NEEDLE" report "$tmp/wrong" --format csv > "$tmp/stdout.csv"
cmp -s "$tmp/stdout.csv" "$tmp/wrong/attempts.csv" || fail "--format csv differs from attempts.csv"
/usr/bin/python3 - "$tmp/forgetful" "$tmp/wrong" <<'PY' || fail "csv does not load"
import csv, json, sys
cols = ("run,model,case,kind,repeat,seed,verdict,fail_stage,failure_codes,first_reason,usage_delta,"
        "local_prompt_tokens,prompt_tokens,completion_tokens,http_status,finish_reason,first_byte_ms,"
        "ttft_ms,ttfc_ms,e2e_ms,tpot_ms,recall_tokens,recall_depths,started_at,raw,run_id,case_id,"
        "level,round,warmup,precheck,concurrency,rate,started_unix_ms").split(",")
for d in sys.argv[1:]:
    recs = [json.loads(l) for l in open(d + "/results.jsonl")]
    with open(d + "/attempts.csv", newline="") as f:
        r = csv.reader(f, strict=True)
        rows = list(r)
    assert rows[0] == cols, rows[0]
    body = [dict(zip(cols, x)) for x in rows[1:]]
    assert all(len(x) == len(cols) for x in rows), "ragged row"
    assert len(body) == len(recs), (len(body), len(recs))
    for row, rec in zip(body, recs):
        assert row["case"] == rec["case"] and row["verdict"] == rec["verdict"], row
        assert row["seed"] == ("" if rec["seed"] is None else str(rec["seed"])), row
        assert row["e2e_ms"] != "" and float(row["e2e_ms"]) == rec["timing"]["e2e_ms"], row
        assert row["run"] == d.rsplit("/", 1)[1], row
        assert row["run_id"] == json.load(open(d + "/manifest.json"))["run_id"], row
        assert row["case_id"] == row["case"] and row["warmup"] == row["precheck"] == "false", row
        assert int(row["started_unix_ms"]) == rec["started_unix_ms"], row
    if d.endswith("wrong"):
        assert all(x["fail_stage"] == "transport" and x["failure_codes"] == "http_status" and
                   x["http_status"] == "404" and "404" in x["first_reason"] for x in body), body[0]
    else:
        miss = [x for x in body if x["case"] == "g2k"]
        assert all(x["first_reason"].startswith("needle at depth 50%") and x["usage_delta"] == "0" and
                   x["recall_tokens"] == "2048" and x["recall_depths"] == "10;50;90" for x in miss), miss
PY
"$NEEDLE" report "$tmp/forgetful" --format jsonl > "$tmp/rows.jsonl"
node -e '
const rows = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
const ok = rows.length === 3 && rows[0].case === "g2k" && rows[0].seed === 1 && rows[0].usage_delta === 0 &&
	rows[2].case === "sum" && rows[2].verdict === "pass" && rows[2].fail_stage === "";
process.exit(ok ? 0 : 1);' "$tmp/rows.jsonl" || fail "jsonl rows: $(head -c 600 "$tmp/rows.jsonl")"

# a folder that cannot be written (chmod, or chattr +i as root): the report
# is printed and a warning says why; the folder is made writable again before
# anything is checked, so a failure cannot leave it behind
cp -r "$tmp/forgetful" "$tmp/ro"
rm -f "$tmp/ro/summary.md" "$tmp/ro/summary.json" "$tmp/ro/attempts.csv" "$tmp/ro/recall.png"
chmod a-w "$tmp/ro"
if touch "$tmp/ro/probe" 2>/dev/null; then rm -f "$tmp/ro/probe"; chattr +i "$tmp/ro" 2>/dev/null || true; fi
ro=1; ! touch "$tmp/ro/probe" 2>/dev/null || ro=0
rc=0; [ $ro = 0 ] || "$NEEDLE" report "$tmp/ro" > "$tmp/ro.md" 2> "$tmp/ro.err" || rc=$?
mkdir "$tmp/elsewhere"
orc=0; [ $ro = 0 ] || "$NEEDLE" report "$tmp/ro" --out "$tmp/elsewhere" > /dev/null 2>&1 || orc=$?
chattr -i "$tmp/ro" 2>/dev/null || true
chmod u+w "$tmp/ro"
if [ $ro = 0 ]; then
	echo "ux_report: cannot make a read-only folder here; that part skipped"
else
	[ $rc = 0 ] || fail "read-only folder: exit $rc: $(cat "$tmp/ro.err")"
	grep -q '^## Failures$' "$tmp/ro.md" || fail "read-only folder: report not printed"
	grep -q "^warning: cannot write '$tmp/ro/.*the report is printed only" "$tmp/ro.err" || fail "read-only warning: $(cat "$tmp/ro.err")"
	[ ! -e "$tmp/ro/summary.md" ] || fail "read-only folder written"
	[ $orc = 0 ] && [ -s "$tmp/elsewhere/summary.md" ] && [ -s "$tmp/elsewhere/attempts.csv" ] &&
		[ -s "$tmp/elsewhere/recall.png" ] || fail "--out did not write the files (exit $orc)"
fi
# --out that is no folder: named before the journal is read, exit 2
for bad in "no-such-folder:No such file or directory (the folder must exist)" \
	"forgetful/results.jsonl:not a folder"; do
	why=${bad#*:} bad=$tmp/${bad%%:*}
	orc=0; "$NEEDLE" report "$tmp/forgetful" --out "$bad" > "$tmp/badout.md" 2> "$tmp/badout.err" || orc=$?
	[ $orc = 2 ] && [ ! -s "$tmp/badout.md" ] &&
		[ "$(cat "$tmp/badout.err")" = "error: --out '$bad': $why" ] ||
		fail "--out $bad: exit $orc: $(cat "$tmp/badout.err")"
done
echo "ux_report: failures named with reasons and advice; csv/jsonl rows load; read-only folder printed; a bad --out named"
