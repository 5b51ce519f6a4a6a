/* Owns the lowering of the row normalisations (LAYERNORM, RMSNORM, L2_NORMALIZE) to
 * shaders/layernorm.comp: the variant chooser and the push-constant layout. Residual adds are not
 * fused here: the IR's layernorm has no residual slot, so "x + residual" before a layernorm is the
 * GEMM epilogue's residual (VKF_IN_MATMUL_RESIDUAL) of the matmul that produces x. */
#include "graph/lower/lower_rows.h"

enum { NORM_OP_LAYERNORM = 0, NORM_OP_RMSNORM = 1, NORM_OP_L2 = 2 };

typedef struct norm_variant {
  uint32_t workgroup_size;
  int subgroup_reduce;
  uint32_t rows_per_workgroup;
} norm_variant;

static norm_variant choose_norm_variant(const vkf_device_caps *caps, uint64_t rows, uint64_t d) {
  norm_variant v;
  /* Short rows are batched per workgroup (vkf_rows_per_workgroup says when). */
  v.rows_per_workgroup = vkf_rows_per_workgroup(caps, rows, d);
  /* ~4 elements per invocation keeps enough independent loads in flight per invocation while a
   * 768-wide row (ViT-B) still spreads over 256 invocations; 256 caps the cost of the reduction
   * tree and fits every device's limit. */
  v.workgroup_size = vkf_rows_workgroup_size(caps, d, 4, 256);
  /* Subgroup arithmetic replaces most barriers of the shared-memory tree where the device has it;
   * the tree is the fallback (mobile profile, many phone drivers). */
  v.subgroup_reduce = vkf_rows_use_subgroup_reduce(caps);
  return v;
}

static int dtype_float(vkf_dtype t) {
  return t == VKF_F32 || t == VKF_F16;
}

