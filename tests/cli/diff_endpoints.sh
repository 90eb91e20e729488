#!/bin/sh
# slow: runs over two replicas
# Issue 13 item 3, diff side: when either run used several replicas, needle diff
# breaks the comparison down per endpoint (attempts and pass rate in A and B,
# the flips of the attempts each replica of B served), so failures on one
# replica show in the diff. Runs of one replica each get no such table.
set -eu
. "$TESTS/lib/cli.sh"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
suite=$(fixture suites/recall-128k.json)
refserver_start --served-model-name m
A=$REF_URL
refserver_start --served-model-name m
B=$REF_URL
refserver_start
BAD=$REF_URL

run() { # OUT ENDPOINT... : recall-128k twice over the endpoints
	out=$1
	shift
	printf '%s\n' "$@" > "$tmp/$out.txt"
	check_exit "0 1" "" "$NEEDLE" run "$suite" --endpoints "$tmp/$out.txt" --model m \
		--tokenizer "$ds" --template deepseek-v3 --repeat 2 --out "$tmp/$out"
}
run good "$A" "$B"
run bad "$A" "$BAD"
run one "$A"
node "$TESTS/refserver/records.js" "$tmp/good" 'recs.length === 6 && recs.every(r => r.verdict === "pass")' \
	'every attempt over the two good replicas passes'

# The table's figures, worked out from the records themselves.
flips=$(node -e 'const recs = require("fs").readFileSync(process.argv[1] + "/results.jsonl", "utf8").trim().split("\n").map(JSON.parse);
	process.stdout.write(String(recs.filter((r) => r.base_url === process.argv[2]).length));' "$tmp/bad" "$BAD")
[ "$flips" -gt 0 ] || fail "the bad replica served no attempt"
check_exit 1 "" "$NEEDLE" diff "$tmp/good" "$tmp/bad" --gate no_new_failures
grep -q '^## Per endpoint' "$tmp/out" || fail "no per-endpoint section: $(cat "$tmp/out")"
grep -qF "| 1 | $BAD | - | 0/$flips (0.000) | - | $flips | 0 |" "$tmp/out" ||
	fail "per-endpoint row of the bad replica: $(cat "$tmp/out")"
grep -qF "| 1 | $B | " "$tmp/out" || fail "the replica only A used has no row: $(cat "$tmp/out")"
grep -qF "All $flips pass -> fail flips on replica 1 ($BAD)." "$tmp/out" ||
	fail "the flips are not attributed to the bad replica: $(cat "$tmp/out")"
grep -qF "All $flips failures of B on replica 1 ($BAD)." "$tmp/out" ||
	fail "B's failures are not attributed to the bad replica: $(cat "$tmp/out")"
check_exit 1 "" "$NEEDLE" diff "$tmp/good" "$tmp/bad" --format json --gate no_new_failures
node -e 'const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
	const [a, b, bad, n] = process.argv.slice(2);
	const rows = d.by_endpoint, row = (u) => rows.find((r) => r.base_url === u);
	if (rows.length !== 3 || rows.map((r) => r.base_url).join() !== [a, b, bad].join())
		throw new Error("rows " + JSON.stringify(rows));
	if (row(bad).pass_to_fail !== Number(n) || row(bad).b.total !== Number(n) || row(bad).a !== null)
		throw new Error("bad row " + JSON.stringify(row(bad)));
	if (row(a).pass_to_fail !== 0 || row(a).a.rate !== 1 || row(a).b.rate !== 1 || row(a).delta !== 0)
		throw new Error("good row " + JSON.stringify(row(a)));
	const flips = rows.reduce((s, r) => s + r.pass_to_fail, 0);
	if (flips !== d.flips.pass_to_fail.length) throw new Error("flips " + flips);' \
	"$tmp/out" "$A" "$B" "$BAD" "$flips" || fail "diff by_endpoint"

# One replica on each side: no per-endpoint table.
check_exit 0 "" "$NEEDLE" diff "$tmp/one" "$tmp/one"
! grep -q 'Per endpoint' "$tmp/out" || fail "a per-endpoint table for runs of one replica"
check_exit 0 "" "$NEEDLE" diff "$tmp/one" "$tmp/one" --format json
node -e 'const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
	if ("by_endpoint" in d) throw new Error("by_endpoint");' "$tmp/out" || fail "by_endpoint for one replica"
echo "diff breaks results down per endpoint; the bad replica's flips attributed to it"
