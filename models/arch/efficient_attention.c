/* The "vkf_attention" kinds as graphs over the linear-attention ops and Linformer (see
 * efficient_attention.h). */
#include "models/arch/efficient_attention.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "graph/ir/random_features.h"
#include "models/arch/lowrank_attention.h"
#include "models/arch/nn_helpers.h"

/* Added to the gate logit of a padded token: sigmoid gives exactly 1, so the state is held and the
 * token adds (1 - g) phi(k) v^T = 0. */
#define PAD_GATE_LOGIT 1e30f

static int random_kind(const vkf_hf_attention *a) {
  return a->kind == VKF_HF_ATTN_PERFORMER || a->kind == VKF_HF_ATTN_RFA;
}

static vkf_status expect3(const vkf_checkpoint *ck, const char *p, const char *name, int64_t d0,
                          int64_t d1, int64_t d2) {
  int64_t dims[3] = {d0, d1, d2};
  return vkf_arch_expect(ck, p, name, 3, dims);
}

vkf_status vkf_efficient_expect(const vkf_checkpoint *ck, const char *root_prefix, const char *p,
                                const vkf_hf_attention *a, const vkf_efficient_dims *d) {
  if (random_kind(a) && vkf_arch_has(ck, p, "vkf_omega"))
    VKF_RETURN_IF_ERROR(vkf_arch_expect2(ck, p, "vkf_omega", a->features, d->head_dim));
  if (a->kind == VKF_HF_ATTN_RFA && a->gate) {
    VKF_RETURN_IF_ERROR(vkf_arch_expect2(ck, p, "vkf_gate.weight", d->heads, d->hidden));
    VKF_RETURN_IF_ERROR(vkf_arch_expect2(ck, p, "vkf_gate.bias", d->heads, 0));
  }
  if (a->kind == VKF_HF_ATTN_NYSTROM && a->conv_kernel_size) {
    int64_t dims[4] = {d->heads, 1, a->conv_kernel_size, 1};
    return vkf_arch_expect(ck, p, "vkf_nystrom_conv.weight", 4, dims);
  }
  if (a->kind != VKF_HF_ATTN_LINFORMER) return VKF_OK;
  switch (a->sharing) {
    case VKF_HF_SHARE_NONE:
      VKF_RETURN_IF_ERROR(expect3(ck, p, "vkf_linformer_e", d->heads, a->k, d->positions));
      return expect3(ck, p, "vkf_linformer_f", d->heads, a->k, d->positions);
    case VKF_HF_SHARE_HEADWISE:
      VKF_RETURN_IF_ERROR(vkf_arch_expect2(ck, p, "vkf_linformer_e", a->k, d->positions));
      return vkf_arch_expect2(ck, p, "vkf_linformer_f", a->k, d->positions);
    case VKF_HF_SHARE_KEY_VALUE:
      return vkf_arch_expect2(ck, p, "vkf_linformer_e", a->k, d->positions);
    default:
      return vkf_arch_expect2(ck, root_prefix, "vkf_linformer_e", a->k, d->positions);
  }
}

typedef struct omega_fill {
  const vkf_hf_attention *a;
  int64_t layer, head_dim;
  vkf_status status;
} omega_fill;

static void fill_omega(float *out, size_t count, const void *user) {
  omega_fill *f = (omega_fill *)user;
  f->status = vkf_random_features(f->a->seed + (uint64_t)f->layer, (uint32_t)f->a->features,
                                  (uint32_t)f->head_dim, f->a->orthogonal, out);
  if (f->status) memset(out, 0, count * sizeof *out);
}

