/* Decoder-only causal language models from Hugging Face checkpoints: GPT2LMHeadModel / GPT2Model
 * and the Llama family (LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM and their base
 * models): loading with every tensor checked, and the full-sequence graph (prompt -> logits). */
#ifndef VKF_MODELS_DECODER_H
#define VKF_MODELS_DECODER_H

#include <stdint.h>

#include "graph/ir/graph.h"
#include "models/arch/arch_loader.h"
#include "models/formats/hf_config.h"

/* A loaded checkpoint; owns the weights graph constants point into. Not thread-safe. */
typedef struct vkf_decoder_model vkf_decoder_model;

/* Reads DIR/config.json (model_type gpt2, llama, mistral or qwen2) and the weights
 * (model.safetensors or shards), accepting the task model's prefix ("transformer.", "model.") or
 * none, and checks every tensor the builder uses: shapes from the config, float dtypes (F32, F16,
 * BF16). Errors name the directory and the file, field or tensor at fault. */
extern const vkf_arch_loader vkf_decoder_loader;

const vkf_hf_config *vkf_decoder_config(const vkf_decoder_model *model);
/* "GPT2LMHeadModel", "LlamaModel", ...: what the files hold. */
const char *vkf_decoder_architecture(const vkf_decoder_model *model);
/* Rotary models run at any position (transformers computes their angles for any index; dynamic
 * NTK scaling exists to go past max_position_embeddings): they are bounded by this instead. */
#define VKF_DECODER_MAX_ROTARY_POSITIONS (1 << 20)
/* Positions the model can take: max_position_embeddings for learned positions (GPT-2), else
 * VKF_DECODER_MAX_ROTARY_POSITIONS. */
int64_t vkf_decoder_max_positions(const vkf_decoder_model *model);
/* Whether logits can be computed (a language-model head, own or tied to the embeddings). */
int vkf_decoder_has_lm_head(const vkf_decoder_model *model);
/* Whether one-token DECODE builds take ragged rows (options.cache_batch): softmax attention over
 * a KV cache without a sliding window, long-short or adaptive span. */
int vkf_decoder_takes_ragged(const vkf_decoder_model *model);

/* What a build computes. FULL is the forward pass of transformers (every position's logits, any
 * padding mask). PREFILL and DECODE run against a KV cache (host/kv_cache.h) bound as the graph's
 * cache inputs: PREFILL reads right-padded prompts of N tokens (causal attention within them)
 * and writes their keys and values into the cache from position cache_start; DECODE takes N
 * tokens per row (one per generated token; a chunk of a long prompt), writes their keys and values
 * from cache_start and attends causally to the first kv_len cache rows. Both give the logits of
 * one position per row, chosen by last_index. */
typedef enum vkf_decoder_mode {
  VKF_DECODER_FULL = 0,
  VKF_DECODER_PREFILL,
  VKF_DECODER_DECODE,
} vkf_decoder_mode;

typedef struct vkf_decoder_build_options {
  int64_t batch;   /* 0: 1 */
  int64_t seq_len; /* tokens per sequence, padding included; 1 .. vkf_decoder_max_positions */
  vkf_dtype dtype; /* VKF_F32 (default) or VKF_F16: weights and activations; outputs stay f32 */
  int logits;            /* output logits: [B, N, V] (FULL) or [B, 1, V] */
  int next_ids;          /* PREFILL, DECODE with logits: also output next_ids, greedy decoding's
                            choice made on the device, so a step reads back 4 bytes a row */
  int last_hidden_state; /* output the final norm's output [B, N, D] (FULL only) */
  vkf_decoder_mode mode;
  int64_t capacity;      /* PREFILL, DECODE: cache positions C (<= vkf_decoder_max_positions) */
  vkf_dtype cache_dtype; /* of the cache: VKF_F32 (default) or VKF_F16 */
  /* DECODE, seq_len 1, softmax attention without a sliding window: ragged rows. > 0: the cache
   * has this many rows (sequences) and each of the B rows (tokens) names its own: cache_start
   * and kv_len are i32 [2, B], row 0 as usual (the token's position; its sequence's rows
   * attended, the token's own included), row 1 the token's cache row. Rows of one sequence in
   * one run see each other through the cache (every write precedes every attention read), so a
   * prompt chunk runs as consecutive rows beside other sequences' single tokens. input_ids and
   * position_ids are then [1, B]: the embeddings, projections and MLPs run the B tokens as one
   * sequence (GEMMs of B rows); only the cache writes and the attention see B rows of one token. */
  int64_t cache_batch;
  int64_t logit_rows; /* PREFILL, DECODE: rows of last_index and logits (0: B) */
} vkf_decoder_build_options;

/* The graph of one build (absent values are VKF_NO_VALUE). */
typedef struct vkf_decoder_graph {
  vkf_graph *graph;         /* owned: vkf_decoder_graph_release */
  vkf_value input_ids;      /* input, i32 [B, N] */
  vkf_value attention_mask; /* FULL: input, i32 [B, N] of 0/1: padding, combined with the causal
                               (and sliding-window) mask exactly as transformers 4.38's eager
                               attention does, also in rows whose every key is masked; also
                               PREFILL, DECODE with a vkf_attention kind: 0 at padded tokens */
  vkf_value positions;      /* PREFILL, DECODE: input, i32 [B, N], each < capacity */
  vkf_value cache_start;    /* PREFILL, DECODE: input, i32 [B]: the cache row of token 0
                               (cache_batch: [2, B], see there) */
  vkf_value kv_len;         /* DECODE: input, i32 [B]: cache rows attended (cache_start + N)
                               (cache_batch: [2, B]) */
  vkf_value last_index;     /* PREFILL, DECODE: input, i32 [L] (L = logit_rows or B): b·N + the
                               position whose logits row b gets */
  vkf_value *cache_k, *cache_v; /* PREFILL, DECODE: per layer, inputs [B, Hkv, C, Dh]. With a
                                   vkf_attention kind (linear family) cache_k is the layer's state
                                   f32 [B, H, F, Dh + 1] and cache_v, cache_start, kv_len are
                                   absent: memory independent of the length */
  int64_t layers;
  vkf_value logits;
  vkf_value next_ids; /* i32 [B, 1, 1]: the first maximum of each row's logits (options.next_ids) */
  vkf_value last_hidden_state;
} vkf_decoder_graph;

/* Destroys the graph and frees the cache value arrays; zeroes *g. */
void vkf_decoder_graph_release(vkf_decoder_graph *g);

/* Token (+ learned position) embeddings, pre-norm blocks (models/arch/transformer_block.h) with
 * rotary positions for the Llama family, final norm, LM head. Positions are 0 .. N-1 in every row,
 * as transformers uses when no position_ids are given. *out is zeroed first. */
vkf_status vkf_decoder_build(vkf_decoder_model *model, const vkf_decoder_build_options *options,
                             vkf_decoder_graph *out);

#endif
