/* Lowering: a planned graph -> a plan (plan.h). The walker (lower.c) maps every tensor to a byte
 * range of a plan buffer (one arena for intermediates, one buffer per input, weight and output) and
 * calls one lowering function per op; each op's function (lower_<op>.c) runs the op's variant
 * chooser on the device caps and appends its dispatches, binding through bind.c. No Vulkan here. */
#ifndef VKF_GRAPH_LOWER_H
#define VKF_GRAPH_LOWER_H

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

/* One node as its lowering function sees it: attributes plus where inputs and output live. */
typedef struct vkf_lower_node {
  const char *name;
  vkf_op op;
  const vkf_node_attrs *attrs;
  uint32_t input_count;
  vkf_plan_tensor inputs[VKF_MAX_NODE_INPUTS]; /* slots per VKF_IN_*; absent: VKF_PLAN_NO_BUFFER */
  vkf_plan_tensor output;
} vkf_lower_node;

/* Appends the node's dispatches to ctx->plan. Unsupported shapes/dtypes give a status that names
 * the node, the op and the shape. */
typedef vkf_status (*vkf_lower_fn)(const vkf_lower_ctx *ctx, const vkf_lower_node *node);

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
                                      const vkf_plan_binding *binding);
/* Ceil division for workgroup counts. */
static inline uint32_t vkf_div_up(uint64_t a, uint64_t b) { return (uint32_t)((a + b - 1) / b); }

typedef struct vkf_lower_options {
  uint32_t alignment; /* 0: caps->min_storage_buffer_offset_alignment, at least 16 */
} vkf_lower_options;

/* Result of lowering a graph: the plan and, per tensor id, where it lives (inputs, constants and
 * outputs each have their own buffer; the caller uploads / downloads through those indices). */
typedef struct vkf_lowered {
  vkf_plan *plan;
  uint32_t tensor_bound;
  vkf_plan_tensor *tensors; /* indexed by tensor id; heap */
} vkf_lowered;

/* The graph must carry a valid memory plan (vkf_memory_plan_build). A plan that would exceed a
 * device limit even after slicing (vkf_plan_check_limits) is an OUT_OF_MEMORY status naming the
 * node or buffer and the limit. */
vkf_status vkf_lower_graph(const vkf_graph *graph, const vkf_device_caps *caps,
                           const vkf_lower_options *options, vkf_lowered *out_lowered);
void vkf_lowered_free(vkf_lowered *lowered);

/* OK when every binding, dispatch and buffer of `plan` is within the caps' limits
 * (maxStorageBufferRange, maxTexelBufferElements, maxComputeWorkGroupCount,
 * maxMemoryAllocationSize, the largest heap); otherwise OUT_OF_MEMORY naming the first node or
 * buffer past a limit, its size and the limit. Limits the caps leave at 0 are not checked. */
vkf_status vkf_plan_check_limits(const vkf_plan *plan, const vkf_device_caps *caps);

/* Calls `fn` for `node`, or, when a binding of the node would exceed the device's
 * maxStorageBufferRange, once per slice of its leading (batch) dims so that every binding fits
 * (graph/lower/lower_slice.c says which ops can be sliced; others go to `fn` unchanged). */
vkf_status vkf_lower_sliced(const vkf_lower_ctx *ctx, vkf_lower_fn fn, const vkf_lower_node *node);

/* ---- per-op lowering functions (graph/lower/lower_<family>.c) ---- */
vkf_status vkf_lower_matmul(const vkf_lower_ctx *ctx, const vkf_lower_node *node);
vkf_status vkf_lower_elementwise(const vkf_lower_ctx *ctx, const vkf_lower_node *node); /* single ops and FUSED_ELEMENTWISE: generated GLSL */
vkf_status vkf_lower_norm(const vkf_lower_ctx *ctx, const vkf_lower_node *node);        /* LAYERNORM, RMSNORM, L2_NORMALIZE */
vkf_status vkf_lower_softmax(const vkf_lower_ctx *ctx, const vkf_lower_node *node);
vkf_status vkf_lower_attention(const vkf_lower_ctx *ctx, const vkf_lower_node *node);
vkf_status vkf_lower_copy(const vkf_lower_ctx *ctx, const vkf_lower_node *node);        /* COPY, CAST, CONCAT */
vkf_status vkf_lower_gather(const vkf_lower_ctx *ctx, const vkf_lower_node *node);
vkf_status vkf_lower_patch_embed(const vkf_lower_ctx *ctx, const vkf_lower_node *node);
vkf_status vkf_lower_mean_pool(const vkf_lower_ctx *ctx, const vkf_lower_node *node);
vkf_status vkf_lower_sparse_attention(const vkf_lower_ctx *ctx, const vkf_lower_node *node); /* slices its heads */
vkf_status vkf_lower_kv_write(const vkf_lower_ctx *ctx, const vkf_lower_node *node);    /* slices itself */
vkf_status vkf_lower_linear(const vkf_lower_ctx *ctx, const vkf_lower_node *node);      /* LINEAR_FEATURES, LINEAR_ATTENTION, LINEAR_STATE_WRITE */
vkf_status vkf_lower_reduce(const vkf_lower_ctx *ctx, const vkf_lower_node *node);
vkf_status vkf_lower_depthwise_conv(const vkf_lower_ctx *ctx, const vkf_lower_node *node);

#endif
