/* Owns VKF_DEVICE_PROFILE: the table of device classes and how caps are clamped to them. */
#include <stdio.h>
#include <string.h>

#include "graph/base/caps.h"

typedef struct profile {
  const char *name;
  uint32_t shared_memory_size;
  uint32_t max_invocations;
  uint32_t subgroup_size;     /* 0: keep the device's */
  uint32_t subgroup_ops_mask; /* ops kept */
  int fp16_arithmetic, storage_16bit;
  uint64_t max_storage_buffer_range;
  uint64_t max_memory_allocation_size; /* 0: keep the device's */
  vkf_device_kind kind;                /* VKF_DEVICE_KIND_OTHER: keep the device's */
  int coopmat;                         /* the class has tensor cores: keep the device's */
} profile;

/* Each row is a class whose limits a real vendor ships; values are the spec minimum or the
 * common figure for the class (DESIGN.md, "Tile sizes"). The desktop classes (nvidia, amd,
 * intel) also set the device kind, so that on lavapipe every chooser takes the rules a GPU of the
 * class gets and CI runs the GPU bodies end to end; limits still only shrink (lavapipe's 32 KiB of
 * shared memory and subgroups of 8 stay), so a chooser rule that reads those picks as a GPU of the
 * class with those limits would. */
static const profile profiles[] = {
    /* Generic phone: Vulkan minimum shared memory, no fp16 math, small workgroups, no subgroup
     * arithmetic (many Mali/Adreno drivers expose it only partially). */
    {"mobile", 16384, 128, 0, VKF_SUBGROUP_BASIC, 0, 1, 128u << 20, 0, VKF_DEVICE_KIND_OTHER, 0},
    /* Arm Mali (Valhall): 32 KiB shared, subgroup 16, fp16 storage but no assumed fp16 math. */
    {"mali", 32768, 256, 16, VKF_SUBGROUP_BASIC | VKF_SUBGROUP_VOTE | VKF_SUBGROUP_BALLOT, 0, 1,
     1u << 30, 0, VKF_DEVICE_KIND_OTHER, 0},
    /* Qualcomm Adreno 6xx/7xx: 32 KiB shared, wave 64. */
    {"adreno", 32768, 1024, 64, ~0u, 1, 1, 1u << 30, 0, VKF_DEVICE_KIND_OTHER, 0},
    /* Not a device class: limits so small that the committed tiny checkpoints (hidden 32-64)
     * need their big nodes sliced and their batches split into several runs (the arena
     * outgrows one allocation), so those paths run in CI with a few rows; 64 KiB still holds
     * each tiny weight whole. */
    {"tiny-buffers", 32768, 1024, 0, ~0u, 1, 1, 64u << 10, 64u << 10, VKF_DEVICE_KIND_OTHER, 0},
    /* NVIDIA desktop and data-centre GPUs (Turing to Hopper): 48 KiB of shared memory without
     * opting in, warps of 32, fp16 math, 4 GiB bindings. */
    {"nvidia", 49152, 1024, 32, ~0u, 1, 1, 1ull << 32, 0, VKF_DEVICE_KIND_DISCRETE_GPU, 1},
    /* AMD GCN / RDNA: 64 KiB of LDS, wave 64 (RDNA also runs wave 32), fp16 math. */
    {"amd", 65536, 1024, 64, ~0u, 1, 1, 1ull << 32, 0, VKF_DEVICE_KIND_DISCRETE_GPU, 1},
    /* Intel Xe integrated graphics: 64 KiB of SLM, SIMD 16 (8 to 32), fp16 math, 1 GiB bindings;
     * an integrated GPU, so memory is shared with the CPU. */
    {"intel", 65536, 1024, 16, ~0u, 1, 1, 1u << 30, 0, VKF_DEVICE_KIND_INTEGRATED_GPU, 1},
};

const char *vkf_caps_profile_names(void) { return "mobile, mali, adreno, tiny-buffers, nvidia, amd, intel"; }

static uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

vkf_status vkf_caps_apply_profile(vkf_device_caps *caps, const char *name) {
  if (!name || !*name) return VKF_OK;
  const profile *p = NULL;
  for (size_t i = 0; i < sizeof profiles / sizeof profiles[0]; i++)
    if (strcmp(profiles[i].name, name) == 0) p = &profiles[i];
  if (!p)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "unknown device profile \"%s\" (VKF_DEVICE_PROFILE); known: %s", name,
                           vkf_caps_profile_names());
  caps->max_shared_memory_size = min_u32(caps->max_shared_memory_size, p->shared_memory_size);
  caps->max_workgroup_invocations = min_u32(caps->max_workgroup_invocations, p->max_invocations);
  for (int i = 0; i < 3; i++)
    caps->max_workgroup_size[i] = min_u32(caps->max_workgroup_size[i], p->max_invocations);
  /* A profile's subgroup size is planned with only where every kernel that depends on it will
   * run at it: a device that can require it of its pipelines (AMD's 32 or 64, Intel's 8 to 32).
   * Elsewhere (lavapipe's one width, a 32-wide NVIDIA under the intel profile) the device's size
   * stays: planning rows of 16 lanes on subgroups of 32 would sum two rows together. */
  if (p->subgroup_size && caps->subgroup_size_control && !caps->subgroup_misreported &&
      p->subgroup_size >= caps->min_subgroup_size && p->subgroup_size <= caps->max_subgroup_size)
    caps->subgroup_size = p->subgroup_size;
  caps->subgroup_ops &= p->subgroup_ops_mask;
  caps->fp16_arithmetic = caps->fp16_arithmetic && p->fp16_arithmetic;
  caps->storage_16bit = caps->storage_16bit && p->storage_16bit;
  if (caps->max_storage_buffer_range > p->max_storage_buffer_range)
    caps->max_storage_buffer_range = p->max_storage_buffer_range;
  if (p->max_memory_allocation_size &&
      caps->max_memory_allocation_size > p->max_memory_allocation_size)
    caps->max_memory_allocation_size = p->max_memory_allocation_size;
  /* The desktop classes ship cooperative matrices (NVIDIA since Turing, AMD RDNA3, Intel Xe); on
   * lavapipe 26 their profiles keep its 8x8x8 shape, so the GPU rules pick those kernels in CI. */
  if (!p->coopmat) {
    if (caps->coopmat_gemm_tile)
      snprintf(caps->coopmat_reason, sizeof caps->coopmat_reason,
               "off: the %s profile's class has no tensor cores", p->name);
    caps->cooperative_matrix = 0;
    caps->coopmat_count = 0;
    caps->coopmat_gemm_tile = 0;
    caps->coopmat_tiles = 0;
  }
  if (p->kind != VKF_DEVICE_KIND_OTHER) caps->kind = p->kind;
  strncpy(caps->profile, p->name, sizeof caps->profile - 1);
  return VKF_OK;
}

const char *vkf_device_kind_name(vkf_device_kind kind) {
  switch (kind) {
    case VKF_DEVICE_KIND_INTEGRATED_GPU:
      return "integrated GPU";
    case VKF_DEVICE_KIND_DISCRETE_GPU:
      return "discrete GPU";
    case VKF_DEVICE_KIND_VIRTUAL_GPU:
      return "virtual GPU";
    case VKF_DEVICE_KIND_CPU:
      return "CPU";
    default:
      return "other";
  }
}
