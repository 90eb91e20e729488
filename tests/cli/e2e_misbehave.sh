#!/bin/sh
# End to end against the reference server's misbehaving models (vLLM dialect), one run
# each with the arithmetic case, all in parallel: every misbehaviour must be recorded
# with the right failure code, and the good variants (slow, keep-alive, legacy and
# transitional reasoning fields) must pass.
set -eu
. "$TESTS/lib/cli.sh"
ds=$(fixture hf/deepseek_v3/tokenizer.json)
refserver_start
cat >"$tmp/suite.json" <<'JSON'
{"suite": "x", "cases": [{"id": "arith", "kind": "chat", "messages": [{"role": "user", "content": "Compute 19 * 23. Reply with only a JSON object {\"answer\": <integer>}."}], "max_tokens": 64, "expect": {"json": {"answer": 437}}}]}
JSON
# name|model|exit|assertion over recs
cat >"$tmp/table" <<'EOF2'
good|ref-good|0|recs[0].verdict === "pass" && recs[0].audit.usage_delta === 0 && recs[0].content === "{\"answer\": 437}"
slow|ref-slow:delay=1500|0|recs[0].verdict === "pass" && recs[0].timing.ttft_ms >= 1490 && recs[0].timing.first_byte_ms < 1000
keepalive|ref-keepalive|0|recs[0].verdict === "pass" && recs[0].timing.ttft_ms >= 1490
reasoning|ref-reasoning|0|recs[0].verdict === "pass" && recs[0].reasoning.startsWith("The prompt has") && recs[0].timing.ttft_ms <= recs[0].timing.ttfc_ms
legacy|ref-reasoning:field=reasoning_content|0|recs[0].verdict === "pass" && recs[0].reasoning.startsWith("The prompt has")
both|ref-reasoning:field=both|0|recs[0].verdict === "pass" && recs[0].reasoning.startsWith("The prompt has") && recs[0].reasoning.split("The prompt has").length === 2
empty|ref-empty|1|recs[0].transport.failures.includes("empty_output")
errframe|ref-error-frame|1|recs[0].transport.failures.includes("sse_error_frame")
nodone|ref-no-done|1|JSON.stringify(recs[0].transport.failures) === "[\"no_done\"]"
disconnect|ref-disconnect|1|recs[0].verdict === "fail" && recs[0].transport.failures.includes("no_done")
badusage|ref-bad-usage|1|recs[0].transport.failures.includes("bad_usage")
nousage|ref-no-usage|1|JSON.stringify(recs[0].transport.failures) === "[\"missing_usage\"]"
usageoff|ref-usage-off|1|recs[0].transport.ok && recs[0].audit.ok === false && recs[0].audit.usage_delta === 1
reasoningonly|ref-reasoning-only|1|recs[0].transport.failures.includes("reasoning_only") && recs[0].finish_reason === "length"
stall|ref-stall|1|recs[0].transport.failures.includes("timeout") && recs[0].timing.e2e_ms < 6000
wrong|ref-wrong|1|recs[0].transport.ok && recs[0].grade.ok === false && recs[0].content === "{\"answer\": 438}"
fenced|ref-fenced|1|recs[0].transport.ok && recs[0].grade.ok === false
prose|ref-prose|1|recs[0].transport.ok && recs[0].grade.ok === false
truncated|ref-truncated|1|recs[0].transport.failures.includes("malformed_sse")
http500|ref-http-500|1 3|recs.every(r => r.http_status === 500 && r.transport.failures.includes("http_status"))
html|ref-html|1 3|recs.every(r => r.http_status === 502 && r.transport.failures.includes("http_status"))
EOF2
pids=
while IFS='|' read -r name model codes assert; do
	(
		rc=0
		"$NEEDLE" run "$tmp/suite.json" --base-url "$REF_URL/v1" --model "$model" --tokenizer "$ds" \
			--template deepseek-v3 --out "$tmp/$name" --timeout 4 >"$tmp/$name.out" 2>&1 || rc=$?
		ok=0
		for c in $codes; do [ "$rc" = "$c" ] && ok=1; done
		if [ $ok = 0 ]; then echo "$name ($model): exit $rc, expected $codes" >"$tmp/$name.fail"; cat "$tmp/$name.out" >>"$tmp/$name.fail"; exit 0; fi
		node "$TESTS/refserver/records.js" "$tmp/$name" "recs.length === 1 && ($assert)" "$name ($model)" 2>"$tmp/$name.err" ||
			cat "$tmp/$name.err" >"$tmp/$name.fail"
	) &
	pids="$pids $!"
done <"$tmp/table"
for p in $pids; do wait "$p"; done
fails=$(ls "$tmp" | grep -c '\.fail$' || true)
[ "$fails" = 0 ] || { cat "$tmp"/*.fail; exit 1; }
echo "$(wc -l <"$tmp/table") refserver behaviours recorded as expected"
