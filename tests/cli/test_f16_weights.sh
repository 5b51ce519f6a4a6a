#!/usr/bin/env bash
# An F16 checkpoint keeps its linear weights (and a tied head's table) F16 on the device by default,
# with f32 activations, as BF16 ones stay bf16; --fp16 changes the activations only. The plan
# shows it (every matmul reads B as f16, A as f32 unless --fp16) and the weights' device bytes are
# half of the same values stored as F32 (tests/cli/bf16_checkpoint.py's F32 copy).
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
m=tests/models/data/llama_tied # F16 safetensors, tied embeddings
"$VKF" dump --model $m --stage plan >"$tmp/plan" 2>"$tmp/err" || bad "dump: $(cat "$tmp/err")"
gemms=$(grep -c ' gemm.comp ' "$tmp/plan")
[ "$gemms" -gt 0 ] && [ "$(grep ' gemm.comp ' "$tmp/plan" | grep -c -- '-DB_F16')" -eq "$gemms" ] &&
  ok || bad "every matmul should read f16 weights: $(grep ' gemm.comp ' "$tmp/plan")"
grep ' gemm.comp ' "$tmp/plan" | grep -q -- '-DA_F16' && bad "f32 activations expected" || ok
# the table: 256 x 64 f16
grep -q 'weight "model.embed_tokens.weight" 32768 bytes' "$tmp/plan" && ok ||
  bad "the tied table should stay f16: $(grep embed_tokens "$tmp/plan")"
"$VKF" dump --model $m --stage plan --fp16 >"$tmp/plan16" 2>"$tmp/err" || bad "dump --fp16: $(cat "$tmp/err")"
# every layer GEMM on f16 activations; the head on the f32 final norm (decoder.c: the logits come
# out of the head's GEMM in f32, no cast after it)
[ "$(grep ' gemm.comp ' "$tmp/plan16" | grep -v '"lm_head"' | grep -c -- '-DA_F16')" -eq \
  $((gemms - 1)) ] && ok || bad "--fp16: f16 activations expected"
grep '"lm_head" gemm.comp' "$tmp/plan16" | grep -q -- '-DB_F16' &&
  ! grep '"lm_head" gemm.comp' "$tmp/plan16" | grep -qE -- '-D(A|C)_F16' && ok ||
  bad "--fp16: the head should read f16 weights into f32 logits: $(grep lm_head "$tmp/plan16")"
# weights bytes against the same values as F32
python3 tests/cli/bf16_checkpoint.py $m "$tmp/bf16" "$tmp/f32" >/dev/null || bad "bf16_checkpoint.py"
# the linear weights and the table (the norms, masks and rotary tables stay f32 in both)
weights() { awk '$3 == "weight" && $4 ~ /(proj|qkv|gate_up|embed_tokens)\.weight/ { s += $(NF - 1) }
                 END { print s }' "$1"; }
"$VKF" dump --model "$tmp/f32" --stage plan >"$tmp/plan32" 2>"$tmp/err" || bad "dump f32: $(cat "$tmp/err")"
w16=$(weights "$tmp/plan") w32=$(weights "$tmp/plan32")
[ $((w16 * 2)) -eq "$w32" ] && ok || bad "f16 weights $w16 bytes, f32 twin $w32"
vkf_summary
