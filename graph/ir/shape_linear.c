/* Owns shape inference of the linear-attention family (LINEAR_FEATURES, LINEAR_ATTENTION,
 * LINEAR_STATE_WRITE): every tensor f32, heads equal, the state [B, H, F, Dv + 1]. Messages name
 * the tensor and both shapes; vkf_graph_infer_node prefixes `<op> "<node>": `. */
#include <inttypes.h>

#include "graph/ir/graph_internal.h"

typedef struct lin_shape_buf {
  char s[96];
} lin_shape_buf;

static const char *fmt(const vkf_tensor *t, lin_shape_buf *b) {
  return vkf_shape_format(t->rank, t->shape, b->s, sizeof b->s);
}

static const vkf_tensor *slot(const vkf_graph *g, const vkf_node *n, uint32_t s) {
  if (s >= n->input_count || n->inputs[s].id == 0) return NULL;
  return vkf_graph_tensor(g, n->inputs[s]);
}

static vkf_status need_f32(const vkf_tensor *t, const char *what, uint32_t rank) {
  lin_shape_buf b;
  if (t->dtype != VKF_F32)
    return vkf_status_make(VKF_STATUS_SHAPE, "%s \"%s\" must be f32, got %s", what, t->name,
                           vkf_dtype_name(t->dtype));
  if (t->rank != rank)
    return vkf_status_make(VKF_STATUS_SHAPE, "%s \"%s\" %s must be rank %u", what, t->name,
                           fmt(t, &b), rank);
  for (uint32_t i = 0; i < rank; i++)
    if (t->shape[i] < 1)
      return vkf_status_make(VKF_STATUS_SHAPE, "%s \"%s\" %s has an empty dimension", what, t->name,
                             fmt(t, &b));
  return VKF_OK;
}

static void set_out(vkf_tensor *out, uint32_t rank, const int64_t *shape) {
  out->dtype = VKF_F32;
  out->rank = rank;
  for (uint32_t i = 0; i < rank; i++) out->shape[i] = shape[i];
  vkf_contiguous_strides(rank, out->shape, out->strides);
}

/* x [B, H, N, D], omega [M, D] -> [B, H, N, F]. */
vkf_status vkf_shape_linear_features(const vkf_graph *g, const vkf_node *n, vkf_tensor *out) {
  const vkf_tensor *x = slot(g, n, VKF_IN_LFEAT_X), *w = slot(g, n, VKF_IN_LFEAT_OMEGA);
  lin_shape_buf sa, sb;
  vkf_feature_map kind = n->attrs.linear_features.kind;
  VKF_RETURN_IF_ERROR(need_f32(x, "x", 4));
  int64_t shape[4] = {x->shape[0], x->shape[1], x->shape[2], x->shape[3]};
  if (kind == VKF_FEATURE_ELU1) {
    if (w) return vkf_status_make(VKF_STATUS_SHAPE, "elu1 takes no omega, got \"%s\"", w->name);
  } else if (kind == VKF_FEATURE_FAVOR || kind == VKF_FEATURE_RFF) {
    if (!w)
      return vkf_status_make(VKF_STATUS_SHAPE, "%s needs omega [M, %" PRId64 "]",
                             vkf_feature_map_name(kind), x->shape[3]);
    VKF_RETURN_IF_ERROR(need_f32(w, "omega", 2));
    if (w->shape[1] != x->shape[3])
      return vkf_status_make(VKF_STATUS_SHAPE,
                             "omega %s does not match x %s: expected [M, %" PRId64 "]", fmt(w, &sa),
                             fmt(x, &sb), x->shape[3]);
    shape[3] = kind == VKF_FEATURE_RFF ? 2 * w->shape[0] : w->shape[0];
  } else {
    return vkf_status_make(VKF_STATUS_SHAPE, "unknown feature map %d", (int)kind);
  }
  if (!(n->attrs.linear_features.scale > 0.0f) || n->attrs.linear_features.scale > 1e30f)
    return vkf_status_make(VKF_STATUS_SHAPE, "scale %g must be positive and finite",
                           (double)n->attrs.linear_features.scale);
  set_out(out, 4, shape);
  return VKF_OK;
}

/* A per-token gate [B, H, N] next to tokens of [B, H, N, *]. */
static vkf_status check_gate(const vkf_tensor *gate, const vkf_tensor *k) {
  lin_shape_buf sa, sb;
  VKF_RETURN_IF_ERROR(need_f32(gate, "gate", 3));
  for (int i = 0; i < 3; i++)
    if (gate->shape[i] != k->shape[i])
      return vkf_status_make(VKF_STATUS_SHAPE, "gate %s does not match phi_k %s in B, H, N",
                             fmt(gate, &sa), fmt(k, &sb));
  return VKF_OK;
}

