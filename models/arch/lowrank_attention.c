/* Nystromformer and Linformer attention as compositions of graph ops (see lowrank_attention.h).
 * Products are associated so that nothing N x N and nothing N x m beyond a fused attention's
 * working set is materialised: softmax(q k̃ᵀ) · (pinv · (softmax(q̃ kᵀ + mask) v)) is two fused
 * attentions and two m x m products, the same value as HF's (kernel_1 · pinv) · (kernel_3 · v)
 * up to rounding. */
#include "models/arch/lowrank_attention.h"

#include <math.h>
#include <stdio.h>

enum { LR_NAME_MAX = VKF_ARCH_NAME_MAX };

static void fill_scaled_identity(float *out, size_t count, const void *user) {
  const float *c = user;
  size_t m = (size_t)llround(sqrt((double)count));
  for (size_t i = 0; i < count; i++) out[i] = i % (m + 1) == 0 ? *c : 0.0f;
}

static vkf_value scaled_identity(vkf_graph *g, const vkf_arch_weights *w, int64_t m, float c,
                                 vkf_dtype dt) {
  char key[64];
  int64_t shape[2] = {m, m};
  return vkf_arch_computed(w, g, VKF_NAME(key, "nystrom.identity_x%g.%lld", c, (long long)m), dt, 2,
                           shape, fill_scaled_identity, &c);
}

static const vkf_tensor *tensor(vkf_graph *g, vkf_value v) {
  return vkf_value_valid(v) ? vkf_graph_tensor(g, v) : NULL;
}

vkf_value vkf_nystrom_pinv(vkf_graph *g, const vkf_arch_weights *w, const char *name, vkf_value mat,
                           vkf_nystrom_inv_init init, int iterations) {
  const vkf_tensor *t = tensor(g, mat);
  if (!t || t->rank != 4) return VKF_NO_VALUE;
  int64_t b = t->shape[0], h = t->shape[1], m = t->shape[2];
  vkf_dtype dt = t->dtype;
  char nm[2 * LR_NAME_MAX];
  /* torch.sum(key, dim=-2): column sums [B, H, 1, m]. */
  vkf_value colsum = vkf_reduce(g, VKF_NAME(nm, "%s.colsum", name), mat, VKF_REDUCE_SUM, 2);
  vkf_value mx;
  if (init == VKF_NYSTROM_INV_ORIGINAL) {
    int64_t flat[2] = {1, b * h * m}, one[4] = {1, 1, 1, 1};
    mx = vkf_reshape(g, VKF_NAME(nm, "%s.colsum_all", name), colsum, 2, flat);
    mx = vkf_reduce(g, VKF_NAME(nm, "%s.max", name), mx, VKF_REDUCE_MAX, 1);
    mx = vkf_reshape(g, VKF_NAME(nm, "%s.max4", name), mx, 4, one);
  } else {
    mx = vkf_reduce(g, VKF_NAME(nm, "%s.max", name), colsum, VKF_REDUCE_MAX, 3); /* [B,H,1,1] */
  }
  static const uint32_t tr[4] = {0, 1, 3, 2};
  vkf_value kt = vkf_copy(g, VKF_NAME(nm, "%s.kt", name),
                          vkf_permute(g, VKF_NAME(nm, "%s.kt_view", name), mat, tr));
  vkf_value val = vkf_div(g, VKF_NAME(nm, "%s.v0", name), kt, mx);
  vkf_value i7 = scaled_identity(g, w, m, 7.0f, dt), i15 = scaled_identity(g, w, m, 15.0f, dt);
  vkf_value i13 = scaled_identity(g, w, m, 13.0f, dt);
  for (int it = 0; it < (iterations ? iterations : 6); it++) {
    char p[LR_NAME_MAX];
    VKF_NAME(p, "%s.iter%d", name, it);
    vkf_value kv = vkf_matmul(g, VKF_NAME(nm, "%s.kv", p), mat, val, NULL);
    vkf_value a = vkf_sub(g, VKF_NAME(nm, "%s.a", p), i7, kv);
    a = vkf_matmul(g, VKF_NAME(nm, "%s.kva", p), kv, a, NULL);
    a = vkf_sub(g, VKF_NAME(nm, "%s.b", p), i15, a);
    a = vkf_matmul(g, VKF_NAME(nm, "%s.kvb", p), kv, a, NULL);
    a = vkf_sub(g, VKF_NAME(nm, "%s.c", p), i13, a);
    val = vkf_matmul(g, VKF_NAME(nm, "%s.v", p),
                     vkf_scale(g, VKF_NAME(nm, "%s.quarter", p), val, 0.25f), a, NULL);
  }
  return val;
}

