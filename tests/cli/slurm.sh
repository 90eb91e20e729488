#!/bin/sh
# slow: starts a private Slurm cluster
# Issue 24: docs/cluster.md's Slurm recipe, as written there, on a private
# single-node Slurm started here (munged, slurmctld and slurmd on loopback,
# with their own key, socket, ports and state folder; proctrack/linuxproc,
# task/none) against the reference server:
#  - smoke over an array of 4 with the doc's submit commands (afterany merge);
#  - a recall grid with failures (ref-forgetful) over 4 shards with the
#    one-step needle-slurm, one task interrupted (SIGTERM: exit 5) and
#    requeued on its own index;
#  - a load suite over 2 tasks of one allocation (load.sbatch, srun,
#    --start-at);
# each merged run equal to the same suite run unsharded (keys, verdicts,
# reasons, answers, prompt tokens; load: requests and successes per cell).
# The doc's files must be deploy/slurm/'s byte for byte. Every daemon is
# stopped by the PID started here. Needs `sh tests/setup.sh slurm`.
set -eu
. "$TESTS/lib/cli.sh"
. "$TESTS/lib/recipe.sh"
for p in munged slurmctld slurmd sbatch srun scontrol; do
	need "Slurm and MUNGE ($p)" "make deps-slurm, as root" command -v $p
done
[ "$(basename "$NEEDLE")" = needle ] || fail "NEEDLE must be a binary named needle: $NEEDLE"
PATH=$(cd "$(dirname "$NEEDLE")" && pwd):$PATH
export PATH
ds=$(fixture hf/deepseek_v3/tokenizer.json)
refserver_start

# ---- the cluster
c=$tmp/slurm
mkdir -p "$c/state" "$c/spool" "$c/log"
dd if=/dev/urandom of="$c/munge.key" bs=1024 count=1 2>/dev/null
chmod 600 "$c/munge.key"
munged -F -f -S "$c/munge.sock" --key-file="$c/munge.key" --log-file="$c/log/munged.log" \
	--pid-file="$c/munged.pid" --seed-file="$c/munged.seed" >"$c/log/munged.out" 2>&1 &
