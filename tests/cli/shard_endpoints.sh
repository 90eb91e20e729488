#!/bin/sh
# slow: runs over two replicas
# Issue 13 acceptance: one run over two reference-server replicas. A smoke run
# records both replicas (each record names its own) and the report breaks the
# results down per endpoint. Failures injected on one replica (it does not
# serve the model: every request there is refused with a 404) are attributed to
# it alone, in the records, summary.json and summary.md.
set -eu
. "$TESTS/lib/cli.sh"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
smoke=$(fixture suites/smoke.json)
refserver_start --served-model-name m
A=$REF_URL
refserver_start --served-model-name m
B=$REF_URL
refserver_start
BAD=$REF_URL
refserver_start --served-model-name other
OTHER=$REF_URL

# Smoke over two good replicas: both serve, both are named, both reported.
check_exit "0 1" "" "$NEEDLE" run "$smoke" --base-url "$A" --base-url "$B/v1" --model m \
	--case 'json-*' --repeat 1 --concurrency 2 --out "$tmp/smoke"
node "$TESTS/refserver/records.js" "$tmp/smoke" \
	"recs.length === 12 && recs.every(r => (r.replica === 0 && r.base_url === '$A') || (r.replica === 1 && r.base_url === '$B'))" \
	'every record names its replica'
node "$TESTS/refserver/records.js" "$tmp/smoke" \
	'recs.some(r => r.replica === 0) && recs.some(r => r.replica === 1)' \
	'both replicas served attempts (least busy first: the split follows their speed)'
node -e 'const m = JSON.parse(require("fs").readFileSync(process.argv[1] + "/manifest.json", "utf8"));
	const urls = m.endpoints.map((e) => e.base_url + " " + e.served_model + " " + e.server_version);
	if (urls.join() !== [process.argv[2], process.argv[3]].map((u) => u + " m 0.11.2+refserver").join())
		throw new Error(urls.join());' "$tmp/smoke" "$A" "$B" || fail "manifest endpoints"
node -e 'const s = JSON.parse(require("fs").readFileSync(process.argv[1] + "/summary.json", "utf8"));
	const e = s.endpoints.sort((a, b) => a.replica - b.replica);
	if (e.length !== 2 || e[0].total + e[1].total !== 12 || e[0].base_url !== process.argv[2])
		throw new Error(JSON.stringify(e));' "$tmp/smoke" "$A" || fail "summary endpoints"
grep -q '^## Per endpoint' "$tmp/smoke/summary.md" || fail "no per-endpoint section"

# A replica that fails: every failure is its own.
printf '# replicas\n%s\n\n  %s   # the bad one\n' "$A" "$BAD" > "$tmp/endpoints.txt"
check_exit 1 "" "$NEEDLE" run "$(fixture suites/recall-128k.json)" --endpoints "$tmp/endpoints.txt" \
	--model m --tokenizer "$ds" --template deepseek-v3 --out "$tmp/bad" --repeat 2
node "$TESTS/refserver/records.js" "$tmp/bad" \
	'recs.length === 6 && recs.every(r => (r.replica === 0) === (r.verdict === "pass"))' \
	'replica 0 passes every attempt, replica 1 fails every one'
node "$TESTS/refserver/records.js" "$tmp/bad" \
	'recs.filter(r => r.replica === 1).every(r => r.transport.failures.includes("http_status") && r.http_status === 404)' \
	'the failures on replica 1 are its 404s'
check_exit 0 "" "$NEEDLE" report "$tmp/bad"
grep -qF "All 3 failures on replica 1 ($BAD)." "$tmp/out" || fail "report does not attribute the failures: $(cat "$tmp/out")"
grep -qF "| 1 | $BAD | 0/3" "$tmp/out" || fail "per-endpoint row of replica 1: $(cat "$tmp/out")"
# diff names the replica of each flip.
check_exit 0 "" "$NEEDLE" run "$(fixture suites/recall-128k.json)" --base-url "$A" --model m \
	--tokenizer "$ds" --template deepseek-v3 --out "$tmp/good" --repeat 2
check_exit 1 "" "$NEEDLE" diff "$tmp/good" "$tmp/bad" --gate no_new_failures
[ "$(grep -c "^- recall-128k repeat . seed . on $BAD \[http_status\]" "$tmp/out")" = 3 ] ||
	fail "diff does not name the replica of its 3 flips: $(cat "$tmp/out")"
! grep -q "on $A" "$tmp/out" || fail "diff blames the good replica: $(cat "$tmp/out")"

# Replicas must serve one model; a bad list is one precise message.
check_exit 2 "endpoint '$OTHER' serves 'other', not 'm' as '$A' does" \
	"$NEEDLE" run "$smoke" --base-url "$A" --base-url "$OTHER" --out "$tmp/mixed"
printf '# nothing\n' > "$tmp/none.txt"
check_exit 2 "lists no endpoint" "$NEEDLE" run "$smoke" --endpoints "$tmp/none.txt" --out "$tmp/none"
check_exit 2 "option '--shard'" "$NEEDLE" run "$smoke" --base-url "$A" --shard 4/4
check_exit 2 "option '--start-at'" "$NEEDLE" run "$smoke" --base-url "$A" --start-at tomorrow
# --start-at: a common instant ahead is waited for (saying until when); one
# already past, more than a day ahead, or beyond any date is refused.
at=$(($(date +%s) + 3))
check_exit "0 1" "waiting for the common start $(date -u -d "@$at" +%Y-%m-%dT%H:%M:%SZ) (--start-at '$at')" \
	"$NEEDLE" run "$smoke" --base-url "$A" --model m --case json-arith-19x23 \
	--start-at "$at" --out "$tmp/late" --shard 0/1
check_exit 2 "option '--start-at' '9999-12-31T23:59:59Z': the instant is" "$NEEDLE" run "$smoke" \
	--base-url "$A" --model m --start-at 9999-12-31T23:59:59Z --out "$tmp/far"
grep -q "more than 86400 s (a day)" "$tmp/err" || fail "no bound named: $(cat "$tmp/err")"
check_one_line "a start in the year 9999"
for t in 1e300 9.3e15 1e999; do
	check_exit 2 "option '--start-at' '$t': Unix seconds must be below" "$NEEDLE" run "$smoke" \
		--base-url "$A" --model m --start-at "$t" --out "$tmp/far"
done
[ ! -e "$tmp/far" ] || fail "a results folder was made for a refused --start-at"
node -e 'const m = JSON.parse(require("fs").readFileSync(process.argv[1] + "/manifest.json", "utf8"));
	if (m.start_at !== Number(process.argv[2]) || !(m.start_lag_ms >= 0 && m.start_lag_ms < 1000) ||
	    Date.parse(m.started_at) > m.start_at * 1000) throw new Error(m.start_at + " " + m.start_lag_ms);' \
	"$tmp/late" "$at" || fail "start_at and start_lag_ms"
check_exit 2 "option '--start-at' '2026-01-01T00:00:00Z': the instant is" "$NEEDLE" run "$smoke" \
	--base-url "$A" --model m --start-at 2026-01-01T00:00:00Z --out "$tmp/past"
check_exit 0 "concurrency across shards is a bound" "$NEEDLE" merge "$tmp/late-merged" "$tmp/late"
echo "two replicas recorded and reported per endpoint; one replica's failures attributed to it"
