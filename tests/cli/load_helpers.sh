#!/bin/sh
# slow: a booting server waited for
# End to end, the cutover helpers: --wait-ready polls a booting server (503) until it
# answers, and gives up with exit 3 on one that never does; a bad suite is named before
# the wait, and SIGTERM ends the wait at once with exit 5; --warmup sends uncounted
# requests first; --metrics stores the server's /metrics around each load level and
# its view of the level (the warm-up left out; cold prompts: no prefix-cache hits,
# also across two cases of the same seed and length), and the report shows it beside
# needle's figures with the client's CPU share.
set -eu
. "$TESTS/lib/cli.sh"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
cat >"$tmp/s.json" <<'JSON'
{"suite": "h", "cases": [{"id": "h", "kind": "load", "load": {"input_tokens": 300, "output_tokens": 8,
 "concurrency": [2], "requests": 4, "rounds": 2, "warmup": 2}},
 {"id": "h2", "kind": "load", "load": {"input_tokens": 300, "output_tokens": 8,
 "concurrency": [2], "requests": 4, "rounds": 2, "warmup": 2}}]}
JSON
refserver_start --start-delay 1500 --log "$tmp/log"
rc=0
"$NEEDLE" run "$tmp/s.json" --base-url "$REF_URL" --model 'ref-good:tpot=1' --tokenizer "$ds" \
	--template deepseek-v3 --out "$tmp/r" --wait-ready 30s --warmup 3 --metrics >"$tmp/out" 2>&1 || rc=$?
[ "$rc" = 0 ] || { echo "helpers: exit $rc"; cat "$tmp/out"; exit 1; }
grep -q "waiting for the server: .*answered 503" "$tmp/out" || { echo "no readiness progress:"; cat "$tmp/out"; exit 1; }
n=$(grep -c '"path":"/v1/completions"' "$tmp/log")
[ "$n" = $((3 + 2 * (1 + 2 + 8))) ] || { echo "expected 3 warm-up + 2 x (1 pre-check + 2 + 8) requests, the server saw $n"; exit 1; }
node -e '
const fs = require("fs"), d = process.argv[1] + "/raw/";
const v = JSON.parse(fs.readFileSync(d + "metrics-h-c2.json", "utf8")).server;
if (!(fs.existsSync(d + "metrics-h-c2-before.prom") && fs.existsSync(d + "metrics-h-c2-after.prom") &&
      v.dialect === "vllm" && v.requests === 8 && v.prompt_tokens === 8 * 300 && v.generation_tokens === 64 &&
      v.prefix_hits === 0 && v.running === 0)) { console.log("FAIL server view: " + JSON.stringify(v)); process.exit(1); }
const w = JSON.parse(fs.readFileSync(d + "metrics-h2-c2.json", "utf8")).server;
if (!(w.requests === 8 && w.prefix_hits === 0)) { console.log("FAIL the second case reused a prefix: " + JSON.stringify(w)); process.exit(1); }
const s = JSON.parse(fs.readFileSync(process.argv[1] + "/summary.json", "utf8")).load, c = s.cells[0];
if (!(c.server && c.server.requests === 8 && c.server.generation_tokens === 64 &&
      c.client_cpu_share >= 0 && c.client_cpu_share <= c.client_cpu_share_max && c.client_cpu_share_max < 1 &&
      s.client.cpu_share < 1 && s.client.wall_ms > 0 && Array.isArray(s.warnings))) {
	console.log("FAIL summary: server view or client share missing: " + JSON.stringify(s)); process.exit(1); }
const md = fs.readFileSync(process.argv[1] + "/summary.md", "utf8");
if (!/### Server view/.test(md) || !/\| h\/c2 \| 8 \/ 8 \| 2400 \| 64 \|/.test(md) || !/Client: needle used .* of a core/.test(md)) {
	console.log("FAIL summary.md lacks the server view:\n" + md); process.exit(1); }' "$tmp/r"
refserver_stop
refserver_start --start-delay 600000
rc=0
"$NEEDLE" run "$tmp/s.json" --base-url "$REF_URL" --tokenizer "$ds" --template deepseek-v3 \
	--out "$tmp/never" --wait-ready 1s >"$tmp/never.out" 2>&1 || rc=$?
[ "$rc" = 3 ] || { echo "never ready: exit $rc, expected 3"; cat "$tmp/never.out"; exit 1; }
grep -q "was not ready after" "$tmp/never.out" || { cat "$tmp/never.out"; exit 1; }
# a typo in the suite is found before the wait, not after it
printf '{"suite": "t", "cases": [' >"$tmp/typo.json"
rc=0
t0=$(date +%s)
"$NEEDLE" run "$tmp/typo.json" --base-url "$REF_URL" --tokenizer "$ds" --template deepseek-v3 \
	--out "$tmp/typo" --wait-ready 10m >"$tmp/typo.out" 2>&1 || rc=$?
[ "$rc" = 2 ] && [ $(($(date +%s) - t0)) -lt 20 ] && grep -q "typo.json" "$tmp/typo.out" &&
	! grep -q "waiting for the server" "$tmp/typo.out" || { echo "typo: exit $rc after $(($(date +%s) - t0)) s"; cat "$tmp/typo.out"; exit 1; }
# SIGTERM (a scheduler's cancel) ends the wait at once with exit 5, and no folder is left
"$NEEDLE" run "$tmp/s.json" --base-url "$REF_URL" --tokenizer "$ds" --template deepseek-v3 \
	--out "$tmp/term" --wait-ready 10m >"$tmp/term.out" 2>&1 &
pid=$!
i=0
until grep -q "waiting for the server" "$tmp/term.out" || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
t0=$(date +%s)
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" = 5 ] && [ $(($(date +%s) - t0)) -lt 5 ] && grep -q "stopped by a signal while waiting" "$tmp/term.out" &&
	[ ! -e "$tmp/term" ] || { echo "SIGTERM while waiting: exit $rc after $(($(date +%s) - t0)) s"; cat "$tmp/term.out"; exit 1; }
rc=0
"$NEEDLE" run "$tmp/s.json" --base-url "$REF_URL" --wait-ready soon >"$tmp/bad.out" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "option '--wait-ready': duration 'soon'" "$tmp/bad.out" || { echo "bad duration: exit $rc"; cat "$tmp/bad.out"; exit 1; }
echo "helpers: --wait-ready waits, gives up, checks the suite first and stops on SIGTERM, --warmup is uncounted, --metrics stores the server's view"
