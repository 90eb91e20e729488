#!/bin/sh
# Issue 13 acceptance: a recall grid run as 4 shards (indexes from a Kubernetes
# Indexed Job's JOB_COMPLETION_INDEX/NEEDLE_SHARDS for two, from a Slurm array's
# SLURM_ARRAY_TASK_* with a non-zero SLURM_ARRAY_TASK_MIN for the others) and merged
# holds exactly the attempt keys of the same grid run whole, and `needle diff` of the
# two exits 0 with no flips. A merge missing a shard, holding a shard of another
# suite, a shard twice, an incomplete shard or a lying one (a record outside its
# plan, a relabelled copy, another split, a verdict against its checks) exits 2
# and names it.
set -eu
. "$TESTS/lib/cli.sh"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
refserver_start

grid() { # NAME SEEDS
	cat > "$tmp/$1.json" <<JSON
{"suite": "mini-grid", "defaults": {"max_tokens": 256, "temperature": 0},
 "cases": [
  {"id": "g-1k", "kind": "recall", "repeat": 2, "recall": {"tokens": 1024, "depths": [0, 50, 100], "seeds": $2, "needles": 3, "filler": "mixed"}},
  {"id": "g-2k", "kind": "recall", "recall": {"tokens": 2048, "depths": [0, 50, 100], "seeds": $2, "needles": 3, "filler": "mixed"}},
  {"id": "g-4k", "kind": "recall", "recall": {"tokens": 4096, "depths": [0, 50, 100], "seeds": [1, 2], "needles": 3, "filler": "mixed"}},
  {"id": "g-8k", "kind": "recall", "recall": {"tokens": 8192, "depths": [0, 50, 100], "seeds": [1], "needles": 3, "filler": "mixed"}}
 ]}
JSON
}
grid grid '[1, 2, 3]'
grid other '[4, 5, 6]'
run() { # OUT [ARG...]
	_o=$1
	shift
	"$NEEDLE" run "$tmp/grid.json" --base-url "$REF_URL/v1" --model ref-good \
		--tokenizer "$ds" --template deepseek-v3 --out "$_o" "$@"
}
keys() { # DIR: the sorted attempt keys, one a line
	node -e 'const fs = require("fs");
		const ks = fs.readFileSync(process.argv[1] + "/results.jsonl", "utf8").trim().split("\n")
			.map((l) => JSON.parse(l)).map((r) => `${r.case} r${r.repeat} s${r.seed}`);
		console.log(ks.sort().join("\n"));' "$1"
}

check_exit 0 "" run "$tmp/whole"
[ "$(keys "$tmp/whole" | wc -l)" = 12 ] || fail "whole run: not 12 attempts: $(keys "$tmp/whole")"

for i in 0 1; do
	check_exit 0 "" env JOB_COMPLETION_INDEX=$i NEEDLE_SHARDS=4 "$NEEDLE" run "$tmp/grid.json" \
		--base-url "$REF_URL/v1" --model ref-good --tokenizer "$ds" --template deepseek-v3 --out "$tmp/s$i"
done
for id in 3 4; do # sbatch --array=1-4: tasks 3 and 4 are shards 2 and 3
	check_exit 0 "" env SLURM_ARRAY_TASK_ID=$id SLURM_ARRAY_TASK_COUNT=4 SLURM_ARRAY_TASK_MIN=1 \
		"$NEEDLE" run "$tmp/grid.json" --base-url "$REF_URL/v1" --model ref-good \
		--tokenizer "$ds" --template deepseek-v3 --out "$tmp/s$((id - 1))"
done
node -e 'const fs = require("fs"); const [dir] = process.argv.slice(1);
	const want = [["kubernetes", 0], ["kubernetes", 1], ["slurm", 2], ["slurm", 3]];
	want.forEach(([from, i]) => {
		const m = JSON.parse(fs.readFileSync(`${dir}/s${i}/manifest.json`, "utf8"));
		const s = m.shard;
		if (s.index !== i || s.count !== 4 || s.from !== from || s.rule !== "greedy-prompt-tokens-v1")
			throw new Error(`s${i}: shard ${JSON.stringify(s)}`);
		const n = fs.readFileSync(`${dir}/s${i}/results.jsonl`, "utf8").trim().split("\n").length;
		if (n !== s.attempts || n === 0) throw new Error(`s${i}: ${n} records, ${s.attempts} planned`);
	});' "$tmp" || fail "shard manifests"
# A recall document's repeats stay in one shard.
for i in 0 1 2 3; do
	keys "$tmp/s$i"
done > "$tmp/all"
for s in 1 2 3; do
	n=$(for i in 0 1 2 3; do keys "$tmp/s$i" | grep -q "^g-1k r[12] s$s\$" && echo "$i"; done | wc -l)
	[ "$n" = 1 ] || fail "the repeats of g-1k seed $s are in $n shards"
