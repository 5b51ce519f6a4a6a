/* Owns the reference of block-sparse attention, the straightforward way: per query row, mark the
 * keys its layout row makes visible (listed blocks, mask bits, kv_len, causal), then a softmax in
 * fp64 over those keys only. Tables bound at run time are checked here as the builder checks
 * constant ones, so a bad layout is an error, never an out-of-range read. */
#include <math.h>
#include <string.h>

#include "graph/interp/interp_internal.h"
#include "graph/ir/sparse_layout.h"

vkf_status vkf_ref_sparse_attention(vkf_interp *it, const vkf_node *n) {
  const vkf_tensor *tq = vkf_interp_in_tensor(it, n, VKF_IN_SPARSE_Q);
  const vkf_tensor *tk = vkf_interp_in_tensor(it, n, VKF_IN_SPARSE_K);
  const vkf_tensor *tv = vkf_interp_in_tensor(it, n, VKF_IN_SPARSE_V);
  const vkf_tensor *trows = vkf_interp_in_tensor(it, n, VKF_IN_SPARSE_ROWS);
  const vkf_tensor *tcols = vkf_interp_in_tensor(it, n, VKF_IN_SPARSE_COLS);
  const vkf_tensor *tmasks = vkf_interp_in_tensor(it, n, VKF_IN_SPARSE_MASKS);
  VKF_IN_F32(q, it, n, VKF_IN_SPARSE_Q); /* contiguous copies: strided views are honoured */
  VKF_IN_F32(k, it, n, VKF_IN_SPARSE_K);
  VKF_IN_F32(v, it, n, VKF_IN_SPARSE_V);
  VKF_IN_I32(rows, it, n, VKF_IN_SPARSE_ROWS);
  VKF_IN_I32(cols, it, n, VKF_IN_SPARSE_COLS);
  VKF_IN_I32(masks, it, n, VKF_IN_SPARSE_MASKS);
  VKF_IN_I32(kv_len, it, n, VKF_IN_SPARSE_KV_LEN);
  VKF_IN_F32(key_bias, it, n, VKF_IN_SPARSE_KEY_BIAS);
  const vkf_node_attrs *a = &n->attrs;
  int64_t bsz = tq->shape[0], h = tq->shape[1], nq = tq->shape[2], d = tq->shape[3];
  int64_t hk = tk->shape[1], nk = tk->shape[2], dv = tv->shape[3];
  uint32_t bq = a->sparse_attention.block_q, bk = a->sparse_attention.block_k;
  uint32_t words = vkf_sparse_mask_words(bk);
  vkf_sparse_layout layout = {
      .heads = (uint32_t)trows->shape[0],
      .q_blocks = (uint32_t)trows->shape[1] - 1,
      .k_blocks = (uint32_t)((nk + bk - 1) / bk),
      .block_q = bq,
      .block_k = bk,
      .entries = (uint32_t)tcols->shape[1],
      .mask_count = tmasks ? (uint32_t)tmasks->shape[0] : 0,
      .rows = (int32_t *)rows, /* read only */
      .cols = (int32_t *)cols,
      .masks = (int32_t *)masks,
  };
  vkf_status st = vkf_sparse_layout_check(&layout, (uint32_t)nq, (uint32_t)nk);
  if (st) return vkf_status_annotate(st, "sparse_attention \"%s\": ", n->name);
  float *y = vkf_interp_out_f32(it, n);
  double *s = vkf_interp_temp(it, (size_t)nk * sizeof(double));
  unsigned char *allowed = vkf_interp_temp(it, (size_t)nk);
  if (!y || !s || !allowed) return vkf_interp_oom(n);
  for (int64_t b = 0; b < bsz; b++) {
    int64_t limit = nk;
    if (kv_len) limit = kv_len[b] < 0 ? 0 : kv_len[b] > nk ? nk : kv_len[b];
    for (int64_t hh = 0; hh < h; hh++) {
      int64_t kh = hh / (h / hk), l = layout.heads == 1 ? 0 : hh;
      const int32_t *lrows = rows + l * (layout.q_blocks + 1);
      const int32_t *lcols = cols + l * (int64_t)layout.entries * 2;
      const float *kb = k + (b * hk + kh) * nk * d;
      const float *vb = v + (b * hk + kh) * nk * dv;
      for (int64_t i = 0; i < nq; i++) {
        const float *qi = q + ((b * h + hh) * nq + i) * d;
        int64_t qb = i / bq, r = i % bq, diag = i + (nk - nq);
        memset(allowed, 0, (size_t)nk);
        for (int32_t e = lrows[qb]; e < lrows[qb + 1]; e++) {
          int64_t key0 = (int64_t)lcols[2 * e] * bk;
          int32_t m = lcols[2 * e + 1];
          for (int64_t jj = 0; jj < bk && key0 + jj < nk; jj++) {
            const int32_t *mrow = m < 0 ? NULL : masks + ((int64_t)m * bq + r) * words;
            allowed[key0 + jj] = !mrow || ((uint32_t)mrow[jj / 32] >> (jj % 32) & 1u);
          }
        }
        double mx = -INFINITY;
        for (int64_t j = 0; j < nk; j++) {
          allowed[j] = allowed[j] && j < limit && (!a->sparse_attention.causal || j <= diag);
          if (!allowed[j]) continue;
          double acc = 0;
          for (int64_t c = 0; c < d; c++) acc += (double)qi[c] * kb[j * d + c];
          s[j] = acc * a->sparse_attention.scale + (key_bias ? key_bias[b * nk + j] : 0.0);
          if (s[j] > mx) mx = s[j];
        }
        double sum = 0;
        for (int64_t j = 0; j < nk; j++)
          if (allowed[j]) sum += (s[j] = exp(s[j] - mx));
        float *yi =
            y +
            (a->sparse_attention.merge_heads ? (b * nq + i) * h + hh : (b * h + hh) * nq + i) * dv;
        for (int64_t c = 0; c < dv; c++) {
          double acc = 0;
          for (int64_t j = 0; j < nk; j++)
            if (allowed[j]) acc += s[j] * vb[j * dv + c];
          yi[c] = sum > 0 ? (float)(acc / sum) : 0.0f;
        }
      }
    }
  }
  return VKF_OK;
}
