/* Owns the lowering of VKF_OP_ROTARY onto shaders/rotary.comp: x, cos, sin and y as rank-4 views
 * (size-1 dims padded on the left, stride 0 where cos and sin broadcast), one invocation per pair
 * of outputs (j, j + D/2). A decode step's rotary was a slice, scale, two concat copies and a
 * generated mul-mul-add kernel per q and per k: four dispatches where this is one. */
#include "graph/lower/lower_layout.h"
#include "graph/lower/lower_node.h"

/* `t` seen against the output's rank-4 padded shape: strides 0 along dims it broadcasts. */
static void strides4(const vkf_plan_tensor *t, const vkf_plan_tensor *out, uint32_t s[4]) {
  for (uint32_t i = 0; i < 4; i++) {
    int64_t oi = (int64_t)i - (4 - (int64_t)out->rank), ti = (int64_t)i - (4 - (int64_t)t->rank);
    s[i] = oi >= 0 && ti >= 0 && t->shape[ti] != 1 ? (uint32_t)t->strides[ti] : 0;
  }
}

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
  uint64_t spans[4] = {vkf_plan_tensor_count(x), vkf_plan_tensor_count(c),
                       vkf_plan_tensor_count(s), (uint64_t)count};
  for (int i = 0; i < 4; i++)
    if (spans[i] > UINT32_MAX / 4)
      return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                             "rotary \"%s\": %s needs indices beyond 32 bits", node->name, sx);
  vkf_plan_dispatch d = {.node = node->name, .shader = "rotary.comp"};
  if (x->dtype == VKF_F16) vkf_plan_dispatch_define(&d, "IO_F16");
  if (c->dtype == VKF_F16) vkf_plan_dispatch_define(&d, "CS_F16");
  uint32_t offs[4];
  offs[0] = vkf_lower_bind(ctx, &d, x, VKF_ACCESS_READ);
  offs[1] = vkf_lower_bind(ctx, &d, c, VKF_ACCESS_READ);
  offs[2] = vkf_lower_bind(ctx, &d, s, VKF_ACCESS_READ);
  offs[3] = vkf_lower_bind(ctx, &d, y, VKF_ACCESS_WRITE);
  for (uint32_t i = 0; i < 4; i++) {
    int64_t yi = (int64_t)i - (4 - (int64_t)y->rank);
    vkf_plan_dispatch_push_u32(&d, yi >= 0 ? (uint32_t)y->shape[yi] : 1u);
  }
  const vkf_plan_tensor *views[4] = {x, c, s, y};
  for (int v = 0; v < 4; v++) {
    uint32_t st[4];
    strides4(views[v], y, st);
    vkf_plan_dispatch_push_u32(&d, offs[v]);
    for (int i = 0; i < 4; i++) vkf_plan_dispatch_push_u32(&d, st[i]);
  }
  uint32_t wg = vkf_lower_workgroup_1d(ctx, 256);
  d.spec[0] = wg;
  d.spec_count = 1;
  d.groups[0] = vkf_lower_groups_1d(ctx, (uint64_t)count / 2, wg);
  d.groups[1] = d.groups[2] = 1;
  return vkf_plan_add_dispatch(ctx->plan, &d);
}
