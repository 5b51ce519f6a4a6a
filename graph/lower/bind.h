/* What every per-op lowering binds through (bind.c): where a tensor lives in the plan (a strided
 * view into a plan buffer), the lowering context, and the helpers that turn a tensor into a
 * dispatch binding. The bottom of graph/lower/ below the plan: the walker (lower.c), the slicer
 * (lower_slice.c) and every lower_<op>.c include it; it includes none of them. */
#ifndef VKF_GRAPH_LOWER_BIND_H
#define VKF_GRAPH_LOWER_BIND_H

#include <stdint.h>

#include "graph/base/caps.h"
#include "graph/ir/graph.h"
#include "graph/lower/plan.h"

#define VKF_PLAN_NO_BUFFER UINT32_MAX

/* Where one tensor lives in the plan: a strided view into a plan buffer. */
typedef struct vkf_plan_tensor {
  uint32_t buffer; /* plan buffer index; VKF_PLAN_NO_BUFFER for an absent optional input */
  uint64_t offset; /* bytes from the buffer start to element [0,...,0] */
  vkf_dtype dtype;
  uint32_t rank;
  int64_t shape[VKF_MAX_DIMS];
  int64_t strides[VKF_MAX_DIMS]; /* elements */
} vkf_plan_tensor;

typedef struct vkf_lower_ctx {
  vkf_plan *plan;
  const vkf_device_caps *caps;
  uint32_t alignment; /* bytes a binding offset must be a multiple of (>= 16, power of two) */
} vkf_lower_ctx;

static inline int vkf_plan_tensor_present(const vkf_plan_tensor *t) {
  return t->buffer != VKF_PLAN_NO_BUFFER;
}
/* True when the tensor is dense row-major. */
int vkf_plan_tensor_is_contiguous(const vkf_plan_tensor *t);
int64_t vkf_plan_tensor_count(const vkf_plan_tensor *t);

/* Binds tensor `t` as the next binding of `d`: the range starts at t->offset rounded down to
 * ctx->alignment and ends after the tensor's last element (rounded up to 4 bytes within the
 * buffer). Returns the index of element [0,...,0] counted in elements from the bound start; the
 * kernel adds it to every index (pass it as a push constant). */
uint32_t vkf_lower_bind(const vkf_lower_ctx *ctx, vkf_plan_dispatch *d, const vkf_plan_tensor *t,
                        vkf_plan_access access);
/* The byte range [*out_begin, *out_end) vkf_lower_bind binds for `t`. */
void vkf_lower_binding_range(const vkf_lower_ctx *ctx, const vkf_plan_tensor *t,
                             uint64_t *out_begin, uint64_t *out_end);
/* The texel format a read-only binding of `dtype` (f32 or f16) elements can be viewed through as
 * a uniform texel buffer of vec4s, or VKF_TEXEL_NONE when the device lacks that format, the
 * binding's offset misses minTexelBufferOffsetAlignment, or its range exceeds
 * maxTexelBufferElements. The kernel must address whole vec4s (offsets and strides % 4 == 0). */
vkf_plan_texel vkf_lower_texel_format(const vkf_lower_ctx *ctx, vkf_dtype dtype,
                                      const vkf_plan_binding *b);
/* t itself where the device can view binding b through it (as above), else VKF_TEXEL_NONE. */
vkf_plan_texel vkf_lower_texel_fits(const vkf_lower_ctx *ctx, vkf_plan_texel t,
                                    const vkf_plan_binding *b);
/* Ceil division for workgroup counts. */
static inline uint32_t vkf_div_up(uint64_t a, uint64_t b) { return (uint32_t)((a + b - 1) / b); }

#endif
