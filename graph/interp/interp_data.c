/* Owns the reference for data-movement ops: views, copy/cast, concat, gather (embeddings), patch
 * embedding, masked mean pooling, and the in-place KV-cache write. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph/base/half.h"
#include "graph/interp/interp_internal.h"

/* Views alias their base's storage, which already holds the value: nothing to compute. */
vkf_status vkf_ref_view(vkf_interp *it, const vkf_node *n) {
  (void)it;
  (void)n;
  return VKF_OK;
}

vkf_status vkf_ref_copy(vkf_interp *it, const vkf_node *n) {
  const vkf_tensor *out = &it->g->tensors[n->output.id];
  int64_t count = vkf_tensor_element_count(out);
  if (out->dtype == VKF_I32) {
    const vkf_tensor *in = vkf_interp_in_tensor(it, n, 0);
    int32_t *y = vkf_interp_out_i32(it, n);
    if (!y) return vkf_interp_oom(n);
    if (in->dtype == VKF_I32) {
      VKF_IN_I32(x, it, n, 0);
      memcpy(y, x, (size_t)count * sizeof *y);
    } else {
      VKF_IN_F32(x, it, n, 0);
      for (int64_t k = 0; k < count; k++) y[k] = (int32_t)x[k]; /* truncates toward zero */
    }
    return VKF_OK;
  }
  VKF_IN_F32(x, it, n, 0); /* i32 inputs arrive converted */
  float *y = vkf_interp_out_f32(it, n);
  if (!y) return vkf_interp_oom(n);
  memcpy(y, x, (size_t)count * sizeof *y);
  return VKF_OK;
}

vkf_status vkf_ref_concat(vkf_interp *it, const vkf_node *n) {
  const vkf_tensor *out = &it->g->tensors[n->output.id];
  uint32_t ax = n->attrs.concat.axis;
  int i32 = out->dtype == VKF_I32;
  float *yf = i32 ? NULL : vkf_interp_out_f32(it, n);
  int32_t *yi = i32 ? vkf_interp_out_i32(it, n) : NULL;
  if (!yf && !yi) return vkf_interp_oom(n);
  /* outer = product of dims before the axis, inner = product after it. */
  int64_t outer = 1, inner = 1;
  for (uint32_t d = 0; d < ax; d++) outer *= out->shape[d];
  for (uint32_t d = ax + 1; d < out->rank; d++) inner *= out->shape[d];
  int64_t at = 0; /* running position along the axis */
  for (uint32_t s = 0; s < n->input_count; s++) {
    const vkf_tensor *t = vkf_interp_in_tensor(it, n, s);
    int64_t len = t->shape[ax];
    const float *xf = i32 ? NULL : vkf_interp_in_f32(it, n, s);
    const int32_t *xi = i32 ? vkf_interp_in_i32(it, n, s) : NULL;
    if (!xf && !xi) return vkf_interp_oom(n);
    for (int64_t o = 0; o < outer; o++) {
      int64_t dst = (o * out->shape[ax] + at) * inner, src = o * len * inner;
      if (i32)
        memcpy(yi + dst, xi + src, (size_t)(len * inner) * sizeof *yi);
      else
        memcpy(yf + dst, xf + src, (size_t)(len * inner) * sizeof *yf);
    }
    at += len;
  }
  return VKF_OK;
}

vkf_status vkf_ref_gather(vkf_interp *it, const vkf_node *n) {
  const vkf_tensor *table = vkf_interp_in_tensor(it, n, VKF_IN_GATHER_TABLE);
  const vkf_tensor *tids = vkf_interp_in_tensor(it, n, VKF_IN_GATHER_IDS);
  int64_t vocab = table->shape[0], d = table->shape[1], count = vkf_tensor_element_count(tids);
  VKF_IN_I32(ids, it, n, VKF_IN_GATHER_IDS);
  if (table->dtype == VKF_I32) {
    VKF_IN_I32(xi, it, n, VKF_IN_GATHER_TABLE);
    int32_t *y = vkf_interp_out_i32(it, n);
    if (!y) return vkf_interp_oom(n);
    for (int64_t k = 0; k < count; k++) {
      if (ids[k] < 0 || ids[k] >= vocab) goto bad_id;
      memcpy(y + k * d, xi + ids[k] * d, (size_t)d * sizeof *y);
    }
    return VKF_OK;
  }
  VKF_IN_F32(x, it, n, VKF_IN_GATHER_TABLE);
  float *y = vkf_interp_out_f32(it, n);
  if (!y) return vkf_interp_oom(n);
  for (int64_t k = 0; k < count; k++) {
    if (ids[k] < 0 || ids[k] >= vocab) goto bad_id;
    memcpy(y + k * d, x + ids[k] * d, (size_t)d * sizeof *y);
  }
  return VKF_OK;
bad_id:
  for (int64_t k = 0; k < count; k++)
    if (ids[k] < 0 || ids[k] >= vocab)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "gather \"%s\": id %d at position %" PRId64 " is outside [0,%" PRId64
                             ")",
                             n->name, ids[k], k, vocab);
  return vkf_status_make(VKF_STATUS_INTERNAL, "gather \"%s\": bad id", n->name);
}

