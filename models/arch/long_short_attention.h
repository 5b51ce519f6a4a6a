/* Long-short attention (Zhu et al. 2021, "Long-Short Transformer"), config.json's "vkf_attention"
 * kind long_short, as graphs over the block-sparse and fused attention ops. Per key-value head,
 * with k and v [N, Dh] the layer's keys and values (rotated where the architecture rotates):
 *   DualLN:  k~ = LN_L(k), v~ = LN_L(v) over Dh (with "dual_ln"; else k~ = k, v~ = v);
 *   long:    for each segment of positions (the whole sequence when bidirectional; segments of
 *            l = "segment" positions when causal) P = softmax over its positions of k~ W_p
 *            ([positions, r]), K^ = LN_G(P^T k~), V^ = LN_G(P^T v~): r rows per segment;
 *   short:   query t sees the positions of its segment of w = "window" tokens and floor(w/2) on
 *            each side (causal: none after t);
 *   one softmax over [K^ rows visible to t; the window's k~] with values [V^; v~], scale
 *            1/sqrt(Dh). Causal: t sees the rows of the segments that end at or before t.
 * Padding (keep 0) is left out of P's softmax and of the window (an additive -1e30 on its scores).
 * The tensors, under the attention module's prefix <a>:
 *   <a>vkf_long_short.proj               [Hkv, Dh, r]  W_p per key-value head
 *   <a>vkf_long_short.norm_local.weight  [Dh], .bias [Dh]  LN_L (with dual_ln)
 *   <a>vkf_long_short.norm_global.weight [Dh], .bias [Dh]  LN_G (with dual_ln)
 * A decoder's KV cache holds k~ and v~; each decode step recomputes the segments' rows from it. */
#ifndef VKF_MODELS_ARCH_LONG_SHORT_ATTENTION_H
#define VKF_MODELS_ARCH_LONG_SHORT_ATTENTION_H

#include "graph/ir/builder.h"
#include "models/arch/arch_weights.h"
#include "models/formats/checkpoint.h"
#include "models/formats/hf_config_attention.h"

typedef struct vkf_long_short_weights {
  vkf_value proj;                           /* [Hkv, Dh, r] */
  vkf_value local_gamma, local_beta;        /* [Dh], with dual_ln */
  vkf_value global_gamma, global_beta;      /* [Dh], with dual_ln */
  float eps;                                /* the norms' epsilon */
} vkf_long_short_weights;

/* Load-time check of one layer's tensors under `attn_prefix`; errors name the tensor and file. */
vkf_status vkf_long_short_expect(const vkf_checkpoint *ck, const char *attn_prefix,
                                 const vkf_hf_attention *a, int64_t kv_heads, int64_t head_dim);

/* Graph constants of one layer (`attn_prefix` relative to w->prefix); eps is the model's. */
void vkf_long_short_weights_get(const vkf_arch_weights *w, vkf_graph *g, const char *attn_prefix,
                                const vkf_hf_attention *a, float eps,
                                vkf_long_short_weights *out);

/* LN_L of k or v [B, Hkv, N, Dh] (x itself without dual_ln): what a KV cache stores. */
vkf_value vkf_long_short_local_norm(vkf_graph *g, const char *name, const vkf_hf_attention *a,
                                    const vkf_long_short_weights *lw, vkf_value x);

typedef struct vkf_long_short_io {
  int causal;
  /* Whole sequences (query i at position i, keys the same N positions): optional f32 [B, N] keep
   * mask (1 kept, 0 padding). */
  vkf_value keep;
  /* Decode steps: i32 [B], the position of query 0 of each row; k and v are then the KV cache
   * [B, Hkv, C, Dh] (k~, v~ up to the query's position). Causal only. */
  vkf_value start;
} vkf_long_short_io;

/* The context [B, H, Nq, Dh] of q [B, H, Nq, Dh] (may be strided) over k~, v~ [B, Hkv, Nk, Dh]
 * (after vkf_long_short_local_norm). Layout tables are kept in w's cache. Errors go to the graph's
 * sticky status naming `name`. */
vkf_value vkf_long_short_attention(vkf_graph *g, const vkf_arch_weights *w, const char *name,
                                   const vkf_hf_attention *a, const vkf_long_short_weights *lw,
                                   vkf_value q, vkf_value k, vkf_value v,
                                   const vkf_long_short_io *io);

#endif
