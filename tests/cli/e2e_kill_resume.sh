#!/bin/sh
# slow: a run killed and resumed many times under load
# Group commit under load (issue 14 item 5): `needle run` at 64 streams against
# the null server (every answer at once) is killed with SIGKILL at random
# moments (once the journal holds a random number of lines), three times, each
# time resumed; then a last --resume finishes it.
# The journal is written in batches by a writer thread, and an attempt may count
# as done (the progress line on the terminal) only once its record is durable.
# After each kill: every attempt the progress line had shown done is in
# results.jsonl (its complete lines number at least those recorded before plus
# the largest count shown), no attempt is recorded twice, and every record's raw
# file holds its response_bytes. At the end: every attempt exactly once, all
# passing. The kill points come from a seed printed on failure (KILL_SEED=N reruns one).
set -eu
. "$TESTS/lib/cli.sh"
command -v script >/dev/null || fail "script (util-linux) is missing"
serve node "$TESTS/bench/null_server.js" || exit 1
node -e '
const cases = [];
for (let i = 0; i < 300; i++)
	cases.push({ id: "k" + i, kind: "chat", max_tokens: 8,
		messages: [{ role: "user", content: "say ok " + i }], expect: { contains: ["ok"] } });
process.stdout.write(JSON.stringify({ suite: "kill", defaults: { repeat: 10 }, cases }));' >"$tmp/suite.json"
total=3000
res=$tmp/run/results.jsonl
seed=${KILL_SEED:-$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')}
run="'$NEEDLE' run '$tmp/suite.json' --base-url '$SERVE_URL/v1' --model null --concurrency 64 --timeout 60 --out '$tmp/run'"

# Complete lines of the journal, with the checks of a journal cut by a kill.
check_journal() {
	node -e '
const fs = require("fs"), [dir] = process.argv.slice(1);
const text = fs.readFileSync(dir + "/results.jsonl", "utf8");
const lines = text.split("\n").slice(0, -1), seen = new Set();
for (const l of lines) {
	const r = JSON.parse(l), k = r.case + "#" + r.repeat;
	if (seen.has(k)) { console.error("recorded twice: " + k); process.exit(1); }
	seen.add(k);
	const st = fs.statSync(dir + "/" + r.raw, { throwIfNoEntry: false });
	if (!st || st.size !== r.response_bytes) {
		console.error(k + ": raw file " + r.raw + " is " + (st ? st.size + " bytes, not " + r.response_bytes : "missing"));
		process.exit(1);
	}
}
console.log(lines.length);' "$tmp/run"
}

# The largest "N/M  pass" count the progress line showed in the typescript.
shown_done() {
	tr '\r' '\n' <"$1" | grep -o '[0-9]*/[0-9]*  pass' | cut -d/ -f1 | sort -n | tail -n 1
}

round=0 killed=0 before=0 resume=
while [ $round -lt 3 ]; do
	round=$((round + 1))
	# Killed once the journal holds a random number of lines more than before
	# (a time would miss a run that ends sooner on a fast machine).
	left=$((total - before))
	want=$(awk -v s="$seed" -v r="$round" -v b="$before" -v l="$left" \
		'BEGIN { srand(s * 7 + r); printf "%d", b + 50 + rand() * (l / 2 - 50) }')
	rm -f "$tmp/pid"
	# the shell script(1) starts writes its pid, which exec hands to needle
	script -qfec "echo \$\$ >'$tmp/pid'; exec $run $resume" "$tmp/ts$round" >/dev/null 2>&1 &
	spid=$!
	track "$spid"
	while kill -0 "$spid" 2>/dev/null; do
		have=$(cat "$res" 2>/dev/null | wc -l)
		[ "$have" -lt "$want" ] || break
		sleep 0.01
	done
	delay="$want lines"
	npid=$(cat "$tmp/pid" 2>/dev/null || true)
	if [ -n "$npid" ] && kill -9 "$npid" 2>/dev/null; then
		killed=$((killed + 1))
	fi
	wait "$spid" 2>/dev/null || true
	shown=$(shown_done "$tmp/ts$round")
	shown=${shown:-0}
	now=$(check_journal) || fail "round $round (seed $seed, kill at $delay): journal check failed"
	[ "$now" -ge $((before + shown)) ] ||
		fail "round $round (seed $seed, kill at $delay): progress showed $shown done, but only $((now - before)) records were added ($before before)"
	echo "round $round: killed at $delay, progress showed $shown done, $((now - before)) records added"
	before=$now resume=--resume
	[ "$now" -lt $total ] || break
done
[ $killed -ge 1 ] || fail "no run was killed mid-way (seed $seed): the suite finished too fast"

rc=0
sh -c "$run --resume" >"$tmp/last.out" 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "last resume: exit $rc, expected 0: $(cat "$tmp/last.out")"
now=$(check_journal) || fail "the finished journal failed its checks"
[ "$now" = $total ] || fail "the finished journal holds $now records, expected $total"
node "$TESTS/refserver/records.js" "$tmp/run" 'recs.every(r => r.verdict === "pass")' 'all pass'
echo "ok: $killed kills (seed $seed), every attempt shown done was durable; $total recorded once each"
