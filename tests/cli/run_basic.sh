#!/bin/sh
# needle run against the loopback reference server: verdicts and failure codes
# for good, fenced, empty and error-frame answers; exit codes 0/1/2/3; the API
# key never reaches a file; suite errors name file, path and reason.
set -eu
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

node "$TESTS/refserver/server.js" --port 0 > "$tmp/srv.out" 2> "$tmp/srv.err" &
pid=$!
i=0
until grep -q listening "$tmp/srv.out" 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 200 ] || { cat "$tmp/srv.err"; exit 1; }; sleep 0.05
done
url=$(sed -n 's/.*listening on //p' "$tmp/srv.out")

cat > "$tmp/suite.json" <<'JSON'
{"suite":"x","cases":[{"id":"arith","kind":"chat","messages":[{"role":"user","content":"Compute 19 * 23. Reply with only a JSON object {\"answer\": <integer>}."}],"max_tokens":64,"expect":{"json":{"answer":437}}}]}
JSON
# field of the single record: jq-free, through node
field() { node -e 'const fs=require("fs");const r=JSON.parse(fs.readFileSync(process.argv[1],"utf8").trim().split("\n").pop());let v=r;for(const k of process.argv[2].split("."))v=v==null?v:v[k];console.log(typeof v==="object"?JSON.stringify(v):String(v))' "$1/results.jsonl" "$2"; }
fail() { echo "FAIL: $*"; exit 1; }

run() { # model, expected exit
	st=0
	OPENAI_API_KEY=sk-needle-secret-123 "$NEEDLE" run "$tmp/suite.json" --base-url "$url" \
		--model "$1" --out "$tmp/$1" --timeout 10 2> "$tmp/$1.err" || st=$?
	[ "$st" = "$2" ] || { cat "$tmp/$1.err"; fail "model $1: exit $st, expected $2"; }
}

run ref-good 0
[ "$(field "$tmp/ref-good" verdict)" = pass ] || fail "ref-good verdict"
[ "$(field "$tmp/ref-good" transport.failures)" = "[]" ] || fail "ref-good failures"
[ "$(field "$tmp/ref-good" http_status)" = 200 ] || fail "ref-good status"
[ "$(field "$tmp/ref-good" finish_reason)" = stop ] || fail "ref-good finish_reason"
grep -q '"served_model"' "$tmp/ref-good/manifest.json" || fail "manifest lacks served_model"
grep -q '"max_model_len"' "$tmp/ref-good/manifest.json" || fail "manifest lacks max_model_len"
grep -q '0.11.2+refserver' "$tmp/ref-good/manifest.json" || fail "manifest lacks the server version"
ls "$tmp/ref-good/raw/arith-r1.sse" > /dev/null || fail "raw bytes missing"
grep -q 'data: \[DONE\]' "$tmp/ref-good/raw/arith-r1.sse" || fail "raw bytes lack [DONE]"
grep -q '^needle run: 1 attempts, 1 passed' "$tmp/ref-good.err" || fail "summary line"
! grep -rq 'sk-needle-secret-123' "$tmp/ref-good" || fail "API key written to the results"

run ref-fenced 1
[ "$(field "$tmp/ref-fenced" verdict)" = fail ] || fail "fenced verdict"
field "$tmp/ref-fenced" grade.reasons | grep -q 'code fence' || fail "fenced reason"

run ref-prose 1
field "$tmp/ref-prose" grade.reasons | grep -q 'prose' || fail "prose reason"

run ref-empty 1
field "$tmp/ref-empty" transport.failures | grep -q empty_output || fail "empty_output"

run ref-error-frame 1
field "$tmp/ref-error-frame" transport.failures | grep -q sse_error_frame || fail "sse_error_frame"

run ref-no-done 1
field "$tmp/ref-no-done" transport.failures | grep -q no_done || fail "no_done"

run ref-http-500 1
[ "$(field "$tmp/ref-http-500" http_status)" = 500 ] || fail "http 500 status"
field "$tmp/ref-http-500" transport.failures | grep -q http_status || fail "http_status"

run ref-reasoning-only 1
field "$tmp/ref-reasoning-only" transport.failures | grep -q reasoning_only || fail "reasoning_only"

# unreachable endpoint: exit 3
st=0
"$NEEDLE" run "$tmp/suite.json" --base-url http://127.0.0.1:9 --model m --out "$tmp/unreach" \
	--timeout 5 2> "$tmp/unreach.err" || st=$?
[ "$st" = 3 ] || { cat "$tmp/unreach.err"; fail "unreachable: exit $st"; }

# a suite with a typo: exit 2, file + path + reason
sed 's/"max_tokens"/"max_token"/' "$tmp/suite.json" > "$tmp/typo.json"
st=0
"$NEEDLE" run "$tmp/typo.json" --base-url "$url" --model ref-good --out "$tmp/typo" 2> "$tmp/typo.err" || st=$?
[ "$st" = 2 ] || fail "typo: exit $st"
grep -q "typo.json: cases\[0\].max_token: unknown case key 'max_token' (did you mean 'max_tokens'?)" "$tmp/typo.err" \
	|| { cat "$tmp/typo.err"; fail "typo message"; }

# a results folder that cannot be written: exit 2, clear message
st=0
"$NEEDLE" run "$tmp/suite.json" --base-url "$url" --model ref-good --out /dev/null/run 2> "$tmp/ro.err" || st=$?
[ "$st" = 2 ] || fail "unwritable: exit $st"
grep -q "/dev/null" "$tmp/ro.err" || fail "unwritable message"

# an existing folder without --resume is refused; with --resume nothing is rerun
st=0
"$NEEDLE" run "$tmp/suite.json" --base-url "$url" --model ref-good --out "$tmp/ref-good" 2> "$tmp/again.err" || st=$?
[ "$st" = 2 ] || fail "rerun without --resume: exit $st"
"$NEEDLE" run "$tmp/suite.json" --base-url "$url" --model ref-good --out "$tmp/ref-good" --resume 2> "$tmp/resume.err"
[ "$(wc -l < "$tmp/ref-good/results.jsonl")" = 1 ] || fail "resume reran a recorded attempt"

# OPENAI_BASE_URL with /v1, and the only served model picked automatically
st=0
OPENAI_BASE_URL="$url/v1" "$NEEDLE" run "$tmp/suite.json" --out "$tmp/env" 2> "$tmp/env.err" || st=$?
[ "$st" = 2 ] || fail "many served models without --model: exit $st"
grep -q 'choose one with --model' "$tmp/env.err" || fail "many models message"
echo ok
