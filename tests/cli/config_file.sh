#!/bin/sh
# The config file (harness/cli/config.h): ./needle.json supplies the options a
# command lacks (a top-level key for every command that has the option, a
# command's own section over it); the command line wins; NEEDLE_CONFIG names
# another file; a run takes its endpoint, model, tokenizer and template from
# it; a file that is not JSON, or a value of the wrong kind, is one message
# naming the file, exit 2.
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
got=$(env -u NEEDLE_CONFIG "$NEEDLE" count "$tmp/text") || fail "count from needle.json"
[ "$got" = "$want_qw" ] || fail "top-level tokenizer: $got, want $want_qw"
got=$(env -u NEEDLE_CONFIG "$NEEDLE" count --tokenizer "$ds" "$tmp/text")
[ "$got" = "$want_ds" ] || fail "the command line does not win: $got, want $want_ds"
printf '{"tokenizer": "%s", "count": {"tokenizer": "%s", "json": true}}\n' "$qw" "$ds" > needle.json
env -u NEEDLE_CONFIG "$NEEDLE" count "$tmp/text" > "$tmp/out" || fail "count with a section"
grep -q "\"count\":$want_ds," "$tmp/out" || fail "the command's section (tokenizer, a flag): $(cat "$tmp/out")"
rm needle.json
printf '{"tokenizer": "%s"}\n' "$ds" > "$tmp/other.json"
got=$(NEEDLE_CONFIG="$tmp/other.json" "$NEEDLE" count "$tmp/text")
[ "$got" = "$want_ds" ] || fail "NEEDLE_CONFIG: $got, want $want_ds"
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
env -u NEEDLE_CONFIG -u OPENAI_BASE_URL "$NEEDLE" run "$tmp/s.json" --out "$tmp/run" > "$tmp/run.out" 2>&1 ||
	fail "run from needle.json: $(cat "$tmp/run.out")"
node -e 'const m = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
	const ok = m.options.concurrency === 2 && m.options.repeat === 2 && m.template.name === "deepseek-v3" &&
		m.tokenizer.path === process.argv[2] && m.endpoint.served_model === "ref-good";
	process.exit(ok ? 0 : 1)' "$tmp/run/manifest.json" "$ds" || fail "the run's manifest: $(head -c 800 "$tmp/run/manifest.json")"
[ "$(wc -l < "$tmp/run/results.jsonl")" = 2 ] || fail "repeat 2 from the file"

# bad files: one message naming the file, exit 2
printf '{"tokenizer": ' > needle.json
check_exit 2 "config 'needle.json': cannot parse the config" env -u NEEDLE_CONFIG "$NEEDLE" count "$tmp/text"
check_one_line "not JSON"
printf '{"tokenizer": ["a"]}\n' > needle.json
check_exit 2 "config 'needle.json': 'tokenizer' wants a string or a number" env -u NEEDLE_CONFIG "$NEEDLE" count "$tmp/text"
printf '{"count": {"json": "yes"}}\n' > needle.json
check_exit 2 "config 'needle.json': 'json' wants true or false" env -u NEEDLE_CONFIG "$NEEDLE" count --tokenizer "$qw" "$tmp/text"
check_exit 2 "config '$tmp/none.json'" env NEEDLE_CONFIG="$tmp/none.json" "$NEEDLE" count --tokenizer "$qw" "$tmp/text"
echo "config_file: options from needle.json, NEEDLE_CONFIG and XDG; the command line wins; bad files named"
