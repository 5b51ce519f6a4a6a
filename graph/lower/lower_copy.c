/* Owns lowering of COPY (materialise a strided view), CAST (f32 <-> f16, i32 <-> float) and
 * CONCAT (one strided copy per input into its slice of the output) onto shaders/copy.comp. */
#include <inttypes.h>
#include <string.h>

#include "graph/lower/lower_node.h"
#include "graph/lower/lower_layout.h"

static vkf_status check_dtype(const vkf_lower_ctx *ctx, const vkf_lower_node *node,
                              const vkf_plan_tensor *t) {
  char sbuf[64];
  if (t->dtype == VKF_F16 && !ctx->caps->storage_16bit)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s \"%s\": f16 tensor %s needs 16-bit storage, which the device lacks",
                           vkf_op_name(node->op), node->name,
                           vkf_shape_format(t->rank, t->shape, sbuf, sizeof sbuf));
  return VKF_OK;
}

/* dst (same shape as src) = convert(src), both possibly strided. */
vkf_status vkf_lower_copy_view(const vkf_lower_ctx *ctx, const vkf_lower_node *node,
                               const vkf_plan_tensor *src, const vkf_plan_tensor *dst) {
  char sbuf[64];
  VKF_RETURN_IF_ERROR(check_dtype(ctx, node, src));
  VKF_RETURN_IF_ERROR(check_dtype(ctx, node, dst));
  int64_t count = vkf_plan_tensor_count(dst);
  if (count == 0) return VKF_OK;
  vkf_layout l = {.rank = dst->rank, .operand_count = 2};
  memcpy(l.shape, dst->shape, sizeof l.shape);
  memcpy(l.strides[0], src->strides, sizeof l.strides[0]);
  memcpy(l.strides[1], dst->strides, sizeof l.strides[1]);
  vkf_layout_coalesce(&l);

  vkf_plan_dispatch d = {.node = node->name, .shader = "copy.comp"};
  /* Chooser: same dtype copies bits (exact for every value, NaN payloads included); otherwise
   * convert through fp32 as the reference does. */
  if (src->dtype == dst->dtype) {
    vkf_plan_dispatch_define(&d, src->dtype == VKF_F16 ? "RAW=16" : "RAW=32");
  } else {
    if (src->dtype == VKF_F16) vkf_plan_dispatch_define(&d, "SRC_F16");
    if (src->dtype == VKF_I32) vkf_plan_dispatch_define(&d, "SRC_I32");
    if (dst->dtype == VKF_F16) vkf_plan_dispatch_define(&d, "DST_F16");
    if (dst->dtype == VKF_I32) vkf_plan_dispatch_define(&d, "DST_I32");
  }
  uint32_t src_off = vkf_lower_bind(ctx, &d, src, VKF_ACCESS_READ);
  uint32_t dst_off = vkf_lower_bind(ctx, &d, dst, VKF_ACCESS_WRITE);
  if ((uint64_t)count > INT32_MAX ||
      (uint64_t)vkf_layout_operand_last(&l, 0) + src_off > UINT32_MAX ||
      (uint64_t)vkf_layout_operand_last(&l, 1) + dst_off > UINT32_MAX)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s \"%s\": %s needs indices beyond 32 bits",
                           vkf_op_name(node->op), node->name,
                           vkf_shape_format(dst->rank, dst->shape, sbuf, sizeof sbuf));
  vkf_plan_dispatch_push_u32(&d, (uint32_t)count);
  for (uint32_t i = 1; i < 4; i++)
    vkf_plan_dispatch_push_fastdiv(&d, i < l.rank ? (uint32_t)l.shape[i] : 1);
  for (uint32_t k = 0; k < 2; k++) {
    vkf_plan_dispatch_push_u32(&d, k == 0 ? src_off : dst_off);
    for (uint32_t i = 0; i < 4; i++)
      vkf_plan_dispatch_push_u32(&d, i < l.rank ? (uint32_t)l.strides[k][i] : 0);
  }
  uint32_t wg = vkf_lower_workgroup_1d(ctx, 256);
  d.spec[0] = wg;
  d.spec[1] = l.rank;
  d.spec_count = 2;
  d.groups[0] = vkf_lower_groups_1d(ctx, (uint64_t)count, wg);
  d.groups[1] = d.groups[2] = 1;
  return vkf_plan_add_dispatch(ctx->plan, &d);
}

vkf_status vkf_lower_copy(const vkf_lower_ctx *ctx, const vkf_lower_node *node) {
  const vkf_plan_tensor *y = &node->output;
  char sa[64], sb[64];
  switch (node->op) {
    case VKF_OP_COPY:
    case VKF_OP_CAST: {
      const vkf_plan_tensor *x = &node->inputs[0];
      if (x->rank != y->rank || memcmp(x->shape, y->shape, x->rank * sizeof x->shape[0]))
        return vkf_status_make(VKF_STATUS_INTERNAL, "%s \"%s\": input %s vs output %s",
                               vkf_op_name(node->op), node->name,
                               vkf_shape_format(x->rank, x->shape, sa, sizeof sa),
                               vkf_shape_format(y->rank, y->shape, sb, sizeof sb));
      return vkf_lower_copy_view(ctx, node, x, y);
    }
    case VKF_OP_CONCAT: {
      uint32_t ax = node->attrs->concat.axis;
      if (ax >= y->rank)
        return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "concat \"%s\": axis %u of %s",
                               node->name, ax, vkf_shape_format(y->rank, y->shape, sa, sizeof sa));
      /* Each input goes to the output view [.., at:at+len, ..]: the same strides, shifted. */
      int64_t at = 0;
      for (uint32_t s = 0; s < node->input_count; s++) {
        const vkf_plan_tensor *x = &node->inputs[s];
        vkf_plan_tensor part = *y;
        part.shape[ax] = x->shape[ax];
        part.offset += (uint64_t)(at * y->strides[ax]) * vkf_dtype_size(y->dtype);
        at += x->shape[ax];
        VKF_RETURN_IF_ERROR(vkf_lower_copy_view(ctx, node, x, &part));
      }
      if (at != y->shape[ax])
        return vkf_status_make(VKF_STATUS_INTERNAL,
                               "concat \"%s\": inputs cover %" PRId64 " of %" PRId64
                               " along axis %u",
                               node->name, at, y->shape[ax], ax);
      return VKF_OK;
    }
    default:
      return vkf_status_make(VKF_STATUS_INTERNAL, "%s \"%s\" is not a copy op",
                             vkf_op_name(node->op), node->name);
  }
}
