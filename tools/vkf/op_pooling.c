/* vkf op attention_pooling (op_pooling.h). */
#include "tools/vkf/op_pooling.h"

#include <stdio.h>
#include <string.h>

#include "graph/ir/builder.h"

enum { MAX_WEIGHT_KEYS = 4096, VALUE_CHUNK = 256 /* the fused kernel's widest Dv */ };

static vkf_status bad(const vkf_tensor *t, const char *what) {
  return vkf_status_make(VKF_STATUS_SHAPE,
                         "attention_pooling: %s must be f32 [N] or [N, d] (got rank %u, %s)",
                         what, t ? t->rank : 0, t ? vkf_dtype_name(t->dtype) : "absent");
}

/* x as rank 2: [N] -> [N, 1]. */
static vkf_value as_matrix(vkf_graph *g, const char *name, vkf_value x, const vkf_tensor *t) {
  if (t->rank == 2) return x;
  int64_t s[2] = {t->shape[0], 1};
  return vkf_reshape(g, name, x, 2, s);
}

static vkf_value constant(vkf_graph *g, const char *name, int64_t rows, int64_t cols,
                          float diag, float fill, vkf_status *out_err) {
  float *data = vkf_arena_alloc(vkf_graph_arena(g), (size_t)(rows * cols) * sizeof(float));
  if (!data) {
    *out_err = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "attention_pooling: %s", name);
    return VKF_NO_VALUE;
  }
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++) data[r * cols + c] = r == c ? diag : fill;
  int64_t s[2] = {rows, cols};
  return vkf_graph_constant(g, name, VKF_F32, 2, s, data);
}

vkf_value vkf_op_build_pooling(vkf_graph *g, const vkf_op_attrs *at, vkf_value q, vkf_value k,
                               vkf_value v, vkf_status *out_err) {
  float sigma;
  int64_t weights;
  if ((*out_err = vkf_op_attr_float(at, "sigma", 1e-6, 1e6, 1.0f, &sigma)) ||
      (*out_err = vkf_op_attr_int(at, "weights", 0, 1, 0, &weights)))
    return VKF_NO_VALUE;
  const vkf_tensor *tq = q.id ? vkf_graph_tensor(g, q) : NULL;
  const vkf_tensor *tk = k.id ? vkf_graph_tensor(g, k) : NULL;
  const vkf_tensor *tv = v.id ? vkf_graph_tensor(g, v) : NULL;
  const vkf_tensor *all[3] = {tq, tk, tv};
  static const char *const names[3] = {"queries (--in 1)", "keys (--in 2)", "values (--in 3)"};
  for (int i = 0; i < 3; i++)
    if (!all[i] || all[i]->dtype != VKF_F32 || all[i]->rank < 1 || all[i]->rank > 2) {
      *out_err = bad(all[i], names[i]);
      return VKF_NO_VALUE;
    }
  int64_t nq = tq->shape[0], nk = tk->shape[0];
  int64_t d = tq->rank == 2 ? tq->shape[1] : 1, dk = tk->rank == 2 ? tk->shape[1] : 1;
  int64_t dv = tv->rank == 2 ? tv->shape[1] : 1;
  int vector_out = tv->rank == 1;
  if (d != dk || tv->shape[0] != nk || d + 1 > 256 || (!weights && dv > 256)) {
    *out_err = vkf_status_make(VKF_STATUS_SHAPE,
                               "attention_pooling: queries [%lld, %lld], keys [%lld, %lld], "
                               "values [%lld, %lld]: a query and a key are d numbers (d <= 255), "
                               "one value row per key (dv <= 256)",
                               (long long)nq, (long long)d, (long long)nk, (long long)dk,
                               (long long)tv->shape[0], (long long)dv);
    return VKF_NO_VALUE;
  }
  if (weights && nk > MAX_WEIGHT_KEYS) {
    *out_err = vkf_status_make(VKF_STATUS_UNSUPPORTED,
                               "attention_pooling: weights=1 with %lld keys; at most %d (the "
                               "weights come from pooling the identity's columns)",
                               (long long)nk, MAX_WEIGHT_KEYS);
    return VKF_NO_VALUE;
  }
  q = as_matrix(g, "pool.queries", q, tq);
  k = as_matrix(g, "pool.keys", k, tk);
  v = as_matrix(g, "pool.values", v, tv);
  /* centred on the keys' mean */
  vkf_value c = vkf_scale(g, "pool.key_mean", vkf_reduce(g, "pool.key_sum", k, VKF_REDUCE_SUM, 0),
                          1.0f / (float)nk); /* [1, d] */
  vkf_value kc = vkf_sub(g, "pool.keys_centred", k, c), qc = vkf_sub(g, "pool.queries_centred", q, c);
  vkf_value kk = vkf_scale(g, "pool.key_norms",
                           vkf_reduce(g, "pool.key_squares", vkf_mul(g, "pool.key_sq", kc, kc),
                                      VKF_REDUCE_SUM, 1),
                           -0.5f); /* [Nk, 1]: -|k|^2 / 2 */
  vkf_value ones = constant(g, "pool.ones", nq, 1, 1.0f, 1.0f, out_err);
  if (*out_err) return VKF_NO_VALUE;
  vkf_value qs[2] = {qc, ones}, ks[2] = {kc, kk};
  int64_t s3q[3] = {1, nq, d + 1}, s3k[3] = {1, nk, d + 1};
  vkf_value qp = vkf_reshape(g, "pool.q", vkf_concat(g, "pool.q2", qs, 2, 1), 3, s3q);
  vkf_value kp = vkf_reshape(g, "pool.k", vkf_concat(g, "pool.k2", ks, 2, 1), 3, s3k);
  vkf_attention_options o = {.scale = 1.0f / (sigma * sigma)};
  vkf_value out;
  if (!weights) {
    int64_t s3v[3] = {1, nk, dv};
    out = vkf_attention(g, "pool.attention", qp, kp, vkf_reshape(g, "pool.v", v, 3, s3v), &o);
  } else {
    /* weights[q, j] = the pooling of the identity's column j, 256 columns per attention */
    vkf_value eye = constant(g, "pool.identity", nk, nk, 1.0f, 0.0f, out_err);
    if (*out_err) return VKF_NO_VALUE;
    vkf_value parts[MAX_WEIGHT_KEYS / VALUE_CHUNK];
    uint32_t count = 0;
    for (int64_t c0 = 0; c0 < nk; c0 += VALUE_CHUNK) {
      int64_t c1 = c0 + VALUE_CHUNK < nk ? c0 + VALUE_CHUNK : nk;
      char name[48];
      snprintf(name, sizeof name, "pool.identity_cols.%lld", (long long)c0);
      vkf_value cols = vkf_copy(g, name, vkf_slice(g, NULL, eye, 1, c0, c1));
      int64_t s3v[3] = {1, nk, c1 - c0};
      snprintf(name, sizeof name, "pool.weights.%lld", (long long)c0);
      parts[count++] = vkf_attention(g, name, qp, kp, vkf_reshape(g, NULL, cols, 3, s3v), &o);
    }
    out = count == 1 ? parts[0] : vkf_concat(g, "pool.weights", parts, count, 2);
    dv = nk;
    vector_out = 0;
  }
  int64_t s2[2] = {nq, dv}, s1[1] = {nq};
  return vector_out ? vkf_reshape(g, "pool.out", out, 1, s1) : vkf_reshape(g, "pool.out", out, 2, s2);
}
