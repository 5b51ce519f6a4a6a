/* Owns the lowering of Bahdanau's ops: GRU_SCAN (below) and ADDITIVE_ATTENTION (builder.h:
 * vkf_additive_attention) onto
 * shaders/additive_attention.comp: one workgroup per query row (and per ACC x workgroup value
 * columns) over the keys in tiles, the
 * variant (workgroup size, subgroup reductions, f16 storage, weights or context) and the
 * push-constant layout. */
#include "graph/lower/lower_rows.h"

enum {
  ADDITIVE_ACC = 8,     /* output columns per invocation (additive_attention.comp's ACC) */
  GRU_MAX_HIDDEN = 1024 /* gru_scan.comp's HMAX: two copies of h in 8 KiB of shared memory */
};

vkf_status vkf_lower_additive_attention(const vkf_lower_ctx *ctx, const vkf_lower_node *node) {
  const vkf_plan_tensor *q = &node->inputs[VKF_IN_ADDITIVE_Q], *k = &node->inputs[VKF_IN_ADDITIVE_K];
  const vkf_plan_tensor *w = &node->inputs[VKF_IN_ADDITIVE_W], *v = &node->inputs[VKF_IN_ADDITIVE_V];
  const vkf_plan_tensor *vl = &node->inputs[VKF_IN_ADDITIVE_VALID_LENS], *y = &node->output;
  int has_vl = node->input_count > VKF_IN_ADDITIVE_VALID_LENS && vkf_plan_tensor_present(vl);
  int weights = node->attrs->additive_attention.weights;
  char sa[64];
  vkf_shape_format(q->rank, q->shape, sa, sizeof sa);
  if (q->rank != 3 || (q->dtype != VKF_F32 && q->dtype != VKF_F16) || y->dtype != q->dtype)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "additive_attention \"%s\": queries %s %s",
                           node->name, vkf_dtype_name(q->dtype), sa);
  if (q->dtype == VKF_F16 && !ctx->caps->storage_16bit)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "additive_attention \"%s\": f16 queries %s need 16-bit storage, which "
                           "device \"%s\" lacks",
                           node->name, sa, ctx->caps->name);
  uint64_t rows = (uint64_t)q->shape[0] * (uint64_t)q->shape[1];
  if (rows == 0 || vkf_plan_tensor_count(y) == 0) return VKF_OK;
  const vkf_plan_tensor *big[4] = {q, k, v, y};
  for (int i = 0; i < 4; i++)
    if ((uint64_t)vkf_plan_tensor_count(big[i]) > UINT32_MAX)
      return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                             "additive_attention \"%s\": a tensor of %s needs indices beyond 32 "
                             "bits",
                             node->name, sa);
  /* One key per invocation per tile: a workgroup about as wide as the keys, 32 to 256. */
  uint32_t wg = vkf_rows_workgroup_size(ctx->caps, (uint64_t)k->shape[1], 1, 256);
  /* Value columns beyond ACC per invocation: more workgroups per row along z. */
  uint64_t chunks = weights ? 1 : vkf_div_up((uint64_t)v->shape[2], (uint64_t)ADDITIVE_ACC * wg);
  uint64_t max_z = ctx->caps->max_workgroup_count[2] ? ctx->caps->max_workgroup_count[2] : 65535;
  if (chunks > max_z) {
    vkf_shape_format(v->rank, v->shape, sa, sizeof sa);
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "additive_attention \"%s\": values %s: too many value dims for the grid",
                           node->name, sa);
  }
  int subgroup = vkf_rows_use_subgroup_reduce(ctx->caps);
  vkf_plan_dispatch d = {.node = node->name, .shader = "additive_attention.comp"};
  if (q->dtype == VKF_F16) vkf_plan_dispatch_define(&d, "IO_F16");
  if (weights) vkf_plan_dispatch_define(&d, "WEIGHTS");
  if (subgroup) vkf_plan_dispatch_define(&d, "SUBGROUP_REDUCE");
  d.spec[0] = wg;
  d.spec[1] = (uint32_t)has_vl;
  d.spec[2] = (uint32_t)(has_vl && vl->rank == 2);
  d.spec[3] = (uint32_t)vkf_rows_one_subgroup(ctx->caps, wg, subgroup);
  if (d.spec[3]) d.subgroup_size = vkf_caps_subgroup_fixed(ctx->caps);
  d.spec_count = 4;
  VKF_RETURN_IF_ERROR(vkf_rows_grid(ctx->caps, rows, node->name, d.groups));
  d.groups[2] = (uint32_t)(chunks ? chunks : 1);
  uint32_t q_off = vkf_lower_bind(ctx, &d, q, VKF_ACCESS_READ);
  uint32_t k_off = vkf_lower_bind(ctx, &d, k, VKF_ACCESS_READ);
  uint32_t w_off = vkf_lower_bind(ctx, &d, w, VKF_ACCESS_READ);
  uint32_t v_off = vkf_lower_bind(ctx, &d, v, VKF_ACCESS_READ);
  /* An absent valid-length buffer binds the queries' range again (never read). */
  uint32_t l_off = vkf_lower_bind(ctx, &d, has_vl ? vl : q, VKF_ACCESS_READ);
  uint32_t o_off = vkf_lower_bind(ctx, &d, y, VKF_ACCESS_WRITE);
  uint32_t push[] = {(uint32_t)q->shape[1], (uint32_t)k->shape[1], (uint32_t)q->shape[2],
                     (uint32_t)v->shape[2], q_off, (uint32_t)q->strides[0], (uint32_t)q->strides[1],
                     (uint32_t)q->strides[2], k_off, (uint32_t)k->strides[0],
                     (uint32_t)k->strides[1], (uint32_t)k->strides[2], w_off,
                     (uint32_t)w->strides[0], v_off, (uint32_t)v->strides[0],
                     (uint32_t)v->strides[1], (uint32_t)v->strides[2], l_off,
                     has_vl ? (uint32_t)vl->strides[0] : 0,
                     has_vl && vl->rank == 2 ? (uint32_t)vl->strides[1] : 0, o_off,
                     (uint32_t)y->strides[0], (uint32_t)y->strides[1], (uint32_t)y->strides[2],
                     d.groups[0], (uint32_t)rows};
  for (size_t i = 0; i < sizeof push / sizeof *push; i++) vkf_plan_dispatch_push_u32(&d, push[i]);
  return vkf_plan_add_dispatch(ctx->plan, &d);
}

