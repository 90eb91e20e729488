#!/bin/sh
# Hostile files and replies (issue 22): each gets one precise message and a
# documented exit code, never a crash or a hang (every command here runs
# under `timeout`: a FIFO that blocked would end the test with 124).
#   a suite typo (a recall case without "recall", a load case without
#   "load" or with a missing field): exit 2 with the JSON path; a suite with
#   a NUL byte: exit 2 with its offset;
#   FIFOs, devices and links to /dev/zero wherever a file is read (suite,
#   tokenizer, template, endpoints file, results.jsonl, manifest.json, a
#   suite's image, a model folder's files, the tokenizer cache file and its
#   index): refused, or for the cache bypassed, with the count unchanged;
#   a tokenizer cache folder others may write: not used, a warning, the same
#   count;
#   an HTTP/0.9 or "HTTP/1.1 abc OK" reply: a server that answered
#   (http_status), not a connect failure; --timeout 1e300: exit 2;
#   `needle diff` and `needle report` of an empty results.jsonl: a clean
#   message.
set -eu
. "$TESTS/lib/cli.sh"
T="timeout 30"
tok=$(fixture tokenizers/bytelevel_gpt2.json)
printf 'hello world\n' > "$tmp/text"

# --- suite typos: exit 2, the JSON path ---------------------------------------
suite() { printf '%s\n' "$2" > "$tmp/$1.json"; }
suite recall '{"suite":"x","cases":[{"id":"r1","kind":"recall"}]}'
check_exit 2 "$tmp/recall.json: cases[0]: a recall case needs 'recall'" $T "$NEEDLE" run "$tmp/recall.json" \
	--base-url http://127.0.0.1:9 --out "$tmp/r"
check_one_line "recall case without recall"
suite recall2 '{"suite":"x","cases":[{"id":"r1","kind":"recall","recall":{}}]}'
check_exit 2 "cases[0].recall: missing 'tokens'" $T "$NEEDLE" run "$tmp/recall2.json" \
	--base-url http://127.0.0.1:9 --out "$tmp/r"
suite load1 '{"suite":"x","cases":[{"id":"l","kind":"load"}]}'
check_exit 2 "cases[0]: a load case needs 'load'" $T "$NEEDLE" run "$tmp/load1.json" \
	--base-url http://127.0.0.1:9 --out "$tmp/r"
suite load2 '{"suite":"x","cases":[{"id":"l","kind":"load","load":{"input_tokens":8,"output_tokens":8,"concurrency":[1]}}]}'
check_exit 2 "cases[0].load: missing 'requests'" $T "$NEEDLE" run "$tmp/load2.json" \
	--base-url http://127.0.0.1:9 --out "$tmp/r"
suite load3 '{"suite":"x","cases":[{"id":"l","kind":"load","load":{"input_tokens":"8","output_tokens":8,"rate":[1],"requests":1}}]}'
check_exit 2 "cases[0].load.input_tokens:" $T "$NEEDLE" run "$tmp/load3.json" \
	--base-url http://127.0.0.1:9 --out "$tmp/r"
printf '{"suite":"x",\0"cases":[]}' > "$tmp/nul.json"
check_exit 2 "$tmp/nul.json: a NUL byte at offset 13 (line 1, column 14)" $T "$NEEDLE" run "$tmp/nul.json" \
	--base-url http://127.0.0.1:9 --out "$tmp/r"
check_one_line "suite with a NUL byte"
[ ! -e "$tmp/r" ] || fail "a results folder was made for a bad suite"

# --- FIFOs, devices, links to /dev/zero ---------------------------------------
mkfifo "$tmp/fifo"
ln -s /dev/zero "$tmp/zero"
for f in fifo zero; do
	what="not a regular file (a FIFO)"
	[ "$f" = zero ] && what="not a regular file (a character device)"
	check_exit 2 "cannot read '$tmp/$f': $what" $T "$NEEDLE" run "$tmp/$f" \
		--base-url http://127.0.0.1:9 --out "$tmp/r"
	check_exit 2 "cannot read '$tmp/$f': $what" $T "$NEEDLE" count --tokenizer "$tmp/$f" "$tmp/text"
	check_exit 2 "cannot read '$tmp/$f': $what" $T "$NEEDLE" count --tokenizer "$tok" "$tmp/$f"
	check_exit 2 "$f" $T "$NEEDLE" count --tokenizer "$tok" --template "$tmp/$f" --messages "$tmp/text"
	check_exit 2 "cannot read '$tmp/$f': $what" $T "$NEEDLE" run "$(fixture suites/smoke.json)" \
		--endpoints "$tmp/$f" --out "$tmp/r"
