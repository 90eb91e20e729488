#!/bin/sh
# needle run against the loopback reference server: verdicts and failure codes
# for good, fenced, empty and error-frame answers; exit codes 0/1/2/3; the API
# key never reaches a file; suite errors name file, path and reason.
set -eu
. "$TESTS/lib/cli.sh"
refserver_start
url=$REF_URL

cat > "$tmp/suite.json" <<'JSON'
{"suite":"x","cases":[{"id":"arith","kind":"chat","messages":[{"role":"user","content":"Compute 19 * 23. Reply with only a JSON object {\"answer\": <integer>}."}],"max_tokens":64,"expect":{"json":{"answer":437}}}]}
JSON
# field of the single record: jq-free, through node
field() { node -e 'const fs=require("fs");const r=JSON.parse(fs.readFileSync(process.argv[1],"utf8").trim().split("\n").pop());let v=r;for(const k of process.argv[2].split("."))v=v==null?v:v[k];console.log(typeof v==="object"?JSON.stringify(v):String(v))' "$1/results.jsonl" "$2"; }

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

# a full disk (a file size limit here): a clear error, exit 2, every record
# written before it intact; --resume then completes the run
node -e 'console.log(JSON.stringify({suite: "fz", defaults: {repeat: 8, max_tokens: 32}, cases: [{id: "a",
	messages: [{role: "user", content: "Compute 2 * 3. Reply with only a JSON object {\"answer\": <integer>}."}],
	expect: {json: {answer: 6}}}]}))' > "$tmp/fz.json"
st=0
(ulimit -f 8; exec "$NEEDLE" run "$tmp/fz.json" --base-url "$url" --model ref-good --out "$tmp/fz") 2> "$tmp/fz.err" || st=$?
[ "$st" = 2 ] || { cat "$tmp/fz.err"; fail "file size limit: exit $st"; }
grep -q "cannot write '.*results.jsonl'.*records before it are safe" "$tmp/fz.err" || { cat "$tmp/fz.err"; fail "full-disk message"; }
node -e 'require("fs").readFileSync(process.argv[1], "utf8").split("\n").slice(0, -1).map(JSON.parse)' \
	"$tmp/fz/results.jsonl" || fail "journal damaged by the failed write"
"$NEEDLE" run "$tmp/fz.json" --base-url "$url" --model ref-good --out "$tmp/fz" --resume 2> "$tmp/fz2.err" \
	|| { cat "$tmp/fz2.err"; fail "resume after the full disk"; }
[ "$(wc -l < "$tmp/fz/results.jsonl")" = 8 ] || fail "records after resume"

# OPENAI_BASE_URL with /v1, and the only served model picked automatically
st=0
OPENAI_BASE_URL="$url/v1" "$NEEDLE" run "$tmp/suite.json" --out "$tmp/env" 2> "$tmp/env.err" || st=$?
[ "$st" = 2 ] || fail "many served models without --model: exit $st"
grep -q 'choose one with --model' "$tmp/env.err" || fail "many models message"
# an endpoint with an API key: the wrong key makes it unusable (exit 3); the
# key from --api-key-env works and is written nowhere
refserver_start --api-key sk-right-456
kurl=$REF_URL
st=0
OPENAI_API_KEY=sk-wrong "$NEEDLE" run "$tmp/suite.json" --base-url "$kurl" --model ref-good --out "$tmp/k1" 2> "$tmp/k1.err" || st=$?
[ "$st" = 3 ] || { cat "$tmp/k1.err"; fail "wrong key: exit $st"; }
grep -q 'HTTP 401' "$tmp/k1.err" || fail "wrong key message"
st=0
"$NEEDLE" run "$tmp/suite.json" --base-url "$kurl" --model ref-good --out "$tmp/k2" --api-key-env NO_SUCH_VAR_X 2> "$tmp/k2.err" || st=$?
[ "$st" = 2 ] || fail "unset --api-key-env: exit $st"
MY_KEY=sk-right-456 "$NEEDLE" run "$tmp/suite.json" --base-url "$kurl" --model ref-good --out "$tmp/k3" \
	--api-key-env MY_KEY 2> "$tmp/k3.err" || { cat "$tmp/k3.err"; fail "right key"; }
