/* The builder API every model is written in. Each call appends one node (or a view) and returns
 * its output value. Errors are sticky: the first failure is recorded in the graph with the node's
 * name, op and shapes (fetch it with vkf_graph_status), and every later call returns VKF_NO_VALUE,
 * so model code checks once at the end. `name` may be NULL ("<op>_<index>" is used). */
#ifndef VKF_GRAPH_BUILDER_H
#define VKF_GRAPH_BUILDER_H

#include "graph/ir/graph.h"

/* ---- linear algebra ---- */
typedef struct vkf_matmul_options {
  int transpose_b;           /* B is [..., N, K] (a torch Linear weight [out, in]) */
  vkf_value bias;            /* optional [N] */
  vkf_activation activation; /* applied after the bias */
  vkf_value residual;        /* optional, output-shaped, added last */
} vkf_matmul_options;

/* a [..., M, K] x b [..., K, N] -> [..., M, N]; batch dims broadcast (b may be a 2-D weight).
 * Epilogue: act(a·b + bias) + residual. `options` NULL: plain a·b. */
vkf_value vkf_matmul(vkf_graph *g, const char *name, vkf_value a, vkf_value b,
                     const vkf_matmul_options *options);

/* ---- elementwise (f32/f16, numpy broadcasting, both operands the same dtype) ---- */
vkf_value vkf_add(vkf_graph *g, const char *name, vkf_value a, vkf_value b);
vkf_value vkf_sub(vkf_graph *g, const char *name, vkf_value a, vkf_value b);
vkf_value vkf_mul(vkf_graph *g, const char *name, vkf_value a, vkf_value b);
vkf_value vkf_div(vkf_graph *g, const char *name, vkf_value a, vkf_value b);
vkf_value vkf_scale(vkf_graph *g, const char *name, vkf_value x, float scale);
vkf_value vkf_gelu(vkf_graph *g, const char *name, vkf_value x); /* exact (erf) */
vkf_value vkf_gelu_tanh(vkf_graph *g, const char *name, vkf_value x);
vkf_value vkf_relu(vkf_graph *g, const char *name, vkf_value x);
vkf_value vkf_silu(vkf_graph *g, const char *name, vkf_value x);
vkf_value vkf_exp(vkf_graph *g, const char *name, vkf_value x);
vkf_value vkf_tanh(vkf_graph *g, const char *name, vkf_value x);
/* Natural log (log-softmax heads: Transformer-XL's adaptive softmax); 0 gives -inf. */
vkf_value vkf_ln(vkf_graph *g, const char *name, vkf_value x);
/* act(x) for an epilogue enum (VKF_ACT_NONE returns x unchanged, adding no node). */
vkf_value vkf_activation_apply(vkf_graph *g, const char *name, vkf_value x, vkf_activation act);

/* ---- normalisation, over the last axis ---- */
typedef struct vkf_norm_options {
  float eps;       /* 0: 1e-5 for layernorm, 1e-6 for rmsnorm, 1e-12 for l2 normalisation */
  vkf_value gamma; /* optional [D] */
  vkf_value beta;  /* optional [D], layernorm only */
} vkf_norm_options;

/* (x - mean) / sqrt(var + eps) * gamma + beta (biased variance). */
vkf_value vkf_layernorm(vkf_graph *g, const char *name, vkf_value x,
                        const vkf_norm_options *options);
/* x / sqrt(mean(x^2) + eps) * gamma. */
vkf_value vkf_rmsnorm(vkf_graph *g, const char *name, vkf_value x, const vkf_norm_options *options);
/* x / max(||x||_2, eps), as torch.nn.functional.normalize. */
vkf_value vkf_l2_normalize(vkf_graph *g, const char *name, vkf_value x, float eps);

/* ---- softmax and attention ---- */
typedef struct vkf_softmax_options {
  float scale;          /* 0: 1 */
  vkf_value valid_lens; /* optional i32 [B] or [B, R] for x [B, ..., R, N] (D2L masked_softmax);
                           run-time values are clamped to [0, N]: negative masks the whole row,
                           past N masks nothing (never an out-of-bounds read) */
  int causal;           /* row i of R sees column j iff j <= i + (N - R) */
  vkf_value bias;       /* optional additive, broadcastable to x */
} vkf_softmax_options;

