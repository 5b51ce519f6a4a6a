/* Attention that is linear in the sequence length N through a low-rank approximation of the
 * N x N softmax matrix, as graph-building functions the block builder's attention option can
 * call: Nystromformer's landmarks with an iterative pseudo-inverse (exactly as Hugging Face
 * transformers 4.38.2's NystromformerSelfAttention computes it in eval mode) and Linformer's
 * learned projections of K and V along the sequence. q, k, v are [B, H, N, Dh] (strided views
 * allowed); the result is the context [B, H, N, Dh] before the heads are merged. Errors go to the
 * graph's sticky status, naming the node. */
#ifndef VKF_MODELS_ARCH_LOWRANK_ATTENTION_H
#define VKF_MODELS_ARCH_LOWRANK_ATTENTION_H

#include "graph/ir/builder.h"
#include "models/arch/arch_weights.h"

/* iterative_inv's initial scaling V0 = Kᵀ / max(column sums of K). */
typedef enum vkf_nystrom_inv_init {
  VKF_NYSTROM_INV_ORIGINAL = 0, /* one max over every batch row and head (inv_coeff_init_option
                                   false): rows of a batch are not independent, as in HF */
  VKF_NYSTROM_INV_PER_HEAD,     /* a max per (batch row, head) */
} vkf_nystrom_inv_init;

typedef struct vkf_nystrom_options {
  int64_t landmarks;   /* m, num_landmarks */
  int64_t segment_len; /* segment_means_seq_len: HF reshapes q and k into m segments of
                          segment_len / m rows, so N must equal it (checked) unless
                          landmarks == segment_len, which is plain softmax attention for any N */
  vkf_nystrom_inv_init inv_init;
  int iterations;        /* of the pseudo-inverse; 0: 6 (HF's n_iter) */
  vkf_value mask_bias;   /* optional additive [B, 1, 1, N] (0 kept, -big masked): HF adds it to the
                            landmark-to-key scores (kernel 3) only, or to every score of full
                            attention */
  vkf_value conv_weight; /* optional [H, K], K odd: the depthwise convolution skip on V */
} vkf_nystrom_options;

/* q and k are scaled by Dh^-1/4 each; with m landmarks (segment means of q and k):
 * softmax(q k̃ᵀ) · pinv(softmax(q̃ k̃ᵀ)) · softmax(q̃ kᵀ + mask) v, plus conv(v). Constants (the
 * identities of the pseudo-inverse) are cached through `w`. */
vkf_value vkf_nystrom_attention(vkf_graph *g, const vkf_arch_weights *w, const char *name,
                                vkf_value q, vkf_value k, vkf_value v,
                                const vkf_nystrom_options *options);

/* Hugging Face's iterative_inv: `iterations` steps of
 * V ← ¼ V (13 I − KV (15 I − KV (7 I − KV))) from V0 = Kᵀ / max(colsum K). mat [B, H, m, m]. */
vkf_value vkf_nystrom_pinv(vkf_graph *g, const vkf_arch_weights *w, const char *name, vkf_value mat,
                           vkf_nystrom_inv_init init, int iterations);

/* Linformer (Wang et al. 2020, eq. 7): softmax(q (E k)ᵀ · scale) (F v), with E and F the learned
 * sequence projections [k_proj, N] (shared by every head) or [H, k_proj, N] (one per head); pass
 * the same value for E and F to share them between keys and values (and the same constants in
 * every layer for layer-wise sharing). scale 0: 1/sqrt(Dh). No padding mask: the projections mix
 * every position, as in the paper. */
vkf_value vkf_linformer_attention(vkf_graph *g, const char *name, vkf_value q, vkf_value k,
                                  vkf_value v, vkf_value e, vkf_value f, float scale);

#endif
