#!/bin/sh
# slow: the smoke suite and recall per model folder
# Model folders (--tokenizer DIR) and template files (--template F.jinja or
# tokenizer_config.json): the template is the folder's own, chosen in vLLM's
# order (the processor's chat_template.json only without tools;
# chat_template.jinja before tokenizer_config.json; a named list's tool_use
# for requests with tools), rendered through the built-in template checked
# against that exact text; --explain says which file and why; the manifest of
# `gen haystack` records the source; `needle templates` lists them all.
# Any other template text is rendered by the Jinja interpreter. Bad input: one line, exit 2. A descriptor that is not the folder's
# template, or a tokenizer without the template's special tokens: a warning.
set -eu
. "$TESTS/lib/cli.sh"
# The inputs, checked here: a fixture that fails inside "$(...)" below would not stop the script.
for f in qwen3/tokenizer.json qwen3/tokenizer_config.json llama3/tokenizer.json llama3/tokenizer_config.json; do
	fixture "hf/$f" > /dev/null
done

# folder NAME PKG: a model folder with PKG's tokenizer.json and tokenizer_config.json.
folder() {
	mkdir -p "$tmp/$1"
	ln -s "$(fixture "hf/$2/tokenizer.json")" "$tmp/$1/tokenizer.json"
	cp "$(fixture "hf/$2/tokenizer_config.json")" "$tmp/$1/"
}
# text_of PKG: that package's chat_template string, raw.
text_of() {
	node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).chat_template)' \
		"$(fixture "hf/$1/tokenizer_config.json")"
}
# set_config DIR JSON_EXPR: replace chat_template in DIR's tokenizer_config.json
# with the value of the JavaScript expression (q and l are the Qwen3 and Llama 3 texts).
set_config() {
	Q=$(text_of qwen3) L=$(text_of llama3) node -e '
		const fs = require("fs"), p = process.argv[1], q = process.env.Q, l = process.env.L;
		const c = JSON.parse(fs.readFileSync(p, "utf8"));
		const v = eval(process.argv[2]);
		if (v === undefined) delete c.chat_template; else c.chat_template = v;
		fs.writeFileSync(p, JSON.stringify(c));' "$1/tokenizer_config.json" "$2"
}
count() { "$NEEDLE" count "$@"; }
# expect_fail WANT ARGS...: exit 2, one stderr line holding WANT, no stdout.
expect_fail() {
	want=$1
	shift
	check_exit 2 "$want" count "$@"
	check_one_line "count $*"
	check_no_stdout "count $*"
}

printf '[{"role":"system","content":"Be brief."},{"role":"user","content":"Weather in Lisbon?"}]' > "$tmp/m.json"
printf '[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}]' > "$tmp/tools.json"

