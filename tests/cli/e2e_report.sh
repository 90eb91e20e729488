#!/bin/sh
# End to end: a small recall grid (2 lengths x 3 depths x 2 seeds) run against
# the reference server; 'needle run' writes summary.json/md and recall.png at
# the end, and 'needle diff' of ref-good vs ref-forgetful shows the 50% row
# flip and trips the recall gate.
set -eu
. "$TESTS/lib/cli.sh"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
refserver_start --log "$tmp/server.log"
cat > "$tmp/grid.json" <<'JSON'
{"suite": "grid-small", "defaults": {"max_tokens": 256, "temperature": 0},
 "cases": [
  {"id": "g2k", "kind": "recall", "recall": {"tokens": 2048, "depths": [10, 50, 90], "seeds": [1, 2], "needles": 3, "filler": "prose"}},
  {"id": "g4k", "kind": "recall", "recall": {"tokens": 4096, "depths": [10, 50, 90], "seeds": [1, 2], "needles": 3, "filler": "prose"}}
 ]}
JSON
for m in good forgetful; do
	rc=0
	"$NEEDLE" run "$tmp/grid.json" --base-url "$REF_URL/v1" --model "ref-$m" \
		--tokenizer "$ds" --template deepseek-v3 --out "$tmp/$m" > "$tmp/$m.out" 2>&1 || rc=$?
	[ -s "$tmp/$m/summary.json" ] && [ -s "$tmp/$m/summary.md" ] && [ -s "$tmp/$m/recall.png" ] ||
		{ cat "$tmp/$m.out"; fail "ref-$m: run (exit $rc) did not write the report"; }
	want=0; [ $m = forgetful ] && want=1
	[ $rc = $want ] || { cat "$tmp/$m.out"; fail "ref-$m: exit $rc, expected $want"; }
	! grep -q warning "$tmp/$m.out" || fail "ref-$m: $(cat "$tmp/$m.out")"
done
node -e '
const s = JSON.parse(require("fs").readFileSync(process.argv[1]));
const row = d => s.recall.by_depth.find(r => r.depth === d);
const ok = s.attempts.total === 4 && s.attempts.pass === 0 &&
	row(50).found === 0 && row(50).total === 4 && row(10).found === 4 && row(90).found === 4 &&
	JSON.stringify(s.recall.lengths) === "[2048,4096]" && s.audit.max_abs_delta === 0 &&
	s.latency.ttft_ms.n === 4;
if (!ok) { console.error(JSON.stringify(s, null, 1)); process.exit(1); }' "$tmp/forgetful/summary.json" ||
	fail "forgetful summary"
grep -q '| 50% | 0/2 | 0/2 |' "$tmp/forgetful/summary.md" || fail "forgetful summary.md grid"
"$NEEDLE" diff "$tmp/good" "$tmp/forgetful" --gate 'recall@10>=1' --gate 'recall@90>=1' \
	> /dev/null || fail "10% and 90% still recalled: exit $?"
rc=0; "$NEEDLE" diff "$tmp/good" "$tmp/forgetful" --gate 'recall@50>=1.0' > "$tmp/d.md" || rc=$?
[ $rc = 1 ] || fail "recall@50 gate: exit $rc"
grep -q '### pass -> fail: 4' "$tmp/d.md" || fail "4 flips expected"
grep -q '| 50% | 4/4 (1.000) | 0/4 (0.000) | -1.000 |' "$tmp/d.md" || fail "recall by depth change"
echo "e2e report: run writes summary + heatmap; diff shows the lost 50% needle and gates on it"
