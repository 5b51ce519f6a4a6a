/* Owns the reference for the ops low-rank attention adds (Nystromformer): a sum or max along
 * one axis and the depthwise convolution along the sequence. fp64 accumulation. */
#include <math.h>

#include "graph/interp/interp_internal.h"

vkf_status vkf_ref_reduce(vkf_interp *it, const vkf_node *n) {
  const vkf_tensor *tx = vkf_interp_in_tensor(it, n, 0);
  VKF_IN_F32(x, it, n, 0);
  int argmax = n->attrs.reduce.kind == VKF_REDUCE_ARGMAX;
  float *y = argmax ? NULL : vkf_interp_out_f32(it, n);
  int32_t *yi = argmax ? vkf_interp_out_i32(it, n) : NULL;
  if (!y && !yi) return vkf_interp_oom(n);
  uint32_t axis = n->attrs.reduce.axis;
  int64_t outer = 1, inner = 1, len = tx->shape[axis];
  for (uint32_t d = 0; d < axis; d++) outer *= tx->shape[d];
  for (uint32_t d = axis + 1; d < tx->rank; d++) inner *= tx->shape[d];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      const float *row = x + o * len * inner + i;
      if (argmax) { /* the first maximum, NaN the largest (vkf_sampling_argmax) */
        int64_t best = 0;
        for (int64_t t = 1; t < len && !isnan(row[best * inner]); t++)
          if (row[t * inner] > row[best * inner] || isnan(row[t * inner])) best = t;
        yi[o * inner + i] = (int32_t)best;
        continue;
      }
      double acc = n->attrs.reduce.kind == VKF_REDUCE_MAX ? -INFINITY : 0.0;
      for (int64_t t = 0; t < len; t++) {
        double v = row[t * inner];
        if (n->attrs.reduce.kind == VKF_REDUCE_MAX)
          acc = v > acc ? v : acc;
        else
          acc += v;
      }
      y[o * inner + i] = (float)acc;
    }
  return VKF_OK;
}

vkf_status vkf_ref_depthwise_conv(vkf_interp *it, const vkf_node *n) {
  const vkf_tensor *tx = vkf_interp_in_tensor(it, n, VKF_IN_CONV_X);
  const vkf_tensor *tw = vkf_interp_in_tensor(it, n, VKF_IN_CONV_WEIGHT);
  VKF_IN_F32(x, it, n, VKF_IN_CONV_X);      /* [B, H, N, D] */
  VKF_IN_F32(w, it, n, VKF_IN_CONV_WEIGHT); /* [H, K] */
  float *y = vkf_interp_out_f32(it, n);
  if (!y) return vkf_interp_oom(n);
  int64_t bh = tx->shape[0] * tx->shape[1], heads = tx->shape[1], len = tx->shape[2];
  int64_t dim = tx->shape[3], taps = tw->shape[1], half = taps / 2;
  for (int64_t p = 0; p < bh; p++) {
    const float *wh = w + (p % heads) * taps;
    for (int64_t i = 0; i < len; i++)
      for (int64_t d = 0; d < dim; d++) {
        double acc = 0;
        for (int64_t t = 0; t < taps; t++) {
          int64_t src = i + t - half;
          if (src >= 0 && src < len) acc += (double)wh[t] * x[(p * len + src) * dim + d];
        }
        y[(p * len + i) * dim + d] = (float)acc;
      }
  }
  return VKF_OK;
}