done
# a suite's image that is a FIFO
cat > "$tmp/img.json" <<JSON
{"suite":"x","cases":[{"id":"i","kind":"image_order","messages":[{"role":"user","content":[
 {"type":"image_url","image_url":{"url":"fifo"}},{"type":"image_url","image_url":{"url":"zero"}}]}],
 "expect":{"contains":["a"]}}]}
JSON
check_exit 2 "image_url.url: image '$tmp/fifo' is not a regular file (a FIFO)" $T "$NEEDLE" run "$tmp/img.json" \
	--base-url http://127.0.0.1:9 --out "$tmp/r"
# a run folder whose results.jsonl or manifest.json is a FIFO or a link
cp -r "$(fixture results/a)" "$tmp/ra"
rm "$tmp/ra/results.jsonl"
mkfifo "$tmp/ra/results.jsonl"
check_exit 2 "cannot read '$tmp/ra/results.jsonl': not a regular file (a FIFO)" $T "$NEEDLE" report "$tmp/ra"
rm "$tmp/ra/results.jsonl"
ln -s /dev/zero "$tmp/ra/results.jsonl"
check_exit 2 "cannot read '$tmp/ra/results.jsonl': a symbolic link (not followed here)" $T "$NEEDLE" report "$tmp/ra"
# --resume into a folder whose journal is a FIFO, or whose lock links out
serve node "$TESTS/cli/raw_server.js" 09
mkdir "$tmp/rj"
mkfifo "$tmp/rj/results.jsonl"
check_exit 2 "cannot open '$tmp/rj/results.jsonl': not a regular file (a FIFO)" $T "$NEEDLE" run \
	"$(fixture suites/smoke.json)" --base-url "$SERVE_URL" --out "$tmp/rj" --resume
rm -f "$tmp/rj/results.jsonl" "$tmp/rj/.lock"
ln -s "$tmp/outside" "$tmp/rj/.lock"
check_exit 2 "cannot open '$tmp/rj/.lock': a symbolic link (not followed here)" $T "$NEEDLE" run \
	"$(fixture suites/smoke.json)" --base-url "$SERVE_URL" --out "$tmp/rj"
[ ! -e "$tmp/outside" ] || fail "the lock's link was followed: '$tmp/outside' was created"
cp -r "$(fixture results/a)" "$tmp/rm"
rm -f "$tmp/rm/manifest.json"
mkfifo "$tmp/rm/manifest.json"
check_exit 2 "cannot read '$tmp/rm/manifest.json': not a regular file (a FIFO)" $T "$NEEDLE" report "$tmp/rm"

# a model folder whose tokenizer_config.json is a FIFO: read, refused, not skipped
mkdir "$tmp/model"
cp "$(fixture hf/qwen3/tokenizer.json)" "$tmp/model/"
mkfifo "$tmp/model/tokenizer_config.json"
check_exit 2 "cannot read '$tmp/model/tokenizer_config.json': not a regular file (a FIFO)" \
	$T "$NEEDLE" count --tokenizer "$tmp/model" --messages "$tmp/text"

# --- the tokenizer cache ---------------------------------------------------------
cache=$tmp/xdg/needle
want=$(NEEDLE_NO_CACHE=1 $T "$NEEDLE" count --tokenizer "$tok" "$tmp/text")
for i in 1 2; do # cold, then warm through the source index
	got=$(XDG_CACHE_HOME=$tmp/xdg $T "$NEEDLE" count --tokenizer "$tok" "$tmp/text")
	[ "$got" = "$want" ] || fail "count $i with the cache: $got, want $want"