vkf_status vkf_ref_patch_embed(vkf_interp *it, const vkf_node *n) {
  const vkf_tensor *ti = vkf_interp_in_tensor(it, n, VKF_IN_PATCH_IMAGE);
  const vkf_tensor *tw = vkf_interp_in_tensor(it, n, VKF_IN_PATCH_WEIGHT);
  VKF_IN_F32(img, it, n, VKF_IN_PATCH_IMAGE); /* [B, C, H, W] */
  VKF_IN_F32(w, it, n, VKF_IN_PATCH_WEIGHT);  /* [E, C, P, Q] */
  VKF_IN_F32(bias, it, n, VKF_IN_PATCH_BIAS); /* [E] */
  float *y = vkf_interp_out_f32(it, n);       /* [B, (H/P)(W/Q), E] */
  if (!y) return vkf_interp_oom(n);
  int64_t bsz = ti->shape[0], c = ti->shape[1], ih = ti->shape[2], iw = ti->shape[3];
  int64_t e = tw->shape[0], ph = tw->shape[2], pw = tw->shape[3];
  int64_t gh = ih / ph, gw = iw / pw;
  for (int64_t b = 0; b < bsz; b++)
    for (int64_t py = 0; py < gh; py++)
      for (int64_t px = 0; px < gw; px++)
        for (int64_t oe = 0; oe < e; oe++) {
          double acc = bias ? bias[oe] : 0.0;
          for (int64_t ch = 0; ch < c; ch++)
            for (int64_t ky = 0; ky < ph; ky++)
              for (int64_t kx = 0; kx < pw; kx++)
                acc += (double)img[((b * c + ch) * ih + py * ph + ky) * iw + px * pw + kx] *
                       w[((oe * c + ch) * ph + ky) * pw + kx];
          y[(b * gh * gw + py * gw + px) * e + oe] = (float)acc;
        }
  return VKF_OK;
}

vkf_status vkf_ref_mean_pool(vkf_interp *it, const vkf_node *n) {
  const vkf_tensor *tx = vkf_interp_in_tensor(it, n, VKF_IN_POOL_X);
  VKF_IN_F32(x, it, n, VKF_IN_POOL_X);       /* [B, N, D] */
  VKF_IN_I32(mask, it, n, VKF_IN_POOL_MASK); /* [B, N] */
  float *y = vkf_interp_out_f32(it, n);      /* [B, D] */
  if (!y) return vkf_interp_oom(n);
  int64_t bsz = tx->shape[0], len = tx->shape[1], d = tx->shape[2];
  for (int64_t b = 0; b < bsz; b++) {
    double count = 0;
    for (int64_t t = 0; t < len; t++) count += mask ? mask[b * len + t] : 1;
    if (count < 1e-9) count = 1e-9;
    for (int64_t c = 0; c < d; c++) {
      double acc = 0;
      for (int64_t t = 0; t < len; t++)
        acc += (mask ? mask[b * len + t] : 1) * (double)x[(b * len + t) * d + c];
      y[b * d + c] = (float)(acc / count);
    }
  }
  return VKF_OK;
}

/* KV_WRITE writes into the cache's slot (its output shares that slot, like a view). A slot that
 * borrows caller memory (constant data) is copied first, so caller memory is never written. */
vkf_status vkf_ref_kv_write(vkf_interp *it, const vkf_node *n) {
  const vkf_tensor *cache = vkf_interp_in_tensor(it, n, VKF_IN_KV_WRITE_CACHE);
  const vkf_tensor *trows = vkf_interp_in_tensor(it, n, VKF_IN_KV_WRITE_ROWS);
  VKF_IN_F32(rows, it, n, VKF_IN_KV_WRITE_ROWS);    /* [B, H, T, D] */
  VKF_IN_I32(start, it, n, VKF_IN_KV_WRITE_START);  /* [B], or [2, B] (ragged: cache batches) */
  int ragged = vkf_interp_in_tensor(it, n, VKF_IN_KV_WRITE_START)->rank == 2;
  vkf_interp_slot *s = &it->slots[cache->base.id];
  const vkf_tensor *base = &it->g->tensors[cache->base.id];
  if (s->borrowed) {
    size_t count = (size_t)vkf_tensor_element_count(base);
    float *own = malloc(count * sizeof *own + 16);
    if (!own) return vkf_interp_oom(n);
    memcpy(own, s->f, count * sizeof *own);
    s->f = own;
    s->borrowed = 0;
  }
  int64_t bsz = trows->shape[0], heads = trows->shape[1], len = trows->shape[2];
  int64_t dim = trows->shape[3], cap = cache->shape[2];
  const int64_t *st = cache->strides;
  for (int64_t b = 0; b < bsz; b++)
    for (int64_t t = 0; t < len; t++) {
      int64_t pos = (int64_t)start[b] + t, cb = ragged ? start[bsz + b] : b;
      if (pos < 0 || pos >= cap) continue; /* outside the cache: skipped, as on the device */
      if (cb < 0 || cb >= cache->shape[0]) continue;
      for (int64_t h = 0; h < heads; h++)
        for (int64_t d = 0; d < dim; d++) {
          float v = rows[((b * heads + h) * len + t) * dim + d];
          if (cache->dtype == VKF_F16) v = vkf_half_to_float(vkf_float_to_half(v));
          s->f[cache->offset + cb * st[0] + h * st[1] + pos * st[2] + d * st[3]] = v;
        }
    }
  return VKF_OK;
}
