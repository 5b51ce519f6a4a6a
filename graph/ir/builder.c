/* Owns the builder calls: they resolve option defaults into node attributes and append nodes
 * through vkf_graph_add_node (which infers shapes and keeps the sticky error). */
#include "graph/ir/builder.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "graph/ir/graph_internal.h"

static int tensor_ok(vkf_graph *g, vkf_value v) {
  return v.id > 0 && v.id < g->tensor_count;
}

vkf_value vkf_matmul(vkf_graph *g, const char *name, vkf_value a, vkf_value b,
                     const vkf_matmul_options *options) {
  vkf_matmul_options o = options ? *options : (vkf_matmul_options){0};
  vkf_node_attrs attrs = {0};
  attrs.matmul.transpose_b = o.transpose_b != 0;
  attrs.matmul.activation = o.activation;
  vkf_value in[4] = {a, b, o.bias, o.residual};
  uint32_t count = o.residual.id ? 4 : o.bias.id ? 3 : 2;
  return vkf_graph_add_node(g, VKF_OP_MATMUL, name, in, count, &attrs);
}

static vkf_value binary(vkf_graph *g, vkf_op op, const char *name, vkf_value a, vkf_value b) {
  vkf_value in[2] = {a, b};
  return vkf_graph_add_node(g, op, name, in, 2, NULL);
}

vkf_value vkf_add(vkf_graph *g, const char *name, vkf_value a, vkf_value b) {
  return binary(g, VKF_OP_ADD, name, a, b);
}
vkf_value vkf_sub(vkf_graph *g, const char *name, vkf_value a, vkf_value b) {
  return binary(g, VKF_OP_SUB, name, a, b);
}
vkf_value vkf_mul(vkf_graph *g, const char *name, vkf_value a, vkf_value b) {
  return binary(g, VKF_OP_MUL, name, a, b);
}
vkf_value vkf_div(vkf_graph *g, const char *name, vkf_value a, vkf_value b) {
  return binary(g, VKF_OP_DIV, name, a, b);
}

vkf_value vkf_scale(vkf_graph *g, const char *name, vkf_value x, float scale) {
  vkf_node_attrs attrs = {0};
  attrs.scale.value = scale;
  return vkf_graph_add_node(g, VKF_OP_SCALE, name, &x, 1, &attrs);
}

vkf_value vkf_gelu(vkf_graph *g, const char *name, vkf_value x) {
  return vkf_graph_add_node(g, VKF_OP_GELU_ERF, name, &x, 1, NULL);
}
vkf_value vkf_gelu_tanh(vkf_graph *g, const char *name, vkf_value x) {
  return vkf_graph_add_node(g, VKF_OP_GELU_TANH, name, &x, 1, NULL);
}
vkf_value vkf_relu(vkf_graph *g, const char *name, vkf_value x) {
  return vkf_graph_add_node(g, VKF_OP_RELU, name, &x, 1, NULL);
}
vkf_value vkf_silu(vkf_graph *g, const char *name, vkf_value x) {
  return vkf_graph_add_node(g, VKF_OP_SILU, name, &x, 1, NULL);
}
vkf_value vkf_exp(vkf_graph *g, const char *name, vkf_value x) {
  return vkf_graph_add_node(g, VKF_OP_EXP, name, &x, 1, NULL);
}
vkf_value vkf_tanh(vkf_graph *g, const char *name, vkf_value x) {
  return vkf_graph_add_node(g, VKF_OP_TANH, name, &x, 1, NULL);
}
vkf_value vkf_ln(vkf_graph *g, const char *name, vkf_value x) {
  return vkf_graph_add_node(g, VKF_OP_LOG, name, &x, 1, NULL);
}

vkf_value vkf_activation_apply(vkf_graph *g, const char *name, vkf_value x, vkf_activation act) {
  switch (act) {
    case VKF_ACT_NONE:
      return x;
    case VKF_ACT_GELU_ERF:
      return vkf_gelu(g, name, x);
    case VKF_ACT_GELU_TANH:
      return vkf_gelu_tanh(g, name, x);
    case VKF_ACT_RELU:
      return vkf_relu(g, name, x);
    case VKF_ACT_SILU:
      return vkf_silu(g, name, x);
    default:
      break;
  }
  vkf_graph_set_error(
      g, vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "activation \"%s\": bad activation %d",
                         name ? name : "", (int)act));
  return VKF_NO_VALUE;
}

