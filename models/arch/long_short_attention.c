/* Long-short attention as graphs (see long_short_attention.h): the segments' compressed rows from
 * ordinary ops, then one softmax over them and the window, through the block-sparse op for whole
 * sequences (a layout built once per length and kept in the weight cache) and the fused op with
 * a run-time bias for decode steps (the query's position is data there, so no layout fits). */
#include "models/arch/long_short_attention.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ir/sparse_layout.h"
#include "models/arch/nn_helpers.h"

#define LS_BLOCK 32u    /* tokens per query and key block of the sparse layout */

vkf_status vkf_long_short_expect(const vkf_checkpoint *ck, const char *p,
                                 const vkf_hf_attention *a, int64_t kv_heads, int64_t head_dim) {
  int64_t dims[3] = {kv_heads, head_dim, a->rank};
  VKF_RETURN_IF_ERROR(vkf_arch_expect(ck, p, "vkf_long_short.proj", 3, dims));
  if (!a->dual_ln) return VKF_OK;
  static const char *const norms[] = {
      "vkf_long_short.norm_local.weight", "vkf_long_short.norm_local.bias",
      "vkf_long_short.norm_global.weight", "vkf_long_short.norm_global.bias"};
  for (int i = 0; i < 4; i++) VKF_RETURN_IF_ERROR(vkf_arch_expect2(ck, p, norms[i], head_dim, 0));
  return VKF_OK;
}

void vkf_long_short_weights_get(const vkf_arch_weights *w, vkf_graph *g, const char *p,
                                const vkf_hf_attention *a, float eps,
                                vkf_long_short_weights *out) {
  memset(out, 0, sizeof *out);
  char n[VKF_ARCH_NAME_MAX];
  out->eps = eps;
  out->proj = vkf_arch_weight(w, g, VKF_NAME(n, "%svkf_long_short.proj", p));
  if (!a->dual_ln) return;
  out->local_gamma = vkf_arch_weight(w, g, VKF_NAME(n, "%svkf_long_short.norm_local.weight", p));
  out->local_beta = vkf_arch_weight(w, g, VKF_NAME(n, "%svkf_long_short.norm_local.bias", p));
  out->global_gamma = vkf_arch_weight(w, g, VKF_NAME(n, "%svkf_long_short.norm_global.weight", p));
  out->global_beta = vkf_arch_weight(w, g, VKF_NAME(n, "%svkf_long_short.norm_global.bias", p));
}

/* x itself when contiguous, else a copy (the norms and reshapes read rows). */
static vkf_value contiguous(vkf_graph *g, const char *name, vkf_value x) {
  if (!vkf_value_valid(x) || vkf_tensor_is_contiguous(vkf_graph_tensor(g, x))) return x;
  return vkf_copy(g, name, x);
}

/* x in `dtype` (a weight read by an f16 cache, or the reverse). */
static vkf_value as_dtype(vkf_graph *g, const char *name, vkf_value x, vkf_dtype dtype) {
  if (!vkf_value_valid(x) || vkf_graph_tensor(g, x)->dtype == dtype) return x;
  return vkf_cast(g, name, x, dtype);
}

static vkf_value norm(vkf_graph *g, const char *name, const vkf_long_short_weights *lw,
                      vkf_value x, vkf_value gamma, vkf_value beta) {
  char nm[VKF_ARCH_NAME_MAX + 32];
  vkf_dtype dt = vkf_value_valid(x) ? vkf_graph_tensor(g, x)->dtype : VKF_F32;
  vkf_norm_options o = {.eps = lw->eps,
                        .gamma = as_dtype(g, VKF_NAME(nm, "%s.gamma", name), gamma, dt),
                        .beta = as_dtype(g, VKF_NAME(nm, "%s.beta", name), beta, dt)};
  return vkf_layernorm(g, name, contiguous(g, VKF_NAME(nm, "%s.contiguous", name), x), &o);
}

