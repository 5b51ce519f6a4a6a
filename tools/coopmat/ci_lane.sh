#!/usr/bin/env bash
# The cooperative-matrix CI lane: runs the tensor-core kernels on a CPU. Debian 12's lavapipe has
# no VK_KHR_cooperative_matrix, so this sets up Mesa 26's (lavapipe26.sh, a private trixie
# sysroot) and runs, through it, with the validation layer on and failing on any message:
#  - gpu/test_gemm_coopmat with the kernels required (a build or device without them fails);
#  - gpu/test_attention's cooperative-matrix part (its `coopmat` filter): the f16 cases forced onto
#    the tensor-core body, every mask feature, head dims 32..128 (32, 48, 64, 80, 128), at each
#    tile the device allows: head dims to 80 with the K/V tiles double-buffered, 128 without;
#  - cli/test_forward under the nvidia profile (its --fp16 forward runs on cooperative matrices);
#  - `vkf bench gemm --fp16` and `vkf bench attention --fp16`, which print the cooperative-matrix
#    variant beside the SIMT one with its design intensity (attention: each checked against the
#    unfused path);
#  - `vkf dump --stage plan --fp16`: a model's GEMMs take the kernel, and none with VKF_COOPMAT=0;
#  - ViT / DeiT --fp16: the patch embedding lowers to the f16 patch matrix and the kernel (the SIMT
#    patch_embed.comp with VKF_COOPMAT=0), and the logits stay within test_vit.c's f16 bound
#    (1e-2) of the goldens with the kernels and without; models/test_vit under the nvidia profile;
#  - a quantised llama's --fp16 prefill: its GEMMs dequantise the blocks into the kernel's tiles,
#    and the logits agree with the SIMT path's; a quantised BERT's likewise with their biases in
#    the kernel's epilogue.
# The main lane is unchanged. Usage: tools/coopmat/ci_lane.sh [BUILD_DIR] (default build; it must
# have been built with the cooperative-matrix kernels: shaders/variants_coopmat.txt).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
D=$ROOT/.cache/lavapipe26
"$ROOT/tools/coopmat/lavapipe26.sh" "$D"
SR=$D/sr
cd "$ROOT"
# CLI tests call "$VKF": a wrapper that runs the build's vkf on the sysroot's lavapipe.
cat > "$D/vkf" <<EOW
#!/bin/sh
exec $SR $BUILD/tools/vkf "\$@"
EOW
chmod +x "$D/vkf"
"$D/vkf" devices | grep -q "GEMM kernels.*8x8x8 f16 tiles" || {
  echo "coopmat lane: lavapipe 26 shows no cooperative-matrix GEMM kernels:" >&2
  "$D/vkf" devices >&2
  exit 1
}
failed=0
run() { # NAME COMMAND...: one line per check, its output only when it fails
  local name=$1 start=$SECONDS
  shift
  if "$@" >"$D/$name.log" 2>&1; then
    echo "coopmat lane: $name passed ($((SECONDS - start)) s): $(tail -1 "$D/$name.log")"
  else
    echo "coopmat lane: $name FAILED ($((SECONDS - start)) s):" >&2
    tail -30 "$D/$name.log" >&2
    failed=$((failed + 1))
  fi
}
# The suite's kernel cache (tests/CMakeLists.txt, VKF_TEST_CACHE_DIR): the SPIR-V it generated
# (test_forward under the nvidia profile among it) serves here wherever the plans agree.
export VKF_VALIDATE=1 VKF_CACHE_DIR=$BUILD/vkf-cache
run test_gemm_coopmat env VKF_REQUIRE_COOPMAT=1 "$SR" "$BUILD/tests/gpu_test_gemm_coopmat"
run test_attention_coopmat env VKF_DEVICE_PROFILE=nvidia "$SR" "$BUILD/tests/gpu_test_attention" \
  coopmat
