#!/bin/sh
# slow: 6.5 MB of text through four tokenizers, twice
# needle count equals the official `tokenizers` binding's count on the two
# bench corpora (~4.5 MB of English, ~2 MB of Chinese; tests/setup.sh bench
# and bench-zh, kept in $BUILD/bench) for the four real tokenizers, loaded
# from the tokenizer.json, then from the cache's blob. Llama 3's merges make
# ids out of rank order (the merge table's id array), the others' in order.
set -eu
. "$TESTS/lib/cli.sh"
en=$BUILD/bench/english.txt
zh=$BUILD/bench/chinese.txt
[ -s "$en" ] || sh "$TESTS/setup.sh" bench "$en"
[ -s "$zh" ] || sh "$TESTS/setup.sh" bench-zh "$zh"
for name in deepseek_v3 qwen3 llama3 gpt4o; do
	tok=$(fixture "hf/$name/tokenizer.json")
	for text in "$en" "$zh"; do
		hf=$(node "$TESTS/bench/hf_encode.js" "$tok" "$text" 1 | sed 's/.*"count":\([0-9]*\).*/\1/')
		json=$(NEEDLE_NO_CACHE=1 "$NEEDLE" count --tokenizer "$tok" "$text")
		"$NEEDLE" count --tokenizer "$tok" "$text" > /dev/null # fills the cache
		blob=$("$NEEDLE" count --tokenizer "$tok" "$text")
		[ "$json" = "$hf" ] || fail "$name, $(basename "$text"): $json from the json, HF $hf"
		[ "$blob" = "$hf" ] || fail "$name, $(basename "$text"): $blob from the cache, HF $hf"
	done
done