done
[ "$(stat -c %a "$cache")" = 700 ] || fail "cache folder mode $(stat -c %a "$cache"), want 700"
for f in "$cache"/*; do
	[ "$(stat -c %a "$f")" = 600 ] || fail "cache file $f mode $(stat -c %a "$f"), want 600"
done
ls "$cache"/src-*.idx > /dev/null 2>&1 || fail "no source index was written"
# every cache and index file a FIFO: bypassed, never waited on
for f in "$cache"/*; do rm "$f"; mkfifo -m 600 "$f"; done
got=$(XDG_CACHE_HOME=$tmp/xdg $T "$NEEDLE" count --tokenizer "$tok" "$tmp/text") ||
	fail "count with FIFOs in the cache: exit $?"
[ "$got" = "$want" ] || fail "count with FIFOs in the cache: $got, want $want"
# a folder others may write: not used, one warning, the same count
rm -rf "$cache"
mkdir -p "$cache"
chmod 777 "$cache"
check_exit 0 "warning: the tokenizer cache folder '$cache' is writable by group or others: not used" \
	$T env XDG_CACHE_HOME="$tmp/xdg" "$NEEDLE" count --tokenizer "$tok" "$tmp/text"
[ "$(cat "$tmp/out")" = "$want" ] || fail "count with a cache folder others may write: $(cat "$tmp/out")"
[ -z "$(ls "$cache")" ] || fail "a cache folder others may write was written: $(ls "$cache")"

# --- replies that are no HTTP response ---------------------------------------------
serve node "$TESTS/cli/raw_server.js" models09
check_exit 3 "'$SERVE_URL/v1/models' answered with no HTTP response: Received HTTP/0.9" \
	$T "$NEEDLE" run "$(fixture suites/smoke.json)" --base-url "$SERVE_URL" --out "$tmp/hmodels"
check_one_line "an HTTP/0.9 endpoint"
for mode in 09 badstatus; do
	serve node "$TESTS/cli/raw_server.js" "$mode"
	check_exit 1 "" $T "$NEEDLE" run "$(fixture suites/smoke.json)" --base-url "$SERVE_URL" --model m \
		--case json-arith-19x23 --out "$tmp/h$mode"
	node -e 'const recs = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
		const t = recs.length ? recs[0].transport : null;
		if (!t || !recs.every(r => r.transport.failures.includes("http_status") &&
		    !r.transport.failures.includes("connect") &&
		    r.transport.messages.some(m => /no HTTP response: .*answered with no HTTP response/.test(m))))
			throw new Error(JSON.stringify(t));' "$tmp/h$mode/results.jsonl" ||
		fail "a reply that is no HTTP response ($mode) is not http_status"
done

# --- timeouts far out -------------------------------------------------------------
for t in 1e300 9.3e15; do
	check_exit 2 "option '--timeout' wants at most 604800 seconds" $T "$NEEDLE" run "$(fixture suites/smoke.json)" \
		--base-url http://127.0.0.1:9 --timeout "$t" --out "$tmp/r"
	check_exit 2 "option '--idle-timeout' wants at most 604800 seconds" $T "$NEEDLE" run "$(fixture suites/smoke.json)" \
		--base-url http://127.0.0.1:9 --idle-timeout "$t" --out "$tmp/r"
done

# --- an empty results.jsonl ---------------------------------------------------
mkdir "$tmp/e1" "$tmp/e2"
: > "$tmp/e1/results.jsonl"
: > "$tmp/e2/results.jsonl"
check_exit 0 "" $T "$NEEDLE" diff "$tmp/e1" "$tmp/e2"
grep -q "INCOMPLETE:.*neither run has a record (empty results.jsonl)" "$tmp/out" ||
	fail "diff of empty runs: $(cat "$tmp/out")"
! grep -q "runtime error\|AddressSanitizer" "$tmp/err" || fail "diff of empty runs: $(cat "$tmp/err")"
check_exit 1 "every gate fails: no attempt of B matched one of A (same case, repeat, seed): A has no record" \
	$T "$NEEDLE" diff "$tmp/e1" "$(fixture results/a)" --gate no_new_failures
check_exit 0 "" $T "$NEEDLE" report "$tmp/e1"
! grep -q "runtime error\|AddressSanitizer" "$tmp/err" || fail "report of an empty run: $(cat "$tmp/err")"

echo "hostile_files: suite typos and NUL bytes, FIFOs and devices, the cache's trust, non-HTTP replies, far timeouts, empty journals"
