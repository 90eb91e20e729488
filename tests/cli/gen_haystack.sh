#!/bin/sh
# slow: documents of exact length through the real tokenizers
# needle gen haystack acceptance: the rendered prompt is exactly N tokens when
# prompt.json goes through the real chat template (Jinja) and the HF tokenizers
# library; each code is in the document exactly once at its depth (+-2%); the
# manifest's token offsets are exact; the same seed gives the same bytes and
# another seed different ones; 2,000,000 tokens stay under 1 GB of RSS.
set -eu
. "$TESTS/lib/cli.sh"
check=$TESTS/cli/haystack_check.mjs

gen() {
	model=$1
	shift
	"$NEEDLE" gen haystack --tokenizer "$(fixture "hf/$model/tokenizer.json")" "$@" ||
		fail "gen haystack $model $*"
}

# 1M exact: DeepSeek V3 at 1,040,000 tokens, seed 7 (positions are checked
# exactly at 131,072 below; here the count, codes and depths).
gen deepseek_v3 --template deepseek-v3 --tokens 1040000 --seed 7 --out "$tmp/ds"
node "$check" "$tmp/ds" "$(fixture hf/deepseek_v3)"

# Other templates at 131,072, with exact token offsets.
gen qwen3 --template qwen3 --tokens 131072 --seed 7 --out "$tmp/qw"
node "$check" "$tmp/qw" "$(fixture hf/qwen3)" --positions
gen llama3 --template llama3 --tokens 131072 --seed 7 --out "$tmp/ll"
node "$check" "$tmp/ll" "$(fixture hf/llama3)" --positions

# Every filler kind, distractors, a subset asked, more needles, other depths.
for f in code zh mixed; do
	gen deepseek_v3 --template deepseek-v3 --tokens 16384 --seed 3 --filler $f \
		--needles 5 --depths 0,20,45,80,100 --distractors 6 --ask 3 --out "$tmp/f-$f"
	node "$check" "$tmp/f-$f" "$(fixture hf/deepseek_v3)" --positions
	[ "$(grep -o '"asked":true' "$tmp/f-$f/manifest.json" | wc -l)" = 3 ] || fail "$f: not 3 asked"
	[ "$(grep -oE '"kind":"(near_miss|other_project)"' "$tmp/f-$f/manifest.json" | wc -l)" = 6 ] || fail "$f: not 6 distractors"
done
gen qwen3 --template qwen3 --tokens 8000 --seed 5 --filler mixed --kwargs '{"enable_thinking":false}' \
	--out "$tmp/think"
node "$check" "$tmp/think" "$(fixture hf/qwen3)" --positions

# Determinism: same seed, same bytes; another seed, another document.
gen qwen3 --template qwen3 --tokens 131072 --seed 7 --out "$tmp/qw2" > /dev/null
for f in prompt.json document.txt manifest.json; do
	cmp -s "$tmp/qw/$f" "$tmp/qw2/$f" || fail "seed 7 twice: $f differs"
done
gen qwen3 --template qwen3 --tokens 131072 --seed 8 --out "$tmp/qw3" > /dev/null
! cmp -s "$tmp/qw/document.txt" "$tmp/qw3/document.txt" || fail "seeds 7 and 8 give one document"
! cmp -s "$tmp/qw/manifest.json" "$tmp/qw3/manifest.json" || fail "seeds 7 and 8 give one manifest"

# Memory: 2,000,000 tokens with peak RSS under 1 GB.
if [ -x /usr/bin/time ]; then
	/usr/bin/time -f '%M' -o "$tmp/rss" "$NEEDLE" gen haystack \
		--tokenizer "$(fixture hf/deepseek_v3/tokenizer.json)" \
		--template deepseek-v3 --tokens 2000000 --seed 9 --out "$tmp/big" > /dev/null ||
		fail "2M tokens"
	rss=$(tail -1 "$tmp/rss")
	[ "$rss" -lt 1000000 ] || fail "2M tokens: peak RSS $rss KB"
	grep -q '"prompt_tokens":2000000,' "$tmp/big/manifest.json" || fail "2M tokens: count"
fi
echo "ok"