/* softmax(x·scale + bias) over the last axis, masked positions get exactly 0; a fully masked
 * row is all zeros (not NaN, and not D2L's uniform row from its -1e6 fill). */
vkf_value vkf_softmax(vkf_graph *g, const char *name, vkf_value x,
                      const vkf_softmax_options *options);

typedef struct vkf_attention_options {
  float scale;      /* 0: 1/sqrt(D) */
  vkf_value kv_len; /* optional i32 [B]: keys j >= kv_len[b] are padding; run-time values are
                       clamped to [0, Nk] (negative: every key masked, a zero row; past Nk: none
                       masked), so no value reads outside k and v */
  int causal;       /* bottom-right aligned: query i of Nq sees key j iff j <= i + (Nk - Nq) */
  int windowed;     /* 0: no sliding window (window_left/right ignored) */
  int32_t window_left, window_right; /* with windowed: -1 unbounded, else max distance from the
                                        aligned diagonal i + (Nk - Nq) */
  vkf_value bias;                    /* optional additive, broadcastable to [B, H, Nq, Nk] */
  /* Optional f32 [H, 2] (one head: [1, 2]), row h = (R + z_h, 1 / R): the adaptive span's soft
   * mask (Sukhbaatar et al. 2019) m = clamp((R + z_h - x) / R, 0, 1) on the distance x from
   * query to key, as an additive log m on the scores (so the weights are renormalised over the
   * kept keys; m = 0 masks the key). Query i sits at position i + (L - Nq), L = kv_len[b]
   * clamped (Nk without kv_len), key j at j: x = that - j. Keys at x >= R + z_h are never
   * visited, so the cost falls with the spans. A key after the query (x < 0) gets m = 1. */
  vkf_value ramp;
} vkf_attention_options;

/* softmax(q·kᵀ·scale + bias, masked)·v. q [B, H, Nq, D], k [B, Hkv, Nk, D], v [B, Hkv, Nk, Dv]
 * (H % Hkv == 0; rank-3 [B, N, D] means one head) -> [B, H, Nq, Dv]. Inputs may be strided views
 * (e.g. a permute of a fused QKV projection). Fully masked rows give zeros. */
vkf_value vkf_attention(vkf_graph *g, const char *name, vkf_value q, vkf_value k, vkf_value v,
                        const vkf_attention_options *options);

typedef struct vkf_sparse_attention_options {
  float scale;               /* 0: 1/sqrt(D) */
  uint32_t block_q, block_k; /* tokens per query / key block, >= 1 */
  int causal;                /* query i of Nq sees key j iff j <= i + (Nk - Nq) */
  int merge_heads;           /* output [B, Nq, H, Dv] as the output projection reads it */
  vkf_value masks;           /* optional i32 [M, block_q, ceil(block_k / 32)] */
  vkf_value kv_len;          /* optional i32 [B], clamped to [0, Nk] as for vkf_attention */
  vkf_value key_bias;        /* optional f32 [B, Nk], added to every score of key j */
} vkf_sparse_attention_options;

/* Block-sparse attention: key j is visible to query i iff the block of j is listed in the CSR row
 * (rows i32 [L, Nqb + 1], cols i32 [L, E, 2], L = 1 or H; graph/ir/sparse_layout.h) of the block
 * of i, the entry's mask bit is set (mask id -1: the whole block), j < kv_len[b] and the causal
 * rule holds. Output row = softmax(scale·q·k + key_bias) over the visible keys · v; a row with no
 * visible key is zeros. q [B, H, Nq, D], k [B, Hkv, Nk, D], v [B, Hkv, Nk, Dv] -> [B, H, Nq, Dv].
 * Constant tables with data are checked when the node is built (vkf_sparse_layout_check). */
vkf_value vkf_sparse_attention(vkf_graph *g, const char *name, vkf_value q, vkf_value k,
                               vkf_value v, vkf_value rows, vkf_value cols,
                               const vkf_sparse_attention_options *options);

/* Additive attention (Bahdanau et al. 2015, D2L's AdditiveAttention): with the projected
 * queries qp = W_q q [B, Nq, H] and keys kp = W_k k [B, Nk, H], score(i, j) =
 * w_v · tanh(qp_i + kp_j), a masked softmax over the keys j < valid_lens (i32 [B] or [B, Nq],
 * optional; clamped to [0, Nk]; a row with no key left is zeros), then · v [B, Nk, Dv] ->
 * [B, Nq, Dv]; with `weights`, the softmax itself [B, Nq, Nk]. Computed per query row over the
 * keys (no [B, Nq, Nk, H] tensor). */
