#!/bin/sh
# The config file (harness/cli/config.h): ./needle.json supplies the options a
# command lacks (a top-level key for every command that has the option, a
# command's own section over it); the command line wins; NEEDLE_CONFIG names
# another file; a run takes its endpoint, model, tokenizer and template from
# it; a file that is not JSON, an unknown key, or a bad value is one message
# naming the file and the key, exit 2. A file found (./needle.json, the XDG
# one), not named (--config, NEEDLE_CONFIG), may not choose the endpoint, the
# key's variable or TLS: a host it names never sees the secret. A file in use
# is named on stderr and in the manifest (path, SHA-256, the keys it set).
set -eu
. "$TESTS/lib/cli.sh"
qw=$(fixture hf/qwen3/tokenizer.json)
ds=$(fixture hf/deepseek_v3/tokenizer.json)
mkdir -p "$tmp/w" "$tmp/xdg/needle"
printf 'The quick brown fox, 1234 times; 漢字 and émigré.\n' > "$tmp/text"
want_qw=$("$NEEDLE" count --tokenizer "$qw" "$tmp/text")
want_ds=$("$NEEDLE" count --tokenizer "$ds" "$tmp/text")
[ "$want_qw" != "$want_ds" ] || fail "the two tokenizers count alike"
cd "$tmp/w"
printf '{"tokenizer": "%s"}\n' "$qw" > needle.json
got=$(env -u NEEDLE_CONFIG "$NEEDLE" count "$tmp/text" 2> "$tmp/err") || fail "count from needle.json"
[ "$got" = "$want_qw" ] || fail "top-level tokenizer: $got, want $want_qw"
[ "$(cat "$tmp/err")" = "needle: using config needle.json (keys: tokenizer)" ] ||
	fail "the file in use is not named on stderr: $(cat "$tmp/err")"
got=$(env -u NEEDLE_CONFIG "$NEEDLE" count --tokenizer "$ds" "$tmp/text")
[ "$got" = "$want_ds" ] || fail "the command line does not win: $got, want $want_ds"
printf '{"tokenizer": "%s", "count": {"tokenizer": "%s", "json": true}}\n' "$qw" "$ds" > needle.json
env -u NEEDLE_CONFIG "$NEEDLE" count "$tmp/text" > "$tmp/out" || fail "count with a section"
grep -q "\"count\":$want_ds," "$tmp/out" || fail "the command's section (tokenizer, a flag): $(cat "$tmp/out")"
rm needle.json
printf '{"tokenizer": "%s"}\n' "$ds" > "$tmp/other.json"
got=$(NEEDLE_CONFIG="$tmp/other.json" "$NEEDLE" count "$tmp/text")
[ "$got" = "$want_ds" ] || fail "NEEDLE_CONFIG: $got, want $want_ds"
got=$(env -u NEEDLE_CONFIG "$NEEDLE" count --config "$tmp/other.json" "$tmp/text")
[ "$got" = "$want_ds" ] || fail "--config: $got, want $want_ds"
got=$(NEEDLE_CONFIG="$tmp/none.json" "$NEEDLE" count "--config=$tmp/other.json" "$tmp/text")
[ "$got" = "$want_ds" ] || fail "--config= over NEEDLE_CONFIG: $got, want $want_ds"
printf '{"tokenizer": "%s"}\n' "$qw" > "$tmp/xdg/needle/config.json"
got=$(env -u NEEDLE_CONFIG XDG_CONFIG_HOME="$tmp/xdg" "$NEEDLE" count "$tmp/text")
[ "$got" = "$want_qw" ] || fail "XDG_CONFIG_HOME/needle/config.json: $got, want $want_qw"

# a run from the file alone: endpoint, model, tokenizer, template, a number
refserver_start
cat > needle.json <<JSON
{"base-url": ["$REF_URL"], "model": "ref-good", "tokenizer": "$ds", "template": "deepseek-v3",
 "run": {"concurrency": 2, "repeat": 2}}
JSON
cat > "$tmp/s.json" <<'JSON'
{"suite": "cfg", "cases": [{"id": "arith", "kind": "chat", "messages": [{"role": "user",
 "content": "Compute 19 * 23. Reply with only a JSON object {\"answer\": <integer>}."}], "expect": {"json": {"answer": 437}}}]}
