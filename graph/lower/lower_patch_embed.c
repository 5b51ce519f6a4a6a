/* Owns lowering of PATCH_EMBED (image [B, C, H, W], weight [E, C, P, Q], optional bias [E] ->
 * [B, (H/P)*(W/Q), E]) onto shaders/patch_embed.comp: a tiled GEMM of the im2col'ed patches
 * [B*patches, C*P*Q] by the weight viewed as [E, C*P*Q]; or the patch matrix alone into scratch
 * and a MATMUL lowered after it (CPU devices; cooperative matrices under f16). */
#include <stdio.h>

#include "graph/lower/lower_node.h"
#include "graph/lower/lower_layout.h"

typedef struct tile {
  uint32_t bm, bn, bk, tm, tn;
} tile;

/* Chooser (one rule per line; the workgroup is (BM/TM)*(BN/TN) invocations and the shared
 * tiles take BK*(BM+BN)*4 bytes):
 * - 64x64 tiles, BK 16, 4x4 per invocation: 256 invocations, 8 KiB shared (desktop GPUs and
 *   lavapipe; 16 FMAs per pair of shared loads).
 * - fewer than 256 invocations allowed (mobile profile: 128): 8x4 per invocation, 128 invocations.
 * - fewer than 128: 32x32 tiles with 4x4 per invocation, 64 invocations.
 * - shared memory below the tile size (never on conforming devices: the minimum is 16 KiB):
 *   BK shrinks to 8. */
static tile choose_tile(const vkf_device_caps *caps) {
  tile t = {64, 64, 16, 4, 4};
  if (caps->max_workgroup_invocations < 256 || caps->max_workgroup_size[0] < 256)
    t = (tile){64, 64, 16, 8, 4};
  if (caps->max_workgroup_invocations < 128 || caps->max_workgroup_size[0] < 128)
    t = (tile){32, 32, 16, 4, 4};
  if ((uint64_t)t.bk * (t.bm + t.bn) * 4 > caps->max_shared_memory_size) t.bk = 8;
  /* The staging scheme's invariants (shaders/patch_embed.comp). */
  uint32_t wg = (t.bm / t.tm) * (t.bn / t.tn);
  VKF_ASSERT(wg % t.bk == 0 && (t.bm * t.bk) % wg == 0 && (t.bn * t.bk) % wg == 0);
  return t;
}

static int is_float(vkf_dtype d) {
  return d == VKF_F32 || d == VKF_F16;
}

/* The patch matrix [B*patches, C*P*Q] into scratch (patch_embed.comp with IM2COL), then a
 * MATMUL node against the weight viewed as [E, C*P*Q] (transposed B), bias in the epilogue,
 * writing the output viewed as [B*patches, E]. `cols_f16`: the patch matrix in f16 (COLS_F16),
 * so that the GEMM lowering can take the cooperative-matrix kernel; fp32 otherwise. */
