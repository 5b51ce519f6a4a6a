/* Owns the reference for the compute-heavy ops: matmul with epilogue, layernorm, RMSNorm,
 * L2 normalisation, masked softmax and fused attention. fp64 accumulation throughout. */
#include <math.h>
#include <string.h>

#include "graph/interp/interp_internal.h"

vkf_status vkf_ref_matmul(vkf_interp *it, const vkf_node *n) {
  const vkf_tensor *out = &it->g->tensors[n->output.id];
  const vkf_tensor *ta = vkf_interp_in_tensor(it, n, VKF_IN_MATMUL_A);
  const vkf_tensor *tb = vkf_interp_in_tensor(it, n, VKF_IN_MATMUL_B);
  VKF_IN_F32(a, it, n, VKF_IN_MATMUL_A);
  VKF_IN_F32(b, it, n, VKF_IN_MATMUL_B);
  VKF_IN_F32(bias, it, n, VKF_IN_MATMUL_BIAS);
  VKF_IN_F32(res, it, n, VKF_IN_MATMUL_RESIDUAL);
  float *y = vkf_interp_out_f32(it, n);
  if (!y) return vkf_interp_oom(n);
  int tb_t = n->attrs.matmul.transpose_b;
  int64_t m = ta->shape[ta->rank - 2], k = ta->shape[ta->rank - 1];
  if (n->attrs.matmul.a_rmsnorm) {
    /* The RMSNorm prologue: A's rows exactly as vkf_ref_rmsnorm would have given them. */
    VKF_IN_F32(gamma, it, n, VKF_IN_MATMUL_NORM_GAMMA);
    int64_t count = vkf_tensor_element_count(ta);
    float *an = vkf_interp_temp(it, (size_t)count * sizeof(float));
    if (!an) return vkf_interp_oom(n);
    vkf_rmsnorm_rows(a, gamma, count / k, k, n->attrs.matmul.a_norm_eps, an);
    a = an;
  }
  if (n->attrs.matmul.a_glu != VKF_ACT_NONE) {
    /* The GLU prologue: A [..., 2K] as gate then up, each product as the separate activation
     * and MUL nodes give it (float activation, float product). */
    k /= 2;
    int64_t rows = vkf_tensor_element_count(ta) / (2 * k);
    float *ag = vkf_interp_temp(it, (size_t)(rows * k) * sizeof(float));
    if (!ag) return vkf_interp_oom(n);
    for (int64_t r = 0; r < rows; r++)
      for (int64_t j = 0; j < k; j++)
        ag[r * k + j] = vkf_activation_eval(n->attrs.matmul.a_glu, a[r * 2 * k + j]) *
                        a[r * 2 * k + k + j];
    a = ag;
  }
  /* the GLU epilogue: the product has 2 nn columns, gate then up */
  vkf_activation c_glu = n->attrs.matmul.c_glu;
  int64_t nn = out->shape[out->rank - 1], nb = c_glu != VKF_ACT_NONE ? 2 * nn : nn;
  uint32_t brank = out->rank - 2;
  /* Batch strides in units of whole matrices, broadcast over the output's batch dims. */
  int64_t sa[VKF_MAX_DIMS] = {0}, sb[VKF_MAX_DIMS] = {0};
  vkf_broadcast_strides(ta->rank - 2, ta->shape, brank, out->shape, sa);
  vkf_broadcast_strides(tb->rank - 2, tb->shape, brank, out->shape, sb);
  int64_t batches = 1;
  for (uint32_t d = 0; d < brank; d++) batches *= out->shape[d];
  double *acc = vkf_interp_temp(it, (size_t)nb * sizeof(double)); /* one product row */
  if (!acc) return vkf_interp_oom(n);
  for (int64_t bi = 0; bi < batches; bi++) {
    const float *pa = a + vkf_strided_offset(bi, brank, out->shape, sa) * m * k;
    const float *pb = b + vkf_strided_offset(bi, brank, out->shape, sb) * k * nb;
    float *py = y + bi * m * nn;
    for (int64_t i = 0; i < m; i++) {
      /* Row-at-a-time so both B layouts are read sequentially. */
      for (int64_t j = 0; j < nb; j++) acc[j] = 0;
      if (tb_t) {
        for (int64_t j = 0; j < nb; j++)
          for (int64_t l = 0; l < k; l++) acc[j] += (double)pa[i * k + l] * pb[j * k + l];
      } else {
        for (int64_t l = 0; l < k; l++) {
          double av = pa[i * k + l];
          for (int64_t j = 0; j < nb; j++) acc[j] += av * pb[l * nb + j];
        }
      }
      if (c_glu != VKF_ACT_NONE) { /* as the float slices, activation and MUL gave it */
        for (int64_t j = 0; j < nn; j++)
          py[i * nn + j] = vkf_activation_eval(c_glu, (float)acc[j]) * (float)acc[nn + j];
        continue;
      }
      for (int64_t j = 0; j < nn; j++) {
        double s = acc[j] + (bias ? bias[j] : 0.0);
        float v = vkf_activation_eval(n->attrs.matmul.activation, (float)s);
        if (res) v += res[bi * m * nn + i * nn + j];
        py[i * nn + j] = v;
      }
    }
  }
  return VKF_OK;
}

