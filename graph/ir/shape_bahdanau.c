/* Owns shape inference of the ops of Bahdanau's encoder-decoder: ADDITIVE_ATTENTION (qp
 * [B, Nq, H], kp [B, Nk, H], w_v [H], v [B, Nk, Dv] of one float dtype, optional i32 valid_lens
 * [B] or [B, Nq] -> the context [B, Nq, Dv] or the weights [B, Nq, Nk]) and GRU_SCAN (below).
 * vkf_graph_infer_node prefixes `<op> "<node>": `. */
#include "graph/ir/graph_internal.h"

typedef struct add_shape_buf {
  char s[96];
} add_shape_buf;

static const char *fmt(const vkf_tensor *t, add_shape_buf *b) {
  return vkf_shape_format(t->rank, t->shape, b->s, sizeof b->s);
}

static const vkf_tensor *slot(const vkf_graph *g, const vkf_node *n, uint32_t s) {
  if (s >= n->input_count || n->inputs[s].id == 0) return NULL;
  return vkf_graph_tensor(g, n->inputs[s]);
}

vkf_status vkf_shape_additive_attention(const vkf_graph *g, const vkf_node *n, vkf_tensor *out) {
  const vkf_tensor *q = slot(g, n, VKF_IN_ADDITIVE_Q), *k = slot(g, n, VKF_IN_ADDITIVE_K);
  const vkf_tensor *w = slot(g, n, VKF_IN_ADDITIVE_W), *v = slot(g, n, VKF_IN_ADDITIVE_V);
  const vkf_tensor *vl = slot(g, n, VKF_IN_ADDITIVE_VALID_LENS);
  add_shape_buf a, b, c, d;
  int fl = q->dtype == VKF_F32 || q->dtype == VKF_F16;
  if (!fl || k->dtype != q->dtype || w->dtype != q->dtype || v->dtype != q->dtype)
    return vkf_status_make(VKF_STATUS_SHAPE,
                           "queries, keys, w_v and values must share one float dtype (f32 or "
                           "f16), got %s, %s, %s, %s",
                           vkf_dtype_name(q->dtype), vkf_dtype_name(k->dtype),
                           vkf_dtype_name(w->dtype), vkf_dtype_name(v->dtype));
  if (q->rank != 3 || k->rank != 3 || w->rank != 1 || v->rank != 3 || k->shape[0] != q->shape[0] ||
      v->shape[0] != q->shape[0] || k->shape[2] != q->shape[2] || w->shape[0] != q->shape[2] ||
      v->shape[1] != k->shape[1])
    return vkf_status_make(VKF_STATUS_SHAPE,
                           "queries %s, keys %s, w_v %s, values %s: expected [B,Nq,H], [B,Nk,H], "
                           "[H], [B,Nk,Dv]",
                           fmt(q, &a), fmt(k, &b), fmt(w, &c), fmt(v, &d));
  if (vl) {
    int ok = vl->dtype == VKF_I32 && vl->shape[0] == q->shape[0] &&
             (vl->rank == 1 || (vl->rank == 2 && vl->shape[1] == q->shape[1]));
    if (!ok)
      return vkf_status_make(VKF_STATUS_SHAPE, "valid_lens %s %s: expected i32 [B] or [B,Nq] of %s",
                             vkf_dtype_name(vl->dtype), fmt(vl, &a), fmt(q, &b));
  }
  out->dtype = q->dtype;
  out->rank = 3;
  out->shape[0] = q->shape[0];
  out->shape[1] = q->shape[1];
  out->shape[2] = n->attrs.additive_attention.weights ? k->shape[1] : v->shape[2];
  vkf_contiguous_strides(3, out->shape, out->strides);
  return VKF_OK;
}

/* gates [B, T, 3H], w_hh [3H, H], b_hh [3H], optional h0 [B, H], all f32 -> [B, T, H]. */
vkf_status vkf_shape_gru_scan(const vkf_graph *g, const vkf_node *n, vkf_tensor *out) {
  const vkf_tensor *x = slot(g, n, VKF_IN_GRU_GATES), *w = slot(g, n, VKF_IN_GRU_W_HH);
  const vkf_tensor *bias = slot(g, n, VKF_IN_GRU_B_HH), *h0 = slot(g, n, VKF_IN_GRU_H0);
  add_shape_buf a, b, c, d;
  if (x->dtype != VKF_F32 || w->dtype != VKF_F32 || bias->dtype != VKF_F32 ||
      (h0 && h0->dtype != VKF_F32))
    return vkf_status_make(VKF_STATUS_SHAPE, "gates, w_hh, b_hh and h0 must be f32");
  int64_t h = w->rank == 2 ? w->shape[1] : 0;
  int ok = x->rank == 3 && w->rank == 2 && bias->rank == 1 && h > 0 && w->shape[0] == 3 * h &&
           x->shape[2] == 3 * h && bias->shape[0] == 3 * h &&
           (!h0 || (h0->rank == 2 && h0->shape[0] == x->shape[0] && h0->shape[1] == h));
  if (!ok)
    return vkf_status_make(VKF_STATUS_SHAPE,
                           "gates %s, w_hh %s, b_hh %s, h0 %s: expected [B,T,3H], [3H,H], [3H], "
                           "[B,H]",
                           fmt(x, &a), fmt(w, &b), fmt(bias, &c), h0 ? fmt(h0, &d) : "none");
  out->dtype = VKF_F32;
  out->rank = 3;
  out->shape[0] = x->shape[0];
  out->shape[1] = x->shape[1];
  out->shape[2] = h;
  vkf_contiguous_strides(3, out->shape, out->strides);
  return VKF_OK;
}
