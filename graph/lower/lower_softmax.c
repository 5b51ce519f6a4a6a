/* Owns the lowering of SOFTMAX (scale, additive bias, valid-length and causal masks) to
 * shaders/softmax.comp: the variant chooser and the push-constant layout. This is the middle step
 * of the unfused attention path, so rows up to attention-score lengths (32768+) stream through one
 * workgroup each, or, when there are too few rows to fill the device, through several workgroups
 * per row and an exact merge of their partial max/sum. */
#include <stdio.h>

#include "graph/lower/lower_rows.h"

enum {
  SPLIT_MIN_CHUNK = 2048, /* columns: below this the second dispatch costs more than it gains */
};

typedef struct softmax_variant {
  uint32_t workgroup_size;
  int subgroup_reduce;
  uint32_t chunks; /* workgroups per row; 1: no split */
  uint32_t chunk;  /* columns per workgroup */
  uint32_t rows_per_workgroup;
} softmax_variant;

static softmax_variant choose_softmax_variant(const vkf_device_caps *caps, uint64_t rows,
                                              uint64_t n) {
  softmax_variant v = {.chunks = 1, .chunk = (uint32_t)n, .rows_per_workgroup = 1};
  /* Split long rows when there are too few to occupy the device: about 512 workgroups fill a
   * large GPU, 16 the cores of a CPU device. Chunks stay >= SPLIT_MIN_CHUNK columns, a multiple
   * of 4 (vector phase), and the chunk count within the grid's z limit. */
  uint64_t target = caps->kind == VKF_DEVICE_KIND_CPU ? 16 : 512;
  uint64_t max_z = caps->max_workgroup_count[2] ? caps->max_workgroup_count[2] : 65535;
  if (rows < target && n >= 2 * SPLIT_MIN_CHUNK) {
    uint64_t chunks = (target + rows - 1) / rows;
    if (chunks > n / SPLIT_MIN_CHUNK) chunks = n / SPLIT_MIN_CHUNK;
    if (chunks > max_z) chunks = max_z;
    uint64_t chunk = ((n + chunks - 1) / chunks + 3) / 4 * 4;
    v.chunks = (uint32_t)((n + chunk - 1) / chunk);
    v.chunk = (uint32_t)chunk;
  }
  /* Short rows are batched per workgroup (vkf_rows_per_workgroup says when); split rows never. */
  if (v.chunks == 1) v.rows_per_workgroup = vkf_rows_per_workgroup(caps, rows, n);
  /* ~8 elements per invocation: each costs two exps over the two passes, so a row (or chunk) of
   * 2048+ keys fills 256 invocations; short rows (ViT's 197) take a smaller workgroup. */
  v.workgroup_size = vkf_rows_workgroup_size(caps, v.chunk, 8, 256);
  /* Subgroup arithmetic where available; the shared-memory tree otherwise (mobile profile). */
  v.subgroup_reduce = vkf_rows_use_subgroup_reduce(caps);
  return v;
}

