#!/bin/sh
# End to end, speculative decoding through --metrics: the reference server's draft
# counters (model option spec=3, acceptance accept=P; tests/refserver/README.md)
# become each level's acceptance rate, tokens per step and acceptance by draft
# position in summary.json and summary.md, in both dialects; `needle diff` shows
# them A | B per cell, and the gate spec_acceptance_ratio passes the same server
# twice, fails a candidate whose acceptance collapsed, and fails as not measured
# against a server that exports no draft counters.
set -eu
. "$TESTS/lib/cli.sh"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
cat >"$tmp/s.json" <<'JSON'
{"suite": "spec", "cases": [{"id": "s", "kind": "load", "load": {"input_tokens": 200, "output_tokens": 48,
 "concurrency": [1, 4], "requests": [8, 16], "rounds": 2}}]}
JSON
run() { # run OUT MODEL
	rc=0
	"$NEEDLE" run "$tmp/s.json" --base-url "$REF_URL" --model "$2" --tokenizer "$ds" \
		--template deepseek-v3 --metrics --out "$tmp/$1" >"$tmp/$1.out" 2>&1 || rc=$?
	[ "$rc" = 0 ] || { echo "run $1: exit $rc"; cat "$tmp/$1.out"; exit 1; }
}
gate() { # gate A B WANT: the exit of diff --gate spec_acceptance_ratio>=0.9
	rc=0
	"$NEEDLE" diff "$tmp/$1" "$tmp/$2" --gate 'spec_acceptance_ratio>=0.9' >"$tmp/$1$2.md" 2>"$tmp/$1$2.err" || rc=$?
	[ "$rc" = "$3" ] || { echo "diff $1 $2: exit $rc, expected $3"; cat "$tmp/$1$2.err"; exit 1; }
}
refserver_start
run a 'ref-good:tpot=1,spec=3,accept=0.8'
run b 'ref-good:tpot=1,spec=3,accept=0.8,seed=2'
run c 'ref-good:tpot=1,spec=3,accept=0.2'
run n 'ref-good:tpot=1'
refserver_stop
# three draft tokens, each accepted with p = 0.8 until the first rejection: on
# average p + p^2 + p^3 = 1.95 of 3 accepted (0.65), 2.95 tokens a step, 0.8 at
# position 0
node -e '
const s = JSON.parse(require("fs").readFileSync(process.argv[1] + "/summary.json", "utf8"));
for (const c of s.load.cells) {
	const v = c.server;
	if (!(v.spec_accept_rate > 0.55 && v.spec_accept_rate < 0.75 && v.spec_accept_length > 2.6 &&
	      v.spec_accept_length < 3.2 && v.spec_accept_by_pos.length === 3 && Math.abs(v.spec_accept_by_pos[0] - 0.8) < 0.1 &&
	      v.spec_drafts > 0 && v.spec_draft_tokens === 3 * v.spec_drafts)) {
		console.log("FAIL acceptance of " + c.case + "/c" + c.concurrency + ": " + JSON.stringify(v)); process.exit(1); }
}' "$tmp/a"
grep -q "### Speculative decoding" "$tmp/a/summary.md" || { echo "summary.md has no speculative decoding table"; exit 1; }
! grep -q "### Speculative decoding" "$tmp/n/summary.md" || { echo "a server without a draft model has a speculative table"; exit 1; }
gate a b 0
grep -q "## Speculative decoding" "$tmp/ab.md" || { echo "diff lacks the speculative decoding section"; cat "$tmp/ab.md"; exit 1; }
gate a c 1
grep -q "gate failed: spec_acceptance_ratio>=0.9: s/c1 0\.[0-2][0-9]*; s/c4 0\.[0-2]" "$tmp/ac.err" &&
	grep -q "acceptance 0\.[5-7][0-9]* -> 0\.[0-2][0-9]* (B/A 0\.[0-2]" "$tmp/ac.md" || { echo "collapse not named:"; cat "$tmp/ac.err" "$tmp/ac.md"; exit 1; }
gate a n 1
grep -q "not measured: B has no speculative decoding" "$tmp/an.err" || { echo "unmeasured not named:"; cat "$tmp/an.err"; exit 1; }
# SGLang's gauges
refserver_start --dialect sglang --enable-metrics
run g 'ref-good:tpot=1,spec=3,accept=0.8'
refserver_stop
node -e '
const s = JSON.parse(require("fs").readFileSync(process.argv[1] + "/summary.json", "utf8"));
const v = s.load.cells[1].server;
if (!(v.dialect === "sglang" && v.spec_accept_rate > 0.55 && v.spec_accept_rate < 0.75 && v.spec_accept_length > 2.6 &&
      v.spec_drafts === null && !v.spec_accept_by_pos)) { console.log("FAIL sglang view: " + JSON.stringify(v)); process.exit(1); }' "$tmp/g"
echo "spec: acceptance per level in both dialects, A | B in the diff; the gate passes A/A, fails a collapse and an unmeasured B"