void vkf_efficient_weights_get(const vkf_arch_weights *w, vkf_graph *g, const char *p,
                               const vkf_hf_attention *a, int64_t layer,
                               const vkf_efficient_dims *d, vkf_efficient_weights *out) {
  memset(out, 0, sizeof *out);
  out->arch = *w;
  char nm[VKF_ARCH_NAME_MAX], key[VKF_ARCH_NAME_MAX];
  if (random_kind(a)) {
    if (vkf_arch_has(w->ck, w->prefix, VKF_NAME(nm, "%svkf_omega", p))) {
      out->omega = vkf_arch_weight_as(w, g, nm, VKF_F32);
    } else {
      /* The redraw rule at inference: one draw per layer from seed + layer, never redrawn. */
      int64_t shape[2] = {a->features, d->head_dim};
      omega_fill f = {a, layer, d->head_dim, VKF_OK};
      VKF_NAME(key, "vkf_omega.seed%llu.layer%lld.%lldx%lld.%s", (unsigned long long)a->seed,
               (long long)layer, (long long)a->features, (long long)d->head_dim,
               a->orthogonal ? "orthogonal" : "iid");
      out->omega = vkf_arch_computed(w, g, key, VKF_F32, 2, shape, fill_omega, &f);
      if (f.status) vkf_graph_set_error(g, f.status);
    }
  }
  if ((a->kind == VKF_HF_ATTN_RFA && a->gate) || a->kind == VKF_HF_ATTN_NYSTROM) {
    int64_t s1[1] = {1};
    out->one = vkf_nn_filled(w, g, "vkf_attention.one", VKF_F32, 1, s1, 1.0f);
  }
  if (a->kind == VKF_HF_ATTN_NYSTROM && a->conv_kernel_size) {
    vkf_value cw = vkf_arch_weight(w, g, VKF_NAME(nm, "%svkf_nystrom_conv.weight", p));
    int64_t hk[2] = {d->heads, a->conv_kernel_size};
    out->conv = vkf_reshape(g, VKF_NAME(key, "%s%svkf_nystrom_conv", w->prefix, p), cw, 2, hk);
  }
  if (a->kind == VKF_HF_ATTN_RFA && a->gate) {
    out->gate_weight = vkf_arch_weight(w, g, VKF_NAME(nm, "%svkf_gate.weight", p));
    out->gate_bias = vkf_arch_weight(w, g, VKF_NAME(nm, "%svkf_gate.bias", p));
  }
  if (a->kind == VKF_HF_ATTN_LINFORMER) {
    if (a->sharing == VKF_HF_SHARE_LAYERWISE)
      out->e = vkf_arch_weight(w, g, "vkf_linformer_e");
    else
      out->e = vkf_arch_weight(w, g, VKF_NAME(nm, "%svkf_linformer_e", p));
    out->f = a->sharing == VKF_HF_SHARE_NONE || a->sharing == VKF_HF_SHARE_HEADWISE
                 ? vkf_arch_weight(w, g, VKF_NAME(nm, "%svkf_linformer_f", p))
                 : out->e;
  }
}

int64_t vkf_efficient_state_features(const vkf_hf_attention *a, int64_t head_dim) {
  switch (a->kind) {
    case VKF_HF_ATTN_LINEAR:
      return head_dim;
    case VKF_HF_ATTN_PERFORMER:
      return a->features;
    case VKF_HF_ATTN_RFA:
      return 2 * a->features;
    default:
      return 0;
  }
}

static vkf_dtype dtype_of(vkf_graph *g, vkf_value v) {
  const vkf_tensor *t = vkf_value_valid(v) ? vkf_graph_tensor(g, v) : NULL;
  return t ? t->dtype : VKF_F32;
}

static vkf_value as_f32(vkf_graph *g, const char *name, vkf_value x) {
  return dtype_of(g, x) == VKF_F32 ? x : vkf_cast(g, name, x, VKF_F32);
}

/* RFA's gate logits [B, H, N] f32: x W^T + b, PAD_GATE_LOGIT added at padded tokens. */
static vkf_value gate_logits(vkf_graph *g, const char *name, const vkf_efficient_weights *ew,
                             vkf_value x, vkf_value keep) {
  char nm[VKF_ARCH_NAME_MAX + 32];
  vkf_matmul_options mo = {.transpose_b = 1, .bias = ew->gate_bias};
  vkf_value l = vkf_matmul(g, VKF_NAME(nm, "%s.gate", name), x, ew->gate_weight, &mo); /* [B,N,H] */
  l = as_f32(g, VKF_NAME(nm, "%s.gate_f32", name), l);
  if (vkf_value_valid(keep)) {
    vkf_value pad = vkf_sub(g, VKF_NAME(nm, "%s.gate_padding", name), ew->one, keep); /* [B, N] */
    int64_t bn1[3] = {vkf_nn_dim_of(g, keep, 0), vkf_nn_dim_of(g, keep, 1), 1};
    pad = vkf_reshape(g, VKF_NAME(nm, "%s.gate_padding_rows", name), pad, 3, bn1);
    l = vkf_add(g, VKF_NAME(nm, "%s.gate_held", name), l,
                vkf_scale(g, VKF_NAME(nm, "%s.gate_hold", name), pad, PAD_GATE_LOGIT));
  }
  static const uint32_t to_bhn[3] = {0, 2, 1};
  return vkf_permute(g, VKF_NAME(nm, "%s.gate_heads", name), l, to_bhn);
}

/* keep [B, N] as [B, 1, N, 1] in `dt`, to zero a padded token's row. */
static vkf_value keep_rows(vkf_graph *g, const char *name, vkf_value keep, vkf_dtype dt) {
  char nm[VKF_ARCH_NAME_MAX + 32];
  int64_t s[4] = {vkf_nn_dim_of(g, keep, 0), 1, vkf_nn_dim_of(g, keep, 1), 1};
  vkf_value r = vkf_reshape(g, VKF_NAME(nm, "%s.keep_rows", name), keep, 4, s);
  return dt == VKF_F32 ? r : vkf_cast(g, VKF_NAME(nm, "%s.keep_rows_cast", name), r, dt);
}

