#!/bin/sh
# slow: every template against the real Jinja, in Node
# Chat templates: needle's rendered prompts against the real Jinja templates
# (tests/tpl/compare.mjs), hand-written DeepSeek V3.1/V3.2 prompts and refusals
# (tests/tpl/handwritten.mjs), the DeepSeek V3.2/V4/V4.1 encoders against an
# independent Python model of them and of both servers (tests/tpl/ds_compare.py),
# tools as SGLang hands them to a template, function-only retry included
# (tests/tpl/sglang_tools.py, against Python jinja2), and malformed descriptors: each must exit 2 with one line naming the file,
# the JSON path and the reason.
set -u
. "$TESTS/lib/cli.sh"
fail=0

node "$TESTS/tpl/compare.mjs" "$NEEDLE" || fail=1
node "$TESTS/tpl/handwritten.mjs" "$NEEDLE" || fail=1
python3 "$TESTS/tpl/ds_compare.py" "$NEEDLE" || fail=1
/usr/bin/python3 "$TESTS/tpl/sglang_tools.py" "$NEEDLE" "$TESTS" || fail=1

printf '[{"role":"user","content":"hi"}]' > "$tmp/m.json"

# expect_error NAME TEMPLATE TEXT...: exit 2, one stderr line holding every TEXT.
expect_error() {
	name=$1 tpl=$2
	shift 2
	"$NEEDLE" count --template "$tpl" --messages "$tmp/m.json" --print-prompt \
		> "$tmp/out" 2> "$tmp/err"
	st=$?
	if [ "$st" != 2 ] || [ -s "$tmp/out" ]; then
		echo "FAIL $name: exit $st (want 2)"; cat "$tmp/err"; fail=1; return
	fi
	for want in "$@"; do
		if ! head -n 1 "$tmp/err" | grep -qF -- "$want"; then
			echo "FAIL $name: message lacks '$want':"; cat "$tmp/err"; fail=1
		fi
	done
}

good='"name":"t","style":"turns","turn_prefix":"<{{role}}>","turn_suffix":"</>","generation_prompt":"<a>"'
printf '{%s}' "$good" > "$tmp/good.json"
out=$("$NEEDLE" count --template "$tmp/good.json" --messages "$tmp/m.json" --print-prompt)
[ "$out" = "<user>hi</><a>" ] || { echo "FAIL good descriptor from a path: '$out'"; fail=1; }

printf '{"name":"t","style":"turns",' > "$tmp/trunc.json"
expect_error truncated "$tmp/trunc.json" "$tmp/trunc.json" "invalid JSON at byte"
printf '{%s,"colour":"red"}' "$good" > "$tmp/unknown.json"
expect_error unknown_key "$tmp/unknown.json" "$tmp/unknown.json" '$.colour' "unknown key"
printf '{%s,"trim_content":"yes"}' "$good" > "$tmp/type.json"
expect_error wrong_type "$tmp/type.json" '$.trim_content' "expected a boolean"
printf '{"name":"t","style":"turns","turn_prefix":"","generation_prompt":""}' > "$tmp/missing.json"
expect_error missing_key "$tmp/missing.json" '$.turn_suffix' "missing"
printf '{"name":"t","style":"mistral"}' > "$tmp/style.json"
expect_error unknown_style "$tmp/style.json" '$.style' "unknown style 'mistral'"
printf '{%s,"tool_calls":{"lead":"","separator":"","call":"{{nam}}"}}' "$good" > "$tmp/ph.json"
expect_error placeholder "$tmp/ph.json" '$.tool_calls.call' "unknown placeholder"
printf '{%s,"thinking":{"kwargs":["x"],"combine":"all","default":true}}' "$good" > "$tmp/comb.json"
expect_error combine "$tmp/comb.json" '$.thinking.combine'
printf '{"name":"t","style":"deepseek-v3","bos":""}' > "$tmp/ds.json"
expect_error style_keys "$tmp/ds.json" "$tmp/ds.json" "missing (required for style 'deepseek-v3')"
printf '[1,2]' > "$tmp/array.json"
expect_error not_object "$tmp/array.json" "expected an object"
expect_error unknown_name no-such-template "unknown template 'no-such-template'" "qwen3" "deepseek-v3.2"
expect_error missing_file "$tmp/nope.json" "$tmp/nope.json"

# A U+0000 escape would be cut short by the JSON parser: refused, not miscounted.
printf '[{"role":"user","content":"a\\u0000b"}]' > "$tmp/nul.json"
"$NEEDLE" count --template chatml --messages "$tmp/nul.json" --print-prompt > "$tmp/out" 2> "$tmp/err"
st=$?
if [ "$st" != 2 ] || ! grep -qF 'u0000 at byte' "$tmp/err"; then
	echo "FAIL nul escape: exit $st"; cat "$tmp/err"; fail=1
fi
printf '[{"role":"user","content":"a\\\\u0000b"}]' > "$tmp/bs.json"
out=$("$NEEDLE" count --template chatml --messages "$tmp/bs.json" --print-prompt) &&
	case $out in *'a\u0000b'*) ;; *) echo "FAIL escaped backslash: '$out'"; fail=1 ;; esac

# Every shipped descriptor loads and renders a plain conversation.
for t in chatml deepseek-v3 deepseek-v3.1 deepseek-v3.2 deepseek-v4 deepseek-v4.1 llama3 qwen3; do
	"$NEEDLE" count --template "$t" --messages "$tmp/m.json" --print-prompt > "$tmp/out" 2> "$tmp/err" \
		&& grep -q hi "$tmp/out" || { echo "FAIL shipped $t"; cat "$tmp/err"; fail=1; }
done
exit $fail
