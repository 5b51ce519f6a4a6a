#ifndef VKF_TOOLS_BENCH_GEMM_INTENSITY_H
#define VKF_TOOLS_BENCH_GEMM_INTENSITY_H
/* The design's arithmetic intensity of a tiled GEMM body (vkf bench gemm): useful FLOPs
 * (2·M·N·K) per byte of shared-memory traffic and per byte of global loads and stores the kernel
 * issues (before any cache), counted from the variant's tiles. */
#include "graph/lower/lower_matmul.h"

typedef struct vkf_gemm_intensity {
  double flop_per_shared_byte; /* 0: not a shared-memory tile body */
  double flop_per_global_byte; /* 0: not counted for this body */
} vkf_gemm_intensity;

/* `es`: bytes of an A and C element (2 for f16, 4 for f32); `b_es`: bytes of a B element (es, or
 * a quantised format's block bytes over its block's elements). */
vkf_gemm_intensity vkf_bench_gemm_intensity(const vkf_gemm_variant *v, uint64_t m, uint64_t n,
                                            uint64_t k, uint32_t es, double b_es);

#endif
