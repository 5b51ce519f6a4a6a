/* Owns the reference of ADDITIVE_ATTENTION (builder.h: vkf_additive_attention): the scores, the
 * masked softmax and the weighted values per query row, in fp64. */
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
