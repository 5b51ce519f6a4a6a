/* The Transformer block builder: load-time tensor checks, weight resolution (Q, K, V stacked into
 * one GEMM) and the graph of the attention and MLP sublayers with pre- or post-norm. */
#include "models/arch/transformer_block.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/arch/nn_helpers.h"

vkf_activation vkf_block_activation(vkf_hf_act act) {
  switch (act) {
    case VKF_HF_ACT_GELU_TANH:
      return VKF_ACT_GELU_TANH;
    case VKF_HF_ACT_RELU:
      return VKF_ACT_RELU;
    case VKF_HF_ACT_SILU:
      return VKF_ACT_SILU;
    default:
      return VKF_ACT_GELU_ERF;
  }
}

/* A kind that replaces softmax attention (efficient_attention.h); an adaptive span does not. */
static int efficient(const vkf_block_config *c) {
  return c->attention && !vkf_hf_attn_uses_kv(c->attention->kind);
}

static int long_short(const vkf_block_config *c) {
  return c->attention && c->attention->kind == VKF_HF_ATTN_LONG_SHORT && !c->cross;
}

typedef struct span_fill {
  const double *z; /* the layer's spans, one per head */
  double ramp;
} span_fill;

/* (R + z, 1 / R) per head: vkf_attention_options.ramp. */
static void fill_span(float *out, size_t count, const void *user) {
  const span_fill *s = user;
  for (size_t h = 0; h < count / 2; h++) {
    out[2 * h] = (float)(s->ramp + s->z[h]);
    out[2 * h + 1] = (float)(1.0 / s->ramp);
  }
}

typedef struct dims {
  int64_t d, h, hkv, dh, in;
} dims;

static dims dims_of(const vkf_block_config *c) {
  dims r = {c->hidden, c->heads, c->kv_heads ? c->kv_heads : c->heads, c->head_dim,
            c->intermediate};
  if (!r.dh && r.h) r.dh = r.d / r.h;
  return r;
}

static vkf_efficient_dims efficient_dims(const vkf_block_config *c) {
  dims z = dims_of(c);
  return (vkf_efficient_dims){z.d, z.h, z.dh, c->positions};
}

/* A linear weight of `out` x `in` as the file stores it. */
static vkf_status expect_linear(const vkf_checkpoint *ck, const char *p, const char *name,
                                int64_t out, int64_t in, int in_out) {
  if (!name) return VKF_OK;
  return in_out ? vkf_arch_expect2(ck, p, name, in, out) : vkf_arch_expect2(ck, p, name, out, in);
}

static vkf_status expect_vector(const vkf_checkpoint *ck, const char *p, const char *name,
                                int64_t n) {
  return name ? vkf_arch_expect2(ck, p, name, n, 0) : VKF_OK;
}