track $!
ports=$(node -e 'const net = require("net"), got = [];
	const one = () => { const s = net.createServer().listen(0, "127.0.0.1", () => {
		got.push(s.address().port); s.close(); got.length < 2 ? one() : console.log(got.join(" ")); }); };
	one();')
set -- $ports
host=$(hostname -s)
cat >"$c/slurm.conf" <<CONF
ClusterName=needletest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$1
SlurmdPort=$2
AuthType=auth/munge
AuthInfo=socket=$c/munge.sock
CredType=cred/munge
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
StateSaveLocation=$c/state
SlurmdSpoolDir=$c/spool
SlurmctldPidFile=$c/slurmctld.pid
SlurmdPidFile=$c/slurmd.pid
SlurmctldLogFile=$c/log/slurmctld.log
SlurmdLogFile=$c/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=8 RealMemory=4000 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
SLURM_CONF=$c/slurm.conf
export SLURM_CONF
i=0
until [ -S "$c/munge.sock" ]; do
	i=$((i + 1)); [ $i -lt 100 ] || fail "munged did not start: $(cat "$c/log/munged.out")"; sleep 0.1
done
slurmctld -D -f "$SLURM_CONF" >"$c/log/slurmctld.out" 2>&1 &
track $!
slurmd -D -f "$SLURM_CONF" -N "$host" >"$c/log/slurmd.out" 2>&1 &
track $!
i=0
until [ "$(sinfo -h -o %T 2>/dev/null)" = idle ]; do
	i=$((i + 1)); [ $i -lt 150 ] || fail "the node is not idle: $(sinfo 2>&1) $(tail -5 "$c/log/slurmctld.log")"; sleep 0.2
done

# Waits for job ID (every task) to end; fails unless each COMPLETED.
wait_job() {
	_i=0
	while scontrol -o show job "$1" | grep -q -e 'JobState=PENDING' -e 'JobState=RUNNING' \
		-e 'JobState=CONFIGURING' -e 'JobState=COMPLETING'; do
		_i=$((_i + 1)); [ $_i -lt 600 ] || fail "job $1 did not end"; sleep 0.5
	done
	scontrol -o show job "$1" | grep -v -q 'JobState=COMPLETED' && fail "job $1: $(scontrol -o show job "$1" | tr ' ' '\n' | grep -e JobState -e ExitCode) $(cat "$RESULTS"/*.log 2>/dev/null)"
	return 0
}

# Same attempts, verdicts, reasons, answers and prompt tokens in two runs.
same_run() { # WHOLE MERGED
	node -e 'const fs = require("fs");
		const load = (d) => new Map(fs.readFileSync(d + "/results.jsonl", "utf8").trim().split("\n")
			.map((l) => JSON.parse(l)).map((r) => [`${r.case} r${r.repeat} s${r.seed}`,
				JSON.stringify([r.verdict, r.grade && r.grade.reasons, r.transport.failures,
					r.content, r.usage && r.usage.prompt_tokens,
					r.audit && r.audit.local_prompt_tokens])]));
		const [a, b] = process.argv.slice(1).map(load);
		if (a.size !== b.size) throw new Error(`${a.size} attempts unsharded, ${b.size} merged`);
		for (const [k, v] of a) if (b.get(k) !== v) throw new Error(`${k}: ${v} unsharded, ${b.get(k)} merged`);
		const fails = [...a.values()].filter((v) => !v.startsWith("[\"pass\"")).length;
		console.log(`${a.size} attempts, ${fails} failed, alike`);' "$1" "$2"
}

mkdir -p "$tmp/recipe"
for f in shard.sbatch merge.sbatch load.sbatch; do
	recipe_file "deploy/slurm/$f" >"$tmp/recipe/$f"
	cmp -s "$tmp/recipe/$f" "$ROOT/deploy/slurm/$f" || fail "docs/cluster.md's $f is not deploy/slurm/$f"
done

# ---- smoke over an array of 4: the doc's submit commands
export SHARDS=4 SUITE=smoke RESULTS=$tmp/smoke
export NEEDLE_ARGS="--base-url $REF_URL/v1 --model ref-good --tokenizer $ds --template deepseek-v3"
mkdir -p "$RESULTS"
(cd "$tmp/recipe" && eval "$(recipe slurm-submit)") >"$tmp/submit.out" || fail "submit: $(cat "$tmp/submit.out")"
mjid=$(tail -1 "$tmp/submit.out")
wait_job "$mjid"
check_exit "0 1" "" needle run smoke $NEEDLE_ARGS --out "$tmp/smoke-whole"
same_run "$tmp/smoke-whole" "$RESULTS/merged" >"$tmp/same" || fail "smoke: merged is not the unsharded run"
echo "smoke: $(cat "$tmp/same")"

# ---- a recall grid with failures, one step, one task interrupted and requeued
cat >"$tmp/grid.json" <<'JSON'
{"suite": "slurm-grid", "defaults": {"max_tokens": 256, "temperature": 0},
 "cases": [
  {"id": "g-1k", "kind": "recall", "repeat": 2, "recall": {"tokens": 1024, "depths": [0, 50, 100], "seeds": [1, 2, 3], "needles": 3, "filler": "mixed"}},
  {"id": "g-2k", "kind": "recall", "recall": {"tokens": 2048, "depths": [50], "seeds": [1, 2, 3], "needles": 1, "filler": "mixed"}},
  {"id": "g-4k", "kind": "recall", "recall": {"tokens": 4096, "depths": [0, 50, 100], "seeds": [1, 2], "needles": 3, "filler": "mixed"}}
 ]}
JSON
export SUITE=$tmp/grid.json RESULTS=$tmp/grid
export NEEDLE_ARGS="--base-url $REF_URL/v1 --model ref-forgetful:delay=1500 --tokenizer $ds --template deepseek-v3"
(cd "$ROOT" && eval "$(recipe slurm-one-step)") >"$tmp/one.out" 2>"$tmp/one.err" &
sp=$!
i=0
until [ -s "$RESULTS/shard-2/results.jsonl" ]; do
	i=$((i + 1)); [ $i -lt 600 ] || fail "shard 2 recorded nothing: $(cat "$tmp/one.err")"; sleep 0.1
done
pid=$(ps -eo pid=,args= | awk -v d="$RESULTS/shard-2" '$2 ~ /needle$/ && index($0, d) { print $1; exit }')
[ -n "$pid" ] || fail "no needle process of shard 2"
kill -TERM "$pid"
rc=0
wait $sp || rc=$?
[ $rc = 0 ] || fail "needle-slurm: exit $rc: $(cat "$tmp/one.err")"
grep -q "shard 2 ended with exit 5; requeued" "$tmp/one.err" || fail "shard 2 was not requeued: $(cat "$tmp/one.err")"
# the requeued task resumed its folder (its log is the retry's)
grep -q "recorded before" "$RESULTS/shard-2.log" || fail "shard 2 did not resume: $(cat "$RESULTS/shard-2.log")"
check_exit "0 1" "" needle run "$SUITE" $NEEDLE_ARGS --out "$tmp/grid-whole"
same_run "$tmp/grid-whole" "$RESULTS/merged" >"$tmp/same" || fail "grid: merged is not the unsharded run"
echo "recall grid (shard 2 interrupted and requeued): $(cat "$tmp/same")"
case $(cat "$tmp/same") in *" 0 failed"* | *" 11 failed"*) fail "the grid needs passes and failures: $(cat "$tmp/same")" ;; esac