/* Loop iterations one invocation of gru_scan.comp runs per step at `wg` invocations, as lavapipe
 * counts them (a loop of n iterations counts n + 1: the last test too): per owned unit three dot
 * products of h / 4 + 1 and at most 4 more, and the unit loop's; the step loop's. Measured: 245
 * units at 8 invocations ran out in the 11th step, as 31 * (3 * 64 + 1) + 1 + 1 per step says. */
static uint64_t gru_step_loops(uint32_t h, uint32_t wg) {
  uint64_t units = vkf_div_up(h, wg);
  return units * (3 * ((uint64_t)h / 4 + 5) + 1) + 2;
}

/* The workgroup and the steps per dispatch. One subgroup on CPU devices (no barrier switches
 * between SIMD groups), 64 invocations elsewhere, and the whole recurrence in one dispatch.
 * Under a loop-iteration limit (caps.h) each dispatch's loops stay within 7/8 of it: the
 * workgroup doubles until one step takes at most 1/8 of that budget, and the steps are cut into
 * dispatches of as many steps as fit. */
static void gru_plan(const vkf_device_caps *caps, uint32_t h, uint32_t steps, uint32_t *wg,
                     uint32_t *chunk) {
  uint32_t max_wg = caps->max_workgroup_invocations ? caps->max_workgroup_invocations : 128;
  if (caps->max_workgroup_size[0] && caps->max_workgroup_size[0] < max_wg)
    max_wg = caps->max_workgroup_size[0];
  uint32_t n = caps->kind == VKF_DEVICE_KIND_CPU && caps->subgroup_size ? caps->subgroup_size : 64;
  n = vkf_u32_max(1, vkf_u32_min(n, max_wg));
  *chunk = vkf_u32_max(1, steps);
  if (caps->loop_iteration_limit) {
    uint64_t budget = (uint64_t)caps->loop_iteration_limit / 8 * 7;
    while (n * 2 <= max_wg && gru_step_loops(h, n) > budget / 8) n *= 2;
    /* the state load's loop runs once per dispatch */
    uint64_t fit = (budget - vkf_div_up(h, n)) / gru_step_loops(h, n);
    if (fit < *chunk) *chunk = (uint32_t)fit; /* 0: not even one step fits */
  }
  *wg = n;
}