vkf_value vkf_long_short_local_norm(vkf_graph *g, const char *name, const vkf_hf_attention *a,
                                    const vkf_long_short_weights *lw, vkf_value x) {
  if (!a->dual_ln) return x;
  return norm(g, name, lw, x, lw->local_gamma, lw->local_beta);
}

static void fill_arange(float *out, size_t count, const void *user) {
  float div = *(const float *)user; /* floor(i / div) */
  for (size_t i = 0; i < count; i++) out[i] = floorf((float)i / div);
}

static vkf_value scalar(const vkf_arch_weights *w, vkf_graph *g, float value) {
  char key[64];
  int64_t one[1] = {1};
  return vkf_nn_filled(w, g, VKF_NAME(key, "long_short.scalar.%.9g", value), VKF_F32, 1, one,
                       value);
}

/* The compressed rows K^, V^ [B, Hkv, S·r, Dh] of S segments of l positions of k~, v~
 * [B, Hkv, Nk, Dh]; pad optional f32 [B, 1, Nk, 1] (0 kept, -1e30 padding). */
static void compressed(vkf_graph *g, const char *at, const vkf_hf_attention *a,
                       const vkf_long_short_weights *lw, vkf_value k, vkf_value v, vkf_value pad,
                       int64_t segs, int64_t l, vkf_value *out_k, vkf_value *out_v) {
  const vkf_tensor *kt = vkf_graph_tensor(g, k);
  int64_t b = kt->shape[0], hkv = kt->shape[1], nk = kt->shape[2], dh = kt->shape[3];
  int64_t r = a->rank, bh = b * hkv;
  vkf_dtype dt = kt->dtype;
  char nm[VKF_ARCH_NAME_MAX + 64];
  vkf_value proj = as_dtype(g, VKF_NAME(nm, "%s.proj_weight", at), lw->proj, dt);
  vkf_value logits = vkf_matmul(g, VKF_NAME(nm, "%s.proj", at), k, proj, NULL);
  /* P's softmax runs in f32 whatever the run dtype: the padding bias must not become -inf. */
  if (dt != VKF_F32) logits = vkf_cast(g, VKF_NAME(nm, "%s.proj_f32", at), logits, VKF_F32);
  if (vkf_value_valid(pad)) logits = vkf_add(g, VKF_NAME(nm, "%s.proj_masked", at), logits, pad);
  int64_t flat[3] = {bh, nk, r}, seg4[4] = {bh, segs, l, r};
  logits = vkf_reshape(g, VKF_NAME(nm, "%s.proj_rows", at), logits, 3, flat);
  if (segs * l < nk) logits = vkf_slice(g, VKF_NAME(nm, "%s.proj_whole", at), logits, 1, 0, segs * l);
  logits = vkf_reshape(g, VKF_NAME(nm, "%s.proj_segments", at), logits, 4, seg4);
  static const uint32_t swap[4] = {0, 1, 3, 2};
  logits = vkf_copy(g, VKF_NAME(nm, "%s.proj_by_row", at),
                    vkf_permute(g, VKF_NAME(nm, "%s.proj_t", at), logits, swap)); /* [BH,S,r,l] */
  vkf_value p = vkf_softmax(g, VKF_NAME(nm, "%s.weights", at), logits, NULL);
  if (dt != VKF_F32) p = vkf_cast(g, VKF_NAME(nm, "%s.weights_cast", at), p, dt);
  vkf_value src[2] = {k, v}, res[2];
  const char *which[2] = {"k", "v"};
  for (int i = 0; i < 2; i++) {
    int64_t f3[3] = {bh, nk, dh}, s4[4] = {bh, segs, l, dh}, o4[4] = {b, hkv, segs * r, dh};
    vkf_value x = vkf_reshape(g, VKF_NAME(nm, "%s.%s_rows", at, which[i]), src[i], 3, f3);
    if (segs * l < nk) x = vkf_slice(g, VKF_NAME(nm, "%s.%s_whole", at, which[i]), x, 1, 0, segs * l);
    x = vkf_reshape(g, VKF_NAME(nm, "%s.%s_segments", at, which[i]), x, 4, s4);
    x = vkf_matmul(g, VKF_NAME(nm, "%s.%s_compressed", at, which[i]), p, x, NULL); /* [BH,S,r,Dh] */
    x = vkf_reshape(g, VKF_NAME(nm, "%s.%s_long", at, which[i]), x, 4, o4);
    if (a->dual_ln)
      x = norm(g, VKF_NAME(nm, "%s.%s_norm_global", at, which[i]), lw, x, lw->global_gamma,
               lw->global_beta);
    res[i] = x;
  }
  *out_k = res[0];
  *out_v = res[1];
}