/* Segment means [B, H, N, Dh] -> [B, H, m, Dh]. */
static vkf_value landmarks(vkf_graph *g, const char *name, vkf_value x, int64_t b, int64_t h,
                           int64_t m, int64_t seg, int64_t dh) {
  int64_t rows[3] = {b * h * m, seg, dh}, out[4] = {b, h, m, dh};
  char nm[LR_NAME_MAX];
  vkf_value r = vkf_reshape(g, VKF_NAME(nm, "%s.segments", name), x, 3, rows);
  r = vkf_mean_pool(g, VKF_NAME(nm, "%s.means", name), r, VKF_NO_VALUE);
  return vkf_reshape(g, name, r, 4, out);
}

vkf_value vkf_nystrom_attention(vkf_graph *g, const vkf_arch_weights *w, const char *name,
                                vkf_value q, vkf_value k, vkf_value v,
                                const vkf_nystrom_options *o) {
  const vkf_tensor *tq = tensor(g, q);
  if (!tq) return VKF_NO_VALUE;
  if (tq->rank != 4) {
    vkf_graph_set_error(g, vkf_status_make(VKF_STATUS_SHAPE,
                                           "nystrom attention \"%s\": q has rank %u, expected "
                                           "[B, H, N, Dh]",
                                           name, tq->rank));
    return VKF_NO_VALUE;
  }
  int64_t b = tq->shape[0], h = tq->shape[1], n = tq->shape[2], dh = tq->shape[3];
  int64_t m = o->landmarks;
  char nm[LR_NAME_MAX];
  /* query_layer / sqrt(sqrt(Dh)), the same for the keys. */
  float s = (float)(1.0 / sqrt(sqrt((double)dh)));
  vkf_value qs = vkf_scale(g, VKF_NAME(nm, "%s.q_scaled", name), q, s);
  vkf_value ks = vkf_scale(g, VKF_NAME(nm, "%s.k_scaled", name), k, s);
  vkf_value ctx;
  if (m == o->segment_len) {
    vkf_attention_options ao = {.scale = 1.0f, .bias = o->mask_bias};
    ctx = vkf_attention(g, VKF_NAME(nm, "%s.full", name), qs, ks, v, &ao);
  } else {
    if (m < 1 || n != o->segment_len || n % m != 0) {
      vkf_graph_set_error(
          g, vkf_status_make(VKF_STATUS_SHAPE,
                             "nystrom attention \"%s\": %lld tokens, but the %lld landmarks are "
                             "means of segments of a %lld-token sequence (segment_means_seq_len): "
                             "pad the input to %lld tokens",
                             name, (long long)n, (long long)m, (long long)o->segment_len,
                             (long long)o->segment_len));
      return VKF_NO_VALUE;
    }
    vkf_value ql = landmarks(g, VKF_NAME(nm, "%s.q_landmarks", name), qs, b, h, m, n / m, dh);
    vkf_value kl = landmarks(g, VKF_NAME(nm, "%s.k_landmarks", name), ks, b, h, m, n / m, dh);
    vkf_matmul_options tb = {.transpose_b = 1};
    vkf_value k2 = vkf_matmul(g, VKF_NAME(nm, "%s.kernel_2_scores", name), ql, kl, &tb);
    k2 = vkf_softmax(g, VKF_NAME(nm, "%s.kernel_2", name), k2, NULL);
    vkf_value pinv =
        vkf_nystrom_pinv(g, w, VKF_NAME(nm, "%s.pinv", name), k2, o->inv_init, o->iterations);
    /* kernel_3 · v: softmax(q̃ kᵀ + mask) v */
    vkf_attention_options a3 = {.scale = 1.0f, .bias = o->mask_bias};
    vkf_value nv = vkf_attention(g, VKF_NAME(nm, "%s.kernel_3_v", name), ql, ks, v, &a3);
    nv = vkf_matmul(g, VKF_NAME(nm, "%s.pinv_v", name), pinv, nv, NULL); /* [B, H, m, Dh] */
    /* kernel_1 · (...): softmax(q k̃ᵀ) (...) */
    vkf_attention_options a1 = {.scale = 1.0f};
    ctx = vkf_attention(g, VKF_NAME(nm, "%s.kernel_1", name), qs, kl, nv, &a1);
  }
  if (vkf_value_valid(o->conv_weight))
    ctx = vkf_add(g, name, ctx,
                  vkf_depthwise_conv(g, VKF_NAME(nm, "%s.conv", name), v, o->conv_weight));
  return ctx;
}

vkf_value vkf_linformer_attention(vkf_graph *g, const char *name, vkf_value q, vkf_value k,
                                  vkf_value v, vkf_value e, vkf_value f, float scale) {
  char nm[LR_NAME_MAX];
  /* E k: [(H,) kp, N] x [B, H, N, Dh] -> [B, H, kp, Dh], E broadcast over the batch (and heads). */
  vkf_value kp = vkf_matmul(g, VKF_NAME(nm, "%s.ek", name), e, k, NULL);
  vkf_value vp = vkf_matmul(g, VKF_NAME(nm, "%s.fv", name), f, v, NULL);
  vkf_attention_options ao = {.scale = scale};
  return vkf_attention(g, name, q, kp, vp, &ao);
}
