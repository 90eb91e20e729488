#!/bin/sh
# slow: load cases that size themselves
# Self-sizing (harness/load/loadsize.h): a level of a steady server settles before
# max_rounds (never before 10 rounds), a noisy one runs to max_rounds, a spent
# budget stops at `rounds`; the manifest's load_sizing and summary.json's cells say
# which and why, the rounds not needed leave the plan (the run is complete), the
# rounds run in blocks (round k of every level before round k + 1 of any), and
# --resume keeps the first process's decision.
set -eu
. "$TESTS/lib/cli.sh"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
refserver_start --max-model-len 32768
suite() { # suite FILE MAX_ROUNDS [BUDGET_MINUTES]
	node -e '
const [file, max, budget] = process.argv.slice(1);
const load = { input_tokens: 64, output_tokens: 8, concurrency: [1, 2], requests: [16, 16], rounds: 3,
	max_rounds: Number(max), warmup: 2 };
if (budget) load.budget_minutes = Number(budget);
require("fs").writeFileSync(file, JSON.stringify({ suite: "z", cases: [{ id: "z", kind: "load", load }] }));' "$@"
}
run() { # run OUT MODEL SUITE [OPTIONS]
	out=$1 model=$2 s=$3
	shift 3
	check_exit 0 "" "$NEEDLE" run "$s" --base-url "$REF_URL" --model "$model" --tokenizer "$ds" \
		--template deepseek-v3 --out "$tmp/$out" "$@"
}
sizing() { # sizing RUN EXPR WHAT: EXPR over `z` (the manifest's load_sizing) and `s` (summary.json)
	node -e '
const fs = require("fs"), dir = process.argv[1];
const m = JSON.parse(fs.readFileSync(dir + "/manifest.json", "utf8"));
const s = JSON.parse(fs.readFileSync(dir + "/summary.json", "utf8")), z = m.load_sizing;
if (!(eval(process.argv[2]))) { console.log("FAIL " + process.argv[3] + ": " + JSON.stringify({ z, attempts: m.attempts, planned: m.planned.attempts, cells: s.load.cells.map(c => c.sizing) })); process.exit(1); }' \
		"$tmp/$1" "$2" "$3"
}

# A steady server (TTFT about 64 ms, no noise): every level settles at the fewest
# rounds a run may stop on (LOADCI_SETTLE_MIN, 10), before 14; the plan loses the
# rounds not run and the run is complete.
suite "$tmp/steady.json" 14
run steady 'ref-good:prefill=1000,tpot=2' "$tmp/steady.json"
sizing steady 'z.length === 2 && z.every(e => e.stopped === "settled" && e.rounds >= 10 && e.rounds < 14 && e.min_rounds === 3 && e.max_rounds === 14)' 'a steady server settles'
sizing steady 'm.planned.attempts === m.attempts.run && m.attempts.planned === m.attempts.run && s.attempts.complete === true' 'the plan lost the rounds not needed'
sizing steady 'm.planned.attempts === 1 + 4 + z.reduce((n, e) => n + 16 * e.rounds, 0)' 'the plan counts the rounds that ran'
sizing steady 's.load.cells.every((c, i) => c.sizing.stopped === "settled" && c.sizing.rounds === z[i].rounds && c.rounds_total === z[i].rounds)' 'the cells say how they were sized'
# blocks: round 1 of both levels before round 2 of either
node "$TESTS/refserver/records.js" "$tmp/steady" '(counted => {
	const first2 = counted.findIndex(r => r.load.round === 2);
	return first2 > 0 && counted.slice(0, first2).some(r => r.load.level === 1 && r.load.round === 1) &&
		counted.slice(first2).every(r => r.load.round >= 2);
})(recs.filter(r => r.load.round > 0))' 'the rounds run in blocks'

# A noisy server (request times vary by a factor of e^0.6): it runs to max_rounds.
suite "$tmp/noisy.json" 4
run noisy 'ref-good:prefill=1000,tpot=2,jitter=0.6,seed=3' "$tmp/noisy.json"
sizing noisy 'z.every(e => e.stopped === "max_rounds" && e.rounds === 4) && s.attempts.complete === true' 'a noisy server runs to max_rounds'

# A budget already spent after the first block: the rounds stop at `rounds`.
suite "$tmp/budget.json" 8 0.0001
run budget 'ref-good:prefill=1000,tpot=2,jitter=0.6,seed=3' "$tmp/budget.json"
sizing budget 'z.every(e => e.stopped === "budget" && e.rounds === 3) && s.attempts.complete === true' 'a spent budget stops at rounds'

# Without max_rounds nothing is sized: 3 rounds, "fixed".
node -e 'const fs = require("fs"), f = process.argv[1], s = JSON.parse(fs.readFileSync(f));
	delete s.cases[0].load.max_rounds; fs.writeFileSync(f, JSON.stringify(s));' "$tmp/budget.json"
run fixed 'ref-good:prefill=1000,tpot=2,jitter=0.6,seed=3' "$tmp/budget.json"
sizing fixed 'z.every(e => e.stopped === "fixed" && e.rounds === 3)' 'no sizing without max_rounds'

# --resume of a finished run keeps its decision: nothing is sent again.
cp -r "$tmp/steady" "$tmp/again"
run again 'ref-good:prefill=1000,tpot=2' "$tmp/steady.json" --resume
sizing again 'z.every(e => e.stopped === "preset") && m.attempts.run === 0 && s.attempts.complete === true' 'a resumed run keeps the decision'
sizing again 'JSON.stringify(z.map(e => e.rounds)) === JSON.stringify(JSON.parse(fs.readFileSync(process.argv[1] + "/../steady/manifest.json", "utf8")).load_sizing.map(e => e.rounds))' 'with the same rounds'

# A bad value names its place.
node -e 'require("fs").writeFileSync(process.argv[1], JSON.stringify({ suite: "z", cases: [{ id: "z", kind: "load",
	load: { input_tokens: 64, output_tokens: 8, concurrency: [1], requests: 4, rounds: 3, max_rounds: 2 } }] }))' "$tmp/bad.json"
check_exit 2 "max_rounds" "$NEEDLE" run "$tmp/bad.json" --base-url "$REF_URL" --model ref-good --tokenizer "$ds" \
	--template deepseek-v3 --out "$tmp/bad"
echo "load sizing: steady settles, noisy runs to max_rounds, a budget stops, no sizing without max_rounds, blocks, the plan and the cells, --resume keeps the decision"
