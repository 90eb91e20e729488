#!/bin/sh
# needle count --server vllm|sglang and --reasoning-effort: prompts match the real
# Qwen3 / DeepSeek V3 Jinja with each server's message preparation
# (tests/tpl/server_flavour.mjs); the DeepSeek V3.2 encoder as SGLang runs it reads
# only kwargs "thinking" and always drops pre-query developer turns in thinking mode
# (docs/protocol.md "DeepSeek encoders"); bad --server values and --jsonl strings holding \u0000 are
# refused with exit 2 and one clear line.
set -eu
. "$TESTS/lib/cli.sh"

node "$TESTS/tpl/server_flavour.mjs" "$NEEDLE"

prompt() { "$NEEDLE" count --template deepseek-v3.2 --print-prompt "$@"; }
printf '[{"role":"user","content":"U"}]' > "$tmp/u.json"
BOS='<｜begin▁of▁sentence｜>' U='<｜User｜>' A='<｜Assistant｜>'
[ "$(prompt --messages "$tmp/u.json" --server vllm --kwargs '{"enable_thinking":true}')" = "$BOS${U}U$A<think>" ] ||
	fail "vllm V3.2: enable_thinking switches thinking on"
[ "$(prompt --messages "$tmp/u.json" --server sglang --kwargs '{"enable_thinking":true}')" = "$BOS${U}U$A</think>" ] ||
	fail "sglang V3.2: enable_thinking is not read"
[ "$(prompt --messages "$tmp/u.json" --server sglang --reasoning-effort high)" = "$BOS${U}U$A<think>" ] ||
	fail "sglang V3.2: reasoning_effort high sets thinking"
[ "$(prompt --messages "$tmp/u.json" --server sglang --reasoning-effort none --kwargs '{"thinking":true}')" = "$BOS${U}U$A<think>" ] ||
	fail "sglang V3.2: explicit thinking wins over reasoning_effort none"
printf '[{"role":"developer","content":"DEVMSG"},{"role":"user","content":"U"},{"role":"assistant","reasoning":"R","content":"B"}]' > "$tmp/dev.json"
prompt --messages "$tmp/dev.json" --server vllm --kwargs '{"thinking":true}' | grep -q DEVMSG ||
	fail "vllm V3.2: no drop_thinking when the last message is not a user turn"
! prompt --messages "$tmp/dev.json" --server sglang --kwargs '{"thinking":true}' | grep -q DEVMSG ||
	fail "sglang V3.2: drop_thinking is always on"

# exit 2 and the message on stderr
check_exit 2 "unknown server 'tgi'" "$NEEDLE" count --template qwen3 --messages "$tmp/u.json" --print-prompt --server tgi
check_exit 2 "need '--messages'" "$NEEDLE" count --tokenizer x.json --server sglang "$tmp/u.json"
Q=$(fixture hf/qwen3/tokenizer.json)
printf '"abc"\n"a\\u0000bcdef"\n' > "$tmp/nul.jsonl"
check_exit 2 'line 2' "$NEEDLE" count --tokenizer "$Q" --jsonl "$tmp/nul.jsonl"
grep -qF 'u0000' "$tmp/err" || fail "jsonl: the message names \\u0000: $(cat "$tmp/err")"
echo "count --server/--reasoning-effort: real templates matched, V3.2 SGLang rules, bad input refused"