vkf_status vkf_lower_softmax(const vkf_lower_ctx *ctx, const vkf_lower_node *node) {
  const vkf_plan_tensor *x = &node->inputs[VKF_IN_SOFTMAX_X], *y = &node->output;
  const vkf_plan_tensor *vl = &node->inputs[VKF_IN_SOFTMAX_VALID_LENS];
  const vkf_plan_tensor *bias = &node->inputs[VKF_IN_SOFTMAX_BIAS];
  int has_vl = vkf_plan_tensor_present(vl), has_bias = vkf_plan_tensor_present(bias);
  char shape_text[64];
  vkf_shape_format(x->rank, x->shape, shape_text, sizeof shape_text);

  if ((x->dtype != VKF_F32 && x->dtype != VKF_F16) || y->dtype != x->dtype)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "softmax \"%s\": input %s %s -> output %s",
                           node->name, vkf_dtype_name(x->dtype), shape_text,
                           vkf_dtype_name(y->dtype));
  if (has_bias && bias->dtype != VKF_F32 && bias->dtype != VKF_F16)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "softmax \"%s\": bias dtype %s", node->name,
                           vkf_dtype_name(bias->dtype));
  if (has_vl && (vl->dtype != VKF_I32 || x->rank < 2 || vl->rank < 1 || vl->rank > 2))
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "softmax \"%s\": valid lengths must be i32 [B] or [B, R] for input %s",
                           node->name, shape_text);
  if ((x->dtype == VKF_F16 || (has_bias && bias->dtype == VKF_F16)) && !ctx->caps->storage_16bit)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "softmax \"%s\": f16 tensors (input %s) need 16-bit storage, which "
                           "device \"%s\" lacks",
                           node->name, shape_text, ctx->caps->name);
  if (x->rank < 1 || x->rank > 4 || y->rank != x->rank || (has_bias && bias->rank > x->rank))
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "softmax \"%s\": input %s: rank 1 to 4 only",
                           node->name, shape_text);
  uint64_t count = (uint64_t)vkf_plan_tensor_count(x);
  if (count == 0) return VKF_OK;

  vkf_rows_view xv, yv, bv = {0};
  VKF_RETURN_IF_ERROR(vkf_rows_view_make(x, x->rank, x->shape, node->name, "input", &xv));
  VKF_RETURN_IF_ERROR(vkf_rows_view_make(y, x->rank, x->shape, node->name, "output", &yv));
  if (has_bias)
    VKF_RETURN_IF_ERROR(vkf_rows_view_make(bias, x->rank, x->shape, node->name, "bias", &bv));
  /* Row r of x [B, ..., R, N] is row i = r % R of its matrix and belongs to batch r / (rows/B). */
  uint64_t rows = count / xv.len;
  uint64_t r_dim = x->rank >= 2 ? (uint64_t)x->shape[x->rank - 2] : 1;
  uint64_t batch = x->rank >= 2 ? (uint64_t)x->shape[0] : 1;
  uint32_t vl_s0 = 0, vl_s1 = 0;
  if (has_vl) {
    vl_s0 = (uint32_t)vl->strides[0];
    if (vl->rank == 2) vl_s1 = (uint32_t)vl->strides[1];
  }

  softmax_variant v = choose_softmax_variant(ctx->caps, rows, xv.len);
  vkf_plan_dispatch d = {.node = node->name, .shader = "softmax.comp"};
  if (x->dtype == VKF_F16) vkf_plan_dispatch_define(&d, "X_F16");
  if (has_bias && bias->dtype == VKF_F16) vkf_plan_dispatch_define(&d, "BIAS_F16");
  if (v.subgroup_reduce) vkf_plan_dispatch_define(&d, "SUBGROUP_REDUCE");
  d.spec[0] = v.workgroup_size;
  d.spec[1] = (uint32_t)has_bias;
  d.spec[2] = (uint32_t)has_vl;
  d.spec[3] = (uint32_t)(has_vl && vl->rank == 2);
  d.spec[4] = (uint32_t)(node->attrs->softmax.causal != 0);
  d.spec[7] = 0;
  d.spec[8] = v.rows_per_workgroup;
  d.spec[9] = (uint32_t)vkf_rows_one_subgroup(ctx->caps, v.workgroup_size, v.subgroup_reduce);
  if (d.spec[9]) d.subgroup_size = vkf_caps_subgroup_fixed(ctx->caps);
  d.spec_count = 10;
  VKF_RETURN_IF_ERROR(
      vkf_rows_grid(ctx->caps, vkf_div_up(rows, v.rows_per_workgroup), node->name, d.groups));
  d.groups[2] = v.chunks;

  uint32_t x_off = vkf_lower_bind(ctx, &d, x, VKF_ACCESS_READ);
  uint32_t y_off = vkf_lower_bind(ctx, &d, y, VKF_ACCESS_WRITE);
  /* Absent optional inputs bind x's range again (never read: the spec constants skip them). */
  uint32_t b_off = vkf_lower_bind(ctx, &d, has_bias ? bias : x, VKF_ACCESS_READ);
  uint32_t v_off = vkf_lower_bind(ctx, &d, has_vl ? vl : x, VKF_ACCESS_READ);
  /* Four columns per access wherever x and y rows are contiguous and in phase (any row length:
   * the kernel handles partial vectors at the row ends one column at a time). */
  d.spec[5] = (uint32_t)vkf_rows_views_same_phase(&xv, x_off, &yv, y_off);
  d.spec[6] =
      (uint32_t)(d.spec[5] && has_bias && vkf_rows_views_same_phase(&xv, x_off, &bv, b_off));

  for (int k = 0; k < 3; k++) vkf_plan_dispatch_push_u32(&d, xv.lead[k]);
  vkf_plan_dispatch_push_u32(&d, xv.len);
  vkf_rows_push_view(&d, x_off, &xv);
  vkf_rows_push_view(&d, y_off, &yv);
  vkf_rows_push_view(&d, b_off, &bv);
  vkf_plan_dispatch_push_u32(&d, v_off);
  vkf_plan_dispatch_push_u32(&d, vl_s0);
  vkf_plan_dispatch_push_u32(&d, vl_s1);
  vkf_plan_dispatch_push_u32(&d, (uint32_t)r_dim);
  vkf_plan_dispatch_push_u32(&d, (uint32_t)(rows / batch));
  vkf_plan_dispatch_push_u32(&d, d.groups[0]);
  vkf_plan_dispatch_push_f32(&d, node->attrs->softmax.scale);
  vkf_plan_dispatch_push_u32(&d, v.chunk);
  if (v.chunks == 1) {
    /* Binding 4 (partials) is unused: x's range again. */
    vkf_lower_bind(ctx, &d, x, VKF_ACCESS_READ);
    return vkf_plan_add_dispatch(ctx->plan, &d);
  }

  /* Split: partials [rows, chunks] of (max, sum) in a scratch buffer; the first dispatch writes
   * them, the second merges them and writes y (the plan puts the barrier between). */
  char name[160];
  snprintf(name, sizeof name, "%s.partials", node->name);
  uint64_t partials_size = rows * v.chunks * 2 * sizeof(float);
  uint32_t partials = vkf_plan_add_buffer(ctx->plan, VKF_PLAN_BUFFER_SCRATCH, name, partials_size);
  vkf_plan_dispatch merge = d;
  /* The partials pass writes no y: bind it read-only so the plan sees no write there. */
  d.bindings[1].access = VKF_ACCESS_READ;
  d.spec[7] = 1;
  vkf_plan_dispatch_bind(&d, partials, 0, partials_size, VKF_ACCESS_WRITE);
  VKF_RETURN_IF_ERROR(vkf_plan_add_dispatch(ctx->plan, &d));
  merge.spec[7] = 2;
  vkf_plan_dispatch_bind(&merge, partials, 0, partials_size, VKF_ACCESS_READ);
  return vkf_plan_add_dispatch(ctx->plan, &merge);
}
