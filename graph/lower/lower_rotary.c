/* Owns the lowering of VKF_OP_ROTARY onto shaders/rotary.comp: x, cos, sin and y as rank-4 views
 * (size-1 dims padded on the left, stride 0 where cos and sin broadcast), one invocation per pair
 * of outputs (j, j + D/2). A decode step's rotary was a slice, scale, two concat copies and a
 * generated mul-mul-add kernel per q and per k: four dispatches where this is one. The views are
 * the row kernels' (lower_rows.h), so their 32-bit bounds are checked the same way. */
#include "graph/lower/lower_layout.h"
#include "graph/lower/lower_node.h"
#include "graph/lower/lower_rows.h"

vkf_status vkf_lower_rotary(const vkf_lower_ctx *ctx, const vkf_lower_node *node) {
  const vkf_plan_tensor *x = &node->inputs[VKF_IN_ROTARY_X];
  const vkf_plan_tensor *c = &node->inputs[VKF_IN_ROTARY_COS];
  const vkf_plan_tensor *s = &node->inputs[VKF_IN_ROTARY_SIN];
  const vkf_plan_tensor *y = &node->output;
  char sx[64];
  vkf_shape_format(x->rank, x->shape, sx, sizeof sx);
  if (x->rank > 4 || (x->dtype != VKF_F32 && x->dtype != VKF_F16) ||
      (c->dtype != VKF_F32 && c->dtype != VKF_F16))
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "rotary \"%s\": %s %s: rank 1 to 4, f32 or f16",
                           node->name, vkf_dtype_name(x->dtype), sx);
  if ((x->dtype == VKF_F16 || c->dtype == VKF_F16) && !ctx->caps->storage_16bit)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "rotary \"%s\": %s: f16 tensors need 16-bit storage, which the device "
                           "lacks", node->name, sx);
  int64_t count = vkf_plan_tensor_count(y);
  if (count == 0) return VKF_OK;
  /* The row kernels' rank-4 views (lower_rows.h): x, cos, sin broadcast to y's shape. */
  const vkf_plan_tensor *tensors[4] = {x, c, s, y};
  static const char *const what[4] = {"x", "cos", "sin", "output"};
  vkf_rows_view views[4];
  for (int i = 0; i < 4; i++)
    VKF_RETURN_IF_ERROR(
        vkf_rows_view_make(tensors[i], y->rank, y->shape, node->name, what[i], &views[i]));
  vkf_plan_dispatch d = {.node = node->name, .shader = "rotary.comp"};
  if (x->dtype == VKF_F16) vkf_plan_dispatch_define(&d, "IO_F16");
  if (c->dtype == VKF_F16) vkf_plan_dispatch_define(&d, "CS_F16");
  uint32_t offs[4];
  for (int i = 0; i < 4; i++)
    offs[i] = vkf_lower_bind(ctx, &d, tensors[i], i < 3 ? VKF_ACCESS_READ : VKF_ACCESS_WRITE);
  for (int k = 0; k < 3; k++) vkf_plan_dispatch_push_u32(&d, views[3].lead[k]);
  vkf_plan_dispatch_push_u32(&d, views[3].len);
  for (int i = 0; i < 4; i++) vkf_rows_push_view(&d, offs[i], &views[i]);
  uint32_t wg = vkf_lower_workgroup_1d(ctx, 256);
  d.spec[0] = wg;
  d.spec_count = 1;
  d.groups[0] = vkf_lower_groups_1d(ctx, (uint64_t)count / 2, wg);
  d.groups[1] = d.groups[2] = 1;
  return vkf_plan_add_dispatch(ctx->plan, &d);
}
