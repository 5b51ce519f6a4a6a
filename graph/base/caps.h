/* The device capabilities every chooser reads: plain data filled once per physical device by host/
 * (Vulkan) and optionally clamped to another device class by VKF_DEVICE_PROFILE. It lives in graph/
 * so that lowering (which picks kernel variants) needs no Vulkan: plans are golden-tested on CI. */
#ifndef VKF_GRAPH_CAPS_H
#define VKF_GRAPH_CAPS_H

#include <stdint.h>

#include "graph/base/status.h"

enum { VKF_CAPS_MAX_HEAPS = 16, VKF_CAPS_MAX_COOPMAT = 16 };

/* One cooperative-matrix shape the device reports (VkCooperativeMatrixPropertiesKHR): A is M x K,
 * B K x N, C and the result M x N. Types are VkComponentTypeKHR values (0 f16, 1 f32, 2 f64,
 * 3 s8, 4 s16, 5 s32, 6 s64, 7 u8, 8 u16, 9 u32, 10 u64; 1000141000 bf16), scope VkScopeKHR's
 * (3 subgroup, 2 workgroup). */
typedef struct vkf_coopmat_shape {
  uint32_t m, n, k;
  uint32_t a_type, b_type, c_type, result_type;
  uint32_t scope;
} vkf_coopmat_shape;

/* Bits of VkSubgroupFeatureFlagBits that choosers care about, mirrored so graph-free code can test
 * them without Vulkan headers. */
typedef enum vkf_subgroup_op {
  VKF_SUBGROUP_BASIC = 1u << 0,
  VKF_SUBGROUP_VOTE = 1u << 1,
  VKF_SUBGROUP_ARITHMETIC = 1u << 2,
  VKF_SUBGROUP_BALLOT = 1u << 3,
  VKF_SUBGROUP_SHUFFLE = 1u << 4,
  VKF_SUBGROUP_SHUFFLE_RELATIVE = 1u << 5,
  VKF_SUBGROUP_CLUSTERED = 1u << 6,
  VKF_SUBGROUP_QUAD = 1u << 7,
} vkf_subgroup_op;

typedef enum vkf_device_kind {
  VKF_DEVICE_KIND_OTHER = 0,
  VKF_DEVICE_KIND_INTEGRATED_GPU,
  VKF_DEVICE_KIND_DISCRETE_GPU,
  VKF_DEVICE_KIND_VIRTUAL_GPU,
  VKF_DEVICE_KIND_CPU,
} vkf_device_kind;

