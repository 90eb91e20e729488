#!/bin/sh
# slow: 512 requests at concurrency 256
# Issue 10 acceptance, the client is never the bottleneck: 512 fixed-length requests at
# concurrency 256 against the reference server (each response 16 tokens 50 ms apart):
# needle's recorded scheduling lag P99 stays under 5 ms and its own CPU (the manifest's
# per-round getrusage over wall time) under half a core, so the report warns of nothing.
# Figures of a shared machine: the run counts when one of three tries holds. The
# share is compared with the manifest's figures to 1e-12: cJSON prints a number
# in 15 digits when that reads back within an ulp, so the last bit may differ.
set -eu
. "$TESTS/lib/cli.sh"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
cat >"$tmp/s.json" <<'JSON'
{"suite": "c", "cases": [{"id": "c256", "kind": "load", "load": {"input_tokens": 64, "output_tokens": 16,
 "concurrency": [256], "requests": 512, "rounds": 1, "warmup": 0}}]}
JSON
refserver_start
for try in 1 2 3; do
	rm -rf "${tmp:?}/r"
	check_exit 0 "" "$NEEDLE" run "$tmp/s.json" --base-url "$REF_URL" --model 'ref-good:tpot=50' \
		--tokenizer "$ds" --template deepseek-v3 --out "$tmp/r"
	node -e '
const fs = require("fs"), d = process.argv[1];
const s = JSON.parse(fs.readFileSync(d + "/summary.json", "utf8")).load, c = s.cells[0];
const m = JSON.parse(fs.readFileSync(d + "/manifest.json", "utf8"));
const rounds = m.load_client.filter(x => x.round === 1);
const facts = {lag_p99_ms: c.lag_p99_ms, cpu: c.client_cpu_share_max, run: s.client, warnings: s.warnings};
if (!(c.succeeded === 512 && rounds.length === 1 && rounds[0].concurrency === 256 && rounds[0].wall_ms > 0 &&
      Math.abs(c.client_cpu_share_max - rounds[0].cpu_ms / rounds[0].wall_ms) <= 1e-12 * c.client_cpu_share_max && s.client.cpu_share > 0))
	{ console.log("FAIL the client figures are not recorded: " + JSON.stringify(facts) + " " + JSON.stringify({succeeded: c.succeeded, rounds: rounds})); process.exit(2); }
if (!(c.lag_p99_ms < 5 && c.client_cpu_share_max < 0.5 && s.warnings.length === 0))
	{ console.log("try: " + JSON.stringify(facts)); process.exit(1); }' "$tmp/r" && break || st=$?
	[ "$st" = 1 ] && [ $try -lt 3 ] || fail "C256: the client was the bottleneck or did not record it"
	echo "try $try missed a bound (machine busy?); running again"
done
echo "load client: at C256 lag P99 under 5 ms and CPU under half a core, recorded, no warning"