/* The sparse layout of whole sequences of n tokens with `prefix` compressed rows, kept in the
 * weight cache under a key naming every parameter (the same for every layer). */
static vkf_status layout_tables(const vkf_arch_weights *w, const vkf_hf_attention *a, int causal,
                                int64_t n, int64_t prefix, const int32_t **rows,
                                const int32_t **cols, const int32_t **masks,
                                vkf_sparse_layout *shape) {
  char key[160];
  snprintf(key, sizeof key, "long_short.layout.%lld.%lld.%lld.%lld.%d", (long long)n,
           (long long)a->window, (long long)a->rank, (long long)a->segment, causal);
  size_t len = strlen(key);
  const char *parts[4] = {".rows", ".cols", ".masks", ".shape"};
  const void *found[4];
  for (int i = 0; i < 4; i++) {
    snprintf(key + len, sizeof key - len, "%s", parts[i]);
    found[i] = vkf_weight_cache_find(*w->cache, key, VKF_I32);
  }
  if (!found[3]) {
    vkf_sparse_pattern p = {.block_q = LS_BLOCK, .block_k = LS_BLOCK, .window_left = -1,
                            .window_right = -1, .ls_window = (uint32_t)a->window,
                            .ls_prefix = (uint32_t)prefix, .ls_rows = (uint32_t)a->rank,
                            .ls_segment = causal ? (uint32_t)a->segment : 0};
    vkf_sparse_layout l;
    VKF_RETURN_IF_ERROR(vkf_sparse_layout_from_pattern(&p, 1, (uint32_t)n,
                                                       (uint32_t)(n + prefix), &l));
    uint32_t words = vkf_sparse_mask_words(l.block_k);
    size_t sizes[3] = {(l.q_blocks + 1) * sizeof(int32_t), (size_t)l.entries * 2 * sizeof(int32_t),
                       (size_t)l.mask_count * l.block_q * words * sizeof(int32_t)};
    int32_t *src[3] = {l.rows, l.cols, l.masks};
    int32_t *dims = malloc(5 * sizeof(int32_t));
    vkf_status st = dims ? VKF_OK : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "long-short layout");
    for (int i = 0; i < 3 && !st; i++) {
      void *copy = malloc(sizes[i] ? sizes[i] : 4);
      if (copy && sizes[i]) memcpy(copy, src[i], sizes[i]);
      snprintf(key + len, sizeof key - len, "%s", parts[i]);
      found[i] = copy ? vkf_weight_cache_put_raw(w->cache, key, VKF_I32, copy) : NULL;
      if (!found[i]) st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "long-short layout");
    }
    if (!st) {
      int32_t d[5] = {(int32_t)l.q_blocks, (int32_t)l.entries, (int32_t)l.mask_count,
                      (int32_t)l.block_q, (int32_t)l.block_k};
      memcpy(dims, d, sizeof d);
      snprintf(key + len, sizeof key - len, "%s", parts[3]);
      found[3] = vkf_weight_cache_put_raw(w->cache, key, VKF_I32, dims);
      dims = NULL;
      if (!found[3]) st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "long-short layout");
    }
    free(dims);
    vkf_sparse_layout_free(&l);
    if (st) return st;
  }
  const int32_t *d = found[3];
  memset(shape, 0, sizeof *shape);
  shape->q_blocks = (uint32_t)d[0];
  shape->entries = (uint32_t)d[1];
  shape->mask_count = (uint32_t)d[2];
  shape->block_q = (uint32_t)d[3];
  shape->block_k = (uint32_t)d[4];
  *rows = found[0];
  *cols = found[1];
  *masks = found[2];
  return VKF_OK;
}