done
[ "$(sort "$tmp/all" | uniq -d)" = "" ] || fail "an attempt in two shards: $(sort "$tmp/all" | uniq -d)"

check_exit 0 "4 shards, 12 records" "$NEEDLE" merge "$tmp/merged" "$tmp/s3" "$tmp/s1" "$tmp/s0" "$tmp/s2"
[ "$(keys "$tmp/merged")" = "$(keys "$tmp/whole")" ] || fail "merged keys differ from the whole run's"
[ -f "$tmp/merged/summary.md" ] || fail "merge wrote no report"
[ "$(ls "$tmp/merged/raw" | wc -l)" = 12 ] || fail "merged raw/ does not hold 12 files"
check_exit 0 "" "$NEEDLE" diff "$tmp/whole" "$tmp/merged" --gate no_new_failures --gate flips==0
grep -q '### pass -> fail: 0' "$tmp/out" || fail "diff shows flips: $(cat "$tmp/out")"
grep -q 'Only in A: 0; only in B: 0' "$tmp/out" || fail "diff: unmatched attempts: $(cat "$tmp/out")"
check_exit 0 "" "$NEEDLE" report "$tmp/merged" --format json
node -e 'const s = JSON.parse(require("fs").readFileSync(0, "utf8"));
	if (s.attempts.total !== 12 || s.attempts.pass !== 12) throw new Error(JSON.stringify(s.attempts));' \
	< "$tmp/out" || fail "merged report"

# A shard is resumable on its own: nothing is run again, the selection is the same.
check_exit 0 "" env JOB_COMPLETION_INDEX=1 NEEDLE_SHARDS=4 "$NEEDLE" run "$tmp/grid.json" \
	--base-url "$REF_URL/v1" --model ref-good --tokenizer "$ds" --template deepseek-v3 --out "$tmp/s1" --resume
grep -q "needle run: 0 attempts" "$tmp/err" || fail "resumed shard ran attempts: $(cat "$tmp/err")"
check_exit 2 "holds shard 1/4, not 2/4" run "$tmp/s1" --resume --shard 2/4

# Missing, foreign, twice, incomplete: exit 2, each named, nothing written.
check_exit 2 "shard 2 of 4 is missing" "$NEEDLE" merge "$tmp/m1" "$tmp/s0" "$tmp/s1" "$tmp/s3"
[ ! -e "$tmp/m1" ] || fail "a refused merge wrote '$tmp/m1'"
"$NEEDLE" run "$tmp/other.json" --base-url "$REF_URL/v1" --model ref-good --tokenizer "$ds" \
	--template deepseek-v3 --out "$tmp/foreign" --shard 2/4 2>/dev/null
check_exit 2 "'$tmp/foreign' is a foreign shard: suite SHA-256" \
	"$NEEDLE" merge "$tmp/m2" "$tmp/s0" "$tmp/s1" "$tmp/foreign" "$tmp/s3"
run "$tmp/opt" --shard 2/4 --repeat 3 2>/dev/null
check_exit 2 "'$tmp/opt' is a foreign shard: option '--repeat'" \
	"$NEEDLE" merge "$tmp/m8" "$tmp/s0" "$tmp/s1" "$tmp/opt" "$tmp/s3"
check_exit 2 "shard 1 is given twice" "$NEEDLE" merge "$tmp/m3" "$tmp/s0" "$tmp/s1" "$tmp/s1" "$tmp/s2" "$tmp/s3"
cp -r "$tmp/s3" "$tmp/cut"
sed -i '$d' "$tmp/cut/results.jsonl"
check_exit 2 "'$tmp/cut' is incomplete" "$NEEDLE" merge "$tmp/m4" "$tmp/s0" "$tmp/s1" "$tmp/s2" "$tmp/cut"
check_exit 2 "is not a shard" "$NEEDLE" merge "$tmp/m5" "$tmp/whole" "$tmp/s1"
check_exit 0 "1 incomplete shards" "$NEEDLE" merge "$tmp/m6" "$tmp/s0" "$tmp/s1" "$tmp/s2" "$tmp/cut" --allow-partial
# The merged plan is every shard's (issue 21): the whole run's 12 keys, so the merge
# of a cut shard is INCOMPLETE, and a gate fails on it.
node -e 'const fs = require("fs"), [dir] = process.argv.slice(1);
	const plan = (d) => JSON.parse(fs.readFileSync(`${dir}/${d}/manifest.json`, "utf8")).planned;
	const whole = plan("whole"), merged = plan("merged");
	if (merged.version !== 2 || merged.attempts !== 12 ||
	    JSON.stringify([...merged.keys].sort()) !== JSON.stringify([...whole.keys].sort()))
		throw new Error("merged plan: " + JSON.stringify(merged));' "$tmp" || fail "the merged plan is not the union of the shards' plans"