typedef struct vkf_device_caps {
  char name[256];
  char vendor[32];      /* "NVIDIA", "AMD", "Intel", "ARM", "Qualcomm", "Apple", "Mesa", ... */
  uint32_t vendor_id, device_id;
  vkf_device_kind kind;
  char driver_name[256], driver_info[256];
  uint32_t api_version;  /* VK_MAKE_API_VERSION encoding */
  uint32_t driver_version;

  uint32_t max_shared_memory_size;      /* bytes per workgroup */
  /* The subgroup size the choosers plan with: the device's default, a profile's where the device
   * can require it, or the width a device really runs where it misreports (host/subgroup_probe.c). */
  uint32_t subgroup_size;
  uint32_t min_subgroup_size, max_subgroup_size; /* VK_EXT_subgroup_size_control (0: unknown) */
  /* Compute pipelines can be created with requiredSubgroupSize (subgroupSizeControl, compute in
   * requiredSubgroupSizeStages): host/ then requires subgroup_size of every kernel that uses
   * subgroup operations, with full subgroups where computeFullSubgroups allows. */
  int subgroup_size_control;
  int full_subgroups;                   /* computeFullSubgroups */
  uint32_t max_workgroup_subgroups;     /* maxComputeWorkgroupSubgroups (0: unknown) */
  /* Where the device's shaders really run subgroups of another width than it reports (the probe
   * at device creation): the width it reported, else 0. Its size cannot be trusted nor required,
   * so vkf_caps_subgroup_fixed is 0 and choosers take bodies that work at any size. */
  uint32_t subgroup_misreported;
  uint32_t subgroup_ops;                /* vkf_subgroup_op bits usable in compute shaders */
  uint32_t max_workgroup_size[3];
  uint32_t max_workgroup_invocations;
  /* Loop iterations one invocation may run in all (0: no limit). lavapipe (llvmpipe's gallivm, at
   * least through Mesa 24) counts every loop's iterations of an invocation (of each SIMD group)
   * in one counter from 65535 and, once it reaches 0, leaves every loop after its current
   * iteration: a kernel past the limit silently skips the rest of its work. Lowerings split such
   * work across dispatches. */
  uint32_t loop_iteration_limit;
  uint32_t max_workgroup_count[3];
  uint32_t max_push_constants_size;     /* bytes */
  uint32_t min_storage_buffer_offset_alignment; /* bytes */
  uint64_t max_storage_buffer_range;    /* bytes one storage-buffer binding may span */
  uint64_t max_memory_allocation_size;  /* bytes one VkDeviceMemory may hold */
  /* Uniform texel buffers (samplerBuffer): on CPU devices a texelFetch is a vector gather, while a
   * storage-buffer load at lane-varying addresses is a scalar loop over the lanes (20x slower on
   * lavapipe), so CPU kernels read their big operands through texel views when these allow. */
  int texel_rgba32f;                    /* R32G32B32A32_SFLOAT supports uniform texel buffers */
  int texel_rgba16f;                    /* R16G16B16A16_SFLOAT likewise */
  int texel_rgba16ui;                   /* R16G16B16A16_UINT likewise (bf16 weights) */
  int texel_r32ui;                      /* R32_UINT likewise (quantised weights' words) */
  int texel_rg32ui;                     /* R32G32_UINT likewise (those words two a fetch) */
  uint32_t max_texel_buffer_elements;   /* texels one view may span */
  uint32_t min_texel_buffer_offset_alignment; /* bytes */

  int fp16_arithmetic;   /* shaderFloat16 */
  int storage_16bit;     /* storageBuffer16BitAccess */
  int storage_8bit;      /* storageBuffer8BitAccess */
  int int8_arithmetic;   /* shaderInt8 */
  int cooperative_matrix;/* VK_KHR_cooperative_matrix or VK_NV_cooperative_matrix */
  uint32_t coopmat_count;              /* shapes VK_KHR_cooperative_matrix reports */
  vkf_coopmat_shape coopmat[VKF_CAPS_MAX_COOPMAT];
  /* The tile of the f16 cooperative-matrix GEMM kernels on this device: 16 or 8 where it reports
   * the square subgroup shape f16 x f16 -> f32 of that size, has the cooperativeMatrix,
   * vulkanMemoryModel, shaderFloat16 and 16-bit storage features, this build has the kernels
   * (shaders/variants_coopmat.txt) and VKF_COOPMAT is not 0; else 0 and choosers never pick them.
   * Profiles keep it only for the desktop classes. */
  uint32_t coopmat_gemm_tile;
  /* Every tile the kernels may use here (bit values 8 and 16; tests steer to each): the square
   * shapes of the KHR list, and under VK_NV_cooperative_matrix2's flexible dimensions every tile
   * its granularity divides. coopmat_gemm_tile is the largest listed one. */
  uint32_t coopmat_tiles;
  int coopmat_flexible; /* VK_NV_cooperative_matrix2 flexible dimensions are enabled */
  /* Why the kernels are on or off where the device lists cooperative matrices (the vendor
   * allowlist, VKF_COOPMAT, a missing feature): `vkf devices` prints it. */
  char coopmat_reason[160];
  uint32_t driver_id;    /* VkDriverId (0: unknown) */

  uint32_t heap_count;
  uint64_t heap_size[VKF_CAPS_MAX_HEAPS];
  int heap_device_local[VKF_CAPS_MAX_HEAPS];
  int uma;               /* device-local memory is host-visible and shared with the CPU */
  int timestamps;        /* the compute queue supports timestamp queries */
  float timestamp_period;/* nanoseconds per timestamp tick */

  char profile[32];      /* VKF_DEVICE_PROFILE applied to these caps, "" when none */
} vkf_device_caps;

/* The subgroup size every kernel that uses subgroup operations is guaranteed to run at, so a
 * chooser may plan a body on it (lanes per row, one-subgroup workgroups, 8-wide CPU bodies,
 * subgroups per tile): caps->subgroup_size where the device can require it of a pipeline or has
 * only that size, else 0 (Intel without size control picks a width per pipeline; a misreporting
 * device). With 0 choosers pick bodies that read gl_NumSubgroups/gl_SubgroupID at run time. */
static inline uint32_t vkf_caps_subgroup_fixed(const vkf_device_caps *caps) {
  if (caps->subgroup_misreported || !caps->subgroup_size) return 0;
  if (caps->subgroup_size_control && caps->subgroup_size >= caps->min_subgroup_size &&
      caps->subgroup_size <= caps->max_subgroup_size)
    return caps->subgroup_size;
  return caps->min_subgroup_size == caps->subgroup_size &&
                 caps->max_subgroup_size == caps->subgroup_size
             ? caps->subgroup_size
             : 0;
}

/* Whether kernels may add across a subgroup (subgroupAdd, subgroupMax: basic and arithmetic
 * operations), which the row reductions of several bodies use instead of shared memory. */
static inline int vkf_caps_subgroup_add(const vkf_device_caps *caps) {
  const uint32_t need = VKF_SUBGROUP_BASIC | VKF_SUBGROUP_ARITHMETIC;
  return (caps->subgroup_ops & need) == need;
}

/* Clamps `caps` to the device class `profile` ("mobile", "mali", "adreno", "nvidia-like" ...).
 * Only ever lowers limits, never raises them above what the real device has; a profile's subgroup
 * size is taken only where the device can require it (else the device's is kept). Unknown names give
 * an INVALID_ARGUMENT status listing the known ones. NULL or "" is a no-op. */
vkf_status vkf_caps_apply_profile(vkf_device_caps *caps, const char *profile);
/* Comma-separated list of known profile names (for help texts). */
const char *vkf_caps_profile_names(void);
const char *vkf_device_kind_name(vkf_device_kind kind);

#endif
