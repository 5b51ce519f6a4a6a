/* The one Transformer block builder every architecture uses: an attention sublayer (self or cross,
 * with the fused attention's masks, an additive bias and a rotary hook) and an MLP sublayer (plain
 * or gated), each with LayerNorm or RMSNorm before (pre-norm) or after the residual add
 * (post-norm). An architecture supplies a config, a table of its module and tensor names, and its
 * own parts (embeddings, pooling, heads). */
#ifndef VKF_MODELS_ARCH_TRANSFORMER_BLOCK_H
#define VKF_MODELS_ARCH_TRANSFORMER_BLOCK_H

#include "graph/ir/builder.h"
#include "models/arch/arch_weights.h"
#include "models/arch/efficient_attention.h"
#include "models/arch/long_short_attention.h"
#include "models/formats/hf_config.h"

typedef enum vkf_block_norm {
  VKF_BLOCK_LAYERNORM = 0, /* (x - mean) / sqrt(var + eps) · gamma + beta */
  VKF_BLOCK_RMSNORM,       /* x / sqrt(mean(x²) + eps) · gamma (Llama, T5) */
} vkf_block_norm;

typedef enum vkf_block_order {
  VKF_BLOCK_PRE_NORM = 0, /* x + f(norm(x)) (ViT, GPT-2, Llama) */
  VKF_BLOCK_POST_NORM,    /* norm(x + f(x)) (BERT, BART, D2L's Transformer) */
} vkf_block_order;

typedef enum vkf_block_mlp {
  VKF_BLOCK_MLP_PLAIN = 0, /* act(x·Wup + b)·Wdown + b */
  VKF_BLOCK_MLP_GATED, /* (act(x·Wgate) ⊙ x·Wup)·Wdown (SwiGLU with SiLU, GeGLU with GELU) */
} vkf_block_mlp;

/* Where positions enter. Learned and sinusoidal absolute positions are added to the embeddings by
 * the architecture, before the first block (VKF_BLOCK_POS_NONE here); rotary positions rotate q
 * and k inside attention through the io's hook; relative schemes (T5 buckets, ALiBi) add a bias to
 * the scores through the io's bias. */
typedef enum vkf_block_position {
  VKF_BLOCK_POS_NONE = 0,
  VKF_BLOCK_POS_ROTARY,
  VKF_BLOCK_POS_BIAS,
} vkf_block_position;

typedef struct vkf_block_config {
  int64_t hidden;       /* D */
  int64_t heads;        /* H */
  int64_t kv_heads;     /* Hkv, H % Hkv == 0; 0: H */
  int64_t head_dim;     /* Dh; 0: D / H */
  int64_t intermediate; /* MLP width I */
  vkf_block_norm norm;
  vkf_block_order order;
  float norm_eps;
  vkf_block_mlp mlp;
  vkf_activation act; /* of the plain MLP's up projection, or the gated MLP's gate */
  vkf_block_position position;
  float attn_scale; /* 0: 1/sqrt(Dh) */
  int causal;       /* self-attention: query i sees keys j <= i (bottom-right aligned) */
  int windowed;     /* sliding window (see vkf_attention_options) */
  int32_t window_left, window_right;
  int linear_in_out; /* every linear weight stored [in, out] (GPT-2's Conv1D) instead of [out, in]
                      */
  /* config.json's "vkf_attention" (NULL or kind SOFTMAX: softmax attention): self-attention runs
   * as that kind (efficient_attention.h), causal per `causal`. Its tensors sit under the layer's
   * "<attention>." prefix (layer-wise shared ones under root_prefix); positions is the longest
   * sequence (Linformer's P); layer seeds the random features. */
  const vkf_hf_attention *attention;
  const char *root_prefix;
  int64_t positions, layer;
  /* The attention reads a memory (encoder–decoder cross attention): its fused QKV weight is sliced
   * into Q and KV rows at build time, so it stays float under --quantize. */
  int cross;
} vkf_block_config;

/* Module names (for nodes) and tensor names (in the checkpoint), relative to the layer's
 * prefixes. A NULL tensor name means the checkpoint has no such tensor (no bias, no gate, no
 * beta). The Q, K and V projections are either three tensors stacked into one GEMM at build time,
 * or one fused tensor in the file (qkv_weight, GPT-2's c_attn). */