check_exit 0 "INCOMPLETE: 11/12 planned attempts recorded" "$NEEDLE" report "$tmp/m6"
check_exit 1 "run B is INCOMPLETE: 11/12 planned attempts recorded" "$NEEDLE" diff "$tmp/whole" "$tmp/m6" --gate no_new_failures
check_exit 0 "" "$NEEDLE" report "$tmp/merged"
! grep -q INCOMPLETE "$tmp/out" "$tmp/err" || fail "the full merge is INCOMPLETE: $(cat "$tmp/err")"
# Lying shards (issue 33.4): a record its shard's plan does not hold (even an
# identical copy of another shard's), a copy of shard 0 relabelled as shard 1
# standing in for a failed one, a shard whose split is not the others', a record
# whose verdict contradicts its checks: exit 2, named, nothing written.
cp -r "$tmp/s2" "$tmp/dup"
head -1 "$tmp/s3/results.jsonl" >> "$tmp/dup/results.jsonl"
check_exit 2 "'$tmp/dup' holds 1 records its own plan does not" "$NEEDLE" merge "$tmp/m7" "$tmp/s0" "$tmp/s1" "$tmp/dup" "$tmp/s3"
[ ! -e "$tmp/m7" ] || fail "a merge of a shard with a foreign record wrote '$tmp/m7'"
cp -r "$tmp/s0" "$tmp/fake1"
node -e 'const fs = require("fs"), f = process.argv[1] + "/manifest.json";
	const m = JSON.parse(fs.readFileSync(f, "utf8")); m.shard.index = 1;
	fs.writeFileSync(f, JSON.stringify(m))' "$tmp/fake1"
check_exit 2 "'$tmp/fake1' has the run id of '$tmp/s0'" "$NEEDLE" merge "$tmp/m12" "$tmp/s0" "$tmp/fake1" "$tmp/s2" "$tmp/s3"
grep -q "'$tmp/fake1' plans 3 attempts that '$tmp/s0' plans too" "$tmp/err" ||
	grep -q "'$tmp/fake1' plans [0-9]* attempts that '$tmp/s0' plans too" "$tmp/err" || fail "the copy's plan is not named: $(cat "$tmp/err")"
[ ! -e "$tmp/m12" ] || fail "a merge with a relabelled copy wrote '$tmp/m12'"
node -e 'const fs = require("fs"), f = process.argv[1] + "/manifest.json";
	const m = JSON.parse(fs.readFileSync(f, "utf8")); m.run_id = "00000000-0000-4000-8000-000000000000";
	m.planned.keys = []; m.shard.attempts = 0; m.shard.split.mine = 0;
	fs.writeFileSync(f, JSON.stringify(m)); fs.writeFileSync(process.argv[1] + "/results.jsonl", "")' "$tmp/fake1"
check_exit 2 "the shards' parts of the split add up to" "$NEEDLE" merge "$tmp/m13" "$tmp/s0" "$tmp/fake1" "$tmp/s2" "$tmp/s3"
cp -r "$tmp/s1" "$tmp/resplit"
node -e 'const fs = require("fs"), f = process.argv[1] + "/manifest.json";
	const m = JSON.parse(fs.readFileSync(f, "utf8")); m.shard.split.sha256 = "0".repeat(64);
	fs.writeFileSync(f, JSON.stringify(m))' "$tmp/resplit"
check_exit 2 "'$tmp/resplit' is a foreign shard: its split of the suite is not that of '$tmp/s0'" \
	"$NEEDLE" merge "$tmp/m14" "$tmp/s0" "$tmp/resplit" "$tmp/s2" "$tmp/s3"
cp -r "$tmp/s1" "$tmp/liar"
node -e 'const fs = require("fs"), f = process.argv[1] + "/results.jsonl";
	const ls = fs.readFileSync(f, "utf8").trim().split("\n").map(JSON.parse);
	ls[0].grade.ok = false; ls[0].verdict = "pass";
	fs.writeFileSync(f, ls.map((r) => JSON.stringify(r)).join("\n") + "\n")' "$tmp/liar"
