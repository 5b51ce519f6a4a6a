/* Owns shape inference of ADDITIVE_ATTENTION: qp [B, Nq, H], kp [B, Nk, H], w_v [H],
 * v [B, Nk, Dv] of one float dtype, optional i32 valid_lens [B] or [B, Nq] -> the context
 * [B, Nq, Dv] (or the weights [B, Nq, Nk]). vkf_graph_infer_node prefixes `<op> "<node>": `. */
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
