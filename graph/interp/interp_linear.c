/* Owns the reference for the linear-attention family: feature maps, the QUADRATIC masked form of
 * linear attention (weights phi(q_t) . phi(k_m) times the gate factors, normalised; no state
 * recurrence, no chunks, so it is an independent check of the device's scan and of the decode),
 * and the token-by-token state recurrence of LINEAR_STATE_WRITE. Everything in double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph/interp/interp_internal.h"

vkf_status vkf_ref_linear_features(vkf_interp *it, const vkf_node *n) {
  const vkf_tensor *tx = vkf_interp_in_tensor(it, n, VKF_IN_LFEAT_X);
  const vkf_tensor *tw = vkf_interp_in_tensor(it, n, VKF_IN_LFEAT_OMEGA);
  VKF_IN_F32(x, it, n, VKF_IN_LFEAT_X);
  VKF_IN_F32(w, it, n, VKF_IN_LFEAT_OMEGA);
  float *y = vkf_interp_out_f32(it, n);
  if (!y) return vkf_interp_oom(n);
  int64_t rows = tx->shape[0] * tx->shape[1] * tx->shape[2], d = tx->shape[3];
  int64_t m = tw ? tw->shape[0] : d;
  vkf_feature_map kind = n->attrs.linear_features.kind;
  double scale = n->attrs.linear_features.scale;
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * d;
    if (kind == VKF_FEATURE_ELU1) {
      for (int64_t i = 0; i < d; i++)
        y[r * d + i] = (float)(xr[i] > 0 ? xr[i] + 1.0 : exp((double)xr[i]));
      continue;
    }
    double norm = 0;
    for (int64_t i = 0; i < d; i++) norm += scale * xr[i] * scale * xr[i];
    for (int64_t j = 0; j < m; j++) {
      double dot = 0;
      for (int64_t i = 0; i < d; i++) dot += (double)w[j * d + i] * scale * xr[i];
      if (kind == VKF_FEATURE_FAVOR) {
        y[r * m + j] = (float)(exp(dot - 0.5 * norm) / sqrt((double)m));
      } else {
        y[r * 2 * m + j] = (float)(sin(dot) / sqrt((double)m));
        y[r * 2 * m + m + j] = (float)(cos(dot) / sqrt((double)m));
      }
    }
  }
  return VKF_OK;
}

static double sigmoid(double x) {
  return 1.0 / (1.0 + exp(-x));
}

vkf_status vkf_ref_linear_attention(vkf_interp *it, const vkf_node *n) {
  const vkf_tensor *tq = vkf_interp_in_tensor(it, n, VKF_IN_LIN_Q);
  const vkf_tensor *tv = vkf_interp_in_tensor(it, n, VKF_IN_LIN_V);
  VKF_IN_F32(q, it, n, VKF_IN_LIN_Q);
  VKF_IN_F32(k, it, n, VKF_IN_LIN_K);
  VKF_IN_F32(v, it, n, VKF_IN_LIN_V);
  VKF_IN_F32(gate, it, n, VKF_IN_LIN_GATE);
  VKF_IN_F32(state, it, n, VKF_IN_LIN_STATE);
  float *y = vkf_interp_out_f32(it, n);
  int64_t bh = tq->shape[0] * tq->shape[1], len = tq->shape[2], f = tq->shape[3];
  int64_t dv = tv->shape[3];
  double *num = vkf_interp_temp(it, (size_t)(dv + 1) * sizeof(double));
  if (!y || !num) return vkf_interp_oom(n);
  int causal = n->attrs.linear_attention.causal;
  double eps = n->attrs.linear_attention.eps;
  for (int64_t p = 0; p < bh; p++) {
    const float *qp = q + p * len * f, *kp = k + p * len * f, *vp = v + p * len * dv;
    for (int64_t t = 0; t < len; t++) {
      const float *qt = qp + t * f;
      for (int64_t j = 0; j <= dv; j++) num[j] = 0;
      double carry = 1; /* product of the gates of the tokens after m up to t */
      for (int64_t m = causal ? t : len - 1; m >= 0; m--) {
        double g = gate ? sigmoid(gate[p * len + m]) : 0;
        double wt = 0;
        for (int64_t i = 0; i < f; i++) wt += (double)qt[i] * kp[m * f + i];
        wt *= gate ? carry * (1 - g) : 1;
        if (gate) carry *= g;
        for (int64_t j = 0; j < dv; j++) num[j] += wt * vp[m * dv + j];
        num[dv] += wt;
      }
      if (state) { /* the state before token 0, decayed by every gate up to t */
        const float *s = state + p * f * (dv + 1);
        for (int64_t j = 0; j <= dv; j++) {
          double acc = 0;
          for (int64_t i = 0; i < f; i++) acc += (double)qt[i] * s[i * (dv + 1) + j];
          num[j] += carry * acc;
        }
      }
      for (int64_t j = 0; j < dv; j++)
        y[(p * len + t) * dv + j] = (float)(num[j] / (num[dv] + eps));
    }
  }
  return VKF_OK;
}

/* Writes into the state's slot, as KV_WRITE does into the cache's: a slot borrowing caller memory
 * is copied first, so caller memory is never written. */
vkf_status vkf_ref_linear_state_write(vkf_interp *it, const vkf_node *n) {
  const vkf_tensor *ts = vkf_interp_in_tensor(it, n, VKF_IN_LSTATE_STATE);
  const vkf_tensor *tk = vkf_interp_in_tensor(it, n, VKF_IN_LSTATE_K);
  VKF_IN_F32(k, it, n, VKF_IN_LSTATE_K);
  VKF_IN_F32(v, it, n, VKF_IN_LSTATE_V);
  VKF_IN_F32(gate, it, n, VKF_IN_LSTATE_GATE);
  vkf_interp_slot *s = &it->slots[ts->base.id];
  const vkf_tensor *base = &it->g->tensors[ts->base.id];
  if (s->borrowed) {
    size_t count = (size_t)vkf_tensor_element_count(base);
    float *own = malloc(count * sizeof *own + 16);
    if (!own) return vkf_interp_oom(n);
    memcpy(own, s->f, count * sizeof *own);
    s->f = own;
    s->borrowed = 0;
  }
  int64_t bh = tk->shape[0] * tk->shape[1], len = tk->shape[2], f = tk->shape[3];
  int64_t cols = ts->shape[3], dv = cols - 1;
  float *st = s->f + ts->offset;
  for (int64_t p = 0; p < bh; p++)
    for (int64_t i = 0; i < f; i++)
      for (int64_t j = 0; j < cols; j++) {
        double acc = st[(p * f + i) * cols + j];
        for (int64_t t = 0; t < len; t++) {
          double g = gate ? sigmoid(gate[p * len + t]) : 0;
          double x = (double)k[(p * len + t) * f + i] * (j < dv ? v[(p * len + t) * dv + j] : 1.0);
          acc = gate ? g * acc + (1 - g) * x : acc + x;
        }
        st[(p * f + i) * cols + j] = (float)acc;
      }
  return VKF_OK;
}
