#ifndef VKF_TOOLS_BENCH_ATTENTION_INTENSITY_H
#define VKF_TOOLS_BENCH_ATTENTION_INTENSITY_H
/* The design's arithmetic intensity of a fused attention body (vkf bench attention): useful
 * FLOPs (4·Nq·Nk·D·H·B for D = Dv) per byte of shared-memory traffic and per byte of global
 * loads and stores the kernel issues (before any cache), counted from the body's tile shapes. */
#include "graph/lower/lower_attention.h"

typedef struct vkf_attention_intensity {
  double flop_per_shared_byte; /* 0: the body uses no shared memory */
  double flop_per_global_byte;
} vkf_attention_intensity;

vkf_attention_intensity vkf_bench_attention_intensity(const vkf_attention_config *c,
                                                      const vkf_attention_shape *s);

#endif
