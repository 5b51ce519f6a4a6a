#!/usr/bin/env bash
# vkf forward on decoder-only language models (GPT-2, Llama with default, linear, dynamic and llama3
# rope, Mistral, Qwen2): full-sequence logits
# against transformers 4.38 (tools/goldens/make_decoder_golden.py) on a batch with right and left padding
# (every position, the padded ones included), without a mask, in fp16; bad configs and inputs.
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
npy="python3 tests/cli/npy_tool.py"
G=tests/models/golden/decoder
D=tests/models/data

compare() { # name got want atol
  if out=$($npy compare "$2" "$3" "$4"); then ok; else bad "$1: $out"; fi
}
for m in gpt2_tiny llama_tiny llama_tied mistral_tiny qwen2_tiny llama_dynamic llama3_rope; do
  if "$VKF" forward --model $D/$m --in input_ids=$G/input_ids.npy --in attention_mask=$G/attention_mask.npy \
    --out logits="$tmp/$m.npy" 2>"$tmp/err"; then
    compare "$m logits" "$tmp/$m.npy" $G/${m}_logits.npy 1e-4
  else bad "$m forward: $(cat "$tmp/err")"; fi
done

# No attention_mask (all ones): row 0 alone; and the base model's last_hidden_state is there too.
$npy ints "$tmp/row0.npy" 1,12 $(python3 - <<'PY'
import struct
data = open("tests/models/golden/decoder/input_ids.npy", "rb").read()
hlen = struct.unpack("<H", data[8:10])[0]
ids = struct.unpack("<36q", data[10 + hlen:10 + hlen + 288])
print(",".join(str(i) for i in ids[:12]))
PY
)
if "$VKF" forward --model $D/llama_tiny --in input_ids="$tmp/row0.npy" --out logits="$tmp/alone.npy" \
  --out last_hidden_state="$tmp/h.npy" 2>"$tmp/err"; then
  compare "llama_tiny without a mask" "$tmp/alone.npy" $G/llama_tiny_logits_nomask.npy 1e-4
else bad "llama_tiny without a mask: $(cat "$tmp/err")"; fi

# Dynamic NTK rope: 24 tokens past the model's 16 positions, the base grown as transformers does.
if "$VKF" forward --model $D/llama_dynamic --in input_ids=$G/llama_dynamic_long_ids.npy \
  --out logits="$tmp/dyn.npy" 2>"$tmp/err"; then
  compare "llama_dynamic past its positions" "$tmp/dyn.npy" $G/llama_dynamic_long_logits.npy 1e-4
else bad "llama_dynamic long: $(cat "$tmp/err")"; fi

# f16 weights and activations: the same logits within f16's precision.
if "$VKF" forward --model $D/qwen2_tiny --fp16 --in input_ids=$G/input_ids.npy \
  --in attention_mask=$G/attention_mask.npy --out logits="$tmp/q16.npy" 2>"$tmp/err"; then
  compare "qwen2_tiny fp16" "$tmp/q16.npy" $G/qwen2_tiny_logits.npy 5e-2
else bad "qwen2_tiny fp16: $(cat "$tmp/err")"; fi

"$VKF" forward --model $D/mistral_tiny --list >"$tmp/list" 2>&1 &&
  grep -q "^MistralForCausalLM" "$tmp/list" && grep -q "^input   attention_mask .*optional (default 1)" "$tmp/list" &&
  grep -q "^output  logits .*\[batch, seq, 256\]" "$tmp/list" && ok || bad "list: $(cat "$tmp/list")"