# 1. The folder's own template is the built-in one checked against its text.
for pair in qwen:qwen3:qwen3 llama:llama3:llama3; do
	dir=${pair%%:*} rest=${pair#*:}
	pkg=${rest%%:*} name=${rest#*:}
	folder "$dir" "$pkg"
	tokjson=$(fixture "hf/$pkg/tokenizer.json")
	a=$(count --tokenizer "$tmp/$dir" --messages "$tmp/m.json" --print-prompt)
	b=$(count --tokenizer "$tokjson" --template "$name" --messages "$tmp/m.json" --print-prompt)
	[ "$a" = "$b" ] || fail "$dir: folder prompt differs from --template $name"
	a=$(count --tokenizer "$tmp/$dir" --messages "$tmp/m.json")
	b=$(count --tokenizer "$tokjson" --template "$name" --messages "$tmp/m.json")
	[ "$a" = "$b" ] && [ "$a" -gt 5 ] || fail "$dir: count $a, with --template $b"
	count --tokenizer "$tmp/$dir" --messages "$tmp/m.json" --explain > /dev/null 2> "$tmp/err"
	grep -qF "$tmp/$dir/tokenizer_config.json, its chat_template string" "$tmp/err" &&
		grep -qF "built-in template '$name'" "$tmp/err" || fail "$dir --explain: $(cat "$tmp/err")"
done

# 2. chat_template.jinja comes before tokenizer_config.json's chat_template.
folder jinja qwen3
text_of qwen3 > "$tmp/jinja/chat_template.jinja"
set_config "$tmp/jinja" 'l'
count --tokenizer "$tmp/jinja" --messages "$tmp/m.json" --print-prompt --explain > "$tmp/out" 2> "$tmp/err"
grep -q '<|im_start|>system' "$tmp/out" && grep -qF 'chat_template.jinja' "$tmp/err" ||
	fail "chat_template.jinja not preferred: $(cat "$tmp/err")"

# 3. The processor's chat_template.json serves requests without tools only.
folder proc qwen3
L=$(text_of llama3) node -e 'require("fs").writeFileSync(process.argv[1], JSON.stringify({chat_template: process.env.L}))' \
	"$tmp/proc/chat_template.json"
count --tokenizer "$tmp/proc" --messages "$tmp/m.json" --print-prompt 2> /dev/null | grep -q '<|start_header_id|>' ||
	fail "processor template not used without tools"
count --tokenizer "$tmp/proc" --messages "$tmp/m.json" --tools "$tmp/tools.json" --print-prompt 2> /dev/null |
	grep -q '<tools>' || fail "tokenizer template not used with tools"

# 4. A named list: "default" without tools, "tool_use" with them.
folder named qwen3
set_config "$tmp/named" '[{name: "default", template: l}, {name: "tool_use", template: q}]'
count --tokenizer "$tmp/named" --messages "$tmp/m.json" --print-prompt 2> /dev/null | grep -q '<|eot_id|>' ||
	fail "named list: default not used"
count --tokenizer "$tmp/named" --messages "$tmp/m.json" --tools "$tmp/tools.json" --print-prompt --explain \
	> "$tmp/out" 2> "$tmp/err"
grep -q '<tools>' "$tmp/out" && grep -qF "named 'tool_use'" "$tmp/err" || fail "named list: tool_use not used"

# 5. --template takes a .jinja file or a tokenizer_config.json.
text_of llama3 > "$tmp/l.jinja"
tokq=$(fixture hf/qwen3/tokenizer.json)
tokl=$(fixture hf/llama3/tokenizer.json)
a=$(count --tokenizer "$tokl" --template "$tmp/l.jinja" --messages "$tmp/m.json")
b=$(count --tokenizer "$tokl" --template llama3 --messages "$tmp/m.json")
[ "$a" = "$b" ] || fail ".jinja template: $a vs $b"
a=$(count --tokenizer "$tokq" --template "$(fixture hf/qwen3/tokenizer_config.json)" --messages "$tmp/m.json")
b=$(count --tokenizer "$tokq" --template qwen3 --messages "$tmp/m.json")
[ "$a" = "$b" ] || fail "tokenizer_config.json template: $a vs $b"

# 6. Warnings: a descriptor that is not the folder's template; a tokenizer
# without the template's special tokens (the prompt is still printed).
count --tokenizer "$tmp/qwen" --template deepseek-v3 --messages "$tmp/m.json" --print-prompt > "$tmp/out" 2> "$tmp/err" ||
	fail "mismatch must still print: $(cat "$tmp/err")"
grep -q '<｜User｜>' "$tmp/out" || fail "mismatch: no prompt"
grep -qF "lacks special tokens of template 'deepseek-v3': '<｜begin▁of▁sentence｜>'" "$tmp/err" &&
	grep -qF "is not the text template 'deepseek-v3' was checked against" "$tmp/err" ||
	fail "mismatch warnings: $(cat "$tmp/err")"
count --tokenizer "$tmp/qwen" --messages "$tmp/m.json" > /dev/null 2> "$tmp/err"
[ ! -s "$tmp/err" ] || fail "matching folder warned: $(cat "$tmp/err")"

# 7. Bad input.
# A text no built-in template records goes to the Jinja interpreter.
folder other qwen3
set_config "$tmp/other" '"{{ bos_token }}[{{ messages[0].content }}]{% if add_generation_prompt %}>{% endif %}"'
out=$(count --tokenizer "$tmp/other" --messages "$tmp/m.json" --print-prompt --explain 2> "$tmp/err")
[ "$out" = "[Be brief.]>" ] && grep -qF "Jinja interpreter renders it" "$tmp/err" ||
	fail "jinja template: '$out' $(cat "$tmp/err")"
printf 'ok\n{%% if %%}' > "$tmp/bad.jinja"
expect_fail "bad.jinja': the server would reject this request: template syntax error" \
	--tokenizer "$tmp/other" --template "$tmp/bad.jinja" --messages "$tmp/m.json"
grep -qF "(template line 2, column" "$tmp/err" || fail "syntax error position: $(cat "$tmp/err")"
# A construct outside the interpreter's subset: its name and line, exit 2.
printf 'a\nb\n{%% include "other.jinja" %%}' > "$tmp/inc.jinja"
expect_fail "include" --tokenizer "$tmp/other" --template "$tmp/inc.jinja" --messages "$tmp/m.json"
grep -qF "line 3" "$tmp/err" || fail "unsupported construct: no line: $(cat "$tmp/err")"
# strftime_now reads the clock --date pins (default: now).
printf '{{ strftime_now("%%d %%B %%Y %%H:%%M") }}|{{ messages[1].content }}' > "$tmp/date.jinja"
out=$(count --tokenizer "$tmp/other" --template "$tmp/date.jinja" --messages "$tmp/m.json" --print-prompt \
	--date 2024-07-26T12:05:00)
[ "$out" = "26 July 2024 12:05|Weather in Lisbon?" ] || fail "--date: '$out'"
expect_fail "option '--date' wants" --tokenizer "$tmp/other" --messages "$tmp/m.json" --date 2024-7-26
printf '{{ bos_token }}' > "$tmp/b.jinja"
expect_fail "reads 'bos_token'" --tokenizer "$tokq" --template "$tmp/b.jinja" --messages "$tmp/m.json"
folder none qwen3
set_config "$tmp/none" 'undefined'
expect_fail "has no chat template" --tokenizer "$tmp/none" --messages "$tmp/m.json"
expect_fail "has no chat_template" --tokenizer "$tokq" --template "$tmp/none/tokenizer_config.json" --messages "$tmp/m.json"
mkdir "$tmp/empty"
expect_fail "has neither tokenizer.json nor tokenizer.model" --tokenizer "$tmp/empty" --messages "$tmp/m.json"
printf '{"chat_template": 7}' > "$tmp/empty/tokenizer_config.json"
ln -s "$tokq" "$tmp/empty/tokenizer.json"
expect_fail '$.chat_template: expected a string or a list' --tokenizer "$tmp/empty" --messages "$tmp/m.json"
# A folder whose template is unknown still counts plain text (no template needed).
printf 'plain' > "$tmp/t.txt"
[ "$(count --tokenizer "$tmp/other" "$tmp/t.txt")" -ge 1 ] || fail "plain count with a folder"

# 8. gen haystack from a folder; the manifest records the template's source.
"$NEEDLE" gen haystack --tokenizer "$tmp/qwen" --tokens 400 --seed 1 --out "$tmp/hay" > /dev/null ||
	fail "gen haystack with a model folder"
grep -qF "\"source\":\"$tmp/qwen/tokenizer_config.json\"" "$tmp/hay/manifest.json" ||
	grep -qF "\"source\": \"$tmp/qwen/tokenizer_config.json\"" "$tmp/hay/manifest.json" ||
	fail "manifest lacks the template source: $(cat "$tmp/hay/manifest.json")"
# --date pins strftime_now for gen haystack too and the manifest records it
# (default: now).
printf '{{ strftime_now("%%d %%B %%Y") }}|{%% for m in messages %%}{{ m.content }}{%% endfor %%}' > "$tmp/hay.jinja"
"$NEEDLE" gen haystack --tokenizer "$tmp/qwen" --template "$tmp/hay.jinja" --tokens 300 --seed 1 \
	--date 2024-07-26T12:05:00 --out "$tmp/hay2" > /dev/null || fail "gen haystack --date"
grep -qE '"date":[[:space:]]*"2024-07-26T12:05:00"' "$tmp/hay2/manifest.json" ||
	fail "manifest lacks --date: $(cat "$tmp/hay2/manifest.json")"
"$NEEDLE" gen haystack --tokenizer "$tmp/qwen" --template "$tmp/hay.jinja" --tokens 300 --seed 1 \
	--out "$tmp/hay3" > /dev/null || fail "gen haystack without --date"
grep -qE "\"date\":[[:space:]]*\"$(date +%Y-%m-%d)T" "$tmp/hay3/manifest.json" ||
	fail "manifest lacks today's date: $(cat "$tmp/hay3/manifest.json")"
st=0
"$NEEDLE" gen haystack --tokenizer "$tmp/qwen" --tokens 300 --seed 1 --date 2024-13-01 \
	--out "$tmp/hay4" > /dev/null 2> "$tmp/err" || st=$?
[ "$st" = 2 ] && grep -qF "option '--date' wants" "$tmp/err" || fail "gen haystack bad --date: $st $(cat "$tmp/err")"

# 9. needle templates lists every built-in, with the texts they were checked against.
"$NEEDLE" templates > "$tmp/list"
for n in chatml deepseek-v3 deepseek-v3.1 deepseek-v3.2 deepseek-v4 deepseek-v4.1 llama3 qwen3; do
	grep -q "^$n " "$tmp/list" || fail "templates lacks $n"
done
grep -q "sha256 $(text_of qwen3 | sha256sum | cut -c1-64)" "$tmp/list" || fail "templates lacks qwen3's text hash"
long=$(env -u COLUMNS "$NEEDLE" templates | awk 'length($0) > 79' | head -1)
[ -z "$long" ] || fail "templates prints a line past 80 columns: $long"
"$NEEDLE" templates --json | node -e 'const a = JSON.parse(require("fs").readFileSync(0, "utf8"));
	if (a.length !== 8 || !a.some((t) => t.name === "deepseek-v4.1" && t.kind === "encoder")) process.exit(1)' ||
	fail "templates --json"
echo "ok"