vkf_status vkf_block_expect(const vkf_checkpoint *ck, const char *p, const vkf_block_names *nm,
                            const vkf_block_config *c) {
  dims z = dims_of(c);
  int io = c->linear_in_out;
  int64_t qd = z.h * z.dh, kvd = z.hkv * z.dh;
  /* The linear-attention ops take one k and v per head (no grouped-query sharing). */
  if (efficient(c) && z.hkv != z.h)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: vkf_attention kind %s needs as many key-value heads as heads "
                           "(%lld, not %lld)",
                           vkf_checkpoint_path(ck), vkf_hf_attn_kind_name(c->attention->kind),
                           (long long)z.h, (long long)z.hkv);
  if (nm->qkv_weight) {
    VKF_RETURN_IF_ERROR(expect_linear(ck, p, nm->qkv_weight, qd + 2 * kvd, z.d, io));
    VKF_RETURN_IF_ERROR(expect_vector(ck, p, nm->qkv_bias, qd + 2 * kvd));
  } else {
    VKF_RETURN_IF_ERROR(expect_linear(ck, p, nm->q_weight, qd, z.d, io));
    VKF_RETURN_IF_ERROR(expect_linear(ck, p, nm->k_weight, kvd, z.d, io));
    VKF_RETURN_IF_ERROR(expect_linear(ck, p, nm->v_weight, kvd, z.d, io));
    VKF_RETURN_IF_ERROR(expect_vector(ck, p, nm->q_bias, qd));
    VKF_RETURN_IF_ERROR(expect_vector(ck, p, nm->k_bias, kvd));
    VKF_RETURN_IF_ERROR(expect_vector(ck, p, nm->v_bias, kvd));
  }
  VKF_RETURN_IF_ERROR(expect_linear(ck, p, nm->out_weight, z.d, qd, io));
  VKF_RETURN_IF_ERROR(expect_vector(ck, p, nm->out_bias, z.d));
  VKF_RETURN_IF_ERROR(expect_vector(ck, p, nm->attn_norm_weight, z.d));
  VKF_RETURN_IF_ERROR(expect_vector(ck, p, nm->attn_norm_bias, z.d));
  VKF_RETURN_IF_ERROR(expect_linear(ck, p, nm->up_weight, z.in, z.d, io));
  VKF_RETURN_IF_ERROR(expect_vector(ck, p, nm->up_bias, z.in));
  if (c->mlp == VKF_BLOCK_MLP_GATED) {
    if (!nm->gate_weight)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s: gated MLP without a gate tensor",
                             vkf_checkpoint_path(ck));
    VKF_RETURN_IF_ERROR(expect_linear(ck, p, nm->gate_weight, z.in, z.d, io));
    VKF_RETURN_IF_ERROR(expect_vector(ck, p, nm->gate_bias, z.in));
  }
  VKF_RETURN_IF_ERROR(expect_linear(ck, p, nm->down_weight, z.d, z.in, io));
  VKF_RETURN_IF_ERROR(expect_vector(ck, p, nm->down_bias, z.d));
  VKF_RETURN_IF_ERROR(expect_vector(ck, p, nm->mlp_norm_weight, z.d));
  VKF_RETURN_IF_ERROR(expect_vector(ck, p, nm->mlp_norm_bias, z.d));
  char ap[VKF_ARCH_NAME_MAX];
  if (long_short(c))
    return vkf_long_short_expect(ck, VKF_NAME(ap, "%s%s.", p, nm->attention), c->attention, z.hkv,
                                 z.dh);
  if (!efficient(c)) return VKF_OK;
  vkf_efficient_dims ed = efficient_dims(c);
  return vkf_efficient_expect(ck, c->root_prefix ? c->root_prefix : "",
                              VKF_NAME(ap, "%s%s.", p, nm->attention), c->attention, &ed);
}

/* prefix + name as a constant, or no value for an absent (NULL) name. */
static vkf_value optional(const vkf_arch_weights *w, vkf_graph *g, const char *p,
                          const char *name) {
  if (!name) return VKF_NO_VALUE;
  char full[VKF_ARCH_NAME_MAX];
  return vkf_arch_weight(w, g, VKF_NAME(full, "%s%s", p, name));
}

static vkf_block_linear linear(const vkf_arch_weights *w, vkf_graph *g, const char *p,
                               const char *weight, const char *bias, int in_out) {
  vkf_value wv = VKF_NO_VALUE;
  char full[VKF_ARCH_NAME_MAX];
  /* a quantised [in, out] weight comes back transposed: in_out drops to 0 */
  if (weight) wv = vkf_arch_linear_weight(w, g, VKF_NAME(full, "%s%s", p, weight), &in_out);
  return (vkf_block_linear){wv, optional(w, g, p, bias), in_out};
}