void vkf_rmsnorm_rows(const float *x, const float *gamma, int64_t rows, int64_t d, double eps,
                      float *y) {
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * d;
    double var = 0;
    for (int64_t j = 0; j < d; j++) var += (double)xr[j] * xr[j];
    double inv = 1.0 / sqrt(var / (double)d + eps);
    for (int64_t j = 0; j < d; j++) {
      double v = xr[j] * inv;
      if (gamma) v *= gamma[j];
      y[r * d + j] = (float)v;
    }
  }
}

static vkf_status norm_rows(vkf_interp *it, const vkf_node *n, int layernorm) {
  const vkf_tensor *out = &it->g->tensors[n->output.id];
  VKF_IN_F32(x, it, n, VKF_IN_NORM_X);
  VKF_IN_F32(gamma, it, n, VKF_IN_NORM_GAMMA);
  const float *beta = NULL;
  if (layernorm) {
    beta = vkf_interp_in_f32(it, n, VKF_IN_NORM_BETA);
    if (!beta && it->oom) return vkf_interp_oom(n);
  }
  float *y = vkf_interp_out_f32(it, n);
  if (!y) return vkf_interp_oom(n);
  int64_t d = out->shape[out->rank - 1], rows = vkf_tensor_element_count(out) / d;
  double eps = n->attrs.norm.eps;
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * d;
    double mean = 0, var = 0;
    if (layernorm) {
      for (int64_t j = 0; j < d; j++) mean += xr[j];
      mean /= (double)d;
    }
    for (int64_t j = 0; j < d; j++) var += (xr[j] - mean) * (xr[j] - mean);
    double inv = 1.0 / sqrt(var / (double)d + eps);
    for (int64_t j = 0; j < d; j++) {
      double v = (xr[j] - mean) * inv;
      if (gamma) v *= gamma[j];
      if (beta) v += beta[j];
      y[r * d + j] = (float)v;
    }
  }
  return VKF_OK;
}

vkf_status vkf_ref_layernorm(vkf_interp *it, const vkf_node *n) {
  return norm_rows(it, n, 1);
}
vkf_status vkf_ref_rmsnorm(vkf_interp *it, const vkf_node *n) {
  const vkf_tensor *out = &it->g->tensors[n->output.id];
  VKF_IN_F32(x, it, n, VKF_IN_NORM_X);
  VKF_IN_F32(gamma, it, n, VKF_IN_NORM_GAMMA);
  float *y = vkf_interp_out_f32(it, n);
  if (!y) return vkf_interp_oom(n);
  int64_t d = out->shape[out->rank - 1];
  vkf_rmsnorm_rows(x, gamma, vkf_tensor_element_count(out) / d, d, n->attrs.norm.eps, y);
  return VKF_OK;
}

vkf_status vkf_ref_l2_normalize(vkf_interp *it, const vkf_node *n) {
  const vkf_tensor *out = &it->g->tensors[n->output.id];
  VKF_IN_F32(x, it, n, 0);
  float *y = vkf_interp_out_f32(it, n);
  if (!y) return vkf_interp_oom(n);
  int64_t d = out->shape[out->rank - 1], rows = vkf_tensor_element_count(out) / d;
  for (int64_t r = 0; r < rows; r++) {
    double ss = 0;
    for (int64_t j = 0; j < d; j++) ss += (double)x[r * d + j] * x[r * d + j];
    double norm = sqrt(ss);
    if (norm < n->attrs.norm.eps) norm = n->attrs.norm.eps;
    for (int64_t j = 0; j < d; j++) y[r * d + j] = (float)(x[r * d + j] / norm);
  }
  return VKF_OK;
}

