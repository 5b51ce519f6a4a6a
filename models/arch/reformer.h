/* Reformer (transformers 4.38.2, eval mode): ReformerModel, ReformerModelWithLMHead and
 * ReformerForMaskedLM from a Hugging Face checkpoint. Word embeddings plus axial (or learned)
 * positions; reversible layers (Y1 = X1 + Attention(X2), Y2 = X2 + FeedForward(Y1), both halves
 * starting as the embeddings) whose attention is chunked local self-attention (each chunk of
 * local_attn_chunk_length queries sees its own and local_num_chunks_before / after neighbouring
 * chunks, wrapping around as Hugging Face's _look_adjacent does) or LSH self-attention
 * (reformer_lsh.h); the halves concatenated and
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
 * directory and the file, field or tensor: among them LSH layers without hash_seed or
 * num_buckets (UNSUPPORTED), axial_pos_embds_dim not summing to hidden_size. */
vkf_status vkf_reformer_load(const char *model_dir, vkf_reformer **out);
void vkf_reformer_destroy(vkf_reformer *model);
vkf_status vkf_reformer_quantize(vkf_reformer *model, const char *format);
/* The checkpoint and the weights its builds made (vkf_model_quantized reads what --quantize made). */
const struct vkf_arch_files *vkf_reformer_files(const vkf_reformer *model);
const vkf_hf_config *vkf_reformer_hf_config(const vkf_reformer *model);
const vkf_reformer_config *vkf_reformer_config_of(const vkf_reformer *model);
const char *vkf_reformer_architecture(const vkf_reformer *model);
/* 1 for ReformerModelWithLMHead and ReformerForMaskedLM (logits out), 0 for ReformerModel. */
int vkf_reformer_has_lm_head(const vkf_reformer *model);
/* The longest input a build accepts: the sequence padded to the chunk lengths' least common
 * multiple must fit max_position_embeddings (and the axial grid). */
int64_t vkf_reformer_max_seq(const vkf_reformer *model);
/* The positions the embeddings cover (max_position_embeddings, and the axial grid): how long a
 * generation's cached steps may run, as they are not padded. */
int64_t vkf_reformer_max_positions(const vkf_reformer *model);

typedef struct vkf_reformer_graph {
  vkf_graph *graph;            /* owned by the caller */
  vkf_value input_ids;         /* i32 [B, N] */
  vkf_value attention_mask;    /* i32 [B, N] of 0/1 (masked keys) */
  vkf_value last_hidden_state; /* f32 [B, N, 2·D] (ReformerModel) */
  vkf_value logits;            /* f32 [B, N, V] (head classes) */
  int64_t padded_len;          /* N padded to the chunk lengths (N when not padded) */
  /* with_cache: per layer, what Hugging Face's generation caches after the prompt: the
   * layer-normed states f32 [1, padded_len, D] (the caller keeps the first N), and for LSH layers
   * that hashed (padded_len above lsh_attn_chunk_length) the buckets f32 [1, H, padded_len, R]
   * without the rounds' offsets, padding in the extra bucket. */
  vkf_value cache_states[VKF_REFORMER_MAX_LAYERS];
  vkf_value cache_buckets[VKF_REFORMER_MAX_LAYERS];
} vkf_reformer_graph;

/* batch 0: 1; seq_len in [1, vkf_reformer_max_seq]; dtype VKF_F32 or VKF_F16; with_cache (batch
 * 1): the cache outputs too (generation's prefill). */
vkf_status vkf_reformer_build(vkf_reformer *model, int64_t batch, int64_t seq_len,
                              vkf_dtype dtype, int with_cache, vkf_reformer_graph *out);

/* One cached generation step of ReformerModelWithLMHead for batch 1, as Hugging Face's
 * generate() runs it (past_buckets_states, input of one token at position `past`):
 * local layers attend from the new token to their cached states from
 * (past / local_attn_chunk_length - local_num_chunks_before) · local_attn_chunk_length (negative:
 * from the end, Python's slice) and itself; LSH layers as vkf_reformer_lsh_step (reformer_lsh.h)
 * over their cache. */
typedef struct vkf_reformer_step_graph {
  vkf_graph *graph;                                /* owned by the caller */
  vkf_value input_ids;                             /* i32 [1, 1] */
  vkf_value past_states[VKF_REFORMER_MAX_LAYERS];  /* f32 [1, past, D] inputs */
  vkf_value past_buckets[VKF_REFORMER_MAX_LAYERS]; /* f32 [H, R, past] inputs, with offsets */
  /* row0_keys: f32 [1, past + 1, D] inputs, batch row 0's cache and new state */
  vkf_value key_states[VKF_REFORMER_MAX_LAYERS];
  vkf_value states[VKF_REFORMER_MAX_LAYERS];       /* f32 [1, 1, D] outputs to cache */
  /* f32 outputs without offsets: [1, H, 1, R] for a layer with cached buckets, [1, H, past + 1, R]
   * for one without that hashes its whole cache now (past + 1 >= lsh_attn_chunk_length). */
  vkf_value buckets[VKF_REFORMER_MAX_LAYERS];
  vkf_value logits; /* f32 [1, 1, V] */
} vkf_reformer_step_graph;

/* past in [1, vkf_reformer_max_positions - 1]; offset_step[l] for each LSH layer: 0 when it has no
 * cached buckets, else the step of its new bucket's round offsets (the bucket count, plus one
 * when the cached buckets reach past it: Hugging Face's increase_num_buckets). row0_keys: the LSH
 * layers with cached buckets take their keys and values from key_states, as Hugging Face's
 * batched step does for every row but row 0 (_get_relevant_hid_states_and_buckets selects from the
 * flattened batch without a row offset), the query and the buckets staying the row's own. */
vkf_status vkf_reformer_build_step(vkf_reformer *model, int64_t past, vkf_dtype dtype,
                                   const int64_t *offset_step, int row0_keys,
                                   vkf_reformer_step_graph *out);

#endif
