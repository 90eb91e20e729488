#!/bin/sh
# End to end, API key and model discovery against the reference server started with
# --api-key (vLLM guards /v1 paths: 401 {"error":"Unauthorized"}) and one served model:
# the key from OPENAI_API_KEY or --api-key-env is sent and never written to any result
# file; without it the endpoint is unusable (exit 3); --model defaults to the only
# served model; the manifest records max_model_len and the server version.
set -eu
. "$TESTS/lib/cli.sh"
key="k3y-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
refserver_start --api-key "$key" --served-model-name dsv3-ref --max-model-len 200000
cat >"$tmp/suite.json" <<'JSON'
{"suite": "x", "cases": [{"id": "arith", "kind": "chat", "messages": [{"role": "user", "content": "Compute 19 * 23. Reply with only a JSON object {\"answer\": <integer>}."}], "max_tokens": 64, "expect": {"json": {"answer": 437}}}]}
JSON
rc=0
env OPENAI_API_KEY="$key" "$NEEDLE" run "$tmp/suite.json" --base-url "$REF_URL/v1" --out "$tmp/a" >"$tmp/a.out" 2>&1 || rc=$?
[ "$rc" = 0 ] || { echo "with OPENAI_API_KEY: exit $rc"; cat "$tmp/a.out"; exit 1; }
rc=0
env -u OPENAI_API_KEY MY_KEY="$key" "$NEEDLE" run "$tmp/suite.json" --base-url "$REF_URL" --api-key-env MY_KEY \
	--out "$tmp/b" >"$tmp/b.out" 2>&1 || rc=$?
[ "$rc" = 0 ] || { echo "with --api-key-env: exit $rc"; cat "$tmp/b.out"; exit 1; }
rc=0
env -u OPENAI_API_KEY "$NEEDLE" run "$tmp/suite.json" --base-url "$REF_URL/v1" --out "$tmp/c" >"$tmp/c.out" 2>&1 || rc=$?
[ "$rc" = 3 ] || { echo "without a key: exit $rc, expected 3"; cat "$tmp/c.out"; exit 1; }
if grep -rl "$key" "$tmp/a" "$tmp/b" "$tmp/a.out" "$tmp/b.out" "$tmp/c.out" 2>/dev/null; then echo "the API key was written"; exit 1; fi
node "$TESTS/refserver/records.js" "$tmp/a" 'recs.length === 1 && recs[0].verdict === "pass"' 'pass with the key'
node -e '
const m = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const s = JSON.stringify(m);
if (!s.includes("dsv3-ref") || !s.includes("200000") || !s.includes("0.11.2+refserver")) {
	console.error("manifest lacks the served model, max_model_len or server version: " + s.slice(0, 800)); process.exit(1); }' "$tmp/a/manifest.json"
echo "API key sent and never written; no key: exit 3; default model and manifest fields recorded"
