/* The shared graph pieces of nn_helpers.h. */
#include "models/arch/nn_helpers.h"

#include <stdio.h>

static void fill_value(float *out, size_t count, const void *user) {
  for (size_t i = 0; i < count; i++) out[i] = *(const float *)user;
}

vkf_value vkf_nn_filled(const vkf_arch_weights *w, vkf_graph *g, const char *key, vkf_dtype dtype,
                        uint32_t rank, const int64_t *shape, float value) {
  return vkf_arch_computed(w, g, key, dtype, rank, shape, fill_value, &value);
}

vkf_value vkf_nn_linear(const vkf_arch_weights *w, vkf_graph *g, const char *module, vkf_value x,
                        vkf_activation act) {
  char a[VKF_ARCH_NAME_MAX], b[VKF_ARCH_NAME_MAX], nm[VKF_ARCH_NAME_MAX];
  vkf_matmul_options o = {.transpose_b = 1,
                          .bias = vkf_arch_weight(w, g, VKF_NAME(b, "%s.bias", module)),
                          .activation = act};
  return vkf_matmul(g, VKF_NAME(nm, "%s%s", w->prefix, module), x,
                    vkf_arch_weight(w, g, VKF_NAME(a, "%s.weight", module)), &o);
}

vkf_value vkf_nn_layernorm(const vkf_arch_weights *w, vkf_graph *g, const char *module, vkf_value x,
                           float eps) {
  char a[VKF_ARCH_NAME_MAX], b[VKF_ARCH_NAME_MAX], nm[VKF_ARCH_NAME_MAX];
  vkf_norm_options o = {.eps = eps,
                        .gamma = vkf_arch_weight(w, g, VKF_NAME(a, "%s.weight", module)),
                        .beta = vkf_arch_weight(w, g, VKF_NAME(b, "%s.bias", module))};
  return vkf_layernorm(g, VKF_NAME(nm, "%s%s", w->prefix, module), x, &o);
}

vkf_value vkf_nn_mask_bias(const vkf_arch_weights *w, vkf_graph *g, vkf_value mask_f, int64_t batch,
                           int64_t n) {
  int64_t one[1] = {1}, shape[4] = {batch, 1, 1, n};
  vkf_value lowest =
      vkf_nn_filled(w, g, "attention_mask.masked_score", VKF_F32, 1, one, -VKF_MASKED_SCORE);
  vkf_value bias = vkf_scale(g, "attention_mask.scaled", mask_f, VKF_MASKED_SCORE);
  bias = vkf_add(g, "attention_mask.bias", bias, lowest); /* 0 kept, -big masked */
  return vkf_reshape(g, "attention_mask.bias_rows", bias, 4, shape);
}

vkf_value vkf_nn_first_token(vkf_graph *g, const char *name, vkf_value x, int64_t batch,
                             int64_t d) {
  char nm[VKF_ARCH_NAME_MAX + 32];
  int64_t bd[2] = {batch, d};
  vkf_value t = vkf_slice(g, VKF_NAME(nm, "%s.first_token", name), x, 1, 0, 1);
  return vkf_reshape(g, VKF_NAME(nm, "%s.first_token_flat", name), t, 2, bd);
}

vkf_value vkf_nn_pooler(const vkf_arch_weights *w, vkf_graph *g, vkf_value x, int64_t batch,
                        int64_t d) {
  char nm[VKF_ARCH_NAME_MAX];
  VKF_NAME(nm, "%spooler", w->prefix);
  vkf_value cls = vkf_nn_first_token(g, nm, x, batch, d);
  return vkf_tanh(g, nm, vkf_nn_linear(w, g, "pooler.dense", cls, VKF_ACT_NONE));
}

vkf_value vkf_nn_concat_many(vkf_graph *g, const char *name, vkf_value *xs, int64_t count,
                             uint32_t axis) {
  while (count > 1) {
    int64_t n = 0;
    for (int64_t i = 0; i < count; i += 8) {
      uint32_t k = (uint32_t)(count - i < 8 ? count - i : 8);
      xs[n++] = k == 1 ? xs[i] : vkf_concat(g, name, xs + i, k, axis);
    }
    count = n;
  }
  return xs[0];
}

vkf_value vkf_nn_block_norm(vkf_graph *g, const char *name, const vkf_block_config *c, vkf_value x,
                            vkf_value gamma, vkf_value beta) {
  vkf_norm_options o = {.eps = c->norm_eps, .gamma = gamma, .beta = beta};
  return c->norm == VKF_BLOCK_RMSNORM ? vkf_rmsnorm(g, name, x, &o) : vkf_layernorm(g, name, x, &o);
}

int64_t vkf_nn_dim_of(vkf_graph *g, vkf_value v, uint32_t axis) {
  const vkf_tensor *t = vkf_value_valid(v) ? vkf_graph_tensor(g, v) : NULL;
  return t && axis < t->rank ? t->shape[axis] : 1;
}

vkf_value vkf_nn_project(vkf_graph *g, const char *name, vkf_value x, const vkf_block_linear *l,
                         vkf_activation act, vkf_value residual) {
  vkf_matmul_options o = {
      .transpose_b = !l->in_out, .bias = l->bias, .activation = act, .residual = residual};
  return vkf_matmul(g, name, x, l->weight, &o);
}

vkf_value vkf_nn_heads(vkf_graph *g, const char *name, vkf_value split, int64_t first,
                       int64_t count) {
  static const uint32_t to_bhnd[4] = {0, 2, 1, 3};
  char nm[VKF_ARCH_NAME_MAX + 64];
  vkf_value s = vkf_slice(g, VKF_NAME(nm, "%s_heads", name), split, 2, first, first + count);
  return vkf_permute(g, name, s, to_bhnd);
}