! grep -rq 'sk-right-456' "$tmp/k3" || fail "API key written to the results"

# libcurl is loaded by the first request (harness/net/curlapi.c), not at start:
# a command without HTTP never maps it, one with HTTP does
printf 'hello\n' > "$tmp/hello.txt"
LD_DEBUG=libs "$NEEDLE" count --tokenizer "$(fixture hf/deepseek_v3/tokenizer.json)" "$tmp/hello.txt" \
	> /dev/null 2> "$tmp/ld-count.err" || { cat "$tmp/ld-count.err"; fail "count under LD_DEBUG"; }
grep -q 'libcjson' "$tmp/ld-count.err" || fail "LD_DEBUG=libs printed nothing: the check below proves nothing"
! grep -q 'libcurl' "$tmp/ld-count.err" || fail "needle count loaded libcurl"
LD_DEBUG=libs "$NEEDLE" run "$tmp/suite.json" --base-url "$url" --model ref-good --out "$tmp/ld" \
	> /dev/null 2> "$tmp/ld-run.err" || { cat "$tmp/ld-run.err"; fail "run under LD_DEBUG"; }
grep -q 'libcurl.so.4' "$tmp/ld-run.err" || fail "needle run did not load libcurl"
# libcrypto is loaded by the first SHA-256 (harness/base/io.c): a count that
# must hash its tokenizer.json (a cold cache) maps it, one that finds the
# tokenizer cached does not
for k in cold warm; do
	XDG_CACHE_HOME="$tmp/xdg" LD_DEBUG=libs "$NEEDLE" count \
		--tokenizer "$(fixture hf/deepseek_v3/tokenizer.json)" "$tmp/hello.txt" \
		> "$tmp/ld-$k.out" 2> "$tmp/ld-$k.err" || { cat "$tmp/ld-$k.err"; fail "count ($k cache)"; }
done
cmp -s "$tmp/ld-cold.out" "$tmp/ld-warm.out" || fail "the warm count differs from the cold one"
grep -q 'libcrypto.so.3' "$tmp/ld-cold.err" || fail "a count that hashed its tokenizer did not load libcrypto"
! grep -q 'libcrypto' "$tmp/ld-warm.err" || fail "a count of a cached tokenizer loaded libcrypto"
# a libcrypto.so.3 without EVP_Digest ends the first digest the way the
# dynamic loader ends a process that misses a library: one line, status 127
mkdir -p "$tmp/nossl"
echo 'int needle_no_evp;' > "$tmp/nossl/x.c"
${CC:-cc} -shared -fPIC -o "$tmp/nossl/libcrypto.so.3" "$tmp/nossl/x.c"
st=0
LD_LIBRARY_PATH="$tmp/nossl" XDG_CACHE_HOME="$tmp/xdg-nossl" "$NEEDLE" count \
	--tokenizer "$(fixture hf/deepseek_v3/tokenizer.json)" "$tmp/hello.txt" \
	> "$tmp/nossl.out" 2> "$tmp/nossl.err" || st=$?
[ "$st" = 127 ] || { cat "$tmp/nossl.err"; fail "a missing EVP_Digest: exit $st, expected 127"; }
[ "$(cat "$tmp/nossl.err")" = "needle: cannot load libcrypto.so.3: no EVP_Digest or EVP_sha256 (Debian's package is libssl3)" ] ||
	fail "a missing EVP_Digest: $(cat "$tmp/nossl.err")"
[ ! -s "$tmp/nossl.out" ] || fail "a count that could not hash printed a count"
echo ok