JSON
check_exit 2 "config 'needle.json': key 'base-url' chooses where requests go, and this file was found, not named: name it to use it (--config needle.json, or NEEDLE_CONFIG=needle.json)" \
	env -u NEEDLE_CONFIG -u OPENAI_BASE_URL "$NEEDLE" run "$tmp/s.json" --out "$tmp/run"
check_one_line "a found file's base-url"
[ ! -e "$tmp/run" ] || fail "a refused config made a run folder"
env -u NEEDLE_CONFIG -u OPENAI_BASE_URL "$NEEDLE" run "$tmp/s.json" --config needle.json --out "$tmp/run" > "$tmp/run.out" 2>&1 ||
	fail "run from --config needle.json: $(cat "$tmp/run.out")"
grep -qx "needle: using config needle.json (keys: base-url, model, tokenizer, template, concurrency, repeat)" "$tmp/run.out" ||
	fail "the run does not name its config and keys: $(cat "$tmp/run.out")"
node -e 'const m = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
	const ok = m.options.concurrency === 2 && m.options.repeat === 2 && m.template.name === "deepseek-v3" &&
		m.tokenizer.path === process.argv[2] && m.endpoint.served_model === "ref-good" &&
		m.config.path === "needle.json" && m.config.sha256 === process.argv[3] && m.config.named === true &&
		m.config.keys.join() === "base-url,model,tokenizer,template,concurrency,repeat";
	process.exit(ok ? 0 : 1)' "$tmp/run/manifest.json" "$ds" "$(sha256sum needle.json | cut -d' ' -f1)" ||
	fail "the run's manifest: $(head -c 1200 "$tmp/run/manifest.json")"
[ "$(wc -l < "$tmp/run/results.jsonl")" = 2 ] || fail "repeat 2 from the file"

# the leak: a found file that names another host and another variable. The
# recorder stands for that host; it must never see the secret.
fake_server "$TESTS/cli/config_recorder.js" --log "$tmp/seen"
: > "$tmp/seen"
secret=ci-deploy-token-s3cr3t
printf '{"base-url": "%s", "api-key-env": "CI_DEPLOY_TOKEN"}\n' "$FAKE_URL" > needle.json
check_exit 2 "config 'needle.json': key 'base-url' chooses where requests go" \
	env -u NEEDLE_CONFIG CI_DEPLOY_TOKEN=$secret OPENAI_BASE_URL="$REF_URL" "$NEEDLE" run "$tmp/s.json" --out "$tmp/leak1"
for k in api-key-env cacert insecure endpoints; do
	case $k in insecure) v=true ;; *) v='"x"' ;; esac
	printf '{"run": {"%s": %s}}\n' "$k" "$v" > needle.json
	check_exit 2 "config 'needle.json': key '$k' (in section 'run') chooses" \
		env -u NEEDLE_CONFIG CI_DEPLOY_TOKEN=$secret OPENAI_BASE_URL="$REF_URL" "$NEEDLE" run "$tmp/s.json" --out "$tmp/leak2"
done
rm needle.json
printf '{"base-url": "%s", "api-key-env": "CI_DEPLOY_TOKEN"}\n' "$FAKE_URL" > "$tmp/xdg/needle/config.json"
check_exit 2 "config '$tmp/xdg/needle/config.json': key 'base-url' chooses where requests go" \
	env -u NEEDLE_CONFIG XDG_CONFIG_HOME="$tmp/xdg" CI_DEPLOY_TOKEN=$secret OPENAI_BASE_URL="$REF_URL" \
	"$NEEDLE" run "$tmp/s.json" --out "$tmp/leak3"
[ ! -s "$tmp/seen" ] || fail "the other host saw requests: $(cat "$tmp/seen")"
# named, the same file is obeyed (so the recorder does see what a leak would send)
check_exit 3 "" env XDG_CONFIG_HOME="$tmp/xdg" NEEDLE_CONFIG="$tmp/xdg/needle/config.json" CI_DEPLOY_TOKEN=$secret \
	OPENAI_BASE_URL="$REF_URL" "$NEEDLE" run "$tmp/s.json" --out "$tmp/leak4"
grep -q "Bearer $secret" "$tmp/seen" || fail "the recorder cannot see a bearer token: $(cat "$tmp/seen")"
rm "$tmp/xdg/needle/config.json"

# every option of every command is a key a file may hold (the known list)
words=$(for c in count run report diff merge suites templates "gen haystack" "gen image" "gen cases"; do
	"$NEEDLE" $c --help=words; done | sed -n 's/^--//p' | grep -vx 'help\|config' | sort -u)
