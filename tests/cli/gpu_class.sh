#!/usr/bin/env bash
# Runs one CLI test under a desktop GPU profile (tests/CMakeLists.txt, label gpu-class):
# gpu_class.sh PROFILE SCRIPT. A profile whose clamped caps on this device equal those of a
# profile that runs anyway (amd against nvidia: on Debian 12's lavapipe both keep its 32 KiB of
# shared memory and its subgroups of 8 and set the same kind) plans every model the same, since
# the choosers read nothing else of the profile (its name is only printed); that run would repeat
# the other one's work, so it is skipped (exit 77, the reason on one line).
# cli/test_profile_plans proves the plans equal where the caps do.
set -uo pipefail
VKF=${VKF:?set VKF to the vkf binary}
profile=$1 script=$2
source tests/cli/lib.sh
twin=
[ "$profile" = amd ] && twin=nvidia
if [ -n "$twin" ]; then
  a=$(profile_caps "$profile") && b=$(profile_caps "$twin") || { echo "gpu_class.sh: vkf devices failed" >&2; exit 1; }
  if [ "$a" = "$b" ]; then
    echo "skipped: caps under the $profile profile equal the $twin profile's on this device" \
      "(the $twin run plans every model the same)"
    exit 77
  fi
fi
VKF_GPU_CLASS_RERUN=1 VKF_DEVICE_PROFILE=$profile bash "$script"
