#!/bin/sh
# 'needle report' and 'needle diff' on results whose numbers do not fit an
# integer (a hand-edited or corrupt results.jsonl): no undefined cast, no
# crash (ASan/UBSan build when present), a report is still written.
set -eu
. "$TESTS/lib/cli.sh"
bin=$NEEDLE
[ -x "$BUILD/asan/needle" ] && bin=$BUILD/asan/needle
mkdir -p "$tmp/r"
cat > "$tmp/r/results.jsonl" <<'JSON'
{"case":"r","kind":"recall","repeat":0,"seed":1,"verdict":"fail","transport":{"ok":true,"failures":[],"messages":[]},"audit":{"ok":true,"enabled":true,"local_prompt_tokens":1e300,"server_prompt_tokens":-1e300,"usage_delta":1e300,"tolerance":1e300},"grade":{"ok":false,"reasons":[],"needles":[{"depth":1e300,"ok":true},{"depth":-1e300,"ok":false},{"depth":50,"ok":true}]},"recall":{"tokens":1e300,"depths":[1e300,-5,50]},"http_status":200,"timing":{"first_byte_ms":1e300,"ttft_ms":1e300,"ttfc_ms":-1e300,"e2e_ms":-1e300,"tpot_ms":1e300},"usage":{"prompt_tokens":1e300},"finish_reason":"stop"}
JSON
rc=0
"$bin" report "$tmp/r" > "$tmp/out" 2> "$tmp/err" || rc=$?
! grep -q 'runtime error\|Sanitizer' "$tmp/err" || fail "sanitizer report: $(cat "$tmp/err")"
[ $rc = 0 ] || fail "exit $rc: $(cat "$tmp/err")"
[ -s "$tmp/r/summary.json" ] || fail "no summary.json"
rc=0
"$bin" diff "$tmp/r" "$tmp/r" > "$tmp/out" 2> "$tmp/err" || rc=$?
! grep -q 'runtime error\|Sanitizer' "$tmp/err" || fail "sanitizer report in diff: $(cat "$tmp/err")"
case $rc in 0|2) ;; *) fail "diff exit $rc: $(cat "$tmp/err")" ;; esac
echo "report/diff: out-of-range numbers handled"
