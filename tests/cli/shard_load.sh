#!/bin/sh
# slow: load shards started together
# Issue 13 item 4: load cases over shards. Two shards started together with
# --start-at each run their part of an open loop (rate/2, half the requests) and
# of a closed loop (concurrency 5 as 3 + 2), each with its own pre-check request
# and seeds of its own recorded in the manifest; merged, the cells hold the summed requests and the open loop
# achieves the target rate. A start already past, a concurrency below the shard
# count and a merge of shards whose rounds began far apart are refused (exit 2).
# A load case over two replicas splits its target between them (one schedule).
set -eu
. "$TESTS/lib/cli.sh"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
refserver_start
A=$REF_URL
cat >"$tmp/s.json" <<'JSON'
{"suite": "sl", "cases": [
 {"id": "open", "kind": "load", "load": {"input_tokens": 64, "output_tokens": 4, "rate": [20], "arrival": "constant", "requests": 40, "rounds": 1, "warmup": 0, "seed": 7}},
 {"id": "closed", "kind": "load", "load": {"input_tokens": 64, "output_tokens": 4, "concurrency": [5], "requests": 10, "rounds": 2, "warmup": 2, "seed": 7}}]}
JSON
shard() { # INDEX OUT [ARG...]
	_i=$1 _o=$2
	shift 2
	"$NEEDLE" run "$tmp/s.json" --base-url "$REF_URL" --model 'ref-good:tpot=5' --tokenizer "$ds" \
		--template deepseek-v3 --shard "$_i/2" --out "$_o" "$@"
}
now=$(date +%s)

# A common start ahead: both shards at once, each its part.
at=$((now + 3))
rc0=0 rc1=0
shard 0 "$tmp/s0" --start-at "$at" >"$tmp/s0.out" 2>&1 & p0=$!
shard 1 "$tmp/s1" --start-at "$at" >"$tmp/s1.out" 2>&1 & p1=$!
wait $p0 || rc0=$?
wait $p1 || rc1=$?
[ $rc0 = 0 ] && [ $rc1 = 0 ] || fail "shards: exit $rc0 and $rc1: $(cat "$tmp/s0.out" "$tmp/s1.out")"
node -e 'const fs = require("fs"), dir = process.argv[1];
	const m = [0, 1].map((i) => JSON.parse(fs.readFileSync(`${dir}/s${i}/manifest.json`, "utf8")));
	const l = m.map((x) => Object.fromEntries(x.shard.load.map((c) => [c.case, c])));
	const ok = l[0].open.rate[0] === 10 && l[1].open.rate[0] === 10 &&
		l[0].open.requests[0] === 20 && l[1].open.requests[0] === 20 &&
		l[0].closed.concurrency[0] === 3 && l[1].closed.concurrency[0] === 2 &&
		l[0].closed.requests[0] === 5 && l[1].closed.requests[0] === 5 &&
		l[0].closed.warmup === 1 && l[1].closed.warmup === 1 &&
		l[0].open.seed !== l[1].open.seed && l[0].open.seed !== 7 &&
		m[0].shard.attempts === 20 + 1 + 5 * 2 + 2 && m[1].shard.attempts === m[0].shard.attempts &&
		m.every((x) => x.start_at === Number(process.argv[2]) && x.start_lag_ms >= 0 && x.start_lag_ms < 1000);
	if (!ok) throw new Error(JSON.stringify(m.map((x) => [x.shard, x.start_at, x.start_lag_ms])));' \
	"$tmp" "$at" || fail "the shards' parts, seeds and start in their manifests"
node "$TESTS/refserver/records.js" "$tmp/s1" \
	'recs.length === 33 && recs.every(r => r.seed === recs[0].seed && typeof r.load.round_started_unix === "number") && recs.filter(r => r.case === "closed").every(r => r.load.concurrency === 5)' \
	'records carry the shard seed, the round start, and the target level'

check_exit 0 "load cases ran on 2 shards at once" "$NEEDLE" merge "$tmp/m" "$tmp/s0" "$tmp/s1"
grep -qF "global concurrency is a bound" "$tmp/err" || fail "merge does not say concurrency is a bound: $(cat "$tmp/err")"
node -e 'const fs = require("fs"), dir = process.argv[1];
	const s = JSON.parse(fs.readFileSync(`${dir}/summary.json`, "utf8"));
	const m = JSON.parse(fs.readFileSync(`${dir}/manifest.json`, "utf8"));
	const c = Object.fromEntries(s.load.cells.map((x) => [x.case, x]));
	const near = (x, want, tol) => Math.abs(x - want) <= tol * want;
	const ok = c.open.requests === 40 && c.open.succeeded === 40 && c.open.rate === 20 &&
		near(c.open.achieved_rate, 20, 0.1) &&
		c.closed.requests === 20 && c.closed.rounds_valid === 2 && c.closed.concurrency === 5 &&
		m.merge.load.shards === 2 && m.merge.load.start_skew_ms < 1000 && /bound/.test(m.merge.note);
	if (!ok) throw new Error(JSON.stringify([s.load.cells.map((x) => { delete x.rounds; return x; }), m.merge]));' \
	"$tmp/m" || fail "merged cells: summed requests, the target rate achieved"
