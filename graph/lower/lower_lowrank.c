/* Owns lowering of the ops low-rank attention adds: REDUCE (sum or max along one axis, keepdim)
 * onto shaders/reduce.comp and DEPTHWISE_CONV (a filter along the sequence per head) onto
 * shaders/depthwise_conv.comp. Both run one invocation per output element: their tensors are
 * small in Nystromformer (landmark matrices, one conv per layer), so no tiling. */
#include "graph/lower/lower_node.h"
#include "graph/lower/lower_layout.h"

static vkf_status check_io(const vkf_lower_ctx *ctx, const vkf_lower_node *node, const char *what,
                           const vkf_plan_tensor *x, uint32_t rank_max) {
  char sa[64];
  const vkf_plan_tensor *y = &node->output;
  int argmax = node->op == VKF_OP_REDUCE && node->attrs->reduce.kind == VKF_REDUCE_ARGMAX;
  if (x->rank > rank_max || x->dtype != (argmax ? x->dtype : y->dtype) ||
      (argmax && y->dtype != VKF_I32) || (x->dtype != VKF_F32 && x->dtype != VKF_F16))
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s \"%s\": input %s %s", what, node->name,
                           vkf_dtype_name(x->dtype),
                           vkf_shape_format(x->rank, x->shape, sa, sizeof sa));
  if (x->dtype == VKF_F16 && !ctx->caps->storage_16bit)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s \"%s\": f16 input %s needs 16-bit storage, which the device lacks",
                           what, node->name, vkf_shape_format(x->rank, x->shape, sa, sizeof sa));
  if ((uint64_t)vkf_plan_tensor_count(x) > UINT32_MAX)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s \"%s\": input %s needs indices beyond 32 bits", what, node->name,
                           vkf_shape_format(x->rank, x->shape, sa, sizeof sa));
  return VKF_OK;
}

/* per_group: one workgroup per output (ARGMAX) instead of one invocation. */
static vkf_status finish_1d(const vkf_lower_ctx *ctx, vkf_plan_dispatch *d, int64_t outputs,
                            int per_group) {
  uint32_t wg = vkf_lower_workgroup_1d(ctx, 256);
  d->spec[0] = wg;
  d->spec_count = 1;
  d->groups[0] = vkf_lower_groups_1d(ctx, (uint64_t)outputs, per_group ? 1 : wg);
  d->groups[1] = d->groups[2] = 1;
  return vkf_plan_add_dispatch(ctx->plan, d);
}

/* The input padded on the left to rank 4 (size-1 dims, stride 0), the axis moved with it. */
vkf_status vkf_lower_reduce(const vkf_lower_ctx *ctx, const vkf_lower_node *node) {
  const vkf_plan_tensor *x = &node->inputs[0];
  const vkf_plan_tensor *y = &node->output;
  VKF_RETURN_IF_ERROR(check_io(ctx, node, "reduce", x, 4));
  int64_t outputs = vkf_plan_tensor_count(y);
  if (outputs == 0) return VKF_OK;
  uint32_t pad = 4 - x->rank, axis = node->attrs->reduce.axis + pad;
  vkf_plan_dispatch d = {.node = node->name, .shader = "reduce.comp"};
  if (node->attrs->reduce.kind == VKF_REDUCE_MAX) vkf_plan_dispatch_define(&d, "MAX");
  int argmax = node->attrs->reduce.kind == VKF_REDUCE_ARGMAX;
  if (argmax) vkf_plan_dispatch_define(&d, "ARGMAX");
  if (x->dtype == VKF_F16) vkf_plan_dispatch_define(&d, "IO_F16");
  uint32_t x_off = vkf_lower_bind(ctx, &d, x, VKF_ACCESS_READ);
  uint32_t y_off = vkf_lower_bind(ctx, &d, y, VKF_ACCESS_WRITE);
  for (uint32_t i = 0; i < 4; i++)
    vkf_plan_dispatch_push_u32(&d, i < pad ? 1u : (uint32_t)x->shape[i - pad]);
  for (uint32_t i = 0; i < 4; i++)
    vkf_plan_dispatch_push_u32(&d, i < pad ? 0u : (uint32_t)x->strides[i - pad]);
  for (uint32_t i = 0; i < 4; i++)
    vkf_plan_dispatch_push_u32(&d, i < pad ? 0u : (uint32_t)y->strides[i - pad]);
  vkf_plan_dispatch_push_u32(&d, axis);
  vkf_plan_dispatch_push_u32(&d, x_off);
  vkf_plan_dispatch_push_u32(&d, y_off);
  return finish_1d(ctx, &d, outputs, argmax);
}

vkf_status vkf_lower_depthwise_conv(const vkf_lower_ctx *ctx, const vkf_lower_node *node) {
  const vkf_plan_tensor *x = &node->inputs[VKF_IN_CONV_X];      /* [B, H, N, D] */
  const vkf_plan_tensor *w = &node->inputs[VKF_IN_CONV_WEIGHT]; /* [H, K] */
  const vkf_plan_tensor *y = &node->output;                     /* [B, H, N, D] */
  VKF_RETURN_IF_ERROR(check_io(ctx, node, "depthwise_conv", x, 4));
  int64_t outputs = vkf_plan_tensor_count(y);
  if (outputs == 0) return VKF_OK;
  vkf_plan_dispatch d = {.node = node->name, .shader = "depthwise_conv.comp"};
  if (x->dtype == VKF_F16) vkf_plan_dispatch_define(&d, "IO_F16");
  uint32_t x_off = vkf_lower_bind(ctx, &d, x, VKF_ACCESS_READ);
  uint32_t w_off = vkf_lower_bind(ctx, &d, w, VKF_ACCESS_READ);
  uint32_t y_off = vkf_lower_bind(ctx, &d, y, VKF_ACCESS_WRITE);
  for (uint32_t i = 0; i < 4; i++) vkf_plan_dispatch_push_u32(&d, (uint32_t)x->shape[i]);
  vkf_plan_dispatch_push_u32(&d, (uint32_t)w->shape[1]);
  vkf_plan_dispatch_push_u32(&d, x_off);
  for (uint32_t i = 0; i < 4; i++) vkf_plan_dispatch_push_u32(&d, (uint32_t)x->strides[i]);
  vkf_plan_dispatch_push_u32(&d, w_off);
  vkf_plan_dispatch_push_u32(&d, (uint32_t)w->strides[0]);
  vkf_plan_dispatch_push_u32(&d, (uint32_t)w->strides[1]);
  vkf_plan_dispatch_push_u32(&d, y_off);
  for (uint32_t i = 0; i < 4; i++) vkf_plan_dispatch_push_u32(&d, (uint32_t)y->strides[i]);
  /* one invocation per 32 outputs along N (RUN in the shader) */
  int64_t runs = (x->shape[2] + 31) / 32;
  return finish_1d(ctx, &d, x->shape[0] * x->shape[1] * runs * x->shape[3], 0);
}
