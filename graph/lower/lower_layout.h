/* Strided-layout helpers shared by the elementwise and data-movement lowerings: reading an
 * operand broadcast to an output shape, merging dimensions every operand walks contiguously, and
 * binding several tensors of one buffer through a single binding. No Vulkan here. */
#ifndef VKF_GRAPH_LOWER_LAYOUT_H
#define VKF_GRAPH_LOWER_LAYOUT_H

#include <stdint.h>

#include "graph/lower/lower_node.h"

enum { VKF_LAYOUT_MAX_OPERANDS = VKF_MAX_NODE_INPUTS + 1 };

/* One iteration space (the output's shape) and, per operand, the element strides that walk it.
 * Operand strides are 0 on broadcast dims. */
typedef struct vkf_layout {
  uint32_t rank; /* >= 1 once coalesced */
  int64_t shape[VKF_MAX_DIMS];
  uint32_t operand_count;
  int64_t strides[VKF_LAYOUT_MAX_OPERANDS][VKF_MAX_DIMS];
} vkf_layout;

/* Strides that read `t` broadcast to `shape` (rank `rank`, numpy rules: right-aligned, size-1
 * dims of t and missing leading dims give stride 0). t->strides are honoured, so views work. */
void vkf_layout_broadcast_strides(const vkf_plan_tensor *t, uint32_t rank, const int64_t *shape,
                                  int64_t *out_strides);

/* Drops size-1 dims and merges dims d, d+1 wherever every operand has
 * strides[d] == strides[d+1] * shape[d+1], so a contiguous walk becomes rank 1. Keeps rank >= 1
 * (a single element is shape [1]). Element count is unchanged. */
void vkf_layout_coalesce(vkf_layout *layout);

/* True when operand `k` walks the layout densely in row-major order (index == flat index). */
int vkf_layout_operand_dense(const vkf_layout *layout, uint32_t k);

/* Largest element index operand `k` reaches (0 for an empty layout). */
int64_t vkf_layout_operand_last(const vkf_layout *layout, uint32_t k);

/* Binds `count` tensors that live in the same plan buffer with the same dtype as ONE binding
 * covering all of them (the first one's offset rounded down to ctx->alignment .. the end of the
 * last byte any of them reaches), so kernels with many operands stay within
 * VKF_PLAN_MAX_BINDINGS. out_elem_offsets[i] = index of tensor i's element [0,...,0] counted in
 * elements from the bound start. Returns the bound size in bytes. */
uint64_t vkf_lower_bind_shared(const vkf_lower_ctx *ctx, vkf_plan_dispatch *d,
                               const vkf_plan_tensor *const *tensors, uint32_t count,
                               vkf_plan_access access, uint32_t *out_elem_offsets);

/* Appends a shaders/copy.comp dispatch for node `node`: dst = src converted to dst's dtype, both
 * strided views of the same shape (graph/lower/lower_copy.c). Other lowerings use it to stage
 * operands. */
vkf_status vkf_lower_copy_view(const vkf_lower_ctx *ctx, const vkf_lower_node *node,
                               const vkf_plan_tensor *src, const vkf_plan_tensor *dst);

/* Division by an invariant d (1 <= d < 2^31) as a multiply-high and a shift, exact for every
 * n < 2^31: n / d == (d == 1 ? n : mulhi(n, magic) >> shift). magic = ceil(2^(31+l) / d) with
 * l = ceil(log2 d), shift = l - 1 (Granlund-Montgomery); d == 1 gives magic 0. Kernels evaluate
 * it with vkf_fastdiv() from shaders/common.glsl. */
typedef struct vkf_fastdiv {
  uint32_t divisor, magic, shift;
} vkf_fastdiv;
vkf_fastdiv vkf_fastdiv_make(uint32_t divisor);
/* Pushes divisor, magic, shift (three words, in that order). */
void vkf_plan_dispatch_push_fastdiv(vkf_plan_dispatch *d, uint32_t divisor);

/* Workgroup size for 1-D kernels: `want` clamped to the device's invocation and x-size limits. */
uint32_t vkf_lower_workgroup_1d(const vkf_lower_ctx *ctx, uint32_t want);
/* How many workgroups a grid-stride kernel should launch at most: 64 on CPU devices (few long
 * workgroups amortise their per-workgroup set-up), else the device's x limit up to 65535. */
uint32_t vkf_lower_group_budget(const vkf_lower_ctx *ctx);
/* Workgroup count for a grid-stride 1-D kernel over `count` items (>= 1, within the budget). */
uint32_t vkf_lower_groups_1d(const vkf_lower_ctx *ctx, uint64_t count, uint32_t workgroup_size);

#endif
