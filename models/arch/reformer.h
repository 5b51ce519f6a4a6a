/* Reformer (transformers 4.38.2, eval mode): ReformerModel, ReformerModelWithLMHead and
 * ReformerForMaskedLM from a Hugging Face checkpoint. Word embeddings plus axial (or learned)
 * positions; reversible layers (Y1 = X1 + Attention(X2), Y2 = X2 + FeedForward(Y1), both halves
 * starting as the embeddings) whose attention is chunked local self-attention (each chunk of
 * local_attn_chunk_length queries sees its own and local_num_chunks_before / after neighbouring
 * chunks, wrapping around as Hugging Face's _look_adjacent does); the halves concatenated and
 * layer-normed ([B, N, 2·hidden_size]); the LM head over that. Inputs longer than the smallest
 * chunk and not a multiple of the chunk lengths' least common multiple are padded inside the graph
 * as Hugging Face pads them (pad_token_id, masked), and the output cut back. */
#ifndef VKF_MODELS_ARCH_REFORMER_H
#define VKF_MODELS_ARCH_REFORMER_H

#include <stdint.h>

#include "graph/ir/graph.h"
#include "models/formats/hf_config.h"
#include "models/formats/hf_config_reformer.h"

typedef struct vkf_reformer vkf_reformer;

/* Reads DIR/config.json (model_type "reformer") and the weights (names with or without the
 * "reformer." prefix head models save), checking every tensor the builder reads. The class is
 * ReformerModelWithLMHead or ReformerForMaskedLM when config.json's architectures names it and
 * the file has lm_head.decoder.weight, else ReformerModel. Errors are one line naming the
 * directory and the file, field or tensor: among them LSH layers (UNSUPPORTED: vkformer runs
 * local self-attention layers only), axial_pos_embds_dim not summing to hidden_size. */
vkf_status vkf_reformer_load(const char *model_dir, vkf_reformer **out);
void vkf_reformer_destroy(vkf_reformer *model);
vkf_status vkf_reformer_quantize(vkf_reformer *model, const char *format);
const vkf_hf_config *vkf_reformer_hf_config(const vkf_reformer *model);
const vkf_reformer_config *vkf_reformer_config_of(const vkf_reformer *model);
const char *vkf_reformer_architecture(const vkf_reformer *model);
/* 1 for ReformerModelWithLMHead and ReformerForMaskedLM (logits out), 0 for ReformerModel. */
int vkf_reformer_has_lm_head(const vkf_reformer *model);
/* The longest input a build accepts: the sequence padded to the chunk lengths' least common
 * multiple must fit max_position_embeddings (and the axial grid). */
int64_t vkf_reformer_max_seq(const vkf_reformer *model);

typedef struct vkf_reformer_graph {
  vkf_graph *graph;            /* owned by the caller */
  vkf_value input_ids;         /* i32 [B, N] */
  vkf_value attention_mask;    /* i32 [B, N] of 0/1 (masked keys) */
  vkf_value last_hidden_state; /* f32 [B, N, 2·D] (ReformerModel) */
  vkf_value logits;            /* f32 [B, N, V] (head classes) */
} vkf_reformer_graph;

/* batch 0: 1; seq_len in [1, vkf_reformer_max_seq]; dtype VKF_F32 or VKF_F16.
 * prompt_len 0: the forward pass. Else the sequence is a prompt of prompt_len tokens followed by
 * tokens generated one at a time, and each generated token at position p attends to what Hugging
 * Face's cached generation step gives it: its past (layer-normed) states sliced from
 * start = (p / local_attn_chunk_length - local_num_chunks_before) · local_attn_chunk_length, a
 * negative start counting from the end as Python's slice does, and itself, without the chunk
 * structure (a subset of the causal chunk window, so the prompt's tokens are unchanged). */
vkf_status vkf_reformer_build(vkf_reformer *model, int64_t batch, int64_t seq_len,
                              vkf_dtype dtype, int64_t prompt_len, vkf_reformer_graph *out);

#endif
