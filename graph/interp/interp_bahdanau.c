/* Owns the references of Bahdanau's ops (builder.h): ADDITIVE_ATTENTION (the scores, the masked
 * softmax and the weighted values per query row) and GRU_SCAN (the recurrence step by step), in
 * fp64. */
#include <math.h>
#include <stdlib.h>

#include "graph/interp/interp_internal.h"

vkf_status vkf_ref_additive_attention(vkf_interp *it, const vkf_node *n) {
  const vkf_tensor *tq = vkf_interp_in_tensor(it, n, VKF_IN_ADDITIVE_Q);
  const vkf_tensor *tk = vkf_interp_in_tensor(it, n, VKF_IN_ADDITIVE_K);
  const vkf_tensor *tv = vkf_interp_in_tensor(it, n, VKF_IN_ADDITIVE_V);
  const vkf_tensor *tl = vkf_interp_in_tensor(it, n, VKF_IN_ADDITIVE_VALID_LENS);
  VKF_IN_F32(q, it, n, VKF_IN_ADDITIVE_Q); /* [B, Nq, H] */
  VKF_IN_F32(k, it, n, VKF_IN_ADDITIVE_K); /* [B, Nk, H] */
  VKF_IN_F32(w, it, n, VKF_IN_ADDITIVE_W); /* [H] */
  VKF_IN_F32(v, it, n, VKF_IN_ADDITIVE_V); /* [B, Nk, Dv] */
  VKF_IN_I32(lens, it, n, VKF_IN_ADDITIVE_VALID_LENS);
  float *y = vkf_interp_out_f32(it, n);
  if (!y) return vkf_interp_oom(n);
  int64_t bsz = tq->shape[0], nq = tq->shape[1], h = tq->shape[2], nk = tk->shape[1];
  int64_t dv = tv->shape[2];
  int weights = n->attrs.additive_attention.weights;
  double *p = malloc((size_t)(nk ? nk : 1) * sizeof *p);
  if (!p) return vkf_interp_oom(n);
  for (int64_t b = 0; b < bsz; b++)
    for (int64_t i = 0; i < nq; i++) {
      int64_t len = nk;
      if (lens) len = tl->rank == 1 ? lens[b] : lens[b * nq + i];
      if (len < 0) len = 0;
      if (len > nk) len = nk;
      double m = -INFINITY, sum = 0;
      for (int64_t j = 0; j < len; j++) {
        double s = 0;
        for (int64_t c = 0; c < h; c++)
          s += (double)w[c] * tanh((double)q[(b * nq + i) * h + c] + k[(b * nk + j) * h + c]);
        p[j] = s;
        if (s > m) m = s;
      }
      for (int64_t j = 0; j < len; j++) sum += p[j] = exp(p[j] - m);
      for (int64_t j = 0; j < len; j++) p[j] /= sum;
      float *row = y + (b * nq + i) * (weights ? nk : dv);
      if (weights) {
        for (int64_t j = 0; j < nk; j++) row[j] = j < len ? (float)p[j] : 0.0f;
        continue;
      }
      for (int64_t d = 0; d < dv; d++) {
        double acc = 0;
        for (int64_t j = 0; j < len; j++) acc += p[j] * v[(b * nk + j) * dv + d];
        row[d] = (float)acc;
      }
    }
  free(p);
  return VKF_OK;
}

vkf_status vkf_ref_gru_scan(vkf_interp *it, const vkf_node *n) {
  const vkf_tensor *tx = vkf_interp_in_tensor(it, n, VKF_IN_GRU_GATES);
  const vkf_tensor *tw = vkf_interp_in_tensor(it, n, VKF_IN_GRU_W_HH);
  VKF_IN_F32(x, it, n, VKF_IN_GRU_GATES); /* [B, T, 3H] */
  VKF_IN_F32(w, it, n, VKF_IN_GRU_W_HH);  /* [3H, H] */
  VKF_IN_F32(bias, it, n, VKF_IN_GRU_B_HH);
  VKF_IN_F32(h0, it, n, VKF_IN_GRU_H0);   /* [B, H] or NULL */
  float *y = vkf_interp_out_f32(it, n);
  if (!y) return vkf_interp_oom(n);
  int64_t bsz = tx->shape[0], steps = tx->shape[1], h = tw->shape[1];
  double *hs = malloc((size_t)(2 * h) * sizeof *hs);
  if (!hs) return vkf_interp_oom(n);
  for (int64_t b = 0; b < bsz; b++) {
    double *cur = hs, *next = hs + h;
    for (int64_t k = 0; k < h; k++) cur[k] = h0 ? h0[b * h + k] : 0.0;
    for (int64_t t = 0; t < steps; t++) {
      const float *gi = x + (b * steps + t) * 3 * h;
      for (int64_t k = 0; k < h; k++) {
        double gh[3];
        for (int gate = 0; gate < 3; gate++) {
          const float *row = w + (gate * h + k) * h;
          double acc = bias[gate * h + k];
          for (int64_t c = 0; c < h; c++) acc += (double)row[c] * cur[c];
          gh[gate] = acc;
        }
        double r = 1.0 / (1.0 + exp(-(gi[k] + gh[0])));
        double z = 1.0 / (1.0 + exp(-(gi[h + k] + gh[1])));
        double nn = tanh(gi[2 * h + k] + r * gh[2]);
        next[k] = (1.0 - z) * nn + z * cur[k];
        y[(b * steps + t) * h + k] = (float)next[k];
      }
      double *swap = cur;
      cur = next;
      next = swap;
    }
  }
  free(hs);
  return VKF_OK;
}