[ "$(echo "$words" | wc -l)" -gt 40 ] || fail "too few options: $words"
echo "$words" | node -e 'const ks = require("fs").readFileSync(0, "utf8").trim().split("\n");
	const o = {}; for (const k of ks) o[k] = k === "json" ? true : "x";
	process.stdout.write(JSON.stringify(o))' > "$tmp/all.json"
"$NEEDLE" suites --config "$tmp/all.json" > /dev/null 2> "$tmp/err" || fail "a file of every option: $(cat "$tmp/err")"

# "count" is a section and gen image's option
printf '{"gen image": {"count": 1, "seed": 3}}\n' > "$tmp/img.json"
"$NEEDLE" gen image --config "$tmp/img.json" --out "$tmp/img" > /dev/null 2> "$tmp/err" || fail "gen image's count from a section: $(cat "$tmp/err")"
[ "$(ls "$tmp/img" | grep -c '\.png$')" = 1 ] || fail "gen image --count 1 from the file: $(ls "$tmp/img")"

# unknown keys and bad values: the file and the key, "did you mean"
printf '{"concurency": 2}\n' > needle.json
check_exit 2 "config 'needle.json': unknown key 'concurency' (did you mean 'concurrency'?)" \
	env -u NEEDLE_CONFIG "$NEEDLE" count --tokenizer "$qw" "$tmp/text"
check_one_line "unknown key"
printf '{"run": {"seeed": 2}}\n' > needle.json
check_exit 2 "config 'needle.json': unknown key 'seeed' (in section 'run') (did you mean 'seed'?)" \
	env -u NEEDLE_CONFIG "$NEEDLE" count --tokenizer "$qw" "$tmp/text"
printf '{"count": {"seed": 2}}\n' > needle.json
check_exit 2 "config 'needle.json': key 'seed' (in section 'count') is not an option of 'needle count'" \
	env -u NEEDLE_CONFIG "$NEEDLE" count --tokenizer "$qw" "$tmp/text"
printf '{"run": {"concurrency": "many"}}\n' > needle.json
check_exit 2 "config 'needle.json': key 'concurrency' wants an integer, got 'many'" \
	env -u NEEDLE_CONFIG OPENAI_BASE_URL="$REF_URL" "$NEEDLE" run "$tmp/s.json" --out "$tmp/bad1"
printf '{"run": {"repeat": -1}}\n' > needle.json
check_exit 2 "config 'needle.json': key 'repeat' wants 1 to" \
	env -u NEEDLE_CONFIG OPENAI_BASE_URL="$REF_URL" "$NEEDLE" run "$tmp/s.json" --out "$tmp/bad2"
rm needle.json
check_exit 2 "option '--repeat' wants 1 to" env -u NEEDLE_CONFIG OPENAI_BASE_URL="$REF_URL" "$NEEDLE" run "$tmp/s.json" --repeat -1 --out "$tmp/bad3"
check_exit 2 "option '--repeat' wants an integer" env -u NEEDLE_CONFIG OPENAI_BASE_URL="$REF_URL" "$NEEDLE" run "$tmp/s.json" --repeat -9223372036854775808 --out "$tmp/bad4"

# bad files: one message naming the file, exit 2
printf '{"tokenizer": ' > needle.json
check_exit 2 "config 'needle.json': cannot parse the config" env -u NEEDLE_CONFIG "$NEEDLE" count "$tmp/text"
check_one_line "not JSON"
printf '{"tokenizer": ["a"]}\n' > needle.json
check_exit 2 "config 'needle.json': key 'tokenizer' wants a string or a number" env -u NEEDLE_CONFIG "$NEEDLE" count "$tmp/text"
printf '{"count": {"json": "yes"}}\n' > needle.json
check_exit 2 "config 'needle.json': key 'json' wants true or false" env -u NEEDLE_CONFIG "$NEEDLE" count --tokenizer "$qw" "$tmp/text"
check_exit 2 "config '$tmp/none.json'" env NEEDLE_CONFIG="$tmp/none.json" "$NEEDLE" count --tokenizer "$qw" "$tmp/text"
echo "config_file: options from needle.json, NEEDLE_CONFIG, --config and XDG; the command line wins; a found file cannot move the endpoint or the key; the file in use named on stderr and in the manifest; unknown keys and bad values named"