/* A run-time length clamped to [0, n], as the kernels clamp it (graph/ir/ops.def): the masks
 * below would treat any other value the same way, the clamp says so. */
static int64_t clamp_len(int32_t len, int64_t n) {
  return len < 0 ? 0 : len > n ? n : len;
}

/* softmax over `count` scores where allowed[j]; all-masked gives zeros. */
static void masked_softmax_row(const double *s, const unsigned char *allowed, int64_t count,
                               float *y) {
  double mx = -INFINITY;
  for (int64_t j = 0; j < count; j++)
    if (allowed[j] && s[j] > mx) mx = s[j];
  double sum = 0;
  for (int64_t j = 0; j < count; j++) sum += allowed[j] ? exp(s[j] - mx) : 0.0;
  for (int64_t j = 0; j < count; j++)
    y[j] = (allowed[j] && sum > 0) ? (float)(exp(s[j] - mx) / sum) : 0.0f;
}

vkf_status vkf_ref_softmax(vkf_interp *it, const vkf_node *n) {
  const vkf_tensor *out = &it->g->tensors[n->output.id];
  const vkf_tensor *tvl = vkf_interp_in_tensor(it, n, VKF_IN_SOFTMAX_VALID_LENS);
  const vkf_tensor *tbias = vkf_interp_in_tensor(it, n, VKF_IN_SOFTMAX_BIAS);
  VKF_IN_F32(x, it, n, VKF_IN_SOFTMAX_X);
  VKF_IN_I32(vl, it, n, VKF_IN_SOFTMAX_VALID_LENS);
  VKF_IN_F32(bias, it, n, VKF_IN_SOFTMAX_BIAS);
  float *y = vkf_interp_out_f32(it, n);
  int64_t ncols = out->shape[out->rank - 1], rows = vkf_tensor_element_count(out) / ncols;
  double *s = vkf_interp_temp(it, (size_t)ncols * sizeof(double));
  unsigned char *allowed = vkf_interp_temp(it, (size_t)ncols);
  if (!y || !s || !allowed) return vkf_interp_oom(n);
  int64_t r_dim = out->rank >= 2 ? out->shape[out->rank - 2] : 1;
  int64_t batch = out->rank >= 2 ? out->shape[0] : 1, rows_per_batch = rows / batch;
  int64_t bs[VKF_MAX_DIMS] = {0};
  if (tbias) vkf_broadcast_strides(tbias->rank, tbias->shape, out->rank, out->shape, bs);
  for (int64_t r = 0; r < rows; r++) {
    int64_t i = r % r_dim, b = r / rows_per_batch;
    int64_t limit = ncols;
    if (vl) limit = clamp_len(tvl->rank == 1 ? vl[b] : vl[b * r_dim + i], ncols);
    for (int64_t j = 0; j < ncols; j++) {
      allowed[j] = j < limit && (!n->attrs.softmax.causal || j <= i + (ncols - r_dim));
      s[j] = (double)x[r * ncols + j] * n->attrs.softmax.scale;
      if (bias) s[j] += bias[vkf_strided_offset(r * ncols + j, out->rank, out->shape, bs)];
    }
    masked_softmax_row(s, allowed, ncols, y + r * ncols);
  }
  return VKF_OK;
}