static vkf_status lower_im2col_gemm(const vkf_lower_ctx *ctx, const vkf_lower_node *node,
                                    int has_bias, int cols_f16) {
  const vkf_plan_tensor *img = &node->inputs[VKF_IN_PATCH_IMAGE];
  const vkf_plan_tensor *w = &node->inputs[VKF_IN_PATCH_WEIGHT];
  const vkf_plan_tensor *y = &node->output;
  int64_t bsz = img->shape[0], c = img->shape[1], ph = w->shape[2], pw = w->shape[3];
  int64_t gw = img->shape[3] / pw, patches = (img->shape[2] / ph) * gw, e = w->shape[0];
  int64_t m = bsz * patches, k = c * ph * pw;
  char name[160];
  snprintf(name, sizeof name, "%s.patches", node->name);
  uint64_t elem = cols_f16 ? 2 : 4;
  uint32_t scratch = vkf_plan_add_buffer(ctx->plan, VKF_PLAN_BUFFER_SCRATCH, name,
                                         (uint64_t)m * (uint64_t)k * elem);
  vkf_plan_tensor cols = {.buffer = scratch,
                          .dtype = cols_f16 ? VKF_F16 : VKF_F32,
                          .rank = 2, /* [M, K] */
                          .shape = {m, k},
                          .strides = {k, 1}};

  vkf_plan_dispatch d = {.node = node->name, .shader = "patch_embed.comp"};
  vkf_plan_dispatch_define(&d, "IM2COL");
  if (img->dtype == VKF_F16) vkf_plan_dispatch_define(&d, "IMG_F16");
  if (cols_f16) vkf_plan_dispatch_define(&d, "COLS_F16");
  uint32_t img_off = vkf_lower_bind(ctx, &d, img, VKF_ACCESS_READ);
  uint32_t cols_off = vkf_lower_bind(ctx, &d, &cols, VKF_ACCESS_WRITE);
  vkf_plan_dispatch_push_u32(&d, (uint32_t)(m * k));
  vkf_plan_dispatch_push_fastdiv(&d, (uint32_t)k);
  vkf_plan_dispatch_push_fastdiv(&d, (uint32_t)patches);
  vkf_plan_dispatch_push_fastdiv(&d, (uint32_t)gw);
  vkf_plan_dispatch_push_fastdiv(&d, (uint32_t)(ph * pw));
  vkf_plan_dispatch_push_fastdiv(&d, (uint32_t)pw);
  vkf_plan_dispatch_push_u32(&d, (uint32_t)ph);
  vkf_plan_dispatch_push_u32(&d, img_off);
  for (uint32_t i = 0; i < 4; i++) vkf_plan_dispatch_push_u32(&d, (uint32_t)img->strides[i]);
  vkf_plan_dispatch_push_u32(&d, cols_off);
  uint32_t wg = vkf_lower_workgroup_1d(ctx, 256);
  d.spec[5] = wg; /* local_size_x_id = 5; 0..4 are the GEMM tiles, unused here */
  d.spec[0] = 64, d.spec[1] = 64, d.spec[2] = 16, d.spec[3] = 4, d.spec[4] = 4;
  d.spec_count = 6;
  d.groups[0] = vkf_lower_groups_1d(ctx, (uint64_t)(m * k), wg);
  d.groups[1] = d.groups[2] = 1;
  VKF_RETURN_IF_ERROR(vkf_plan_add_dispatch(ctx->plan, &d));

  vkf_node_attrs attrs = {.matmul = {.transpose_b = 1, .activation = VKF_ACT_NONE}};
  vkf_lower_node mm = {
      .name = node->name, .op = VKF_OP_MATMUL, .attrs = &attrs, .input_count = has_bias ? 3 : 2};
  for (uint32_t i = 0; i < VKF_MAX_NODE_INPUTS; i++) mm.inputs[i].buffer = VKF_PLAN_NO_BUFFER;
  mm.inputs[VKF_IN_MATMUL_A] = cols;
  mm.inputs[VKF_IN_MATMUL_B] = (vkf_plan_tensor){.buffer = w->buffer,
                                                 .offset = w->offset,
                                                 .dtype = w->dtype,
                                                 .rank = 2, /* [E, K] */
                                                 .shape = {e, k},
                                                 .strides = {w->strides[0], 1}};
  if (has_bias) mm.inputs[VKF_IN_MATMUL_BIAS] = node->inputs[VKF_IN_PATCH_BIAS];
  mm.output = (vkf_plan_tensor){.buffer = y->buffer,
                                .offset = y->offset,
                                .dtype = y->dtype,
                                .rank = 2,
                                .shape = {m, e}, /* [B*patches, E] */
                                .strides = {y->strides[1], y->strides[2]}};
  return vkf_lower_matmul(ctx, &mm);
}

