/* Owns lowering of MEAN_POOL (x [B, N, D], optional i32 mask [B, N] -> [B, D], masked mean over
 * tokens) onto shaders/mean_pool.comp. */
#include "graph/lower/lower_node.h"
#include "graph/lower/lower_layout.h"

/* Chooser: one invocation per output element (b, c), each walking the N tokens; 256 per
 * workgroup clamped to the device limit. Outputs are few (B*D), so no split over tokens. */
vkf_status vkf_lower_mean_pool(const vkf_lower_ctx *ctx, const vkf_lower_node *node) {
  char sa[64];
  const vkf_plan_tensor *x = &node->inputs[VKF_IN_POOL_X];       /* [B, N, D] */
  const vkf_plan_tensor *mask = &node->inputs[VKF_IN_POOL_MASK]; /* i32 [B, N], optional */
  const vkf_plan_tensor *y = &node->output;                      /* [B, D] */
  int has_mask = node->input_count > VKF_IN_POOL_MASK && vkf_plan_tensor_present(mask);
  if (x->rank != 3 || y->rank != 2 || x->dtype != y->dtype ||
      (x->dtype != VKF_F32 && x->dtype != VKF_F16) || (has_mask && mask->dtype != VKF_I32))
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "mean_pool \"%s\": input %s %s", node->name,
                           vkf_dtype_name(x->dtype),
                           vkf_shape_format(x->rank, x->shape, sa, sizeof sa));
  if (x->dtype == VKF_F16 && !ctx->caps->storage_16bit)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "mean_pool \"%s\": f16 input %s needs 16-bit storage, which the device "
                           "lacks",
                           node->name, vkf_shape_format(x->rank, x->shape, sa, sizeof sa));
  int64_t outputs = vkf_plan_tensor_count(y);
  if (outputs == 0) return VKF_OK;
  if ((uint64_t)vkf_plan_tensor_count(x) > UINT32_MAX)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "mean_pool \"%s\": input %s needs indices beyond 32 bits", node->name,
                           vkf_shape_format(x->rank, x->shape, sa, sizeof sa));

  vkf_plan_dispatch d = {.node = node->name, .shader = "mean_pool.comp"};
  if (has_mask) vkf_plan_dispatch_define(&d, "HAS_MASK");
  if (x->dtype == VKF_F16) vkf_plan_dispatch_define(&d, "IO_F16");
  uint32_t x_off = vkf_lower_bind(ctx, &d, x, VKF_ACCESS_READ);
  uint32_t mask_off = has_mask ? vkf_lower_bind(ctx, &d, mask, VKF_ACCESS_READ) : 0;
  uint32_t y_off = vkf_lower_bind(ctx, &d, y, VKF_ACCESS_WRITE);
  vkf_plan_dispatch_push_u32(&d, (uint32_t)x->shape[0]);
  vkf_plan_dispatch_push_u32(&d, (uint32_t)x->shape[1]);
  vkf_plan_dispatch_push_u32(&d, (uint32_t)x->shape[2]);
  vkf_plan_dispatch_push_u32(&d, x_off);
  for (uint32_t i = 0; i < 3; i++) vkf_plan_dispatch_push_u32(&d, (uint32_t)x->strides[i]);
  vkf_plan_dispatch_push_u32(&d, mask_off);
  vkf_plan_dispatch_push_u32(&d, has_mask ? (uint32_t)mask->strides[0] : 0);
  vkf_plan_dispatch_push_u32(&d, has_mask ? (uint32_t)mask->strides[1] : 0);
  vkf_plan_dispatch_push_u32(&d, y_off);
  vkf_plan_dispatch_push_u32(&d, (uint32_t)y->strides[0]);
  vkf_plan_dispatch_push_u32(&d, (uint32_t)y->strides[1]);
  uint32_t wg = vkf_lower_workgroup_1d(ctx, 256);
  d.spec[0] = wg;
  d.spec_count = 1;
  d.groups[0] = vkf_lower_groups_1d(ctx, (uint64_t)outputs, wg);
  d.groups[1] = d.groups[2] = 1;
  return vkf_plan_add_dispatch(ctx->plan, &d);
}