# Bad input: a prompt past GPT-2's learned positions (rotary models have no such bound), ids outside the vocabulary, configs we do not run.
$npy ints "$tmp/long.npy" 1,65 $(python3 -c 'print(",".join(["5"] * 65))')
expect_error forward "prompt longer than the positions" "65 tokens, longer than the model's 64" --model $D/gpt2_tiny --in input_ids="$tmp/long.npy" --out logits="$tmp/x.npy"
$npy ints "$tmp/oov.npy" 1,3 1,256,2
expect_error forward "id outside the vocabulary" "value 256 at \[0, 1\] is outside \[0, 256)" --model $D/llama_tiny --in input_ids="$tmp/oov.npy" --out logits="$tmp/x.npy"
edit_config() { # name model python-expression-on-c
  cp -r "$D/$2" "$tmp/$1"
  python3 - "$tmp/$1/config.json" "$3" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
exec(sys.argv[2])
json.dump(c, open(sys.argv[1], "w"))
PY
}
edit_config rope llama_tiny 'c["rope_scaling"] = {"type": "yarn", "factor": 4.0}'
expect_error forward "unknown rope type" 'rope_scaling type "yarn" is not supported' --model "$tmp/rope" --list
edit_config kv llama_tiny 'c["num_key_value_heads"] = 3'
expect_error forward "heads not a multiple of kv heads" "4 attention heads are not a multiple of 3" --model "$tmp/kv" --list
# A non-positive norm epsilon is refused by its field (it said "the norm epsilon is 0").
edit_config eps llama_tiny 'c["rms_norm_eps"] = 0'
expect_error forward "rms_norm_eps 0" 'field "rms_norm_eps" is 0, must be a positive number' --model "$tmp/eps" --list
edit_config eps2 gpt2_tiny 'c["layer_norm_epsilon"] = -1e-5'
expect_error forward "gpt2 layer_norm_epsilon negative" 'field "layer_norm_epsilon" is -1e-05, must be a positive number' --model "$tmp/eps2" --list
edit_config upcast gpt2_tiny 'c["reorder_and_upcast_attn"] = True'
expect_error forward "gpt2 variant" '"reorder_and_upcast_attn" true is not supported' --model "$tmp/upcast" --list
edit_config untied llama_tied 'c["tie_word_embeddings"] = False'
expect_error forward "untied head without lm_head" '"lm_head.weight" not found' --model "$tmp/untied" --list
edit_config arch qwen2_tiny 'c["architectures"] = ["Qwen2MoeForCausalLM"]; c["model_type"] = "qwen2_moe"'
expect_error forward "unknown architecture" 'architecture "Qwen2MoeForCausalLM" (model_type "qwen2_moe") is not supported' --model "$tmp/arch" --list

# bf16 checkpoints: linear weights stay bf16 on the device (the dump shows them), are widened
# exactly by the matmul kernels, so the logits and the greedy ids equal those of an f32 copy of the
# same values; llama (stacked QKV), qwen2 (QKV bias), gpt2 (Conv1D [in, out] weights).
for m in llama_tiny qwen2_tiny gpt2_tiny; do
  python3 tests/cli/bf16_checkpoint.py $D/$m "$tmp/${m}_bf16" "$tmp/${m}_f32"
  n=$("$VKF" dump --model "$tmp/${m}_bf16" 2>&1 | grep -c '^constant .*weight" bf16')
  [ "$n" -ge 4 ] && ok || bad "$m bf16: $n bf16 weight constants in the graph"
  for prec in "" --fp16; do
    if "$VKF" forward --model "$tmp/${m}_bf16" $prec --in input_ids=$G/input_ids.npy \
      --in attention_mask=$G/attention_mask.npy --out logits="$tmp/bf.npy" 2>"$tmp/err" &&
      "$VKF" forward --model "$tmp/${m}_f32" $prec --in input_ids=$G/input_ids.npy \
        --in attention_mask=$G/attention_mask.npy --out logits="$tmp/f.npy" 2>>"$tmp/err"; then
      compare "$m bf16 weights$prec" "$tmp/bf.npy" "$tmp/f.npy" $([ -n "$prec" ] && echo 2e-2 || echo 1e-5)
    else bad "$m bf16$prec forward: $(cat "$tmp/err")"; fi
  done
  a=$("$VKF" generate --model "$tmp/${m}_bf16" --ids 5,17,42 --greedy --ignore-eos --max-new-tokens 12 --json 2>"$tmp/err")
  b=$("$VKF" generate --model "$tmp/${m}_f32" --ids 5,17,42 --greedy --ignore-eos --max-new-tokens 12 --json 2>"$tmp/err")
  [ -n "$a" ] && [ "$a" = "$b" ] && ok || bad "$m bf16 generate: $a vs $b ($(cat "$tmp/err"))"
done

vkf_summary
