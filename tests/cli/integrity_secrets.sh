#!/bin/sh
# Issue 8 item 8: no secret reaches a file or the terminal. A server that echoes
# the request headers into the model list, streamed content, an error frame and
# an HTTP error body cannot get the API key, nor the user:password of the base
# URL (plain or as HTTP Basic base64), into results.jsonl, raw/, the manifest,
# the report or any message; an unreachable URL with credentials is named
# without them.
set -eu
. "$TESTS/lib/cli.sh"
fake_server "$TESTS/cli/integrity_echo.js"
key=sk-echo-secret-4242
user=alice pass=hunter22-pw
basic=$(printf '%s' "$user:$pass" | base64)
url=$(printf '%s' "$FAKE_URL" | sed "s#://#://$user:$pass@#")

cat >"$tmp/suite.json" <<'JSON'
{"suite":"echo","cases":[
 {"id":"content","kind":"chat","max_tokens":16,"messages":[{"role":"user","content":"content"}],"expect":{"contains":["never"]}},
 {"id":"frame","kind":"chat","max_tokens":16,"messages":[{"role":"user","content":"frame"}],"expect":{"contains":["never"]}},
 {"id":"http","kind":"chat","max_tokens":16,"messages":[{"role":"user","content":"http"}],"expect":{"contains":["never"]}}]}
JSON

no_secret() { # WHERE FILE-OR-DIR...
	_where=$1
	shift
	for s in "$key" "$pass" "$user:$pass" "$basic"; do
		! grep -rqF -- "$s" "$@" || fail "$_where: secret '$s' found: $(grep -rlF -- "$s" "$@")"
	done
}

st=0
OPENAI_API_KEY=$key "$NEEDLE" run "$tmp/suite.json" --base-url "$url/v1" --timeout 10 \
	--out "$tmp/run" >"$tmp/run.out" 2>"$tmp/run.err" || st=$?
[ "$st" = 1 ] || fail "echo run: exit $st, expected 1: $(cat "$tmp/run.err")"
# The echo did happen (else the test proves nothing): the headers are in the records, redacted.
grep -q 'authorization' "$tmp/run/results.jsonl" || fail "the server's echo is not in the records"
grep -qF 'Bearer ***' "$tmp/run/results.jsonl" || fail "the echoed key is not shown as ***"
grep -qF 'Bearer ***' "$tmp/run/raw/content-r1.sse" || fail "raw/: the echoed key is not shown as ***"
grep -qF 'engine error for' "$tmp/run/results.jsonl" || fail "the error frame's message is not recorded"
grep -qF 'failed for' "$tmp/run/results.jsonl" || fail "the HTTP error body is not recorded"
"$NEEDLE" report "$tmp/run" --format json >"$tmp/report.out" 2>"$tmp/report.err"
no_secret "run folder" "$tmp/run"
no_secret "terminal" "$tmp/run.out" "$tmp/run.err" "$tmp/report.out" "$tmp/report.err"

# Unreachable: the message names the URL without its credentials (exit 3).
st=0
OPENAI_API_KEY=$key "$NEEDLE" run "$tmp/suite.json" --base-url "http://$user:$pass@127.0.0.1:1/v1" \
	--timeout 5 --out "$tmp/dead" >"$tmp/dead.out" 2>"$tmp/dead.err" || st=$?
[ "$st" = 3 ] || fail "unreachable: exit $st, expected 3: $(cat "$tmp/dead.err")"
grep -qF "127.0.0.1:1" "$tmp/dead.err" || fail "unreachable: the host is not named: $(cat "$tmp/dead.err")"
no_secret "unreachable message" "$tmp/dead.out" "$tmp/dead.err"
# A malformed URL with credentials is named without them too (exit 2).
st=0
"$NEEDLE" run "$tmp/suite.json" --base-url "ftp://$user:$pass@host" >"$tmp/bad.out" 2>"$tmp/bad.err" || st=$?
[ "$st" = 2 ] || fail "ftp URL: exit $st, expected 2: $(cat "$tmp/bad.err")"
no_secret "bad URL message" "$tmp/bad.err"
echo "key, URL credentials and their Basic form kept out of records, raw/, manifest, report and messages"