vkf_value vkf_additive_attention(vkf_graph *g, const char *name, vkf_value qp, vkf_value kp,
                                 vkf_value w_v, vkf_value v, vkf_value valid_lens, int weights);

/* One GRU layer over a sequence (torch.nn.GRU, batch first, gate order r, z, n): with the input
 * gates gi = x W_ihᵀ + b_ih [B, T, 3H] (one matmul for every step) and gh = h W_hhᵀ + b_hh,
 * r = σ(gi_r + gh_r), z = σ(gi_z + gh_z), n = tanh(gi_n + r ⊙ gh_n), h' = (1 - z) ⊙ n + z ⊙ h,
 * from h0 [B, H] (optional: zeros). -> every step's h [B, T, H] (the last row is the final
 * state). f32. */
vkf_value vkf_gru_scan(vkf_graph *g, const char *name, vkf_value gates, vkf_value w_hh,
                       vkf_value b_hh, vkf_value h0);

/* ---- layout (views share storage; no copies) ---- */
/* One entry may be -1 (inferred). A strided (non-contiguous) input is first copied by a node
 * named "<name>.contiguous", as torch's reshape does. */
vkf_value vkf_reshape(vkf_graph *g, const char *name, vkf_value x, uint32_t rank,
                      const int64_t *shape);
/* Output dim i is input dim axes[i]; a strided view. */
vkf_value vkf_permute(vkf_graph *g, const char *name, vkf_value x, const uint32_t *axes);
/* [start, end) along `axis`, step 1; a strided view. */
vkf_value vkf_slice(vkf_graph *g, const char *name, vkf_value x, uint32_t axis, int64_t start,
                    int64_t end);
/* A contiguous copy (materialises a view). */
vkf_value vkf_copy(vkf_graph *g, const char *name, vkf_value x);
/* Converts dtype (f32 <-> f16 rounds to nearest even; i32 -> float exact for |v| < 2^24;
 * float -> i32 truncates toward zero). */
vkf_value vkf_cast(vkf_graph *g, const char *name, vkf_value x, vkf_dtype dtype);
vkf_value vkf_concat(vkf_graph *g, const char *name, const vkf_value *xs, uint32_t count,
                     uint32_t axis);

/* ---- embedding and pooling ---- */
/* table [V, D], ids i32 [...] -> [..., D]; an id out of [0, V) is a run-time error. */
vkf_value vkf_gather(vkf_graph *g, const char *name, vkf_value table, vkf_value ids);
/* Convolution with stride == kernel: image [B, C, H, W], weight [E, C, P, Q], bias [E] (optional)
 * -> [B, (H/P)·(W/Q), E], patches in row-major order (ViT's flatten(2).transpose(1, 2)). */
vkf_value vkf_patch_embed(vkf_graph *g, const char *name, vkf_value image, vkf_value weight,
                          vkf_value bias);
/* x [B, N, D], mask i32 [B, N] (optional: all ones) -> [B, D]: sum(mask·x) / max(sum(mask), 1e-9)
 * (sentence-transformers mean pooling; an all-zero mask gives zeros). */
vkf_value vkf_mean_pool(vkf_graph *g, const char *name, vkf_value x, vkf_value mask);

/* ---- reductions and filters (low-rank attention: Nystromformer) ---- */
/* Sum or max of x along `axis`, keeping it as a dim of size 1 (torch's keepdim=True); x may be a
 * strided view. Sums accumulate in fp32. */
vkf_value vkf_reduce(vkf_graph *g, const char *name, vkf_value x, vkf_reduce_kind kind,
                     uint32_t axis);
/* Depthwise convolution along the sequence, zero padded, output the input's length (torch's
 * Conv2d(H, H, (K, 1), padding=(K // 2, 0), groups=H, bias=False)):
 * y[b, h, n, d] = sum_t weight[h, t] · x[b, h, n + t - K/2, d]. x [B, H, N, D] (may be strided),
 * weight [H, K] with K odd -> [B, H, N, D]. */
