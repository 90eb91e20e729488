#!/bin/sh
# Issue 21, one meaning of "attempt": a load request is an attempt. A run's plan
# lists every request of its load cases (pre-check, warm-up, counted rounds) beside
# the other attempts, so a run cut inside its load case is INCOMPLETE with the
# requests counted ("12/17", not "3/3"); a manifest written before plan version 2
# (a load case one key) is still read, and its INCOMPLETE line says how it counts.
set -eu
. "$TESTS/lib/cli.sh"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
refserver_start
field() { node -e 'let v=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));for(const k of process.argv[2].split("."))v=v==null?v:v[k];console.log(JSON.stringify(v))' "$1" "$2"; }
# 2 chat attempts and a load case of 1 pre-check + (1 warm-up + 2 x 2) + (1 + 2 x 4) requests
cat >"$tmp/suite.json" <<'JSON'
{"suite": "plan", "cases": [
 {"id": "mul0", "kind": "chat", "max_tokens": 64, "messages": [{"role": "user", "content": "Compute 19 * 23. Reply with only a JSON object {\"answer\": <integer>}."}], "expect": {"json": {"answer": 437}}},
 {"id": "mul1", "kind": "chat", "max_tokens": 64, "messages": [{"role": "user", "content": "Compute 7 * 6. Reply with only a JSON object {\"answer\": <integer>}."}], "expect": {"json": {"answer": 42}}},
 {"id": "ld", "kind": "load", "temperature": 0, "load": {"input_tokens": 64, "output_tokens": 8,
  "concurrency": [1, 2], "requests": [2, 4], "rounds": 2, "warmup": 1, "seed": 3}}]}
JSON
check_exit 0 "" "$NEEDLE" run "$tmp/suite.json" --base-url "$REF_URL/v1" --model ref-good \
	--tokenizer "$ds" --template deepseek-v3 --out "$tmp/a"
[ "$(field "$tmp/a/manifest.json" planned.version)" = 2 ] || fail "manifest: planned.version is not 2"
[ "$(field "$tmp/a/manifest.json" planned.attempts)" = 17 ] ||
	fail "manifest: planned.attempts is $(field "$tmp/a/manifest.json" planned.attempts), not 17 (2 chat + 15 load requests)"
node -e 'const m = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
	const recs = require("fs").readFileSync(process.argv[2], "utf8").trim().split("\n").map(JSON.parse);
	const keys = recs.map((r) => `${r.case}\x1f${r.repeat}\x1f${r.seed}`).sort();
	if (JSON.stringify([...m.planned.keys].sort()) !== JSON.stringify(keys))
		throw new Error("planned keys are not the records: " + JSON.stringify(m.planned.keys));' \
	"$tmp/a/manifest.json" "$tmp/a/results.jsonl" || fail "the plan does not list every request"
check_exit 0 "" "$NEEDLE" report "$tmp/a"
! grep -q INCOMPLETE "$tmp/out" "$tmp/err" || fail "a complete load run reported INCOMPLETE"

# B: the run cut inside its load case (5 of its 15 requests missing).
cp -r "$tmp/a" "$tmp/b"
head -n 12 "$tmp/a/results.jsonl" >"$tmp/b/results.jsonl"
check_exit 0 "INCOMPLETE: 12/17 planned attempts recorded in '$tmp/b'" "$NEEDLE" report "$tmp/b"
head -n 3 "$tmp/out" | grep -qF '**INCOMPLETE: 12/17** planned attempts recorded;' ||
	fail "report: no INCOMPLETE 12/17 at the top: $(head -n 5 "$tmp/out")"
[ "$(field "$tmp/b/summary.json" attempts.planned_note)" = undefined ] || fail "summary: a note on a version 2 plan"
check_exit 1 "run B is INCOMPLETE: 12/17 planned attempts recorded" \
	"$NEEDLE" diff "$tmp/a" "$tmp/b" --gate no_new_failures

# C: the same records under a manifest of an older needle (a load case one key).
cp -r "$tmp/b" "$tmp/c"
node -e 'const fs = require("fs"), f = process.argv[1], m = JSON.parse(fs.readFileSync(f, "utf8"));
	m.planned = {attempts: 3, keys: ["mul0\x1f1\x1fnull", "mul1\x1f1\x1fnull", "ld\x1f1\x1fnull"]};
	fs.writeFileSync(f, JSON.stringify(m));' "$tmp/c/manifest.json"
check_exit 0 "" "$NEEDLE" report "$tmp/c"
! grep -q INCOMPLETE "$tmp/out" "$tmp/err" || fail "an old plan is not read as it was: $(cat "$tmp/err")"
sed -i '/"case":"mul1"/d' "$tmp/c/results.jsonl"
check_exit 0 "INCOMPLETE: 2/3 planned attempts recorded in '$tmp/c' (a load case counts as one attempt in this plan" \
	"$NEEDLE" report "$tmp/c"
check_exit 1 "run B is INCOMPLETE: 2/3 planned attempts recorded (a load case counts as one attempt" \
	"$NEEDLE" diff "$tmp/a" "$tmp/c" --gate no_new_failures
echo "a load request is a planned attempt: 17 planned, a cut run 12/17; an old plan still read, and said to count load cases once"