/* Whole sequences: the block-sparse op over [compressed rows; the sequence]. */
static vkf_value whole(vkf_graph *g, const vkf_arch_weights *w, const char *at,
                       const vkf_hf_attention *a, const vkf_long_short_weights *lw, vkf_value q,
                       vkf_value k, vkf_value v, const vkf_long_short_io *io) {
  char nm[VKF_ARCH_NAME_MAX + 64];
  k = contiguous(g, VKF_NAME(nm, "%s.k_rows", at), k);
  v = contiguous(g, VKF_NAME(nm, "%s.v_rows", at), v);
  const vkf_tensor *kt = vkf_graph_tensor(g, k);
  int64_t b = kt->shape[0], n = kt->shape[2], dh = kt->shape[3];
  int64_t segs = io->causal ? n / a->segment : 1, l = io->causal ? a->segment : n;
  vkf_value pad = VKF_NO_VALUE, key_bias = VKF_NO_VALUE;
  if (vkf_value_valid(io->keep)) {
    /* (keep - 1)·1e30: 0 kept, -1e30 padding */
    vkf_value m = vkf_sub(g, VKF_NAME(nm, "%s.padding", at), io->keep, scalar(w, g, 1.0f));
    key_bias = vkf_scale(g, VKF_NAME(nm, "%s.key_bias", at), m, VKF_MASKED_SCORE);
    int64_t p4[4] = {b, 1, n, 1};
    pad = vkf_reshape(g, VKF_NAME(nm, "%s.pad_rows", at), key_bias, 4, p4);
  }
  int64_t prefix = segs * a->rank;
  if (segs > 0) {
    vkf_value kc, vc;
    compressed(g, at, a, lw, k, v, pad, segs, l, &kc, &vc);
    vkf_value ks[2] = {kc, k}, vs[2] = {vc, v};
    k = vkf_concat(g, VKF_NAME(nm, "%s.k_all", at), ks, 2, 2);
    v = vkf_concat(g, VKF_NAME(nm, "%s.v_all", at), vs, 2, 2);
    if (vkf_value_valid(key_bias)) { /* the compressed rows are never padding */
      char key[64];
      int64_t zs[2] = {b, prefix};
      vkf_value z = vkf_nn_filled(
          w, g, VKF_NAME(key, "long_short.zeros.%lld.%lld", (long long)b, (long long)prefix),
          VKF_F32, 2, zs, 0.0f);
      vkf_value bs[2] = {z, key_bias};
      key_bias = vkf_concat(g, VKF_NAME(nm, "%s.key_bias_all", at), bs, 2, 1);
    }
  }
  const int32_t *rows, *cols, *masks;
  vkf_sparse_layout l4;
  vkf_status st = layout_tables(w, a, io->causal, n, prefix, &rows, &cols, &masks, &l4);
  if (st) {
    vkf_graph_set_error(g, vkf_status_annotate(st, "%s: ", at));
    return VKF_NO_VALUE;
  }
  int64_t rs[2] = {1, (int64_t)l4.q_blocks + 1}, cs[3] = {1, l4.entries, 2},
          ms[3] = {l4.mask_count, l4.block_q, vkf_sparse_mask_words(l4.block_k)};
  char key[192];
  snprintf(key, sizeof key, "%s.layout", at);
  vkf_sparse_attention_options so = {
      .scale = 1.0f / sqrtf((float)dh),
      .block_q = l4.block_q,
      .block_k = l4.block_k,
      .causal = io->causal,
      .masks = l4.mask_count ? vkf_graph_constant(g, VKF_NAME(nm, "%s.masks", key), VKF_I32, 3, ms,
                                                  masks)
                             : VKF_NO_VALUE,
      .key_bias = key_bias,
  };
  vkf_value rv = vkf_graph_constant(g, VKF_NAME(nm, "%s.rows", key), VKF_I32, 2, rs, rows);
  vkf_value cv = vkf_graph_constant(g, VKF_NAME(nm, "%s.cols", key), VKF_I32, 3, cs, cols);
  return vkf_sparse_attention(g, at, q, k, v, rv, cv, &so);
}