vkf_value vkf_layernorm(vkf_graph *g, const char *name, vkf_value x,
                        const vkf_norm_options *options) {
  vkf_norm_options o = options ? *options : (vkf_norm_options){0};
  vkf_node_attrs attrs = {0};
  attrs.norm.eps = o.eps > 0 ? o.eps : 1e-5f;
  vkf_value in[3] = {x, o.gamma, o.beta};
  uint32_t count = o.beta.id ? 3 : o.gamma.id ? 2 : 1;
  return vkf_graph_add_node(g, VKF_OP_LAYERNORM, name, in, count, &attrs);
}

vkf_value vkf_rmsnorm(vkf_graph *g, const char *name, vkf_value x,
                      const vkf_norm_options *options) {
  vkf_norm_options o = options ? *options : (vkf_norm_options){0};
  if (o.beta.id) {
    vkf_graph_set_error(
        g, vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "rmsnorm \"%s\": beta is not supported",
                           name ? name : ""));
    return VKF_NO_VALUE;
  }
  vkf_node_attrs attrs = {0};
  attrs.norm.eps = o.eps > 0 ? o.eps : 1e-6f;
  vkf_value in[2] = {x, o.gamma};
  return vkf_graph_add_node(g, VKF_OP_RMSNORM, name, in, o.gamma.id ? 2 : 1, &attrs);
}

vkf_value vkf_l2_normalize(vkf_graph *g, const char *name, vkf_value x, float eps) {
  vkf_node_attrs attrs = {0};
  attrs.norm.eps = eps > 0 ? eps : 1e-12f;
  return vkf_graph_add_node(g, VKF_OP_L2_NORMALIZE, name, &x, 1, &attrs);
}

vkf_value vkf_softmax(vkf_graph *g, const char *name, vkf_value x,
                      const vkf_softmax_options *options) {
  vkf_softmax_options o = options ? *options : (vkf_softmax_options){0};
  vkf_node_attrs attrs = {0};
  attrs.softmax.scale = o.scale != 0 ? o.scale : 1.0f;
  attrs.softmax.causal = o.causal != 0;
  vkf_value in[3] = {x, o.valid_lens, o.bias};
  uint32_t count = o.bias.id ? 3 : o.valid_lens.id ? 2 : 1;
  return vkf_graph_add_node(g, VKF_OP_SOFTMAX, name, in, count, &attrs);
}

vkf_value vkf_attention(vkf_graph *g, const char *name, vkf_value q, vkf_value k, vkf_value v,
                        const vkf_attention_options *options) {
  vkf_attention_options o = options ? *options : (vkf_attention_options){0};
  vkf_node_attrs attrs = {0};
  float scale = o.scale;
  if (scale == 0 && tensor_ok(g, q)) {
    const vkf_tensor *tq = vkf_graph_tensor(g, q);
    scale = tq->rank ? (float)(1.0 / sqrt((double)tq->shape[tq->rank - 1])) : 1.0f;
  }
  attrs.attention.scale = scale;
  attrs.attention.causal = o.causal != 0;
  attrs.attention.window_left = o.windowed ? o.window_left : -1;
  attrs.attention.window_right = o.windowed ? o.window_right : -1;
  vkf_value in[6] = {q, k, v, o.kv_len, o.bias, o.ramp};
  uint32_t count = o.ramp.id ? 6 : o.bias.id ? 5 : o.kv_len.id ? 4 : 3;
  return vkf_graph_add_node(g, VKF_OP_ATTENTION, name, in, count, &attrs);
}

vkf_value vkf_sparse_attention(vkf_graph *g, const char *name, vkf_value q, vkf_value k,
                               vkf_value v, vkf_value rows, vkf_value cols,
                               const vkf_sparse_attention_options *options) {
  vkf_sparse_attention_options o = options ? *options : (vkf_sparse_attention_options){0};
  vkf_node_attrs attrs = {0};
  float scale = o.scale;
  if (scale == 0 && tensor_ok(g, q)) {
    const vkf_tensor *tq = vkf_graph_tensor(g, q);
    scale = tq->rank ? (float)(1.0 / sqrt((double)tq->shape[tq->rank - 1])) : 1.0f;
  }
  attrs.sparse_attention.scale = scale;
  attrs.sparse_attention.block_q = o.block_q;
  attrs.sparse_attention.block_k = o.block_k;
  attrs.sparse_attention.causal = o.causal != 0;
  attrs.sparse_attention.merge_heads = o.merge_heads != 0;
  vkf_value in[8] = {q, k, v, rows, cols, o.masks, o.kv_len, o.key_bias};
  uint32_t count = o.key_bias.id ? 8 : o.kv_len.id ? 7 : o.masks.id ? 6 : 5;
  return vkf_graph_add_node(g, VKF_OP_SPARSE_ATTENTION, name, in, count, &attrs);
}

