/* The block builder's "vkf_attention" option (config.json, hf_config_attention.h): the kernelised
 * linear family (elu+1, Performer's FAVOR+, RFA with its optional gate; causal or not) and
 * Linformer in place of softmax attention, over q, k, v [B, H, N, Dh] that the block projected
 * (and rotated). The extra tensors each kind reads, under the attention module's prefix <a>:
 *   <a>vkf_omega          [M, Dh]  performer / rfa random vectors (rows); absent: drawn with
 *                                  vkf_random_features(seed + layer, M, Dh, orthogonal)
 *   <a>vkf_gate.weight    [H, D]   rfa with "gate": logits x W^T + b per head and token
 *   <a>vkf_gate.bias      [H]
 *   <a>vkf_linformer_e    [H, k, P] (sharing none) or [k, P]; P = max_position_embeddings
 *   <a>vkf_linformer_f    as e (sharing none, headwise); key-value sharing uses e for both
 *   vkf_linformer_e       [k, P] at the model's root (layerwise sharing: every layer and head)
 *   <a>vkf_nystrom_conv.weight [H, 1, K, 1] nystrom with conv_kernel_size K (HF's Conv2d layout)
 * Padding: a key whose keep mask is 0 is left out (phi(k) = 0, the gate holds the state; for
 * Linformer its k and v rows are zero, as the paper's zero padding up to P; Nystrom adds HF's mask
 * to the landmark-to-key scores only, so padding still moves the landmarks, as in HF). */
#ifndef VKF_MODELS_ARCH_EFFICIENT_ATTENTION_H
#define VKF_MODELS_ARCH_EFFICIENT_ATTENTION_H

#include "graph/ir/builder.h"
#include "models/arch/arch_weights.h"
#include "models/formats/checkpoint.h"
#include "models/formats/hf_config_attention.h"

typedef struct vkf_efficient_weights {
  vkf_value omega;                  /* performer, rfa: [M, Dh] f32 */
  vkf_value gate_weight, gate_bias; /* rfa with a gate */
  vkf_value e, f;                   /* linformer */
  vkf_value one;                    /* f32 [1] (padding holds and masks) */
  vkf_value conv;                   /* nystrom: [H, K] */
  vkf_arch_weights arch;            /* where the kinds' own constants are cached */
} vkf_efficient_weights;

/* The sizes the tensors are checked against. */
typedef struct vkf_efficient_dims {
  int64_t hidden, heads, head_dim, positions;
} vkf_efficient_dims;

/* Load-time check of one layer's extra tensors under `attn_prefix` (the layer's tensor prefix plus
 * the attention module and a dot) and, for layer-wise sharing, of the root tensor under
 * `root_prefix`. Errors name the tensor and the file. */
vkf_status vkf_efficient_expect(const vkf_checkpoint *ck, const char *root_prefix,
                                const char *attn_prefix, const vkf_hf_attention *a,
                                const vkf_efficient_dims *d);

/* Graph constants of one layer (`attn_prefix` relative to w->prefix; the layer-wise tensor at
 * w->prefix itself). Errors go to the graph's sticky status. */
void vkf_efficient_weights_get(const vkf_arch_weights *w, vkf_graph *g, const char *attn_prefix,
                               const vkf_hf_attention *a, int64_t layer,
                               const vkf_efficient_dims *d, vkf_efficient_weights *out);

/* F of the linear family's state [B, H, F, Dh + 1] (Dh for linear, M for performer, 2M for rfa);
 * 0 for the kinds without one. */
int64_t vkf_efficient_state_features(const vkf_hf_attention *a, int64_t head_dim);

/* The context [B, H, N, Dh] (f32, whatever q's dtype: the linear ops run in f32). x [B, N, D] is
 * the block's input (the gate reads it); keep optional f32 [B, N] (1 kept, 0 padding). With a
 * state (causal linear family: f32 [B, H, F, Dh + 1], contiguous, a persistent buffer), attention
 * starts from it and then advances it in place over the N tokens (linear_state_write): the
 * recurrent form that replaces the KV cache, constant in size whatever the length. */
vkf_value vkf_efficient_attention(vkf_graph *g, const char *name, const vkf_hf_attention *a,
                                  const vkf_efficient_weights *ew, vkf_value q, vkf_value k,
                                  vkf_value v, vkf_value x, vkf_value keep, int causal,
                                  vkf_value state);

#endif