/* 1 where integer x >= 1, else 0: relu(x) - relu(x - 1), exact on integers. */
static vkf_value at_least_one(vkf_graph *g, const vkf_arch_weights *w, const char *name,
                              vkf_value x) {
  char nm[VKF_ARCH_NAME_MAX + 32];
  vkf_value x1 = vkf_sub(g, VKF_NAME(nm, "%s.minus_one", name), x, scalar(w, g, 1.0f));
  return vkf_sub(g, name, vkf_relu(g, VKF_NAME(nm, "%s.relu", name), x),
                 vkf_relu(g, VKF_NAME(nm, "%s.relu1", name), x1));
}

/* floor(x / d) of non-negative integers x (f32): the division is correctly rounded, so exact
 * multiples stay whole and the others stay below the next integer; the cast truncates. */
static vkf_value floor_div(vkf_graph *g, const vkf_arch_weights *w, const char *name, vkf_value x,
                           float d) {
  char nm[VKF_ARCH_NAME_MAX + 32];
  vkf_value q = vkf_div(g, VKF_NAME(nm, "%s.div", name), x, scalar(w, g, d));
  return vkf_cast(g, name, vkf_cast(g, VKF_NAME(nm, "%s.trunc", name), q, VKF_I32), VKF_F32);
}

/* Decode steps: the fused op over [every cache segment's rows; the cache] with an additive bias
 * [B, 1, Nq, S·r + C] from the queries' run-time positions. */