vkf_value vkf_reshape(vkf_graph *g, const char *name, vkf_value x, uint32_t rank,
                      const int64_t *shape) {
  if (g->error) return VKF_NO_VALUE;
  if (!tensor_ok(g, x) || rank > VKF_MAX_DIMS) {
    vkf_graph_set_error(
        g, vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "reshape \"%s\": bad input or rank %u",
                           name ? name : "", rank));
    return VKF_NO_VALUE;
  }
  vkf_node_attrs attrs = {0};
  attrs.reshape.rank = rank;
  const vkf_tensor *t = vkf_graph_tensor(g, x);
  int64_t known = 1, total = vkf_tensor_element_count(t);
  int infer = -1;
  for (uint32_t i = 0; i < rank; i++) {
    attrs.reshape.shape[i] = shape[i];
    if (shape[i] == -1 && infer < 0)
      infer = (int)i;
    else
      known *= shape[i];
  }
  if (infer >= 0) attrs.reshape.shape[infer] = known > 0 ? total / known : 0;
  if (!vkf_tensor_is_contiguous(t)) {
    char *copy_name = vkf_arena_printf(g->arena, "%s.contiguous", name ? name : t->name);
    x = vkf_copy(g, copy_name, x);
  }
  return vkf_graph_add_node(g, VKF_OP_RESHAPE, name, &x, 1, &attrs);
}

vkf_value vkf_permute(vkf_graph *g, const char *name, vkf_value x, const uint32_t *axes) {
  vkf_node_attrs attrs = {0};
  uint32_t rank = tensor_ok(g, x) ? vkf_graph_tensor(g, x)->rank : 0;
  for (uint32_t i = 0; i < rank; i++) attrs.permute.axes[i] = axes[i];
  return vkf_graph_add_node(g, VKF_OP_PERMUTE, name, &x, 1, &attrs);
}

vkf_value vkf_slice(vkf_graph *g, const char *name, vkf_value x, uint32_t axis, int64_t start,
                    int64_t end) {
  vkf_node_attrs attrs = {0};
  attrs.slice.axis = axis;
  attrs.slice.start = start;
  attrs.slice.end = end;
  return vkf_graph_add_node(g, VKF_OP_SLICE, name, &x, 1, &attrs);
}

vkf_value vkf_copy(vkf_graph *g, const char *name, vkf_value x) {
  return vkf_graph_add_node(g, VKF_OP_COPY, name, &x, 1, NULL);
}

vkf_value vkf_cast(vkf_graph *g, const char *name, vkf_value x, vkf_dtype dtype) {
  vkf_node_attrs attrs = {0};
  attrs.cast.dtype = dtype;
  return vkf_graph_add_node(g, VKF_OP_CAST, name, &x, 1, &attrs);
}

vkf_value vkf_concat(vkf_graph *g, const char *name, const vkf_value *xs, uint32_t count,
                     uint32_t axis) {
  if (g->error) return VKF_NO_VALUE;
  if (count == 0 || count > VKF_MAX_NODE_INPUTS) {
    vkf_graph_set_error(
        g, vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "concat \"%s\": %u inputs, expected 1..%d",
                           name ? name : "", count, VKF_MAX_NODE_INPUTS));
    return VKF_NO_VALUE;
  }
  vkf_node_attrs attrs = {0};
  attrs.concat.axis = axis;
  return vkf_graph_add_node(g, VKF_OP_CONCAT, name, xs, count, &attrs);
}

vkf_value vkf_gather(vkf_graph *g, const char *name, vkf_value table, vkf_value ids) {
  vkf_value in[2] = {table, ids};
  return vkf_graph_add_node(g, VKF_OP_GATHER, name, in, 2, NULL);
}

vkf_value vkf_patch_embed(vkf_graph *g, const char *name, vkf_value image, vkf_value weight,
                          vkf_value bias) {
  vkf_value in[3] = {image, weight, bias};
  return vkf_graph_add_node(g, VKF_OP_PATCH_EMBED, name, in, bias.id ? 3 : 2, NULL);
}

vkf_value vkf_mean_pool(vkf_graph *g, const char *name, vkf_value x, vkf_value mask) {
  vkf_value in[2] = {x, mask};
  return vkf_graph_add_node(g, VKF_OP_MEAN_POOL, name, in, mask.id ? 2 : 1, NULL);
}

