/* What every per-op lowering calls to place its dispatch's bindings: the byte range a tensor view
 * covers, the binding itself, and whether it can be read through a texel view. Kept apart from the
 * walker (lower.c) so calls run one way: walker -> per-op lowering -> these helpers. */
#include "graph/lower/bind.h"

int64_t vkf_plan_tensor_count(const vkf_plan_tensor *t) {
  int64_t n = 1;
  for (uint32_t i = 0; i < t->rank; i++) n *= t->shape[i];
  return n;
}

int vkf_plan_tensor_is_contiguous(const vkf_plan_tensor *t) {
  int64_t expect = 1;
  for (uint32_t i = t->rank; i-- > 0;) {
    if (t->shape[i] != 1 && t->strides[i] != expect) return 0;
    expect *= t->shape[i];
  }
  return 1;
}

void vkf_lower_binding_range(const vkf_lower_ctx *ctx, const vkf_plan_tensor *t,
                             uint64_t *out_begin, uint64_t *out_end) {
  /* Last element reached by the view (strides are non-negative in our IR). */
  int64_t last = 0;
  for (uint32_t i = 0; i < t->rank; i++)
    if (t->shape[i] > 0) last += (t->shape[i] - 1) * t->strides[i];
  /* quantised tensors are whole blocks, never views: the elements' blocks */
  uint64_t end = t->offset + (uint64_t)(last + 1) / vkf_dtype_block(t->dtype) * vkf_dtype_size(t->dtype);
  uint64_t buffer_size = vkf_plan_buffer_get(ctx->plan, t->buffer)->size;
  end = (end + 3) & ~(uint64_t)3;
  *out_begin = t->offset - t->offset % ctx->alignment;
  *out_end = end > buffer_size ? buffer_size : end;
}

uint32_t vkf_lower_bind(const vkf_lower_ctx *ctx, vkf_plan_dispatch *d, const vkf_plan_tensor *t,
                        vkf_plan_access access) {
  VKF_ASSERT(vkf_plan_tensor_present(t));
  uint64_t begin, end;
  vkf_lower_binding_range(ctx, t, &begin, &end);
  vkf_plan_dispatch_bind(d, t->buffer, begin, end - begin, access);
  return (uint32_t)((t->offset - begin) / vkf_dtype_size(t->dtype) * vkf_dtype_block(t->dtype));
}

vkf_plan_texel vkf_lower_texel_format(const vkf_lower_ctx *ctx, vkf_dtype dtype,
                                      const vkf_plan_binding *b) {
  vkf_plan_texel t = dtype == VKF_F32           ? VKF_TEXEL_RGBA32F
                     : dtype == VKF_F16         ? VKF_TEXEL_RGBA16F
                     : dtype == VKF_BF16        ? VKF_TEXEL_RGBA16UI
                     : vkf_dtype_is_quant(dtype) ? VKF_TEXEL_R32UI
                                                : VKF_TEXEL_NONE;
  return vkf_lower_texel_fits(ctx, t, b);
}

vkf_plan_texel vkf_lower_texel_fits(const vkf_lower_ctx *ctx, vkf_plan_texel t,
                                    const vkf_plan_binding *b) {
  const vkf_device_caps *caps = ctx->caps;
  int have = vkf_plan_texel_supported(caps, t);
  uint32_t size = vkf_plan_texel_size(t);
  uint64_t texels = size ? b->size / size : 0;
  if (t == VKF_TEXEL_NONE || !have || !caps->min_texel_buffer_offset_alignment ||
      b->offset % caps->min_texel_buffer_offset_alignment || texels == 0 ||
      texels > caps->max_texel_buffer_elements)
    return VKF_TEXEL_NONE;
  return t;
}