void vkf_block_weights_get(const vkf_arch_weights *w, vkf_graph *g, const char *p,
                           const vkf_block_names *nm, const vkf_block_config *c,
                           vkf_block_weights *out) {
  memset(out, 0, sizeof *out);
  int io = c->linear_in_out;
  if (nm->qkv_weight) {
    vkf_arch_weights unquantized = *w;
    if (c->cross) unquantized.quantize = VKF_F32; /* sliced: see vkf_block_config.cross */
    out->qkv = linear(&unquantized, g, p, nm->qkv_weight, nm->qkv_bias, io);
  } else {
    /* Three [out, in] projections stacked along out: one GEMM computes Q, K and V. An [in, out]
     * file would need its columns joined instead; no architecture stores them so apart. */
    char wq[VKF_ARCH_NAME_MAX], wk[VKF_ARCH_NAME_MAX], wv[VKF_ARCH_NAME_MAX];
    char key[VKF_ARCH_NAME_MAX];
    const char *wn[3] = {VKF_NAME(wq, "%s%s", p, nm->q_weight),
                         VKF_NAME(wk, "%s%s", p, nm->k_weight),
                         VKF_NAME(wv, "%s%s", p, nm->v_weight)};
    VKF_NAME(key, "%s%s%s.qkv.weight", w->prefix, p, nm->attention);
    vkf_arch_weights unquantized = *w;
    if (c->cross) unquantized.quantize = VKF_F32; /* sliced: see vkf_block_config.cross */
    out->qkv.weight = vkf_arch_matmul_joined(&unquantized, g, key, wn, 3,
                                             io ? VKF_ARCH_SIDE : VKF_ARCH_STACK);
    out->qkv.in_out = io;
    if (nm->q_bias) {
      const char *bn[3] = {VKF_NAME(wq, "%s%s", p, nm->q_bias), VKF_NAME(wk, "%s%s", p, nm->k_bias),
                           VKF_NAME(wv, "%s%s", p, nm->v_bias)};
      VKF_NAME(key, "%s%s%s.qkv.bias", w->prefix, p, nm->attention);
      out->qkv.bias = vkf_arch_joined(w, g, key, bn, 3, VKF_ARCH_STACK, 1.0f);
    }
  }
  out->out = linear(w, g, p, nm->out_weight, nm->out_bias, io);
  out->attn_norm_gamma = optional(w, g, p, nm->attn_norm_weight);
  out->attn_norm_beta = optional(w, g, p, nm->attn_norm_bias);
  char wg[VKF_ARCH_NAME_MAX], wu[VKF_ARCH_NAME_MAX], gu_key[VKF_ARCH_NAME_MAX];
  const char *gu[2] = {nm->gate_weight ? VKF_NAME(wg, "%s%s", p, nm->gate_weight) : NULL,
                       VKF_NAME(wu, "%s%s", p, nm->up_weight)};
  if (c->mlp == VKF_BLOCK_MLP_GATED && c->act == VKF_ACT_SILU && !io && gu[0] && !nm->gate_bias &&
      !nm->up_bias && vkf_arch_same_storage(w, gu, 2)) {
    /* One GEMM reads both weights: a decode step's dispatch fewer per layer */
    VKF_NAME(gu_key, "%s%s%s.gate_up.weight", w->prefix, p, nm->mlp_up);
    out->gate_up.weight = vkf_arch_matmul_joined(w, g, gu_key, gu, 2, VKF_ARCH_STACK);
  } else {
    out->up = linear(w, g, p, nm->up_weight, nm->up_bias, io);
    if (c->mlp == VKF_BLOCK_MLP_GATED)
      out->gate = linear(w, g, p, nm->gate_weight, nm->gate_bias, io);
  }
  out->down = linear(w, g, p, nm->down_weight, nm->down_bias, io);
  out->mlp_norm_gamma = optional(w, g, p, nm->mlp_norm_weight);
  out->mlp_norm_beta = optional(w, g, p, nm->mlp_norm_bias);
  if (c->attention && c->attention->kind == VKF_HF_ATTN_ADAPTIVE_SPAN && !c->cross) {
    dims z = dims_of(c);
    char key[VKF_ARCH_NAME_MAX];
    span_fill sf = {c->attention->spans + c->layer * z.h, c->attention->ramp};
    out->ramp = vkf_arch_computed(w, g, VKF_NAME(key, "%s%s%s.vkf_adaptive_span", w->prefix, p,
                                                 nm->attention),
                                  VKF_F32, 2, (const int64_t[]){z.h, 2}, fill_span, &sf);
  }
  if (long_short(c)) {
    char ap[VKF_ARCH_NAME_MAX];
    out->arch = *w;
    vkf_long_short_weights_get(w, g, VKF_NAME(ap, "%s%s.", p, nm->attention), c->attention,
                               c->norm_eps, &out->long_short);
  }
  if (efficient(c)) {
    char ap[VKF_ARCH_NAME_MAX];
    vkf_efficient_dims ed = efficient_dims(c);
    vkf_efficient_weights_get(w, g, VKF_NAME(ap, "%s%s.", p, nm->attention), c->attention, c->layer,
                              &ed, &out->efficient);
  }
}

