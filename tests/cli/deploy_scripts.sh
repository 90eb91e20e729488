#!/bin/sh
# The cluster scripts with hostile arguments (issue 33.5). merge.sbatch, run with the
# real needle over real shards, merges the folder its RESULTS names when that path
# holds a space, '%' and glob characters (and a decoy folder the glob would match is
# left alone); SHARDS, LEAD, --retries and --poll that are not whole numbers in range
# stop the scripts with exit 2 before anything is submitted. needle-k8s, against a
# kubectl that answers as a cluster does for a Job whose pod cannot be scheduled,
# gives up after NEEDLE_K8S_PENDING seconds with the pod's reason, exit 1 (the
# scripted kubectl stands for the API server only; tests/cli/slurm.sh runs the
# Slurm scripts on a real Slurm).
set -eu
. "$TESTS/lib/cli.sh"
[ "$(basename "$NEEDLE")" = needle ] || fail "NEEDLE must be a binary named needle: $NEEDLE"
PATH=$(cd "$(dirname "$NEEDLE")" && pwd):$PATH
export PATH
refserver_start
cat > "$tmp/s.json" <<'JSON'
{"suite": "dep", "cases": [
 {"id": "a", "kind": "chat", "messages": [{"role": "user", "content": "Compute 19 * 23. Reply with only a JSON object {\"answer\": <integer>}."}], "max_tokens": 64, "expect": {"json": {"answer": 437}}},
 {"id": "b", "kind": "chat", "messages": [{"role": "user", "content": "Compute 19 * 23. Reply with only a JSON object {\"answer\": <integer>}."}], "max_tokens": 64, "expect": {"json": {"answer": 437}}}]}
JSON
R="$tmp/my results %g [1] *"
mkdir -p "$R" "$tmp/my results %g 1 x"
for i in 0 1; do
	needle run "$tmp/s.json" --base-url "$REF_URL" --model ref-good --shard "$i/2" --out "$R/shard-$i" > /dev/null 2>&1 ||
		fail "shard $i"
done
cp -r "$R/shard-0" "$tmp/my results %g 1 x/shard-0" # a decoy an unquoted glob would pick
env SHARDS=2 RESULTS="$R" sh "$ROOT/deploy/slurm/merge.sbatch" > "$tmp/out" 2> "$tmp/err" ||
	fail "merge.sbatch with a hostile RESULTS: $(cat "$tmp/err")"
[ "$(wc -l < "$R/merged/results.jsonl")" = 2 ] || fail "merge.sbatch merged $(wc -l < "$R/merged/results.jsonl") records, not 2"
[ ! -e "$tmp/my results %g 1 x/merged" ] || fail "merge.sbatch wrote into the decoy"
for bad in '' 0 -1 abc 2x 100001 '1 2' '$(touch pwned)'; do
	check_exit 2 "SHARDS must be a whole number from 1 to 100000" env SHARDS="$bad" RESULTS="$R" sh "$ROOT/deploy/slurm/merge.sbatch"
	check_exit 2 "SHARDS must be a whole number from 1 to 100000" env SHARDS="$bad" RESULTS="$R" SUITE=x NEEDLE_ARGS= \
		SLURM_ARRAY_TASK_ID=0 sh "$ROOT/deploy/slurm/shard.sbatch"
	check_exit 2 "needle-slurm: SHARDS must be a whole number from 1 to 100000" sh "$ROOT/deploy/slurm/needle-slurm" "$bad" s.json "$R"
done
[ ! -e pwned ] && [ ! -e "$R/pwned" ] || fail "a SHARDS value was run as a command"
check_exit 2 "LEAD must be whole seconds" env LEAD=soon SUITE=x RESULTS="$R" NEEDLE_ARGS= sh "$ROOT/deploy/slurm/load.sbatch"
check_exit 2 "needle-slurm: --retries must be a whole number from 0 to 100, not 'many'" sh "$ROOT/deploy/slurm/needle-slurm" --retries many 2 s.json "$R"
check_exit 2 "needle-slurm: --poll must be a whole number from 1 to 3600, not '0'" sh "$ROOT/deploy/slurm/needle-slurm" --poll 0 2 s.json "$R"

# needle-k8s and a Job whose only pod stays Pending
mkdir -p "$tmp/bin"
cat > "$tmp/bin/kubectl" <<'KUBE'
#!/bin/sh
# answers as the API server does for one Job whose pod cannot be scheduled
echo "$*" >> "$KUBE_LOG"
case "$*" in
"create -f "*shards.yaml*) echo job.batch/needle-shards-x ;;
"get job.batch/needle-shards-x -o jsonpath="*) ;;
"get pods -l job-name=needle-shards-x -o jsonpath={range .items[*]}"*) printf 'Pending ' ;;
"get pods -l job-name=needle-shards-x -o jsonpath="*) printf 'needle-shards-x-0-abcde Unschedulable: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu.\n' ;;
*) echo "unexpected kubectl $*" >&2; exit 9 ;;
esac
KUBE
chmod +x "$tmp/bin/kubectl"
export KUBE_LOG="$tmp/kube.log"
: > "$KUBE_LOG"
touch "$tmp/shards.yaml" "$tmp/merge.yaml"
start=$(date +%s)
check_exit 1 "needle-k8s: job.batch/needle-shards-x has had no pod running for" \
	env PATH="$tmp/bin:$PATH" NEEDLE_K8S_PENDING=2 NEEDLE_K8S_POLL=1 timeout 60 sh "$ROOT/deploy/k8s/needle-k8s" "$tmp"
grep -q "Unschedulable: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu." "$tmp/err" ||
	fail "needle-k8s does not say why the pod is pending: $(cat "$tmp/err")"
[ $(($(date +%s) - start)) -lt 30 ] || fail "needle-k8s took too long to give up"
! grep -q merge.yaml "$KUBE_LOG" || fail "needle-k8s created the merge Job after the shards never ran"
check_exit 2 "NEEDLE_K8S_PENDING must be whole seconds" env PATH="$tmp/bin:$PATH" NEEDLE_K8S_PENDING=soon sh "$ROOT/deploy/k8s/needle-k8s" "$tmp"
echo "deploy_scripts: merge.sbatch quotes a hostile RESULTS; bad numbers refused before submitting; needle-k8s gives up on a Pending Job with its reason"
