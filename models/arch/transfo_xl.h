/* Transformer-XL (Dai et al. 2019) as Hugging Face's TransfoXLModel / TransfoXLLMHeadModel
 * (transformers 4.36, model_type "transfo-xl", attn_type 0): adaptive input embeddings, layers of
 * relative multi-head attention over [memory; segment] with the learned biases u (r_w_bias) and
 * v (r_r_bias), post- or pre-norm, and the projected adaptive log-softmax head. The segment-level
 * recurrence is explicit: a build takes each layer's memory (the layer inputs of earlier
 * segments) and returns the next one. */
#ifndef VKF_MODELS_ARCH_TRANSFO_XL_H
#define VKF_MODELS_ARCH_TRANSFO_XL_H

#include <stdint.h>

#include "graph/ir/graph.h"
#include "models/arch/arch_loader.h"
#include "models/formats/hf_config.h"
#include "models/formats/hf_config_transfo_xl.h"

/* Longest segment and longest memory + segment a build accepts (positions are sinusoidal, so only
 * memory bounds them; this keeps the [B, H, Q, M + Q] position scores allocatable). */
#define VKF_TXL_MAX_SEGMENT ((int64_t)1 << 14)
#define VKF_TXL_MAX_KEYS ((int64_t)1 << 16)

typedef struct vkf_txl_model vkf_txl_model;

/* Reads DIR/config.json (hf_config_transfo_xl.h) and the weights under Hugging Face's names
 * ("transformer." first for TransfoXLLMHeadModel, whose crit.* head is then read too; tied
 * output weights and projections are read from the embedding's tensors when the file dropped
 * them) and checks every tensor's shape. One-line errors name the directory and the tensor. */
extern const vkf_arch_loader vkf_txl_loader;
const vkf_txl_config *vkf_txl_config_of(const vkf_txl_model *model);
int vkf_txl_has_head(const vkf_txl_model *model); /* a TransfoXLLMHeadModel checkpoint */

typedef struct vkf_txl_build_options {
  int64_t batch;   /* 0: 1 */
  int64_t seq_len; /* Q, 1 .. VKF_TXL_MAX_SEGMENT */
  int64_t mem_len; /* M rows of memory given (0: none, the paper's first segment) */
  vkf_dtype dtype; /* VKF_F32 only */
  int last_hidden_state, prediction_scores, mems; /* outputs wanted */
} vkf_txl_build_options;

typedef struct vkf_txl_graph {
  vkf_graph *graph;            /* owned by the caller */
  vkf_value input_ids;         /* i32 [B, Q] */
  vkf_value mems;              /* f32 [B, n_layer, M, d_model]; VKF_NO_VALUE when M is 0 */
  vkf_value last_hidden_state; /* [B, Q, d_model] */
  vkf_value prediction_scores; /* [B, Q, vocab]: log-probabilities (LM head only) */
  vkf_value new_mems;          /* [B, n_layer, min(mem_len, M + Q), d_model] */
  int64_t new_mem_len;
} vkf_txl_graph;

/* Rows of memory the next segment gets after a segment of `seq_len` on `mem_len` rows: the last
 * min(config mem_len, mem_len + seq_len) of [memory; segment inputs] (Hugging Face's
 * _update_mems). */
int64_t vkf_txl_next_mem_len(const vkf_txl_model *model, int64_t mem_len, int64_t seq_len);

vkf_status vkf_txl_build(vkf_txl_model *model, const vkf_txl_build_options *options,
                         vkf_txl_graph *out);

/* The relative attention of one layer (the paper's four-term score): softmax((q + u)·kᵀ/√Dh +
 * shift((q + v_bias)·rᵀ)/√Dh + mask)·v for q [B, H, Q, Dh] (the segment's queries), k and v
 * [B, H, K, Dh] ([memory; segment]), u and v_bias [H, 1, Dh], r [H, K + 1, Dh] (a zero row,
 * which stands for _rel_shift's zero pad, then the projected sinusoids of distances K - 1 down to
 * 0) and mask [Q, K] additive. The position term is a [B, H, Q, K + 1] matmul shifted by a reshape and a
 * slice (Hugging Face's _rel_shift) and added to the fused attention as its bias. Node names
 * start with `prefix`. Also what `vkf bench attention --kind relative` times. */
vkf_value vkf_txl_relative_attention(vkf_graph *g, const char *prefix, vkf_value q, vkf_value k,
                                     vkf_value v, vkf_value u, vkf_value v_bias, vkf_value r,
                                     vkf_value mask);

#endif