# constant arrivals: shard 1 sends half a gap after shard 0, so the merged schedule is even
node "$TESTS/refserver/records.js" "$tmp/m" \
	'(() => { const t = recs.filter(r => r.case === "open" && r.load.round >= 1).map(r => r.load.scheduled_ms).sort((a, b) => a - b);
	  return t.length === 40 && t.slice(1).every((x, i) => Math.abs(x - t[i] - 50) < 1); })()' \
	'the two shards interleave into one schedule of 20 requests/s'
grep -qF "Merged from shards: load cases ran on 2 shards at once" "$tmp/m/summary.md" ||
	fail "the report does not carry the merge note"

# Shards whose rounds began seconds apart: refused, naming the case; a wider --max-skew merges.
sleep 2
shard 1 "$tmp/late1" >"$tmp/late1.out" 2>&1 || fail "late shard: $(cat "$tmp/late1.out")"
check_exit 2 "load case 'open' (level 0, round 1): the shards began" "$NEEDLE" merge "$tmp/skew" "$tmp/s0" "$tmp/late1"
[ ! -e "$tmp/skew/results.jsonl" ] || fail "a refused merge wrote records"
check_exit 0 "" "$NEEDLE" merge "$tmp/skew" "$tmp/s0" "$tmp/late1" --max-skew 3600
check_exit 2 "option '--max-skew' wants more than 0" "$NEEDLE" merge "$tmp/skew0" "$tmp/s0" "$tmp/s1" --max-skew 0

# Refused before any request.
check_exit 2 "option '--start-at' '$((now - 60))': the instant is" shard 0 "$tmp/past" --start-at $((now - 60))
check_exit 2 "option '--start-at'" shard 0 "$tmp/bad" --start-at 2026-13-01T00:00:00Z
cat >"$tmp/c1.json" <<'JSON'
{"suite": "c1", "cases": [{"id": "one", "kind": "load", "load": {"input_tokens": 64, "output_tokens": 4, "concurrency": [4, 1], "requests": 4, "rounds": 1}}]}
JSON
check_exit 2 "load case 'one': concurrency 1 (level 1) cannot be split over 2 shards" \
	"$NEEDLE" run "$tmp/c1.json" --base-url "$REF_URL" --tokenizer "$ds" --template deepseek-v3 --shard 1/2 --out "$tmp/c1"
# Two replicas, one load case: one schedule at the target rate, each replica a part.
refserver_start
B=$REF_URL
cat >"$tmp/r.json" <<'JSON'
{"suite": "rep", "cases": [
 {"id": "open", "kind": "load", "load": {"input_tokens": 64, "output_tokens": 4, "rate": [20], "arrival": "constant", "requests": 40, "rounds": 1, "warmup": 0}},
 {"id": "closed", "kind": "load", "load": {"input_tokens": 64, "output_tokens": 32, "concurrency": [4], "requests": 16, "rounds": 1, "warmup": 0}}]}
JSON
check_exit 0 "" "$NEEDLE" run "$tmp/r.json" --base-url "$A" --base-url "$B" --model 'ref-good:tpot=5' \
	--tokenizer "$ds" --template deepseek-v3 --out "$tmp/rep"
node "$TESTS/refserver/records.js" "$tmp/rep" \
	'["open", "closed"].every(id => { const n = recs.filter(r => r.case === id && r.replica === 0).length, all = recs.filter(r => r.case === id).length; return n >= 0.3 * all && n <= 0.7 * all; })' \
	'each replica serves about half of each load case'
node -e 'const s = JSON.parse(require("fs").readFileSync(process.argv[1] + "/summary.json", "utf8"));
	const c = Object.fromEntries(s.load.cells.map((x) => [x.case, x]));
	if (!(Math.abs(c.open.achieved_rate - 20) <= 2 && c.open.requests === 40 && c.closed.requests === 16))
		throw new Error(JSON.stringify(s.load.cells.map((x) => [x.case, x.requests, x.achieved_rate])));' \
	"$tmp/rep" || fail "the replicas together carry the target rate"
# Closed loop: at most 4 in flight over both replicas together, never 4 on each.
node "$TESTS/refserver/records.js" "$tmp/rep" \
	'(() => { const q = recs.filter(r => r.case === "closed" && r.load.round >= 1).map(r => [r.load.sent_ms, r.load.sent_ms + r.timing.e2e_ms, r.replica]);
	  const most = (f) => Math.max(...q.filter(f).map(([t]) => q.filter(f).filter(([s, e]) => s <= t && t < e).length));
	  return most(() => true) <= 4 && most(x => x[2] === 0) <= 3 && most(x => x[2] === 1) <= 3; })()' \
	'closed-loop concurrency 4 is split between the replicas'
echo "load cases over 2 shards: parts, seeds, a common start, merged cells at the target; past starts, small levels and skewed shards refused; over 2 replicas: the target split between them"
