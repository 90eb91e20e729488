#!/bin/sh
# slow: the comparison corpus through four tokenizers and the reference binding
# Exactness of needle count against the official `tokenizers` binding: the
# four real tokenizers (DeepSeek V3, Qwen3, Llama 3, GPT-4o) on a corpus of
# every pitfall of docs/tokenizers.md "Pitfalls checked against the reference", random Unicode of all planes, CJK, code,
# long runs and special-token text; and the hand-made fixtures of
# fixtures/tokenizers/ (one behaviour each), ids and counts, with and without
# the post-processor template. Any mismatch fails and is printed escaped.
set -eu
. "$TESTS/lib/cli.sh"
node "$TESTS/tok/compare.js" "$NEEDLE"