typedef struct vkf_block_names {
  const char *attn_norm; /* node: the norm of the attention sublayer (before or after it) */
  const char *attention; /* node: the attention; its projections are named "<attention>.qkv"... */
  const char *attn_out;  /* node: the output projection */
  const char *mlp_norm, *mlp_up, *mlp_gate, *mlp_down; /* nodes of the MLP sublayer */
  const char *q_weight, *k_weight, *v_weight, *q_bias, *k_bias, *v_bias;
  const char *qkv_weight, *qkv_bias; /* fused in the file: rows (or columns, in-out) Q, K, V */
  const char *out_weight, *out_bias;
  const char *attn_norm_weight, *attn_norm_bias;
  const char *up_weight, *up_bias, *gate_weight, *gate_bias, *down_weight, *down_bias;
  const char *mlp_norm_weight, *mlp_norm_bias;
} vkf_block_names;

/* A projection as the graph reads it. */
typedef struct vkf_block_linear {
  vkf_value weight; /* [out, in], or [in, out] with in_out */
  vkf_value bias;   /* optional [out] */
  int in_out;
} vkf_block_linear;

/* Every weight of one block, resolved to graph constants. */
typedef struct vkf_block_weights {
  vkf_block_linear qkv; /* rows: Q (H·Dh), K (Hkv·Dh), V (Hkv·Dh) */
  vkf_block_linear out;
  vkf_value attn_norm_gamma, attn_norm_beta;
  vkf_block_linear up, gate, down;
  /* A SiLU-gated MLP whose gate and up weights are stored alike and have no bias: both stacked
   * along out (rows: gate (I), up (I)), one GEMM for the two, as QKV is; up and gate are then
   * absent. */
  vkf_block_linear gate_up;
  vkf_value mlp_norm_gamma, mlp_norm_beta;
  vkf_efficient_weights efficient; /* with config->attention */
  vkf_value ramp; /* adaptive_span: the layer's f32 [H, 2] of vkf_attention_options.ramp */
  vkf_long_short_weights long_short; /* long_short */
  vkf_arch_weights arch;             /* long_short: where its tables are kept */
} vkf_block_weights;

/* Rotary positions: rotates x [B, H, N, Dh] (q or k) in place of the block; returns the result. */
typedef vkf_value (*vkf_block_rotate_fn)(vkf_graph *g, const char *name, vkf_value x, void *user);

/* State of attention: called with the layer's new k, v [B, Hkv, N, Dh] (after rotary) and may
 * replace them with what the attention reads instead (a KV cache written with the new rows). */
typedef void (*vkf_block_kv_fn)(vkf_graph *g, const char *name, vkf_value *k, vkf_value *v,
                                void *user);

/* Attention other than the fused dense one (block-sparse patterns, ragged rows): q [B, H, N, Dh],
 * k and v [B, Hkv, N, Dh] of self-attention -> [B, H, N, Dh], named `name`; `ao`: the options
 * the dense attention would have had (scale, kv_len, bias, causal, window), for the hook to
 * take what it applies. */
typedef vkf_value (*vkf_block_attend_fn)(vkf_graph *g, const char *name, vkf_value q, vkf_value k,
                                         vkf_value v, const vkf_attention_options *ao, void *user);

