#!/usr/bin/env bash
# Fixed kernel variants start without shaderc: every define set that ViT, BERT, the decoders and
# the encoder–decoders request is a row of shaders/variants.txt, whose SPIR-V glslc compiled at
# build time into the binary. Checked two ways: (1) the lowered plans of the test checkpoints on
# this device and under the GPU-shaped profiles (vkf dump --stage plan, no compile) request no
# unlisted variant; (2) whole runs with an empty vkformer cache (VKF_CACHE_DIR a new folder) and
# VKF_LOG=2 run shaderc for generated kernels only ("shaderc: compiling generated kernel ..."),
# with --fp16 too, and give the same output as with the warm test cache.
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
source tests/cli/lib.sh
D=tests/models/data
img=assets/images/cat.jpg

# (1) Plans: fp32 forward graphs of one checkpoint per architecture, four device classes.
for m in vit_tiny deit_cls_tiny bert_tiny gpt2_tiny llama_tiny mistral_tiny qwen2_tiny \
  bigbird_tiny longformer_tiny; do
  for profile in "" mobile mali adreno; do
    if VKF_DEVICE_PROFILE=$profile "$VKF" dump --model $D/$m --stage plan >"$tmp/plan.$m.$profile" \
      2>"$tmp/err"; then ok; else bad "dump $m ${profile:-device}: $(cat "$tmp/err")"; fi
  done
done
if missing=$(python3 tests/cli/variants_check.py shaders/variants.txt "$tmp"/plan.*); then ok; else
  bad "variants the plans request but shaders/variants.txt lacks:"$'\n'"$missing"
fi

# (2) Runs: NAME ARGS...: the command on an empty cache, then on the test's warm cache.
fresh_run() {
  local name=$1
  shift
  mkdir "$tmp/cache.$name"
  if VKF_CACHE_DIR="$tmp/cache.$name" VKF_LOG=2 "$VKF" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
  then ok; else bad "$name: exit $?: $(grep -v ': info: ' "$tmp/$name.err" | head -c 400)"; fi
  local fixed
  fixed=$(grep "shaderc: compiling" "$tmp/$name.err" | grep -v "compiling generated kernel")
  if [ -z "$fixed" ]; then ok; else bad "$name: shaderc ran for fixed variants:"$'\n'"$fixed"; fi
  if "$VKF" "$@" >"$tmp/$name.warm" 2>/dev/null && cmp -s "$tmp/$name.out" "$tmp/$name.warm"; then
    ok
  else bad "$name: output differs from the warm-cache run"; fi
}
fresh_run vit classify --model $D/vit_tiny --json $img
fresh_run vit16 classify --model $D/vit_tiny --json --fp16 $img
fresh_run bert embed --model $D/bert_tiny --json "a short sentence" "and a second one"
fresh_run gpt2 generate --model $D/gpt2_tiny --ids 1,2,3,4,5 --ids 3,4 --max-new-tokens 3
fresh_run t5 generate --model $D/t5_tiny --ids 1,2,3,4,5 --max-new-tokens 3
vkf_summary
