/* Owns lowering of PATCH_EMBED (image [B, C, H, W], weight [E, C, P, Q], optional bias [E] ->
 * [B, (H/P)*(W/Q), E]) onto shaders/patch_embed.comp: a tiled GEMM of the im2col'ed patches
 * [B*patches, C*P*Q] by the weight viewed as [E, C*P*Q]. */
#include "graph/lower.h"

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
  return t;
}

static int is_float(vkf_dtype d) { return d == VKF_F32 || d == VKF_F16; }

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
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "patch_embed \"%s\": image %s %s, weight %s %s",
                           node->name, vkf_dtype_name(img->dtype),
                           vkf_shape_format(img->rank, img->shape, sa, sizeof sa),
                           vkf_dtype_name(w->dtype),
                           vkf_shape_format(w->rank, w->shape, sb, sizeof sb));
  int any_f16 = img->dtype == VKF_F16 || w->dtype == VKF_F16 || y->dtype == VKF_F16 ||
                (has_bias && bias->dtype == VKF_F16);
  if (any_f16 && !ctx->caps->storage_16bit)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "patch_embed \"%s\": f16 tensors need 16-bit storage, which the device "
                           "lacks", node->name);
  int64_t bsz = img->shape[0], c = img->shape[1], ih = img->shape[2], iw = img->shape[3];
  int64_t e = w->shape[0], ph = w->shape[2], pw = w->shape[3];
  int64_t gh = ih / ph, gw = iw / pw, patches = gh * gw;
  int64_t m = bsz * patches, k = c * ph * pw;
  if (m == 0 || e == 0) return VKF_OK;
  if ((uint64_t)vkf_plan_tensor_count(img) > UINT32_MAX ||
      (uint64_t)vkf_plan_tensor_count(w) > UINT32_MAX ||
      (uint64_t)vkf_plan_tensor_count(y) > UINT32_MAX)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "patch_embed \"%s\": image %s needs indices beyond 32 bits", node->name,
                           vkf_shape_format(img->rank, img->shape, sa, sizeof sa));

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
  const uint32_t head[8] = {(uint32_t)m,       (uint32_t)e,  (uint32_t)k,  (uint32_t)patches,
                            (uint32_t)gw,      (uint32_t)ph, (uint32_t)pw, (uint32_t)(ph * pw)};
  for (uint32_t i = 0; i < 8; i++) vkf_plan_dispatch_push_u32(&d, head[i]);
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
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "patch_embed \"%s\": %lld patches exceed the "
                           "workgroup grid", node->name, (long long)m);
  return vkf_plan_add_dispatch(ctx->plan, &d);
}