vkf_status vkf_ref_attention(vkf_interp *it, const vkf_node *n) {
  const vkf_tensor *tq = vkf_interp_in_tensor(it, n, VKF_IN_ATTENTION_Q);
  const vkf_tensor *tk = vkf_interp_in_tensor(it, n, VKF_IN_ATTENTION_K);
  const vkf_tensor *tv = vkf_interp_in_tensor(it, n, VKF_IN_ATTENTION_V);
  const vkf_tensor *tbias = vkf_interp_in_tensor(it, n, VKF_IN_ATTENTION_BIAS);
  VKF_IN_F32(q, it, n, VKF_IN_ATTENTION_Q); /* contiguous copies: strided views are honoured */
  VKF_IN_F32(k, it, n, VKF_IN_ATTENTION_K);
  VKF_IN_F32(v, it, n, VKF_IN_ATTENTION_V);
  VKF_IN_I32(kv_len, it, n, VKF_IN_ATTENTION_KV_LEN);
  VKF_IN_F32(bias, it, n, VKF_IN_ATTENTION_BIAS);
  VKF_IN_F32(ramp, it, n, VKF_IN_ATTENTION_RAMP);
  uint32_t r = tq->rank;
  int64_t bsz = tq->shape[0], h = r == 4 ? tq->shape[1] : 1, hk = r == 4 ? tk->shape[1] : 1;
  int64_t nq = tq->shape[r - 2], nk = tk->shape[r - 2], d = tq->shape[r - 1], dv = tv->shape[r - 1];
  float *y = vkf_interp_out_f32(it, n);
  double *s = vkf_interp_temp(it, (size_t)nk * sizeof(double));
  unsigned char *allowed = vkf_interp_temp(it, (size_t)nk);
  float *p = vkf_interp_temp(it, (size_t)nk * sizeof(float));
  if (!y || !s || !allowed || !p) return vkf_interp_oom(n);
  int64_t scores_shape[4] = {bsz, h, nq, nk};
  int64_t bst[4] = {0};
  /* A rank-3 bias broadcasts against [B, Nq, Nk]; lift it to [B, 1, Nq, Nk]. */
  if (tbias) {
    int64_t bshape[4];
    uint32_t brank = tbias->rank;
    memcpy(bshape, tbias->shape, sizeof bshape);
    if (r == 3 && brank == 3) {
      bshape[3] = bshape[2];
      bshape[2] = bshape[1];
      bshape[1] = 1;
      brank = 4;
    }
    vkf_broadcast_strides(brank, bshape, 4, scores_shape, bst);
  }
  int32_t wl = n->attrs.attention.window_left, wr = n->attrs.attention.window_right;
  for (int64_t b = 0; b < bsz; b++)
    for (int64_t hh = 0; hh < h; hh++) {
      int64_t kh = hh / (h / hk);
      /* kv_len [2, B] (ragged rows): this query batch reads k/v batch kv_len[1][b] */
      int64_t kvb = kv_len && vkf_interp_in_tensor(it, n, VKF_IN_ATTENTION_KV_LEN)->rank == 2
                        ? kv_len[bsz + b]
                        : b;
      if (kvb < 0 || kvb >= tk->shape[0]) kvb = 0;
      const float *kb = k + (kvb * hk + kh) * nk * d;
      const float *vb = v + (kvb * hk + kh) * nk * dv;
      int64_t limit = kv_len ? clamp_len(kv_len[b], nk) : nk;
      for (int64_t i = 0; i < nq; i++) {
        const float *qi = q + ((b * h + hh) * nq + i) * d;
        int64_t diag = i + (nk - nq); /* bottom-right aligned diagonal */
        double span = ramp ? ramp[hh * 2] : 0, inv_ramp = ramp ? ramp[hh * 2 + 1] : 0;
        int64_t at = i + (limit - nq); /* the adaptive span's query position */
        for (int64_t j = 0; j < nk; j++) {
          allowed[j] = j < limit && (!n->attrs.attention.causal || j <= diag) &&
                       (wl < 0 || j >= diag - wl) && (wr < 0 || j <= diag + wr);
          double acc = 0;
          for (int64_t l = 0; l < d; l++) acc += (double)qi[l] * kb[j * d + l];
          s[j] = acc * n->attrs.attention.scale;
          if (bias) {
            int64_t flat = ((b * h + hh) * nq + i) * nk + j;
            s[j] += bias[vkf_strided_offset(flat, 4, scores_shape, bst)];
          }
          if (ramp) { /* the soft mask's log, the paper's m_z(x) = clamp((R + z - x) / R, 0, 1) */
            double m = (span - (double)(at - j)) * inv_ramp;
            if (m <= 0)
              allowed[j] = 0;
            else if (m < 1)
              s[j] += log(m);
          }
        }
        masked_softmax_row(s, allowed, nk, p);
        float *yi = y + (n->attrs.attention.merge_heads ? (b * nq + i) * h + hh
                                                        : (b * h + hh) * nq + i) *
                            dv;
        for (int64_t c = 0; c < dv; c++) {
          double acc = 0;
          for (int64_t j = 0; j < nk; j++) acc += (double)p[j] * vb[j * dv + c];
          yi[c] = (float)acc;
        }
      }
    }
  return VKF_OK;
}
