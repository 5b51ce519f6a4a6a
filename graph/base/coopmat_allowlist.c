/* Owns the cooperative-matrix allowlist by vendor, driver and architecture. A driver that lists
 * VK_KHR_cooperative_matrix does not always have the hardware behind it or run it faster than the
 * SIMT kernels; ggml-vulkan keeps the same rules (ggml_vk_khr_cooperative_matrix_support):
 *  - AMD's own drivers (the proprietary one and AMDVLK) list them on every GPU, emulated where
 *    the GPU has no WMMA units: trusted only on RDNA3 and later, told apart as ggml does by
 *    wave32/64 subgroup size control with accelerated mixed-sign 8-bit dot products. RADV lists
 *    them only where the hardware has them.
 *  - Intel before Xe2 (Arc A-series, Xe-LP) regresses against its SIMT path: only Xe2 (its
 *    minimum subgroup size is 16, where earlier parts have 8).
 *  - Every other vendor (NVIDIA since Turing, lavapipe 26 as the CI's emulation) as listed.
 * VKF_COOPMAT=1 overrides a refusal (to measure a part the list does not know), 0 refuses all. */
#include "graph/base/coopmat_allowlist.h"

#include <stdio.h>

enum {
  VENDOR_AMD = 0x1002,
  VENDOR_INTEL = 0x8086,
  DRIVER_AMD_PROPRIETARY = 1,
  DRIVER_AMD_OPEN_SOURCE = 2, /* AMDVLK */
};

static int verdict(char *reason, size_t size, int ok, const char *why) {
  snprintf(reason, size, "%s", why);
  return ok;
}

int vkf_coopmat_allowed(const vkf_coopmat_device *d, int force, char *reason, size_t size) {
  if (force == 0) return verdict(reason, size, 0, "off: VKF_COOPMAT=0");
  const char *refused = NULL;
  if (d->vendor_id == VENDOR_AMD &&
      (d->driver_id == DRIVER_AMD_PROPRIETARY || d->driver_id == DRIVER_AMD_OPEN_SOURCE)) {
    int rdna3 = d->min_subgroup_size == 32 && d->max_subgroup_size == 64 &&
                d->int_dot_mixed_accelerated;
    if (!rdna3)
      refused = "AMD's driver lists cooperative matrices on GPUs before RDNA3, which have no "
                "matrix units";
    else
      return verdict(reason, size, 1, "on: AMD RDNA3 or later");
  } else if (d->vendor_id == VENDOR_INTEL) {
    if (d->min_subgroup_size != 16)
      refused = "Intel before Xe2 runs cooperative matrices slower than its SIMT kernels";
    else
      return verdict(reason, size, 1, "on: Intel Xe2");
  }
  if (!refused) return verdict(reason, size, 1, "on: the vendor's listing is trusted");
  if (force == 1) {
    snprintf(reason, size, "on: VKF_COOPMAT=1 overrides the allowlist (%s)", refused);
    return 1;
  }
  snprintf(reason, size, "off: %s (VKF_COOPMAT=1 forces them)", refused);
  return 0;
}