/* state [B, H, F, Dv + 1] for phi_k [B, H, *, F], v [B, H, *, Dv]. */
static vkf_status check_state(const vkf_tensor *s, const vkf_tensor *k, const vkf_tensor *v) {
  lin_shape_buf sa, sb;
  VKF_RETURN_IF_ERROR(need_f32(s, "state", 4));
  if (s->shape[0] != k->shape[0] || s->shape[1] != k->shape[1] || s->shape[2] != k->shape[3] ||
      s->shape[3] != v->shape[3] + 1)
    return vkf_status_make(VKF_STATUS_SHAPE,
                           "state %s, expected [%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
                           "] for phi_k %s (columns: Dv of S, then z)",
                           fmt(s, &sa), k->shape[0], k->shape[1], k->shape[3], v->shape[3] + 1,
                           fmt(k, &sb));
  return VKF_OK;
}

/* phi_q, phi_k [B, H, N, F], v [B, H, N, Dv] -> [B, H, N, Dv]. */
static vkf_status check_kv(const vkf_tensor *k, const vkf_tensor *v) {
  lin_shape_buf sa, sb;
  VKF_RETURN_IF_ERROR(need_f32(k, "phi_k", 4));
  VKF_RETURN_IF_ERROR(need_f32(v, "v", 4));
  if (v->shape[0] != k->shape[0] || v->shape[1] != k->shape[1] || v->shape[2] != k->shape[2])
    return vkf_status_make(VKF_STATUS_SHAPE, "v %s does not match phi_k %s in B, H, N", fmt(v, &sa),
                           fmt(k, &sb));
  return VKF_OK;
}

vkf_status vkf_shape_linear_attention(const vkf_graph *g, const vkf_node *n, vkf_tensor *out) {
  const vkf_tensor *q = slot(g, n, VKF_IN_LIN_Q), *k = slot(g, n, VKF_IN_LIN_K);
  const vkf_tensor *v = slot(g, n, VKF_IN_LIN_V), *gate = slot(g, n, VKF_IN_LIN_GATE);
  const vkf_tensor *state = slot(g, n, VKF_IN_LIN_STATE);
  int causal = n->attrs.linear_attention.causal;
  uint32_t chunk = n->attrs.linear_attention.chunk;
  float eps = n->attrs.linear_attention.eps;
  lin_shape_buf sa, sb;
  VKF_RETURN_IF_ERROR(need_f32(q, "phi_q", 4));
  VKF_RETURN_IF_ERROR(check_kv(k, v));
  for (int i = 0; i < 4; i++)
    if (q->shape[i] != k->shape[i])
      return vkf_status_make(VKF_STATUS_SHAPE, "phi_q %s and phi_k %s differ", fmt(q, &sa),
                             fmt(k, &sb));
  if ((gate || state) && !causal)
    return vkf_status_make(VKF_STATUS_SHAPE, "a gate or a state needs causal=1");
  if (gate) VKF_RETURN_IF_ERROR(check_gate(gate, k));
  if (state) VKF_RETURN_IF_ERROR(check_state(state, k, v));
  if (chunk < 1 || chunk > 1024)
    return vkf_status_make(VKF_STATUS_SHAPE, "chunk %u outside [1, 1024]", chunk);
  if (!(eps >= 0.0f) || eps > 1e30f)
    return vkf_status_make(VKF_STATUS_SHAPE, "eps %g must be >= 0 and finite", (double)eps);
  int64_t shape[4] = {q->shape[0], q->shape[1], q->shape[2], v->shape[3]};
  set_out(out, 4, shape);
  return VKF_OK;
}

/* state [B, H, F, Dv + 1] contiguous, phi_k [B, H, T, F], v [B, H, T, Dv] -> the state itself. */
vkf_status vkf_shape_linear_state_write(const vkf_graph *g, const vkf_node *n, vkf_tensor *out) {
  const vkf_tensor *s = slot(g, n, VKF_IN_LSTATE_STATE), *k = slot(g, n, VKF_IN_LSTATE_K);
  const vkf_tensor *v = slot(g, n, VKF_IN_LSTATE_V), *gate = slot(g, n, VKF_IN_LSTATE_GATE);
  lin_shape_buf sa;
  VKF_RETURN_IF_ERROR(check_kv(k, v));
  VKF_RETURN_IF_ERROR(check_state(s, k, v));
  if (gate) VKF_RETURN_IF_ERROR(check_gate(gate, k));
  if (!vkf_tensor_is_contiguous(s))
    return vkf_status_make(VKF_STATUS_SHAPE, "state %s must be contiguous", fmt(s, &sa));
  if (k->base.id == s->base.id || v->base.id == s->base.id || (gate && gate->base.id == s->base.id))
    return vkf_status_make(VKF_STATUS_SHAPE, "phi_k, v or gate alias the state's storage");
  *out = *s;
  return VKF_OK;
}