/* Run-time tensors a block reads besides its input. */
typedef struct vkf_block_io {
  vkf_value kv_len;           /* optional i32 [B]: keys at or past kv_len[b] are padding */
  vkf_value bias;             /* optional additive score bias, broadcastable to [B, H, N, N] */
  vkf_block_rotate_fn rotate; /* with VKF_BLOCK_POS_ROTARY */
  void *rotate_user;
  vkf_block_kv_fn kv; /* optional, self-attention only */
  void *kv_user;
  vkf_block_attend_fn attend; /* optional, self-attention only: replaces vkf_attention (it gets
                                 the options and applies what it supports) */
  void *attend_user;
  /* Cross attention against a cache: the memory's K and V [B, Hkv, M, Dh] computed once per
   * source (vkf_block_cross_kv) and read from device buffers; only q is projected. */
  vkf_value cross_k, cross_v;
  /* With config->attention: optional f32 [B, N], 1 for a kept token, 0 for padding (the efficient
   * kinds leave padded keys out instead of reading kv_len or bias, which they ignore). */
  vkf_value keep;
  /* With config->attention long_short and a KV cache read by decode steps: i32 [B], the
   * position of each row's first token (the keys are then the cache). */
  vkf_value cache_start;
  /* With config->attention of the linear family, causal: the layer's state [B, H, F, Dh + 1] (a
   * persistent buffer, like a KV cache), read then advanced in place. */
  vkf_value state;
  /* Optional out (Hugging Face's output_attentions): when non-NULL, self-attention is built
   * unfused, q·kᵀ then the masked, scaled softmax then ·v, and the softmax output [B, H, N, N] is
   * stored here for the caller to mark as a graph output (which keeps the fusion pass from folding
   * it back). Dense softmax attention only: with an efficient kind, an attend hook, a window or
   * grouped-query heads the build fails with a sticky error naming the layer. NULL: the fused
   * attention, the graph unchanged. */
  vkf_value *probs;
} vkf_block_io;

/* Load-time check of every tensor of one block: tensor_prefix + each name of `names`, with the
 * shape `config` implies ([out, in] or [in, out] per linear_in_out) and a float dtype. Errors name
 * the tensor and the file. */
vkf_status vkf_block_expect(const vkf_checkpoint *ck, const char *tensor_prefix,
                            const vkf_block_names *names, const vkf_block_config *config);

/* Resolves one block's weights into graph constants (the three Q, K, V tensors stacked into one
 * cached constant). Errors go to the graph's sticky status. `tensor_prefix` is relative to w's. */
void vkf_block_weights_get(const vkf_arch_weights *w, vkf_graph *g, const char *tensor_prefix,
                           const vkf_block_names *names, const vkf_block_config *config,
                           vkf_block_weights *out_weights);

/* The attention sublayer without its norm and residual: q from x, k and v from `memory` (x for
 * self-attention; an encoder's output for cross attention, in which case qkv's Q rows and K, V rows
 * are applied separately; with io->cross_k / cross_v valid, cross attention reads those instead
 * and `memory` only marks the attention as cross). x [B, N, D], memory [B, M, D] -> [B, N, D] after
 * the output projection, plus `residual` when valid (fused into the projection's epilogue). */
vkf_value vkf_block_attention(vkf_graph *g, const char *node_prefix, const vkf_block_names *names,
                              const vkf_block_config *config, const vkf_block_weights *weights,
                              const vkf_block_io *io, vkf_value x, vkf_value memory,
                              vkf_value residual);

/* The K and V of cross attention over `memory` [B, M, D] (the K, V rows of the fused weight):
 * [B, Hkv, M, Dh] each, as strided views of one projection. */
void vkf_block_cross_kv(vkf_graph *g, const char *node_prefix, const vkf_block_names *names,
                        const vkf_block_config *config, const vkf_block_weights *weights,
                        vkf_value memory, vkf_value *out_k, vkf_value *out_v);

/* The MLP sublayer without its norm: x [B, N, D] -> [B, N, D] (+ residual when valid). */
vkf_value vkf_block_mlp_build(vkf_graph *g, const char *node_prefix, const vkf_block_names *names,
                              const vkf_block_config *config, const vkf_block_weights *weights,
                              vkf_value x, vkf_value residual);

/* One whole block: self-attention then MLP, each with its norm placed per config->order.
 * x [B, N, D] -> [B, N, D]. Node names are node_prefix + the names' modules, so profiles and
 * VKF_CHECK point at the checkpoint's layer. */
vkf_value vkf_block_build(vkf_graph *g, const char *node_prefix, const vkf_block_names *names,
                          const vkf_block_config *config, const vkf_block_weights *weights,
                          const vkf_block_io *io, vkf_value x);

/* The activation enum for a config.json hidden_act. */
vkf_activation vkf_block_activation(vkf_hf_act act);

#endif