void vkf_block_cross_kv(vkf_graph *g, const char *np, const vkf_block_names *nm,
                        const vkf_block_config *c, const vkf_block_weights *w, vkf_value memory,
                        vkf_value *out_k, vkf_value *out_v) {
  dims z = dims_of(c);
  char at[VKF_ARCH_NAME_MAX], nm1[VKF_ARCH_NAME_MAX + 32];
  VKF_NAME(at, "%s%s", np, nm->attention);
  int64_t b = vkf_nn_dim_of(g, memory, 0), m = vkf_nn_dim_of(g, memory, 1), qd = z.h * z.dh,
          kvd = z.hkv * z.dh;
  uint32_t out_axis = w->qkv.in_out ? 1 : 0;
  vkf_block_linear lkv = {
      vkf_slice(g, VKF_NAME(nm1, "%s.kv.weight", at), w->qkv.weight, out_axis, qd, qd + 2 * kvd),
      VKF_NO_VALUE, w->qkv.in_out};
  if (vkf_value_valid(w->qkv.bias))
    lkv.bias = vkf_slice(g, VKF_NAME(nm1, "%s.kv.bias", at), w->qkv.bias, 0, qd, qd + 2 * kvd);
  vkf_value ykv =
      vkf_nn_project(g, VKF_NAME(nm1, "%s.kv_proj", at), memory, &lkv, VKF_ACT_NONE, VKF_NO_VALUE);
  int64_t kvs[4] = {b, m, 2 * z.hkv, z.dh};
  ykv = vkf_reshape(g, VKF_NAME(nm1, "%s.kv_split", at), ykv, 4, kvs);
  *out_k = vkf_nn_heads(g, VKF_NAME(nm1, "%s.k", at), ykv, 0, z.hkv);
  *out_v = vkf_nn_heads(g, VKF_NAME(nm1, "%s.v", at), ykv, z.hkv, z.hkv);
}

