#!/usr/bin/env bash
# The gpu-class reruns (tests/CMakeLists.txt) skip a profile whose clamped caps equal another's
# (tests/cli/gpu_class.sh: amd against nvidia on lavapipe). This shows that equal caps give equal
# plans: a model of each family the gpu-class tests run (GPT-2, Llama, Qwen2, the adaptive-span
# and long-short Llamas, BERT, ViT), f32 and --fp16, decoders also as a one-token step, dumps the
# same plan under amd as under nvidia wherever `vkf devices` shows the same caps; and that the
# comparison is not blind: the mobile profile's caps and plans differ from nvidia's.
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
D=tests/models/data
plans() { # profile out: every model's plans, one after the other
  local m prec len
  for m in gpt2_tiny llama_tiny qwen2_tiny span_llama ls_llama bert_tiny vit_tiny; do
    for prec in "" --fp16; do
      for len in "" "--seq-len 1"; do
        [ -n "$len" ] && { [ "$m" = vit_tiny ] || [ "$m" = bert_tiny ]; } && continue
        echo "== $m $prec $len"
        VKF_VALIDATE=0 VKF_DEVICE_PROFILE=$1 "$VKF" dump --model $D/$m --stage plan $prec $len 2>&1 ||
          echo "dump failed"
      done
    done
  done >"$2"
}
profile_caps nvidia >"$tmp/caps.nvidia" && profile_caps amd >"$tmp/caps.amd" &&
  profile_caps mobile >"$tmp/caps.mobile" &&
  ok || bad "vkf devices --json failed"
plans nvidia "$tmp/nvidia"
plans amd "$tmp/amd"
plans mobile "$tmp/mobile"
n=$(grep -c '^dispatch ' "$tmp/nvidia")
[ "$n" -gt 500 ] && ! grep -q "dump failed" "$tmp/nvidia" && ok ||
  bad "nvidia plans: $n dispatches, $(grep -c 'dump failed' "$tmp/nvidia") failed dumps"
if cmp -s "$tmp/caps.amd" "$tmp/caps.nvidia"; then
  cmp -s "$tmp/amd" "$tmp/nvidia" && ok ||
    bad "caps under amd and nvidia are equal but plans differ: $(diff "$tmp/nvidia" "$tmp/amd" | head -5)"
  echo "amd and nvidia: the same caps, the same plans ($n dispatches); cli/*/amd is skipped"
else
  echo "amd and nvidia caps differ here: cli/*/amd runs"
fi
# The comparison is not blind: the mobile profile's caps and plans differ.
! cmp -s "$tmp/caps.mobile" "$tmp/caps.nvidia" && ok || bad "mobile's caps equal nvidia's"
! cmp -s "$tmp/mobile" "$tmp/nvidia" && ok || bad "mobile's plans equal nvidia's"
vkf_summary