check_exit 2 "verdict \"pass\" beside grade \"ok\": false" "$NEEDLE" merge "$tmp/m15" "$tmp/s0" "$tmp/liar" "$tmp/s2" "$tmp/s3"
check_exit 2 "line 1: verdict \"pass\" beside grade \"ok\": false" "$NEEDLE" report "$tmp/liar"
# edited NAME EDIT MESSAGE OUT: shard s1 with its last record changed by the
# JavaScript EDIT (of `r`) into $tmp/NAME; report, merge (into $tmp/OUT) and
# diff refuse it with MESSAGE, naming the file and the line, never take it for
# a torn line, and leave the journal as it is.
edited() {
	cp -r "$tmp/s1" "$tmp/$1"
	node -e 'const fs = require("fs"), f = process.argv[1] + "/results.jsonl";
	const ls = fs.readFileSync(f, "utf8").trim().split("\n").map(JSON.parse);
	(r => eval(process.argv[2]))(ls[ls.length - 1]);
	fs.writeFileSync(f, ls.map((r) => JSON.stringify(r)).join("\n") + "\n")' "$tmp/$1" "$2"
	n=$(wc -l < "$tmp/$1/results.jsonl")
	sum=$(sha256sum < "$tmp/$1/results.jsonl")
	check_exit 2 "malformed results '$tmp/$1/results.jsonl' line $n: $3 (needle never writes that: the record was edited)" \
		"$NEEDLE" report "$tmp/$1"
	check_exit 2 "line $n: $3" "$NEEDLE" merge "$tmp/$4" "$tmp/s0" "$tmp/$1" "$tmp/s2" "$tmp/s3"
	check_exit 2 "line $n: $3" "$NEEDLE" diff "$tmp/s1" "$tmp/$1"
	[ "$(sha256sum < "$tmp/$1/results.jsonl")" = "$sum" ] || fail "$1: the journal was changed"
}
# A member of a type needle never writes it with (a hand edit, a foreign tool):
# never read as 0.
edited mistyped 'r.audit.usage_delta = "3"' 'member "audit"."usage_delta" is a string, not a number or null' m16
# A member needle always writes, taken out (a recall record's depths): never
# read as "no depths".
edited missing 'delete r.recall.depths' 'member "recall"."depths" is missing' m17
check_exit 2 "already holds" "$NEEDLE" merge "$tmp/merged" "$tmp/s0" "$tmp/s1" "$tmp/s2" "$tmp/s3"
# A retried merge job: --force merges again into a merged folder, never into a run.
check_exit 0 "4 shards, 12 records" "$NEEDLE" merge --force "$tmp/merged" "$tmp/s0" "$tmp/s1" "$tmp/s2" "$tmp/s3"
[ "$(keys "$tmp/merged")" = "$(keys "$tmp/whole")" ] || fail "merge --force: keys differ"
check_exit 2 "holds a run that is not a merge" "$NEEDLE" merge --force "$tmp/whole" "$tmp/s0" "$tmp/s1" "$tmp/s2" "$tmp/s3"
# Three of the twelve attempts missing (issue 24.1): the merge with --allow-partial
# is INCOMPLETE in its report and summary.json, and the gate fails saying so.
for i in 0 1 2; do
	cp -r "$tmp/s$i" "$tmp/p$i"
	sed -i '$d' "$tmp/p$i/results.jsonl"
done
check_exit 0 "3 incomplete shards" "$NEEDLE" merge "$tmp/m9" "$tmp/p0" "$tmp/p1" "$tmp/p2" "$tmp/s3" --allow-partial
check_exit 0 "INCOMPLETE: 9/12 planned attempts recorded" "$NEEDLE" report "$tmp/m9"
node -e 'const a = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).attempts;
	if (a.complete !== false || a.incomplete !== true || a.planned !== 12 || a.planned_done !== 9 || a.total !== 9)
		throw new Error(JSON.stringify(a));' \
	"$tmp/m9/summary.json" || fail "summary.json of a merge missing 3 of 12 attempts"
check_exit 1 "run B is INCOMPLETE: 9/12 planned attempts recorded" "$NEEDLE" diff "$tmp/whole" "$tmp/m9" --gate no_new_failures
# A shard from another machine is never followed (issue 22.4): a link or FIFO in
# its raw/ is refused by name at once, and nothing outside the shard is read.
cp -r "$tmp/s0" "$tmp/evil"
victim=$(ls "$tmp/evil/raw" | head -1)
rm "$tmp/evil/raw/$victim"
ln -s /etc/passwd "$tmp/evil/raw/$victim"
check_exit 2 "cannot read '$tmp/evil/raw/$victim': a symbolic link (not followed here)" "$NEEDLE" merge "$tmp/m10" "$tmp/evil" "$tmp/s1" "$tmp/s2" "$tmp/s3"
! grep -rqs '^root:' "$tmp/m10" || fail "merge copied a file outside the shard"
rm "$tmp/evil/raw/$victim"
mkfifo "$tmp/evil/raw/$victim"
check_exit 2 "not a regular file (a FIFO)" timeout 20 "$NEEDLE" merge "$tmp/m11" "$tmp/evil" "$tmp/s1" "$tmp/s2" "$tmp/s3"
echo "4 shards (2 Indexed Job, 2 Slurm) merge to the whole run's 12 keys, diff 0 flips; bad merges exit 2; lying shards refused; --force re-merges; 3 of 12 missing is INCOMPLETE and gated; links and FIFOs refused"