vkf_value vkf_depthwise_conv(vkf_graph *g, const char *name, vkf_value x, vkf_value weight);
/* Rotary position embedding as Hugging Face's apply_rotary_pos_emb computes it, in one kernel:
 * y = x * cos + rotate_half(x) * sin, rotate_half(x) = [-x[..., D/2:], x[..., :D/2]]. x [..., D]
 * (D even, may be strided), cos and sin broadcast to it (same last dim D), output x's shape. */
vkf_value vkf_rotary(vkf_graph *g, const char *name, vkf_value x, vkf_value cos, vkf_value sin);

/* Stable ascending argsort along the last axis: keys f32 [..., K] (1 <= K <= 65536; a strided
 * view is copied first) -> i32 [..., K], each row's indices ordered by (key, index). NaN keys give
 * an unspecified permutation (never an index outside the row). Reformer's LSH sorts by bucket and
 * takes its argmaxes with it. */
vkf_value vkf_argsort(vkf_graph *g, const char *name, vkf_value keys);

/* ---- state ---- */
/* Writes new key/value rows into a cache, in place, at positions known only at run time:
 * for every b, h, t < T, d with 0 <= start[b] + t < C, cache[b, h, start[b] + t, d] =
 * rows[b, h, t, d] (converted to the cache's dtype, f32 -> f16 rounding to nearest even as
 * vkf_cast); rows landing outside [0, C) are skipped, never an out-of-bounds access.
 * cache [B, H, C, D] contiguous f32/f16 (typically a graph input the caller binds and keeps),
 * rows [B, H, T <= C, D] f32/f16 (may be a strided view, not aliasing the cache), start i32 [B].
 * Returns the cache after the write: same shape, strides and storage (its base is the cache's
 * base, like a view), so later nodes read the updated cache through it; read the cache only
 * through this value afterwards. The node is never removed by dead-node elimination. */
vkf_value vkf_kv_write(vkf_graph *g, const char *name, vkf_value cache, vkf_value rows,
                       vkf_value start);

/* ---- linear attention (the kernelised family: Katharopoulos et al., Performer, RFA) ---- */
/* x [B, H, N, D] (may be a view), omega [M, D] (FAVOR+ / RFF; VKF_NO_VALUE for elu1) ->
 * phi(x) [B, H, N, F] per vkf_feature_map. scale 0: D^-1/4 (Performer's data normaliser). */
vkf_value vkf_linear_features(vkf_graph *g, const char *name, vkf_value x, vkf_value omega,
                              vkf_feature_map kind, float scale);
typedef struct vkf_linear_attention_options {
  int causal;
  float eps;       /* 0: 1e-6 */
  uint32_t chunk;  /* 0: 64 */
  vkf_value gate;  /* optional gate logits [B, H, N] (causal only; RFA's g = sigmoid) */
  vkf_value state; /* optional [B, H, F, Dv + 1] state before token 0 (causal only) */
} vkf_linear_attention_options;
/* phi_q, phi_k [B, H, N, F], v [B, H, N, Dv] -> [B, H, N, Dv]. With S_t the state after token t
 * (columns 0..Dv-1: sum phi(k) v^T, column Dv: z = sum phi(k)): ungated S_t = S_{t-1} +
 * phi(k_t) [v_t, 1]^T, gated S_t = g_t S_{t-1} + (1 - g_t) phi(k_t) [v_t, 1]^T; causal out_t =
 * phi(q_t)^T S_t[:, :Dv] / (phi(q_t) . S_t[:, Dv] + eps); non-causal uses S after the last token
 * for every query (no gate, no state). */
vkf_value vkf_linear_attention(vkf_graph *g, const char *name, vkf_value phi_q, vkf_value phi_k,
                               vkf_value v, const vkf_linear_attention_options *options);
/* Advances a state [B, H, F, Dv + 1] (contiguous; typically a graph input the caller keeps, like a
 * KV cache) in place by the T tokens of phi_k [B, H, T, F], v [B, H, T, Dv] (and gate logits
 * [B, H, T]) with the recurrence above; returns the state after the write (read it only through
 * this value afterwards). Never removed by dead-node elimination. */
vkf_value vkf_linear_state_write(vkf_graph *g, const char *name, vkf_value state, vkf_value phi_k,
                                 vkf_value v, vkf_value gate);

#endif