static vkf_value step(vkf_graph *g, const vkf_arch_weights *w, const char *at,
                      const vkf_hf_attention *a, const vkf_long_short_weights *lw, vkf_value q,
                      vkf_value k, vkf_value v, const vkf_long_short_io *io) {
  const vkf_tensor *kt = vkf_graph_tensor(g, k);
  int64_t b = kt->shape[0], cap = kt->shape[2], dh = kt->shape[3];
  int64_t nq = vkf_graph_tensor(g, q)->shape[2];
  int64_t segs = cap / a->segment, prefix = segs * a->rank;
  char nm[VKF_ARCH_NAME_MAX + 64], key[96];
  /* t = start + i: [B, 1, Nq, 1] */
  int64_t rows[4] = {b, 1, 1, 1}, qi[4] = {1, 1, nq, 1};
  static const float one = 1.0f;
  vkf_value s0 = vkf_reshape(g, VKF_NAME(nm, "%s.start", at),
                             vkf_cast(g, VKF_NAME(nm, "%s.start_f32", at), io->start, VKF_F32), 4,
                             rows);
  vkf_value iq = vkf_arch_computed(w, g, VKF_NAME(key, "long_short.query_index.%lld", (long long)nq),
                                   VKF_F32, 4, qi, fill_arange, &one);
  vkf_value t = vkf_add(g, VKF_NAME(nm, "%s.position", at), s0, iq);
  /* the cache's positions j: [1, 1, 1, C] */
  int64_t kj[4] = {1, 1, 1, cap};
  vkf_value j = vkf_arch_computed(w, g, VKF_NAME(key, "long_short.key_index.%lld", (long long)cap),
                                  VKF_F32, 4, kj, fill_arange, &one);
  /* future keys: j - t >= 1; keys before the window: lo - j >= 1, lo = floor(t/w)·w - floor(w/2) */
  vkf_value future = at_least_one(g, w, VKF_NAME(nm, "%s.future", at),
                                  vkf_sub(g, VKF_NAME(nm, "%s.future_t", at), j, t));
  vkf_value seg = floor_div(g, w, VKF_NAME(nm, "%s.window_segment", at), t, (float)a->window);
  vkf_value lo = vkf_sub(g, VKF_NAME(nm, "%s.window_first", at),
                         vkf_scale(g, VKF_NAME(nm, "%s.window_start", at), seg, (float)a->window),
                         scalar(w, g, (float)(a->window / 2)));
  vkf_value before = at_least_one(g, w, VKF_NAME(nm, "%s.before_window", at),
                                  vkf_sub(g, VKF_NAME(nm, "%s.before_t", at), lo, j));
  /* The two rules mask disjoint keys, so their sum is their union. */
  vkf_value masked = vkf_add(g, VKF_NAME(nm, "%s.local_masked", at), future, before);
  if (prefix > 0) {
    vkf_value kc, vc;
    compressed(g, at, a, lw, k, v, VKF_NO_VALUE, segs, a->segment, &kc, &vc);
    vkf_value ks[2] = {kc, k}, vs[2] = {vc, v};
    k = vkf_concat(g, VKF_NAME(nm, "%s.k_all", at), ks, 2, 2);
    v = vkf_concat(g, VKF_NAME(nm, "%s.v_all", at), vs, 2, 2);
    /* row g of segment floor(g / r) is hidden unless that segment ended: floor(g/r) >= done,
     * done = floor((t + 1) / l), i.e. floor(g/r) - done + 1 >= 1 */
    int64_t gs[4] = {1, 1, 1, prefix};
    float r = (float)a->rank;
    vkf_value gseg = vkf_arch_computed(
        w, g, VKF_NAME(key, "long_short.row_segment.%lld.%lld", (long long)prefix, (long long)a->rank),
        VKF_F32, 4, gs, fill_arange, &r);
    vkf_value done = floor_div(g, w, VKF_NAME(nm, "%s.segments_done", at),
                               vkf_add(g, VKF_NAME(nm, "%s.position1", at), t, scalar(w, g, 1.0f)),
                               (float)a->segment);
    vkf_value d = vkf_add(g, VKF_NAME(nm, "%s.rows_ahead", at),
                          vkf_sub(g, VKF_NAME(nm, "%s.rows_ahead0", at), gseg, done),
                          scalar(w, g, 1.0f));
    vkf_value hidden = at_least_one(g, w, VKF_NAME(nm, "%s.rows_hidden", at), d);
    /* both [B, 1, Nq, ·]: the rules broadcast the positions t against the columns */
    vkf_value parts[2] = {hidden, masked};
    masked = vkf_concat(g, VKF_NAME(nm, "%s.masked", at), parts, 2, 3);
  }
  vkf_attention_options ao = {
      .scale = 1.0f / sqrtf((float)dh),
      .bias = vkf_scale(g, VKF_NAME(nm, "%s.bias", at), masked, -VKF_MASKED_SCORE),
  };
  return vkf_attention(g, at, q, k, v, &ao);
}

vkf_value vkf_long_short_attention(vkf_graph *g, const vkf_arch_weights *w, const char *name,
                                   const vkf_hf_attention *a, const vkf_long_short_weights *lw,
                                   vkf_value q, vkf_value k, vkf_value v,
                                   const vkf_long_short_io *io) {
  if (!vkf_value_valid(q) || !vkf_value_valid(k) || !vkf_value_valid(v)) return VKF_NO_VALUE;
  if (vkf_value_valid(io->start)) {
    if (!io->causal) {
      vkf_graph_set_error(g, vkf_status_make(VKF_STATUS_UNSUPPORTED,
                                             "%s: long-short decode steps need the causal form",
                                             name));
      return VKF_NO_VALUE;
    }
    return step(g, w, name, a, lw, q, k, v, io);
  }
  return whole(g, w, name, a, lw, q, k, v, io);
}
