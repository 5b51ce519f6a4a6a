/* Owns the strided-layout helpers of graph/lower/lower_layout.h: broadcast strides, dimension
 * coalescing, shared bindings and 1-D launch sizes. */
#include "graph/lower/lower_layout.h"

void vkf_layout_broadcast_strides(const vkf_plan_tensor *t, uint32_t rank, const int64_t *shape,
                                  int64_t *out_strides) {
  for (uint32_t d = 0; d < rank; d++) {
    int64_t k = (int64_t)d - (int64_t)(rank - t->rank);
    out_strides[d] = (k < 0 || (t->shape[k] == 1 && shape[d] != 1)) ? 0 : t->strides[k];
  }
}

void vkf_layout_coalesce(vkf_layout *l) {
  /* Size-1 dims carry no index; dropping them first lets their neighbours merge. */
  uint32_t r = 0;
  for (uint32_t d = 0; d < l->rank; d++) {
    if (l->shape[d] == 1) continue;
    l->shape[r] = l->shape[d];
    for (uint32_t k = 0; k < l->operand_count; k++) l->strides[k][r] = l->strides[k][d];
    r++;
  }
  if (r == 0) { /* a single element */
    l->shape[0] = 1;
    for (uint32_t k = 0; k < l->operand_count; k++) l->strides[k][0] = 0;
    r = 1;
  }
  uint32_t out = 0; /* dims [0, out] hold the merged prefix */
  for (uint32_t d = 1; d < r; d++) {
    int merge = 1;
    for (uint32_t k = 0; k < l->operand_count && merge; k++)
      merge = l->strides[k][out] == l->strides[k][d] * l->shape[d];
    if (merge) {
      l->shape[out] *= l->shape[d];
      for (uint32_t k = 0; k < l->operand_count; k++) l->strides[k][out] = l->strides[k][d];
    } else {
      out++;
      l->shape[out] = l->shape[d];
      for (uint32_t k = 0; k < l->operand_count; k++) l->strides[k][out] = l->strides[k][d];
    }
  }
  l->rank = out + 1;
}

int vkf_layout_operand_dense(const vkf_layout *l, uint32_t k) {
  int64_t expect = 1;
  for (uint32_t d = l->rank; d-- > 0;) {
    if (l->shape[d] != 1 && l->strides[k][d] != expect) return 0;
    expect *= l->shape[d];
  }
  return 1;
}

int64_t vkf_layout_operand_last(const vkf_layout *l, uint32_t k) {
  int64_t last = 0;
  for (uint32_t d = 0; d < l->rank; d++) {
    if (l->shape[d] == 0) return 0;
    last += (l->shape[d] - 1) * l->strides[k][d];
  }
  return last;
}

static uint64_t tensor_end(const vkf_plan_tensor *t) {
  int64_t last = 0;
  for (uint32_t i = 0; i < t->rank; i++)
    if (t->shape[i] > 0) last += (t->shape[i] - 1) * t->strides[i];
  return t->offset + (uint64_t)(last + 1) * vkf_dtype_size(t->dtype);
}

uint64_t vkf_lower_bind_shared(const vkf_lower_ctx *ctx, vkf_plan_dispatch *d,
                               const vkf_plan_tensor *const *ts, uint32_t count,
                               vkf_plan_access access, uint32_t *out_elem_offsets) {
  VKF_ASSERT(count > 0);
  uint64_t begin = UINT64_MAX, end = 0, elem = vkf_dtype_size(ts[0]->dtype);
  for (uint32_t i = 0; i < count; i++) {
    VKF_ASSERT(ts[i]->buffer == ts[0]->buffer && ts[i]->dtype == ts[0]->dtype);
    uint64_t b = ts[i]->offset - ts[i]->offset % ctx->alignment, e = tensor_end(ts[i]);
    if (b < begin) begin = b;
    if (e > end) end = e;
  }
  uint64_t buffer_size = vkf_plan_buffer_get(ctx->plan, ts[0]->buffer)->size;
  end = (end + 3) & ~(uint64_t)3;
  if (end > buffer_size) end = buffer_size;
  vkf_plan_dispatch_bind(d, ts[0]->buffer, begin, end - begin, access);
  for (uint32_t i = 0; i < count; i++)
    out_elem_offsets[i] = (uint32_t)((ts[i]->offset - begin) / elem);
  return end - begin;
}

uint32_t vkf_lower_workgroup_1d(const vkf_lower_ctx *ctx, uint32_t want) {
  uint32_t wg = want;
  if (ctx->caps->max_workgroup_invocations && wg > ctx->caps->max_workgroup_invocations)
    wg = ctx->caps->max_workgroup_invocations;
  if (ctx->caps->max_workgroup_size[0] && wg > ctx->caps->max_workgroup_size[0])
    wg = ctx->caps->max_workgroup_size[0];
  return wg ? wg : 1;
}

uint32_t vkf_lower_group_budget(const vkf_lower_ctx *ctx) {
  /* CPU devices (lavapipe) run each workgroup as a call with its own set-up, so a few long
   * workgroups beat many short ones: with 64, a cast of [1576, 768] f32 -> f16 went from 35 ms
   * to 6 ms on a 2-core lavapipe. Enough for 64 threads. GPUs want every workgroup they can get:
   * 65535 is the Vulkan minimum for maxComputeWorkGroupCount[0]. */
  if (ctx->caps->kind == VKF_DEVICE_KIND_CPU) return 64;
  uint64_t cap = ctx->caps->max_workgroup_count[0] ? ctx->caps->max_workgroup_count[0] : 65535;
  return cap > 65535 ? 65535 : (uint32_t)cap;
}

uint32_t vkf_lower_groups_1d(const vkf_lower_ctx *ctx, uint64_t count, uint32_t workgroup_size) {
  uint64_t groups = (count + workgroup_size - 1) / workgroup_size;
  /* Kernels loop with a grid stride, so capping the count only gives each invocation more work. */
  uint64_t cap = vkf_lower_group_budget(ctx);
  if (groups > cap) groups = cap;
  return groups ? (uint32_t)groups : 1;
}

vkf_fastdiv vkf_fastdiv_make(uint32_t divisor) {
  VKF_ASSERT(divisor >= 1 && divisor < 0x80000000u);
  vkf_fastdiv f = {.divisor = divisor};
  if (divisor == 1) return f;
  uint32_t l = 0;
  while ((1ull << l) < divisor) l++;
  f.magic = (uint32_t)(((1ull << (31 + l)) + divisor - 1) / divisor);
  f.shift = l - 1;
  return f;
}

void vkf_plan_dispatch_push_fastdiv(vkf_plan_dispatch *d, uint32_t divisor) {
  vkf_fastdiv f = vkf_fastdiv_make(divisor);
  vkf_plan_dispatch_push_u32(d, f.divisor);
  vkf_plan_dispatch_push_u32(d, f.magic);
  vkf_plan_dispatch_push_u32(d, f.shift);
}
