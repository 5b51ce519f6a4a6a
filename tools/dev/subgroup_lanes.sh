#!/usr/bin/env bash
# The subgroup-width and bounds lanes: the kernels must be right at every subgroup size a vendor
# ships (AMD 32/64, Intel 8-32, Mali 16, Adreno 64/128) and never read or write outside their
# bindings. lavapipe stands in for other widths through LP_NATIVE_VECTOR_WIDTH: 128 bits give
# subgroups of 4, 512 of 16; 1024 and 2048 report 32 and 64 but run 16 (Mesa 22.3 and 26 alike:
# LLVM vectors stop at 512 bits), which is the device that misreports its size (as an Intel
# pipeline may get another width than the one reported), so those lanes check that the probe
# catches it and the size-independent bodies are right. The lanes:
#  - subgroups of 16: every gpu test, with VKF_VALIDATE=2 (the validation layer's GPU-assisted
#    mode: any storage-buffer access outside its binding is a message, so a failure;
#    gpu/test_bounds_check proves it reports a write one element past a binding): the bounds lane;
#  - subgroups of 4: the gpu tests whose kernels use subgroups (every row kernel, GEMV, attention
#    and block-sparse body a CPU device at that width or a GPU profile chooses), bounds checked;
#  - reported 32 and 64: the probe, the row kernels;
#  - model tests under the nvidia, amd, intel and mobile profiles at each width (the GPU bodies
#    end to end against the goldens);
#  - Mesa 26 at 1024 bits: the probe, and its tensor-core kernels off.
# Two checks at a time (the machine's two cores); one line per check, its output only when it
# fails. Usage: tools/dev/subgroup_lanes.sh [BUILD]
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
cd "$ROOT"
LOG=$BUILD/subgroup-lanes
rm -rf "$LOG" && mkdir -p "$LOG"
export VKF_SOURCE_DIR=$ROOT VKF_CACHE_DIR=$BUILD/vkf-cache VKF="$BUILD/tools/vkf" VKF_BUILD_DIR=$BUILD
JOBS=${JOBS:-2}
check() { # NAME COMMAND...: runs in the background, at most JOBS at once
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
  local name=$1
  shift
  (
    start=$SECONDS
    "$@" >"$LOG/$name.log" 2>&1
    rc=$?
    if [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ]; then
      echo "subgroup lanes: $name $([ "$rc" -eq 77 ] && echo skipped || echo passed) ($((SECONDS - start)) s): $(tail -1 "$LOG/$name.log")"
    else
      { echo "subgroup lanes: $name FAILED ($((SECONDS - start)) s):"; tail -30 "$LOG/$name.log"; } >&2
      touch "$LOG/$name.failed"
    fi
  ) &
}
gpu() { # WIDTH VALIDATE TEST [ARGS...]: a gpu test binary at a lavapipe width
  local width=$1 validate=$2 test=$3
  shift 3
  check "sg$((width / 32))_${test}${1:+_$1}" env LP_NATIVE_VECTOR_WIDTH="$width" \
    VKF_VALIDATE="$validate" "$BUILD/tests/gpu_test_$test" "$@"
}
cli() { # WIDTH PROFILE TEST: a CLI test script at a lavapipe width under a device profile
  local width=$1 profile=$2 test=$3
  check "sg$((width / 32))_${profile}_${test}" env LP_NATIVE_VECTOR_WIDTH="$width" \
    VKF_VALIDATE=1 VKF_DEVICE_PROFILE="$profile" bash "tests/cli/$test.sh"
}

# The longest first, so the two slots stay busy to the end.
gpu 512 2 attention
cli 128 nvidia test_forward_decoder
cli 512 intel test_generate
cli 128 mobile test_generate
cli 512 nvidia test_forward
cli 1024 nvidia test_generate
cli 2048 amd test_forward_decoder
# Subgroups of 16: the whole gpu suite, bounds checked (but embedded_spirv, which compares the
# build-time SPIR-V table with shaderc's output and runs no kernel against data).
for bin in "$BUILD"/tests/gpu_test_*; do
  t=${bin##*/gpu_test_}
  [ "$t" = attention ] || [ "$t" = embedded_spirv ] || gpu 512 2 "$t"
done
# Subgroups of 4: the subgroup kernels, bounds checked.
for t in bounds_check subgroup_size norm softmax bahdanau_ops runtime_lens embed_pool kv_write \
         linear_attention lowrank_ops sort_op gemm gemm_quant gemm_prologue rotary_kv sparse_attention; do
  gpu 128 2 "$t"
done
gpu 128 2 attention lanes
# Reported 32 and 64, run 16: the probe's correction, then the size-independent bodies.
for width in 1024 2048; do
  for t in subgroup_size norm softmax bahdanau_ops runtime_lens; do gpu "$width" 1 "$t"; done
done
# Mesa 26's lavapipe (the cooperative-matrix lane's sysroot) at 1024 bits: the same misreport,
# and its tensor-core kernels (4-subgroup tiles) must then be off. (Its layernorm kernels abort
# inside libvulkan_lvp.so there, "stack smashing detected" under the driver's own frames, past
# the 512-bit vectors LLVM is built for; Mesa 22.3 runs the same SPIR-V at 1024 bits, and Mesa
# 26 at 512, so gpu/test_norm stays out of this one lane.)
wait
if "$ROOT/tools/coopmat/lavapipe26.sh" "$ROOT/.cache/lavapipe26" >"$LOG/lavapipe26.log" 2>&1; then
  SR=$ROOT/.cache/lavapipe26/sr
  for t in subgroup_size softmax runtime_lens; do
    check "mesa26_sg32_$t" env LP_NATIVE_VECTOR_WIDTH=1024 VKF_VALIDATE=1 "$SR" \
      "$BUILD/tests/gpu_test_$t"
  done
  coopmat_off() {
    LP_NATIVE_VECTOR_WIDTH=1024 "$SR" "$BUILD/tools/vkf" devices | tee "$LOG/mesa26_devices.txt" |
      grep -q "allowlist .*off: the subgroup size is not guaranteed"
  }
  check mesa26_sg32_coopmat_off coopmat_off
else
  { echo "subgroup lanes: the Mesa 26 sysroot FAILED:"; tail -5 "$LOG/lavapipe26.log"; } >&2
  touch "$LOG/lavapipe26.failed"
fi
wait
failed=$(find "$LOG" -name '*.failed' | wc -l)
[ "$failed" -eq 0 ] || { echo "subgroup lanes: $failed check(s) failed" >&2; exit 1; }
echo "subgroup lanes: all passed"