run test_forward_nvidia env VKF_DEVICE_PROFILE=nvidia VKF="$D/vkf" VKF_BUILD_DIR="$BUILD" \
  bash tests/cli/test_forward.sh
bench() { # the cooperative-matrix row must be there, beside the chosen (CPU) kernel, in the
  # chooser's tiles for the shape (split-K for the short one), with its design FLOPs per shared
  # and per global byte (bench_gemm_intensity.c)
  "$D/vkf" bench gemm --fp16 --shape 67x96x40 --shape 128x64x128 --shape 45x300x100 --runs 2 \
    --warmup 1 --layout both | tee "$D/bench.md"
  [ "$(grep -c '| coopmat 32x32x16 m8 wg32 |' "$D/bench.md")" -eq 4 ] &&
    [ "$(grep -c '| coopmat 32x32x16 m8 wg32 split4 |' "$D/bench.md")" -eq 2 ] &&
    grep -q '^| 128×64×128 | \[N,K\] | coopmat 32x32x16 m8 wg32 | .* | 4\.0 | 12\.8 |$' "$D/bench.md" &&
    grep -q '^| 45×300×100 | \[K,N\] | coopmat 32x32x16 m8 wg32 split4 | .* | 2\.3 | 4\.6 |$' \
      "$D/bench.md"
}
run bench_gemm bench
bench_attention() { # each shape twice: the chosen (CPU) body, then the tensor-core one beside it,
  # with the one-pass body's design FLOPs per shared and per global byte (bench_attention_intensity.c)
  "$D/vkf" bench attention --fp16 --shape 1,4,100,100,64 --shape 1,2,70,83,128 --runs 2 \
    --warmup 1 | tee "$D/bench_attention.md"
  # (head dim 64 double-buffers its K/V tiles in lavapipe's 32 KiB: kv2; 128 does not)
  [ "$(grep -c '| coopmat m8 Br32 Bc32\( kv2\)\? |' "$D/bench_attention.md")" -eq 2 ] &&
    [ "$(grep -c '^| 1,' "$D/bench_attention.md")" -eq 4 ] &&
    grep -q '^| 1,4,100,100,64 | coopmat m8 Br32 Bc32 kv2 | .* | 2\.6 | 20\.0 |' "$D/bench_attention.md" &&
    grep -q '^| 1,2,70,83,128 | coopmat m8 Br32 Bc32 | .* | 3\.2 | 18\.2 |' "$D/bench_attention.md"
}
run bench_attention bench_attention
plans() { # a --fp16 model's GEMMs take the kernel under a GPU profile, and VKF_COOPMAT=0 stops it
  local on off
  on=$(VKF_DEVICE_PROFILE=nvidia "$D/vkf" dump --model tests/models/data/bert_tiny --stage plan \
       --fp16 --seq-len 16 | grep -c GEMM_COOPMAT)
  off=$(VKF_COOPMAT=0 VKF_DEVICE_PROFILE=nvidia "$D/vkf" dump --model tests/models/data/bert_tiny \
        --stage plan --fp16 --seq-len 16 | grep -c GEMM_COOPMAT || true)
  echo "bert_tiny --fp16 plan: $on cooperative-matrix GEMMs, $off with VKF_COOPMAT=0"
  [ "$on" -gt 0 ] && [ "$off" -eq 0 ]
}
run plan_bert_fp16 plans
vit_fp16() { # the patch embedding on the kernel, ViT / DeiT logits within the f16 bound
  local V=tests/models/golden/vit npy="python3 tests/cli/npy_tool.py" on off name c
  on=$(VKF_DEVICE_PROFILE=nvidia "$D/vkf" dump --model tests/models/data/vit_tiny --stage plan \
       --fp16 | grep '"vit.embeddings.patch_embeddings"' | grep -c -e COLS_F16 -e GEMM_COOPMAT)
  off=$(VKF_COOPMAT=0 VKF_DEVICE_PROFILE=nvidia "$D/vkf" dump --model tests/models/data/vit_tiny \
        --stage plan --fp16 | grep '"vit.embeddings.patch_embeddings"' | grep -c -e IM2COL \
        -e GEMM_COOPMAT || true)
  echo "vit_tiny --fp16 patch embedding: $on f16-patch / cooperative-matrix dispatches, $off with VKF_COOPMAT=0"
  [ "$on" -ge 2 ] && [ "$off" -eq 0 ] || return 1
  for name in vit_tiny deit_tiny; do
    for c in 1 0; do
      VKF_COOPMAT=$c VKF_DEVICE_PROFILE=nvidia "$D/vkf" forward --model tests/models/data/$name \
        --fp16 --in pixel_values=$V/${name}_pixel_values.npy --out logits="$D/$name$c.npy" ||
        return 1
      $npy compare "$D/$name$c.npy" $V/${name}_logits.npy 1e-2 || return 1
    done
  done
  echo "vit_tiny, deit_tiny --fp16 logits within 1e-2 of the goldens, kernels on and off"
}
run vit_fp16 vit_fp16
# models/test_vit with the nvidia profile as its default caps: ViT / DeiT fp16 on the kernels
# (patch embedding included) within its bounds, then its mobile pass
run test_vit_nvidia env VKF_DEVICE_PROFILE=nvidia "$SR" "$BUILD/tests/models_test_vit"
quant_prefill() { # quantised weights under --fp16 take the kernel (blocks dequantised into its f16
  # tiles), and a 40-token prefill's logits agree with the SIMT path's (VKF_COOPMAT=0)
  local m=tests/models/data/llama_tiny npy="python3 tests/cli/npy_tool.py" n
  n=$(VKF_DEVICE_PROFILE=nvidia "$D/vkf" dump --model $m --stage plan --fp16 --quantize q4_0 \
      --seq-len 40 | grep GEMM_COOPMAT | grep -c B_QUANT)
  $npy ints64 "$D/ids.npy" 1,40 "$(seq -s, 3 5 198)"
  for c in 1 0; do
    VKF_COOPMAT=$c VKF_DEVICE_PROFILE=nvidia "$D/vkf" forward --model $m --fp16 --quantize q4_0 \
      --in input_ids="$D/ids.npy" --out logits="$D/logits$c.npy" || return 1
  done
  echo "llama_tiny --fp16 --quantize q4_0: $n quantised cooperative-matrix GEMMs"
  [ "$n" -gt 0 ] && $npy compare "$D/logits1.npy" "$D/logits0.npy" 0.05
}
run quant_prefill_fp16 quant_prefill
quant_bias() { # quantised weights with a bias (BERT's every linear) take the kernel too, the bias
  # in its epilogue, and the hidden states agree with the SIMT path's
  local m=tests/models/data/bert_tiny G=tests/models/golden/forward n c
  local npy="python3 tests/cli/npy_tool.py"
  n=$(VKF_DEVICE_PROFILE=nvidia "$D/vkf" dump --model $m --stage plan --fp16 --quantize q4_0 \
      --seq-len 40 | grep GEMM_COOPMAT | grep B_QUANT | grep -c BIAS)
  for c in 1 0; do
    VKF_COOPMAT=$c VKF_DEVICE_PROFILE=nvidia "$D/vkf" forward --model $m --fp16 --quantize q4_0 \
      --in input_ids=$G/bert_tiny_input_ids.npy --in attention_mask=$G/bert_tiny_attention_mask.npy \
      --in token_type_ids=$G/bert_tiny_token_type_ids.npy --out last_hidden_state="$D/bq$c.npy" ||
      return 1
  done
  echo "bert_tiny --fp16 --quantize q4_0: $n quantised cooperative-matrix GEMMs with a bias"
  [ "$n" -gt 0 ] && $npy compare "$D/bq1.npy" "$D/bq0.npy" 0.05
}
run quant_bias_fp16 quant_bias
[ "$failed" -eq 0 ] || { echo "coopmat lane: $failed check(s) failed" >&2; exit 1; }