vkf_value vkf_reduce(vkf_graph *g, const char *name, vkf_value x, vkf_reduce_kind kind,
                     uint32_t axis) {
  vkf_node_attrs attrs = {0};
  attrs.reduce.kind = kind;
  attrs.reduce.axis = axis;
  return vkf_graph_add_node(g, VKF_OP_REDUCE, name, &x, 1, &attrs);
}

vkf_value vkf_additive_attention(vkf_graph *g, const char *name, vkf_value qp, vkf_value kp,
                                 vkf_value w_v, vkf_value v, vkf_value valid_lens, int weights) {
  vkf_value in[5] = {qp, kp, w_v, v, valid_lens};
  vkf_node_attrs a = {.additive_attention = {.weights = weights != 0}};
  return vkf_graph_add_node(g, VKF_OP_ADDITIVE_ATTENTION, name, in, valid_lens.id ? 5 : 4, &a);
}

vkf_value vkf_gru_scan(vkf_graph *g, const char *name, vkf_value gates, vkf_value w_hh,
                       vkf_value b_hh, vkf_value h0) {
  vkf_value in[4] = {gates, w_hh, b_hh, h0};
  return vkf_graph_add_node(g, VKF_OP_GRU_SCAN, name, in, h0.id ? 4 : 3, NULL);
}

vkf_value vkf_depthwise_conv(vkf_graph *g, const char *name, vkf_value x, vkf_value weight) {
  vkf_value in[2] = {x, weight};
  return vkf_graph_add_node(g, VKF_OP_DEPTHWISE_CONV, name, in, 2, NULL);
}

vkf_value vkf_argsort(vkf_graph *g, const char *name, vkf_value keys) {
  const vkf_tensor *t = vkf_value_valid(keys) ? vkf_graph_tensor(g, keys) : NULL;
  if (t && !vkf_tensor_is_contiguous(t)) {
    char nm[256];
    snprintf(nm, sizeof nm, "%s.contiguous", name ? name : "argsort");
    keys = vkf_copy(g, nm, keys);
  }
  return vkf_graph_add_node(g, VKF_OP_ARGSORT, name, &keys, 1, NULL);
}

vkf_value vkf_rotary(vkf_graph *g, const char *name, vkf_value x, vkf_value cos, vkf_value sin) {
  vkf_value in[3] = {x, cos, sin};
  return vkf_graph_add_node(g, VKF_OP_ROTARY, name, in, 3, NULL);
}

vkf_value vkf_kv_write(vkf_graph *g, const char *name, vkf_value cache, vkf_value rows,
                       vkf_value start) {
  vkf_value in[3] = {cache, rows, start};
  return vkf_graph_add_node(g, VKF_OP_KV_WRITE, name, in, 3, NULL);
}

vkf_value vkf_linear_features(vkf_graph *g, const char *name, vkf_value x, vkf_value omega,
                              vkf_feature_map kind, float scale) {
  vkf_node_attrs attrs = {0};
  attrs.linear_features.kind = kind;
  attrs.linear_features.scale = scale;
  if (scale == 0.0f && tensor_ok(g, x)) {
    const vkf_tensor *t = vkf_graph_tensor(g, x);
    if (t->rank > 0 && t->shape[t->rank - 1] > 0)
      attrs.linear_features.scale = (float)pow((double)t->shape[t->rank - 1], -0.25);
  }
  vkf_value in[2] = {x, omega};
  return vkf_graph_add_node(g, VKF_OP_LINEAR_FEATURES, name, in, omega.id ? 2 : 1, &attrs);
}

vkf_value vkf_linear_attention(vkf_graph *g, const char *name, vkf_value phi_q, vkf_value phi_k,
                               vkf_value v, const vkf_linear_attention_options *o) {
  vkf_linear_attention_options none = {0};
  if (!o) o = &none;
  vkf_node_attrs attrs = {0};
  attrs.linear_attention.causal = o->causal;
  attrs.linear_attention.eps = o->eps == 0.0f ? 1e-6f : o->eps;
  attrs.linear_attention.chunk = o->chunk ? o->chunk : 64;
  vkf_value in[5] = {phi_q, phi_k, v, o->gate, o->state};
  uint32_t count = o->state.id ? 5 : o->gate.id ? 4 : 3;
  return vkf_graph_add_node(g, VKF_OP_LINEAR_ATTENTION, name, in, count, &attrs);
}

vkf_value vkf_linear_state_write(vkf_graph *g, const char *name, vkf_value state, vkf_value phi_k,
                                 vkf_value v, vkf_value gate) {
  vkf_value in[4] = {state, phi_k, v, gate};
  return vkf_graph_add_node(g, VKF_OP_LINEAR_STATE_WRITE, name, in, gate.id ? 4 : 3, NULL);
}
