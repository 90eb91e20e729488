#!/bin/sh
# The functional gate's error rates (issue 32 item 5): how often `needle diff A B --gate
# no_new_failures` fails when nothing changed, and how often it catches a worse model,
# on the strict-JSON tasks of suites/json-tasks.json (12 tasks x 3 repeats at
# temperature 1) through the reference server making answers wrong at random
# (tests/refserver/README.md "Misbehaviour": wrong_p, wrong_seed, wrong_case). Pair i
# runs, one after the other on one server, a baseline at 10% wrong and then each
# candidate: the same model (10% wrong: A/A), 50% wrong, and 10% wrong with one task
# (json-arith-19x23) always wrong; each candidate diffed against that baseline. Every
# run is at --concurrency 1 and each model name draws from its own seeded generator
# (wrong_seed=i), so the whole table is the same every time it is run.
# Exit codes: 0 pass, 1 fail, 4 underpowered (anything else is an error).
#   sh tests/bench/fungate_rates.sh BUILD_DIR   env FUNGATE_PAIRS (default 24),
#                                               FUNGATE_SEED0 (the first pair's seed, 1)
set -u
TESTS=${TESTS:-$(cd "$(dirname "$0")/.." && pwd)}
. "$TESTS/lib/cli.sh"
NEEDLE=${NEEDLE:-$ROOT/${1:-build}/needle}
pairs=${FUNGATE_PAIRS:-24}
seed0=${FUNGATE_SEED0:-1}
ds=$(fixture hf/deepseek_v3/tokenizer.json)
suite=$(fixture suites/json-tasks.json)

# run OUT MODEL: one run of the suite; its exit (1: some attempt failed) is not an error
run() {
	st=0
	"$NEEDLE" run "$suite" --base-url "$REF_URL/v1" --model "$2" --tokenizer "$ds" --template deepseek-v3 \
		--concurrency 1 --out "$tmp/$1" >"$tmp/$1.out" 2>&1 || st=$?
	[ "$st" -le 1 ] || { echo "run $1 ($2) failed: $(tail -3 "$tmp/$1.out")" >&2; return 1; }
}

refserver_start || exit 1
: >"$tmp/counts"
start=$(date +%s)
i=$seed0
while [ "$i" -lt $((seed0 + pairs)) ]; do
	run "a$i" "ref-good:wrong_p=0.1,wrong_seed=$i" || exit 1
	for kind in "aa:wrong_p=0.1" "w50:wrong_p=0.5" "one:wrong_p=0.1,wrong_case=Compute 19 * 23"; do
		name=${kind%%:*}
		run "$name$i" "ref-good:${kind#*:},wrong_seed=$i" || exit 1
		g=0
		"$NEEDLE" diff "$tmp/a$i" "$tmp/$name$i" --gate no_new_failures >/dev/null 2>"$tmp/gate.err" || g=$?
		echo "$name $g" >>"$tmp/counts"
		rm -rf "${tmp:?}/$name$i"
	done
	rm -rf "${tmp:?}/a$i"
	i=$((i + 1))
done
echo "== functional gate error rates: needle diff A B --gate no_new_failures, suites/json-tasks.json (12 tasks x 3 repeats, temperature 1), baseline 10% wrong, $pairs pairs per row (seeds $seed0..$((seed0 + pairs - 1))), $(($(date +%s) - start)) s"
awk '
function pct(a, b) { return b ? sprintf("%.0f%%", 100 * a / b) : "-" }
{ n[$1]++; c[$1, $2]++ }
END {
	label["aa"] = "A/A (10% wrong twice)"; label["w50"] = "50% wrong"
	label["one"] = "one task always wrong"
	split("aa w50 one", order, " ")
	for (k = 1; k <= 3; k++) {
		m = order[k]
		if (!n[m]) continue
		other = n[m] - c[m, 0] - c[m, 1] - c[m, 4]
		printf "%-24s failed (exit 1) %d/%d (%s); underpowered (exit 4) %d/%d (%s); passed (exit 0) %d/%d (%s)%s\n",
			label[m] ":", c[m, 1], n[m], pct(c[m, 1], n[m]), c[m, 4], n[m], pct(c[m, 4], n[m]),
			c[m, 0], n[m], pct(c[m, 0], n[m]), other ? sprintf("; other exits %d/%d", other, n[m]) : ""
	}
}' "$tmp/counts"