vkf_status vkf_lower_patch_embed(const vkf_lower_ctx *ctx, const vkf_lower_node *node) {
  char sa[64], sb[64];
  const vkf_plan_tensor *img = &node->inputs[VKF_IN_PATCH_IMAGE]; /* [B, C, H, W] */
  const vkf_plan_tensor *w = &node->inputs[VKF_IN_PATCH_WEIGHT];  /* [E, C, P, Q] */
  const vkf_plan_tensor *bias = &node->inputs[VKF_IN_PATCH_BIAS]; /* [E], optional */
  const vkf_plan_tensor *y = &node->output;                       /* [B, GH*GW, E] */
  int has_bias = node->input_count > VKF_IN_PATCH_BIAS && vkf_plan_tensor_present(bias);
  if (img->rank != 4 || w->rank != 4 || y->rank != 3 || !is_float(img->dtype) ||
      !is_float(w->dtype) || !is_float(y->dtype) || (has_bias && !is_float(bias->dtype)) ||
      img->shape[1] != w->shape[1] || w->shape[2] == 0 || w->shape[3] == 0)
    return vkf_status_make(
        VKF_STATUS_UNSUPPORTED, "patch_embed \"%s\": image %s %s, weight %s %s", node->name,
        vkf_dtype_name(img->dtype), vkf_shape_format(img->rank, img->shape, sa, sizeof sa),
        vkf_dtype_name(w->dtype), vkf_shape_format(w->rank, w->shape, sb, sizeof sb));
  int any_f16 = img->dtype == VKF_F16 || w->dtype == VKF_F16 || y->dtype == VKF_F16 ||
                (has_bias && bias->dtype == VKF_F16);
  if (any_f16 && !ctx->caps->storage_16bit)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "patch_embed \"%s\": f16 tensors need 16-bit storage, which the device "
                           "lacks",
                           node->name);
  int64_t bsz = img->shape[0], c = img->shape[1], ih = img->shape[2], iw = img->shape[3];
  int64_t e = w->shape[0], ph = w->shape[2], pw = w->shape[3];
  int64_t gh = ih / ph, gw = iw / pw, patches = gh * gw;
  int64_t m = bsz * patches, k = c * ph * pw;
  if (m == 0 || e == 0) return VKF_OK;
  if ((uint64_t)vkf_plan_tensor_count(img) > UINT32_MAX || (uint64_t)k > INT32_MAX ||
      (uint64_t)vkf_plan_tensor_count(w) > UINT32_MAX ||
      (uint64_t)vkf_plan_tensor_count(y) > UINT32_MAX)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "patch_embed \"%s\": image %s needs indices beyond 32 bits", node->name,
                           vkf_shape_format(img->rank, img->shape, sa, sizeof sa));

  int weight_flat = w->strides[3] == 1 && w->strides[2] == pw && w->strides[1] == ph * pw;
  int out_flat = y->strides[0] == patches * y->strides[1];

  /* Chooser, first rule: cooperative matrices (tensor cores) on a GPU, with the weight, bias and
   * output in f16 (--fp16): the f16 patch matrix (an f16 image's values copied exactly) into
   * scratch, then the GEMM lowering, whose chooser takes the cooperative-matrix kernel with the
   * bias in its epilogue (vkf_gemm_coopmat_choose: the tile and split-K for the shape). The patch
   * matrix costs one write and one read of M*K halves more than the SIMT tiles' gather (ViT-B/16
   * at 224: M 196 an image, K 768, E 768, so 0.3 MB an image against 1.2 MB of weight). CPU
   * devices keep their rule below (the register-blocked f32 kernel), and devices without the
   * kernels (or VKF_COOPMAT=0) the SIMT tiles. */
  int gemm_f16 =
      w->dtype == VKF_F16 && y->dtype == VKF_F16 && (!has_bias || bias->dtype == VKF_F16);
  uint64_t cols16 = (uint64_t)m * (uint64_t)k * 2;
  if (ctx->caps->coopmat_gemm_tile && ctx->caps->kind != VKF_DEVICE_KIND_CPU && gemm_f16 &&
      weight_flat && out_flat && (uint64_t)m * (uint64_t)k <= INT32_MAX &&
      cols16 <= ctx->caps->max_storage_buffer_range)
    return lower_im2col_gemm(ctx, node, has_bias, 1);

  /* Next rule: on CPU devices (lavapipe) shared-memory tiles are slow (every shared
   * load is a per-lane gather and barriers suspend workgroups), while the GEMM lowering has a
   * register-blocked CPU kernel (graph/lower/lower_matmul.c): ViT-B/16 at 224 took 91 ms this way
   * against 630-800 ms tiled on a 2-core lavapipe. So write the patch matrix once (IM2COL) and
   * multiply it there, when the weight flattens to [E, C*P*Q] and the output to
   * [B*patches, E] without copies. */
  uint64_t cols_size = (uint64_t)m * (uint64_t)k * 4; /* the scratch patch matrix, one binding */
  if (ctx->caps->kind == VKF_DEVICE_KIND_CPU && weight_flat && out_flat &&
      (uint64_t)m * (uint64_t)k <= INT32_MAX && cols_size <= ctx->caps->max_storage_buffer_range)
    return lower_im2col_gemm(ctx, node, has_bias, 0);

  tile t = choose_tile(ctx->caps);
  vkf_plan_dispatch d = {.node = node->name, .shader = "patch_embed.comp"};
  if (has_bias) vkf_plan_dispatch_define(&d, "HAS_BIAS");
  if (img->dtype == VKF_F16) vkf_plan_dispatch_define(&d, "IMG_F16");
  if (w->dtype == VKF_F16) vkf_plan_dispatch_define(&d, "W_F16");
  if (has_bias && bias->dtype == VKF_F16) vkf_plan_dispatch_define(&d, "BIAS_F16");
  if (y->dtype == VKF_F16) vkf_plan_dispatch_define(&d, "OUT_F16");
  uint32_t img_off = vkf_lower_bind(ctx, &d, img, VKF_ACCESS_READ);
  uint32_t w_off = vkf_lower_bind(ctx, &d, w, VKF_ACCESS_READ);
  uint32_t bias_off = has_bias ? vkf_lower_bind(ctx, &d, bias, VKF_ACCESS_READ) : 0;
  uint32_t y_off = vkf_lower_bind(ctx, &d, y, VKF_ACCESS_WRITE);
  const uint32_t head[8] = {(uint32_t)m,  (uint32_t)e,  (uint32_t)k,  (uint32_t)patches,
                            (uint32_t)gw, (uint32_t)ph, (uint32_t)pw, (uint32_t)(ph * pw)};
  for (uint32_t i = 0; i < 8; i++) vkf_plan_dispatch_push_u32(&d, head[i]);
  vkf_fastdiv fpq = vkf_fastdiv_make((uint32_t)(ph * pw)), fpw = vkf_fastdiv_make((uint32_t)pw);
  vkf_plan_dispatch_push_u32(&d, fpq.magic);
  vkf_plan_dispatch_push_u32(&d, fpq.shift);
  vkf_plan_dispatch_push_u32(&d, fpw.magic);
  vkf_plan_dispatch_push_u32(&d, fpw.shift);
  vkf_plan_dispatch_push_u32(&d, img_off);
  for (uint32_t i = 0; i < 4; i++) vkf_plan_dispatch_push_u32(&d, (uint32_t)img->strides[i]);
  vkf_plan_dispatch_push_u32(&d, w_off);
  for (uint32_t i = 0; i < 4; i++) vkf_plan_dispatch_push_u32(&d, (uint32_t)w->strides[i]);
  vkf_plan_dispatch_push_u32(&d, bias_off);
  vkf_plan_dispatch_push_u32(&d, has_bias ? (uint32_t)bias->strides[0] : 0);
  vkf_plan_dispatch_push_u32(&d, y_off);
  for (uint32_t i = 0; i < 3; i++) vkf_plan_dispatch_push_u32(&d, (uint32_t)y->strides[i]);
  uint32_t spec[6] = {t.bm, t.bn, t.bk, t.tm, t.tn, (t.bm / t.tm) * (t.bn / t.tn)};
  for (uint32_t i = 0; i < 6; i++) d.spec[i] = spec[i];
  d.spec_count = 6;
  d.groups[0] = vkf_div_up((uint64_t)e, t.bn);
  d.groups[1] = vkf_div_up((uint64_t)m, t.bm);
  d.groups[2] = 1;
  if (d.groups[1] > 65535)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "patch_embed \"%s\": %lld patches exceed the "
                           "workgroup grid",
                           node->name, (long long)m);
  return vkf_plan_add_dispatch(ctx->plan, &d);
}