/* A sticky error naming the attention node; returns VKF_NO_VALUE. */
static vkf_value fail(vkf_graph *g, const char *at, const char *why) {
  vkf_graph_set_error(g, vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: %s", at, why));
  return VKF_NO_VALUE;
}

/* Attention as Hugging Face's eager path computes it, so that the probabilities exist as a tensor:
 * scores = q·kᵀ, p = softmax(scores·scale + bias) with the fused attention's masks, out = p·v.
 * q [B, H, N, Dh], k and v [B, H, M, Dh] -> [B, H, N, Dh]; *out_probs = p [B, H, N, M]. */
static vkf_value unfused_attention(vkf_graph *g, const char *at, const vkf_block_config *c, dims z,
                                   vkf_value q, vkf_value k, vkf_value v,
                                   const vkf_attention_options *ao, vkf_value *out_probs) {
  char nm[VKF_ARCH_NAME_MAX + 32];
  *out_probs = VKF_NO_VALUE;
  if (z.hkv != z.h) return fail(g, at, "attention probabilities with grouped-query heads");
  if (c->windowed) return fail(g, at, "attention probabilities of a sliding-window attention");
  vkf_matmul_options mo = {.transpose_b = 1};
  vkf_value s = vkf_matmul(g, VKF_NAME(nm, "%s.scores", at), q, k, &mo); /* [B, H, N, M] */
  vkf_softmax_options so = {
      .scale = ao->scale, .valid_lens = ao->kv_len, .causal = ao->causal, .bias = ao->bias};
  vkf_value p = vkf_softmax(g, VKF_NAME(nm, "%s.probs", at), s, &so);
  *out_probs = p;
  return vkf_matmul(g, VKF_NAME(nm, "%s.context_heads", at), p, v, NULL); /* [B, H, N, Dh] */
}

/* An fp16 cache read by f32 activations: attention runs on the cache's dtype (its softmax state
 * is fp32 whatever the storage) and its output comes back to the activations' dtype. Casts *q to
 * k's dtype where they differ and returns the activations' dtype. The dtypes are read before any
 * node is added: tensor pointers die when a new node grows the graph's tensor array (the
 * sanitizer suite caught a read of kt after vkf_attention). */
static vkf_dtype q_in_kv_dtype(vkf_graph *g, const char *at, vkf_value *q, vkf_value k) {
  char nm[VKF_ARCH_NAME_MAX + 32];
  const vkf_tensor *qt = vkf_value_valid(*q) ? vkf_graph_tensor(g, *q) : NULL;
  const vkf_tensor *kt = vkf_value_valid(k) ? vkf_graph_tensor(g, k) : NULL;
  vkf_dtype act_dtype = qt ? qt->dtype : VKF_F32;
  if (qt && kt && kt->dtype != qt->dtype)
    *q = vkf_cast(g, VKF_NAME(nm, "%s.q_cast", at), *q, kt->dtype);
  return act_dtype;
}

/* The context [B, H, N, Dh] back in `act_dtype`, heads merged to [B, N, H·Dh], through the output
 * projection (plus the residual). */
static vkf_value merge_and_project(vkf_graph *g, const char *np, const vkf_block_names *nm,
                                   const char *at, const vkf_block_weights *w, vkf_value e,
                                   vkf_dtype act_dtype, const int64_t merged[3],
                                   vkf_value residual) {
  static const uint32_t to_bnhd[4] = {0, 2, 1, 3};
  char nm1[VKF_ARCH_NAME_MAX + 32];
  if (vkf_value_valid(e) && vkf_graph_tensor(g, e)->dtype != act_dtype)
    e = vkf_cast(g, VKF_NAME(nm1, "%s.out_cast", at), e, act_dtype);
  e = vkf_permute(g, VKF_NAME(nm1, "%s.merge_heads", at), e, to_bnhd); /* [B, N, H, Dh] */
  e = vkf_reshape(g, VKF_NAME(nm1, "%s.context", at), e, 3, merged);   /* [B, N, H·Dh] */
  return vkf_nn_project(g, VKF_NAME(nm1, "%s%s", np, nm->attn_out), e, &w->out, VKF_ACT_NONE,
                        residual);
}

vkf_value vkf_block_attention(vkf_graph *g, const char *np, const vkf_block_names *nm,
                              const vkf_block_config *c, const vkf_block_weights *w,
                              const vkf_block_io *io, vkf_value x, vkf_value memory,
                              vkf_value residual) {
  dims z = dims_of(c);
  int64_t b = vkf_nn_dim_of(g, x, 0), n = vkf_nn_dim_of(g, x, 1);
  char at[VKF_ARCH_NAME_MAX], nm1[VKF_ARCH_NAME_MAX + 32];
  VKF_NAME(at, "%s%s", np, nm->attention);
  vkf_value q, k, v;
  if (!vkf_value_valid(memory) || memory.id == x.id) {
    vkf_value y = vkf_nn_project(g, VKF_NAME(nm1, "%s.qkv", at), x, &w->qkv, VKF_ACT_NONE,
                                 VKF_NO_VALUE); /* [B, N, (H + 2Hkv)·Dh] */
    int64_t split[4] = {b, n, z.h + 2 * z.hkv, z.dh};
    y = vkf_reshape(g, VKF_NAME(nm1, "%s.qkv_heads", at), y, 4, split);
    q = vkf_nn_heads(g, VKF_NAME(nm1, "%s.q", at), y, 0, z.h); /* [B, H, N, Dh] */
    k = vkf_nn_heads(g, VKF_NAME(nm1, "%s.k", at), y, z.h, z.hkv);
    v = vkf_nn_heads(g, VKF_NAME(nm1, "%s.v", at), y, z.h + z.hkv, z.hkv);
  } else {
    /* Cross attention: the fused weight's Q rows read x, its K and V rows the memory (or a cache
     * of them). */
    int64_t qd = z.h * z.dh;
    uint32_t out_axis = w->qkv.in_out ? 1 : 0;
    vkf_block_linear lq = {
        vkf_slice(g, VKF_NAME(nm1, "%s.q.weight", at), w->qkv.weight, out_axis, 0, qd),
        VKF_NO_VALUE, w->qkv.in_out};
    if (vkf_value_valid(w->qkv.bias))
      lq.bias = vkf_slice(g, VKF_NAME(nm1, "%s.q.bias", at), w->qkv.bias, 0, 0, qd);
    vkf_value yq =
        vkf_nn_project(g, VKF_NAME(nm1, "%s.q_proj", at), x, &lq, VKF_ACT_NONE, VKF_NO_VALUE);
    int64_t qs[4] = {b, n, z.h, z.dh};
    yq = vkf_reshape(g, VKF_NAME(nm1, "%s.q_split", at), yq, 4, qs);
    q = vkf_nn_heads(g, VKF_NAME(nm1, "%s.q", at), yq, 0, z.h);
    if (io && vkf_value_valid(io->cross_k)) {
      k = io->cross_k;
      v = io->cross_v;
    } else {
      vkf_block_cross_kv(g, np, nm, c, w, memory, &k, &v);
    }
  }
  if (c->position == VKF_BLOCK_POS_ROTARY && io && io->rotate) {
    q = io->rotate(g, VKF_NAME(nm1, "%s.q_rotary", at), q, io->rotate_user);
    k = io->rotate(g, VKF_NAME(nm1, "%s.k_rotary", at), k, io->rotate_user);
  }
  int self = !vkf_value_valid(memory) || memory.id == x.id;
  int64_t merged[3] = {b, n, z.h * z.dh};
  if (self && efficient(c) && io && io->probs)
    return fail(g, at, "no attention probabilities (output_attentions) for a vkf_attention kind");
  if (self && efficient(c)) {
    vkf_value e = vkf_efficient_attention(g, at, c->attention, &w->efficient, q, k, v, x,
                                          io ? io->keep : VKF_NO_VALUE, c->causal,
                                          io ? io->state : VKF_NO_VALUE);
    /* the linear ops run in f32 whatever q's dtype: the output comes back to q's */
    vkf_dtype act = vkf_value_valid(q) ? vkf_graph_tensor(g, q)->dtype : VKF_F32;
    return merge_and_project(g, np, nm, at, w, e, act, merged, residual);
  }
  if (self && long_short(c)) {
    if (io && io->probs)
      return fail(g, at, "no attention probabilities (output_attentions) for long-short attention");
    const vkf_long_short_weights *lw = &w->long_short;
    k = vkf_long_short_local_norm(g, VKF_NAME(nm1, "%s.k_norm_local", at), c->attention, lw, k);
    v = vkf_long_short_local_norm(g, VKF_NAME(nm1, "%s.v_norm_local", at), c->attention, lw, v);
    if (io && io->kv) io->kv(g, at, &k, &v, io->kv_user); /* the cache holds k~ and v~ */
    vkf_long_short_io lio = {.causal = c->causal || (io && vkf_value_valid(io->cache_start)),
                             .keep = io ? io->keep : VKF_NO_VALUE,
                             .start = io ? io->cache_start : VKF_NO_VALUE};
    vkf_dtype act = q_in_kv_dtype(g, at, &q, k);
    vkf_value e = vkf_long_short_attention(g, &w->arch, at, c->attention, lw, q, k, v, &lio);
    return merge_and_project(g, np, nm, at, w, e, act, merged, residual);
  }
  if (self && io && io->probs && (io->attend || io->kv))
    return fail(g, at,
                "its attention probabilities (output_attentions) need the dense attention, "
                "not this architecture's own");
  if (self && io && io->kv) io->kv(g, at, &k, &v, io->kv_user);
  vkf_attention_options ao = {
      .scale = c->attn_scale ? c->attn_scale : 1.0f / sqrtf((float)z.dh),
      .kv_len = io ? io->kv_len : VKF_NO_VALUE,
      .causal = self && c->causal,
      .windowed = self && c->windowed,
      .window_left = c->window_left,
      .window_right = c->window_right,
      .bias = io ? io->bias : VKF_NO_VALUE,
      .ramp = self ? w->ramp : VKF_NO_VALUE,
  };
  vkf_dtype act = q_in_kv_dtype(g, at, &q, k);
  vkf_value a;
  if (io && io->probs && vkf_value_valid(ao.ramp))
    return fail(g, at, "attention probabilities (output_attentions) of an adaptive span");
  if (io && io->probs)
    a = unfused_attention(g, at, c, z, q, k, v, &ao, io->probs);
  else
    a = self && io && io->attend ? io->attend(g, at, q, k, v, &ao, io->attend_user)
                                 : vkf_attention(g, at, q, k, v, &ao); /* [B, H, N, Dh] */
  return merge_and_project(g, np, nm, at, w, a, act, merged, residual);
}

vkf_value vkf_block_mlp_build(vkf_graph *g, const char *np, const vkf_block_names *nm,
                              const vkf_block_config *c, const vkf_block_weights *w, vkf_value x,
                              vkf_value residual) {
  char up[VKF_ARCH_NAME_MAX], nm1[VKF_ARCH_NAME_MAX + 32];
  VKF_NAME(up, "%s%s", np, nm->mlp_up);
  vkf_value h;
  if (c->mlp == VKF_BLOCK_MLP_GATED && vkf_value_valid(w->gate_up.weight)) {
    /* [B, N, 2I]: the gate's columns, then up's; silu(gate) * up is one elementwise kernel */
    vkf_value gu = vkf_nn_project(g, VKF_NAME(nm1, "%s.gate_up", up), x, &w->gate_up, VKF_ACT_NONE,
                                  VKF_NO_VALUE);
    uint32_t last = vkf_value_valid(gu) ? vkf_graph_tensor(g, gu)->rank - 1 : 0;
    int64_t inter = vkf_nn_dim_of(g, gu, last) / 2;
    vkf_value gate = vkf_slice(g, VKF_NAME(nm1, "%s%s", np, nm->mlp_gate), gu, last, 0, inter);
    h = vkf_slice(g, up, gu, last, inter, 2 * inter);
    gate = vkf_silu(g, VKF_NAME(nm1, "%s%s.act", np, nm->mlp_gate), gate);
    h = vkf_mul(g, VKF_NAME(nm1, "%s.gated", up), gate, h);
  } else if (c->mlp == VKF_BLOCK_MLP_GATED) {
    vkf_value gate = vkf_nn_project(g, VKF_NAME(nm1, "%s%s", np, nm->mlp_gate), x, &w->gate, c->act,
                                    VKF_NO_VALUE); /* [B, N, I] */
    h = vkf_nn_project(g, up, x, &w->up, VKF_ACT_NONE, VKF_NO_VALUE);
    h = vkf_mul(g, VKF_NAME(nm1, "%s.gated", up), gate, h);
  } else {
    h = vkf_nn_project(g, up, x, &w->up, c->act, VKF_NO_VALUE); /* [B, N, I] */
  }
  return vkf_nn_project(g, VKF_NAME(nm1, "%s%s", np, nm->mlp_down), h, &w->down, VKF_ACT_NONE,
                        residual);
}

vkf_value vkf_block_build(vkf_graph *g, const char *np, const vkf_block_names *nm,
                          const vkf_block_config *c, const vkf_block_weights *w,
                          const vkf_block_io *io, vkf_value x) {
  char a[VKF_ARCH_NAME_MAX], m[VKF_ARCH_NAME_MAX];
  VKF_NAME(a, "%s%s", np, nm->attn_norm);
  VKF_NAME(m, "%s%s", np, nm->mlp_norm);
  if (c->order == VKF_BLOCK_PRE_NORM) {
    vkf_value h = vkf_nn_block_norm(g, a, c, x, w->attn_norm_gamma, w->attn_norm_beta);
    x = vkf_block_attention(g, np, nm, c, w, io, h, VKF_NO_VALUE, x);
    h = vkf_nn_block_norm(g, m, c, x, w->mlp_norm_gamma, w->mlp_norm_beta);
    return vkf_block_mlp_build(g, np, nm, c, w, h, x);
  }
  x = vkf_block_attention(g, np, nm, c, w, io, x, VKF_NO_VALUE, x);
  x = vkf_nn_block_norm(g, a, c, x, w->attn_norm_gamma, w->attn_norm_beta);
  x = vkf_block_mlp_build(g, np, nm, c, w, x, x);
  return vkf_nn_block_norm(g, m, c, x, w->mlp_norm_gamma, w->mlp_norm_beta);
}