# ---- load over 2 tasks of one allocation, --start-at
cat >"$tmp/load.json" <<'JSON'
{"suite": "slurm-load", "cases": [
 {"id": "open", "kind": "load", "load": {"input_tokens": 64, "output_tokens": 4, "rate": [20], "arrival": "constant", "requests": 40, "rounds": 1, "warmup": 0, "seed": 7}},
 {"id": "closed", "kind": "load", "load": {"input_tokens": 64, "output_tokens": 4, "concurrency": [4], "requests": 12, "rounds": 1, "warmup": 0, "seed": 7}}]}
JSON
export SUITE=$tmp/load.json RESULTS=$tmp/load LEAD=5
export NEEDLE_ARGS="--base-url $REF_URL/v1 --model ref-good:tpot=5 --tokenizer $ds --template deepseek-v3"
mkdir -p "$RESULTS"
ljid=$(cd "$tmp/recipe" && sbatch --parsable --ntasks=2 --output="$RESULTS/load.log" load.sbatch)
wait_job "$ljid"
grep -q "load cases ran on 2 shards at once" "$RESULTS/load.log" || fail "load merge: $(cat "$RESULTS/load.log")"
check_exit 0 "" needle run "$SUITE" $NEEDLE_ARGS --out "$tmp/load-whole"
for d in "$tmp/load-whole" "$RESULTS/merged"; do
	needle report "$d" --format json
done >"$tmp/cells" 2>/dev/null
node -e 'const fs = require("fs");
	const runs = fs.readFileSync(process.argv[1], "utf8").split(/\n(?=\{)/).map((t) => JSON.parse(t));
	const cells = runs.map((s) => s.load.cells.map((c) => `${c.case} ${c.rate !== undefined ? "rate " + c.rate : "concurrency " + c.concurrency}: ${c.requests} requests, ${c.succeeded} succeeded`).sort().join("; "));
	if (cells[0] !== cells[1]) throw new Error(`unsharded ${cells[0]} / merged ${cells[1]}`);
	console.log(cells[0]);' "$tmp/cells" >"$tmp/same" || fail "load: merged cells are not the unsharded run's"
echo "load over 2 tasks of one allocation: $(cat "$tmp/same")"
echo "slurm: the documented recipe on a private cluster: smoke, a recall grid (a task interrupted, requeued), load over one allocation: merged = unsharded"