vkf_status vkf_lower_norm(const vkf_lower_ctx *ctx, const vkf_lower_node *node) {
  const vkf_plan_tensor *x = &node->inputs[VKF_IN_NORM_X], *y = &node->output;
  const vkf_plan_tensor *gamma = &node->inputs[VKF_IN_NORM_GAMMA];
  const vkf_plan_tensor *beta = &node->inputs[VKF_IN_NORM_BETA];
  const char *op_name = vkf_op_name(node->op);
  uint32_t op = node->op == VKF_OP_LAYERNORM ? NORM_OP_LAYERNORM
                : node->op == VKF_OP_RMSNORM ? NORM_OP_RMSNORM
                                             : NORM_OP_L2;
  VKF_ASSERT(node->op == VKF_OP_LAYERNORM || node->op == VKF_OP_RMSNORM ||
             node->op == VKF_OP_L2_NORMALIZE);
  int has_gamma = op != NORM_OP_L2 && vkf_plan_tensor_present(gamma);
  int has_beta = op == NORM_OP_LAYERNORM && vkf_plan_tensor_present(beta);
  char shape_text[64];
  vkf_shape_format(x->rank, x->shape, shape_text, sizeof shape_text);

  if (!dtype_float(x->dtype) || y->dtype != x->dtype)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s \"%s\": input %s %s -> output %s", op_name,
                           node->name, vkf_dtype_name(x->dtype), shape_text,
                           vkf_dtype_name(y->dtype));
  if (has_gamma && has_beta && gamma->dtype != beta->dtype)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s \"%s\": gamma (%s) and beta (%s) must share a dtype", op_name,
                           node->name, vkf_dtype_name(gamma->dtype), vkf_dtype_name(beta->dtype));
  vkf_dtype param_dtype = has_gamma ? gamma->dtype : has_beta ? beta->dtype : VKF_F32;
  if ((x->dtype == VKF_F16 || param_dtype == VKF_F16) && !ctx->caps->storage_16bit)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s \"%s\": f16 tensors (input %s) need 16-bit storage, which device "
                           "\"%s\" lacks",
                           op_name, node->name, shape_text, ctx->caps->name);
  if (x->rank < 1 || x->rank > 4 || y->rank != x->rank)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s \"%s\": input %s: rank 1 to 4 only", op_name,
                           node->name, shape_text);
  uint64_t count = (uint64_t)vkf_plan_tensor_count(x);
  if (count == 0) return VKF_OK;

  vkf_rows_view xv, yv, gv = {0}, bv = {0};
  VKF_RETURN_IF_ERROR(vkf_rows_view_make(x, x->rank, x->shape, node->name, "input", &xv));
  VKF_RETURN_IF_ERROR(vkf_rows_view_make(y, x->rank, x->shape, node->name, "output", &yv));
  /* gamma/beta are [D]: viewed as a broadcast row, their stride is s[3]. */
  if (has_gamma)
    VKF_RETURN_IF_ERROR(vkf_rows_view_make(gamma, x->rank, x->shape, node->name, "gamma", &gv));
  if (has_beta)
    VKF_RETURN_IF_ERROR(vkf_rows_view_make(beta, x->rank, x->shape, node->name, "beta", &bv));

  uint64_t rows = count / xv.len;
  norm_variant v = choose_norm_variant(ctx->caps, rows, xv.len);
  vkf_plan_dispatch d = {.node = node->name, .shader = "layernorm.comp"};
  if (x->dtype == VKF_F16) vkf_plan_dispatch_define(&d, "X_F16");
  if (param_dtype == VKF_F16) vkf_plan_dispatch_define(&d, "P_F16");
  if (v.subgroup_reduce) vkf_plan_dispatch_define(&d, "SUBGROUP_REDUCE");
  d.spec[0] = v.workgroup_size;
  d.spec[1] = op;
  d.spec[2] = (uint32_t)has_gamma;
  d.spec[3] = (uint32_t)has_beta;
  d.spec[5] = v.rows_per_workgroup;
  d.spec[6] = (uint32_t)vkf_rows_one_subgroup(ctx->caps, v.workgroup_size, v.subgroup_reduce);
  if (d.spec[6]) d.subgroup_size = vkf_caps_subgroup_fixed(ctx->caps);
  d.spec_count = 7;
  VKF_RETURN_IF_ERROR(
      vkf_rows_grid(ctx->caps, vkf_div_up(rows, v.rows_per_workgroup), node->name, d.groups));

  uint32_t x_off = vkf_lower_bind(ctx, &d, x, VKF_ACCESS_READ);
  uint32_t y_off = vkf_lower_bind(ctx, &d, y, VKF_ACCESS_WRITE);
  /* Absent parameters bind x's range again (never read: the spec constants skip them). */
  uint32_t g_off = vkf_lower_bind(ctx, &d, has_gamma ? gamma : x, VKF_ACCESS_READ);
  uint32_t b_off = vkf_lower_bind(ctx, &d, has_beta ? beta : x, VKF_ACCESS_READ);
  /* Four elements per access wherever the layout allows (hidden sizes are multiples of 4). */
  d.spec[4] = (uint32_t)(vkf_rows_view_vec4(&xv, x_off) && vkf_rows_view_vec4(&yv, y_off) &&
                         (!has_gamma || vkf_rows_view_vec4(&gv, g_off)) &&
                         (!has_beta || vkf_rows_view_vec4(&bv, b_off)));
  /* On CPU devices x, gamma and beta through texel views (a vector gather per vec4 where a
   * storage-buffer load is a scalar loop over the lanes): all three or none, as the kernel
   * declares them together; absent parameters are x's range again. */
  if (d.spec[4] && ctx->caps->kind == VKF_DEVICE_KIND_CPU) {
    const int read[3] = {0, 2, 3}; /* bindings x, gamma, beta */
    const vkf_dtype dt[3] = {x->dtype, has_gamma ? param_dtype : x->dtype,
                             has_beta ? param_dtype : x->dtype};
    int texel = 1;
    for (int i = 0; i < 3 && texel; i++) {
      vkf_plan_binding *bd = &d.bindings[read[i]];
      texel = (bd->texel = vkf_lower_texel_format(ctx, dt[i], bd)) != VKF_TEXEL_NONE;
    }
    if (texel)
      vkf_plan_dispatch_define(&d, "TEXEL");
    else
      for (int i = 0; i < 3; i++) d.bindings[read[i]].texel = VKF_TEXEL_NONE;
  }

  for (int k = 0; k < 3; k++) vkf_plan_dispatch_push_u32(&d, xv.lead[k]);
  vkf_plan_dispatch_push_u32(&d, xv.len);
  vkf_rows_push_view(&d, x_off, &xv);
  vkf_rows_push_view(&d, y_off, &yv);
  vkf_plan_dispatch_push_u32(&d, g_off);
  vkf_plan_dispatch_push_u32(&d, gv.s[3]);
  vkf_plan_dispatch_push_u32(&d, b_off);
  vkf_plan_dispatch_push_u32(&d, bv.s[3]);
  vkf_plan_dispatch_push_u32(&d, d.groups[0]);
  vkf_plan_dispatch_push_f32(&d, node->attrs->norm.eps);
  return vkf_plan_add_dispatch(ctx->plan, &d);
}