vkf_value vkf_efficient_attention(vkf_graph *g, const char *name, const vkf_hf_attention *a,
                                  const vkf_efficient_weights *ew, vkf_value q, vkf_value k,
                                  vkf_value v, vkf_value x, vkf_value keep, int causal,
                                  vkf_value state) {
  char nm[VKF_ARCH_NAME_MAX + 32];
  vkf_dtype dt = dtype_of(g, q);
  int64_t dh = vkf_nn_dim_of(g, q, 3), n = vkf_nn_dim_of(g, k, 2);
  vkf_value out;
  if (a->kind == VKF_HF_ATTN_LINFORMER) {
    if (vkf_value_valid(keep)) {
      vkf_value r = keep_rows(g, name, keep, dt);
      k = vkf_mul(g, VKF_NAME(nm, "%s.k_kept", name), k, r);
      v = vkf_mul(g, VKF_NAME(nm, "%s.v_kept", name), v, r);
    }
    /* The first N columns of E and F: the paper's zero padding of K and V up to P. */
    const vkf_tensor *et = vkf_value_valid(ew->e) ? vkf_graph_tensor(g, ew->e) : NULL;
    uint32_t last = et && et->rank == 3 ? 2 : 1;
    vkf_value e = vkf_slice(g, VKF_NAME(nm, "%s.e", name), ew->e, last, 0, n);
    vkf_value f =
        ew->f.id == ew->e.id ? e : vkf_slice(g, VKF_NAME(nm, "%s.f", name), ew->f, last, 0, n);
    return vkf_linformer_attention(g, name, q, k, v, e, f, 1.0f / sqrtf((float)dh));
  }
  if (a->kind == VKF_HF_ATTN_NYSTROM) {
    if (n != a->landmarks && n % a->landmarks != 0) {
      vkf_graph_set_error(g, vkf_status_make(VKF_STATUS_SHAPE,
                                             "%s: vkf_attention nystrom needs a length that is a "
                                             "multiple of its %lld landmarks (segment means), not "
                                             "%lld tokens",
                                             name, (long long)a->landmarks, (long long)n));
      return VKF_NO_VALUE;
    }
    vkf_nystrom_options no = {
        .landmarks = a->landmarks,
        .segment_len = n, /* HF's segment_means_seq_len is the input's length here */
        .inv_init = a->inv_per_head ? VKF_NYSTROM_INV_PER_HEAD : VKF_NYSTROM_INV_ORIGINAL,
        .conv_weight = ew->conv,
    };
    if (vkf_value_valid(keep)) { /* HF's (1 - mask) * min, added to kernel 3's scores */
      vkf_value pad = vkf_sub(g, VKF_NAME(nm, "%s.padding", name), ew->one, keep);
      int64_t s4[4] = {vkf_nn_dim_of(g, keep, 0), 1, 1, n};
      pad = vkf_reshape(g, VKF_NAME(nm, "%s.padding_rows", name), pad, 4, s4);
      pad = vkf_scale(g, VKF_NAME(nm, "%s.mask_bias", name), pad, -1e30f);
      no.mask_bias =
          dt == VKF_F32 ? pad : vkf_cast(g, VKF_NAME(nm, "%s.mask_bias_cast", name), pad, dt);
    }
    return vkf_nystrom_attention(g, &ew->arch, name, q, k, v, &no);
  }
  vkf_feature_map fm = a->kind == VKF_HF_ATTN_LINEAR      ? VKF_FEATURE_ELU1
                       : a->kind == VKF_HF_ATTN_PERFORMER ? VKF_FEATURE_FAVOR
                                                          : VKF_FEATURE_RFF;
  q = as_f32(g, VKF_NAME(nm, "%s.q_f32", name), q);
  k = as_f32(g, VKF_NAME(nm, "%s.k_f32", name), k);
  v = as_f32(g, VKF_NAME(nm, "%s.v_f32", name), v);
  float scale = (float)a->scale;
  vkf_value pq = vkf_linear_features(g, VKF_NAME(nm, "%s.phi_q", name), q, ew->omega, fm, scale);
  vkf_value pk = vkf_linear_features(g, VKF_NAME(nm, "%s.phi_k", name), k, ew->omega, fm, scale);
  if (vkf_value_valid(keep))
    pk = vkf_mul(g, VKF_NAME(nm, "%s.phi_k_kept", name), pk, keep_rows(g, name, keep, VKF_F32));
  vkf_linear_attention_options lo = {.causal = causal, .eps = (float)a->eps, .state = state};
  if (a->kind == VKF_HF_ATTN_RFA && a->gate) lo.gate = gate_logits(g, name, ew, x, keep);
  out = vkf_linear_attention(g, name, pq, pk, v, &lo);
  /* After the attention read it: the state write is in place and kept by dead-code elimination. */
  if (vkf_value_valid(state))
    vkf_linear_state_write(g, VKF_NAME(nm, "%s.state_write", name), state, pk, v, lo.gate);
  return dt == VKF_F32 ? out : vkf_cast(g, VKF_NAME(nm, "%s.out_cast", name), out, dt);
}