/* GRU_SCAN onto shaders/gru_scan.comp: one workgroup per batch row, h in shared memory. */
vkf_status vkf_lower_gru_scan(const vkf_lower_ctx *ctx, const vkf_lower_node *node) {
  const vkf_plan_tensor *x = &node->inputs[VKF_IN_GRU_GATES], *w = &node->inputs[VKF_IN_GRU_W_HH];
  const vkf_plan_tensor *bias = &node->inputs[VKF_IN_GRU_B_HH], *h0 = &node->inputs[VKF_IN_GRU_H0];
  const vkf_plan_tensor *y = &node->output;
  int has_h0 = node->input_count > VKF_IN_GRU_H0 && vkf_plan_tensor_present(h0);
  char sa[64];
  vkf_shape_format(w->rank, w->shape, sa, sizeof sa);
  uint64_t h = (uint64_t)w->shape[1];
  if (x->dtype != VKF_F32 || h > GRU_MAX_HIDDEN)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "gru_scan \"%s\": w_hh %s %s: f32 with at most %d hidden units",
                           node->name, vkf_dtype_name(w->dtype), sa, GRU_MAX_HIDDEN);
  if (vkf_plan_tensor_count(y) == 0) return VKF_OK;
  const vkf_plan_tensor *big[3] = {x, w, y};
  for (int i = 0; i < 3; i++)
    if ((uint64_t)vkf_plan_tensor_count(big[i]) > UINT32_MAX)
      return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                             "gru_scan \"%s\": a tensor needs indices beyond 32 bits", node->name);
  uint64_t max_x = ctx->caps->max_workgroup_count[0] ? ctx->caps->max_workgroup_count[0] : 65535;
  if ((uint64_t)x->shape[0] > max_x)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "gru_scan \"%s\": batch %lld exceeds the grid",
                           node->name, (long long)x->shape[0]);
  uint32_t steps = (uint32_t)x->shape[1], wg = 0, chunk = 0;
  gru_plan(ctx->caps, (uint32_t)h, steps, &wg, &chunk);
  if (chunk == 0)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "gru_scan \"%s\": one step of %llu hidden units at %u invocations "
                           "runs more loop iterations than device \"%s\" allows (%u)",
                           node->name, (unsigned long long)h, wg, ctx->caps->name,
                           ctx->caps->loop_iteration_limit);
  /* One dispatch per `chunk` steps; each after the first starts from the state its predecessor
   * wrote (out[t0 - 1]). */
  for (uint32_t t0 = 0; t0 < steps; t0 += chunk) {
    vkf_plan_dispatch d = {.node = node->name, .shader = "gru_scan.comp"};
    if (has_h0) vkf_plan_dispatch_define(&d, "HAS_H0");
    d.spec[0] = wg;
    d.spec_count = 1;
    uint32_t g_off = vkf_lower_bind(ctx, &d, x, VKF_ACCESS_READ);
    uint32_t w_off = vkf_lower_bind(ctx, &d, w, VKF_ACCESS_READ);
    uint32_t b_off = vkf_lower_bind(ctx, &d, bias, VKF_ACCESS_READ);
    uint32_t h_off = vkf_lower_bind(ctx, &d, has_h0 ? h0 : x, VKF_ACCESS_READ);
    uint32_t o_off = vkf_lower_bind(ctx, &d, y, t0 ? VKF_ACCESS_READ_WRITE : VKF_ACCESS_WRITE);
    uint32_t push[] = {vkf_u32_min(chunk, steps - t0),
                       (uint32_t)h,
                       g_off,
                       (uint32_t)x->strides[0],
                       (uint32_t)x->strides[1],
                       (uint32_t)x->strides[2],
                       w_off,
                       (uint32_t)w->strides[0],
                       (uint32_t)w->strides[1],
                       b_off,
                       (uint32_t)bias->strides[0],
                       h_off,
                       has_h0 ? (uint32_t)h0->strides[0] : 0,
                       has_h0 ? (uint32_t)h0->strides[1] : 0,
                       o_off,
                       (uint32_t)y->strides[0],
                       (uint32_t)y->strides[1],
                       (uint32_t)y->strides[2],
                       t0};
    for (size_t i = 0; i < sizeof push / sizeof *push; i++) vkf_plan_dispatch_push_u32(&d, push[i]);
    d.groups[0] = (uint32_t)x->shape[0];
    d.groups[1] = d.groups[2] = 1;
    VKF_RETURN_IF_ERROR(vkf_plan_add_dispatch(ctx->plan, &d));
  }
  return VKF_OK;
}
