/* Encoder–decoder Transformers from Hugging Face checkpoints: BartForConditionalGeneration /
 * BartModel, MarianMTModel / MarianModel, T5ForConditionalGeneration / T5Model (original and
 * v1.1 layouts, MT5 alike) and D2L's Transformer (tools/goldens/seeds_transformer.py): loading with
 * every tensor checked, and the graphs of the encoder, the whole forward pass and one decoding
 * step against a self-attention cache and a cross-attention cache. */
#ifndef VKF_MODELS_ARCH_ENCDEC_H
#define VKF_MODELS_ARCH_ENCDEC_H

#include <stdint.h>

#include "graph/ir/graph.h"
#include "models/formats/hf_config.h"

/* A loaded checkpoint; owns the weights graph constants point into. Not thread-safe. */
typedef struct vkf_encdec_model vkf_encdec_model;

/* Reads DIR/config.json (model_type bart, marian, t5, mt5 or d2l_transformer) and the weights,
 * accepting the task model's prefix ("model.") or none, and checks every tensor the builder uses.
 * Errors name the directory and the file, field or tensor at fault. */
vkf_status vkf_encdec_load(const char *model_dir, vkf_encdec_model **out_model);
void vkf_encdec_destroy(vkf_encdec_model *model);
/* --quantize: linear weights of the builds that follow become ggml blocks (see
 * vkf_arch_files_quantize for the names and vkf_arch_linear_weight for which weights). */
vkf_status vkf_encdec_quantize(vkf_encdec_model *model, const char *format);
/* The checkpoint and the weights its builds made (vkf_model_quantized reads what --quantize made). */
const struct vkf_arch_files *vkf_encdec_files(const vkf_encdec_model *model);

const vkf_hf_config *vkf_encdec_config(const vkf_encdec_model *model);
/* "BartForConditionalGeneration", "T5Model", ...: what the files hold. */
const char *vkf_encdec_architecture(const vkf_encdec_model *model);
/* Whether logits can be computed (a language-model head). */
int vkf_encdec_has_lm_head(const vkf_encdec_model *model);
/* Longest source and target the positions allow: max_position_embeddings (BART, Marian), max_len
 * (D2L's Transformer), VKF_ENCDEC_MAX_RELATIVE_POSITIONS for T5's relative positions. */
#define VKF_ENCDEC_MAX_RELATIVE_POSITIONS (1 << 16)
int64_t vkf_encdec_max_positions(const vkf_encdec_model *model);
/* The encoder's vocabulary (D2L's Transformer has its own source vocabulary). */
int64_t vkf_encdec_source_vocab(const vkf_encdec_model *model);

/* What a build computes.
 *  ENCODE: the encoder over input_ids [B, S] with attention_mask; outputs
 *          encoder_last_hidden_state and/or writes every decoder layer's cross-attention K and V
 *          of the encoder's output into the cross caches (inputs [B, H, S, Dh]).
 *  FULL:   encoder and decoder over decoder_input_ids [B, T] (causal): Hugging Face's forward
 *          (logits [B, T, V], encoder_last_hidden_state, last_hidden_state of the decoder).
 *  STEP:   one decoder token per row at cache position positions[b] against the self-attention
 *          cache (its K and V written there, rows 0 .. positions[b] attended) and the cross caches
 *          an ENCODE build filled, masked by attention_mask; logits [B, 1, V]. */
typedef enum vkf_encdec_mode {
  VKF_ENCDEC_ENCODE = 0,
  VKF_ENCDEC_FULL,
  VKF_ENCDEC_STEP,
} vkf_encdec_mode;

typedef struct vkf_encdec_build_options {
  vkf_encdec_mode mode;
  int64_t batch;   /* 0: 1 */
  int64_t src_len; /* S, 1 .. vkf_encdec_max_positions */
  int64_t tgt_len; /* FULL: T, 1 .. vkf_encdec_max_positions */
  vkf_dtype dtype; /* VKF_F32 (default) or VKF_F16: weights and activations; outputs stay f32 */
  int encoder_output;    /* ENCODE, FULL: output encoder_last_hidden_state [B, S, D] */
  int cross_cache;       /* ENCODE: write the cross caches */
  int logits;            /* FULL, STEP (needs the head) */
  int last_hidden_state; /* FULL: the decoder's output [B, T, D] */
  int64_t capacity;      /* STEP: self-attention cache positions C */
  vkf_dtype cache_dtype; /* of both caches: VKF_F32 (default) or VKF_F16 */
} vkf_encdec_build_options;

/* The graph of one build (absent values are VKF_NO_VALUE). */
typedef struct vkf_encdec_graph {
  vkf_graph *graph;          /* owned: vkf_encdec_graph_release */
  vkf_value input_ids;       /* ENCODE, FULL: i32 [B, S] */
  vkf_value attention_mask;  /* every mode: i32 [B, S] of 0/1 over the source */
  vkf_value decoder_input_ids; /* FULL: i32 [B, T]; STEP: i32 [B, 1] */
  vkf_value positions;       /* STEP: i32 [B], each < capacity */
  vkf_value kv_len;          /* STEP: i32 [B], positions + 1 */
  vkf_value buckets;         /* STEP, T5: i32 [B, 1, C], vkf_encdec_step_buckets' values */
  int64_t layers;            /* decoder layers */
  vkf_value *self_k, *self_v;   /* STEP: per decoder layer, inputs [B, H, C, Dh] */
  vkf_value *cross_k, *cross_v; /* ENCODE with cross_cache, STEP: inputs [B, H, S, Dh] */
  vkf_value encoder_last_hidden_state;
  vkf_value last_hidden_state;
  vkf_value logits;
} vkf_encdec_graph;

/* Destroys the graph and frees the cache value arrays; zeroes *g. */
void vkf_encdec_graph_release(vkf_encdec_graph *g);

vkf_status vkf_encdec_build(vkf_encdec_model *model, const vkf_encdec_build_options *options,
                            vkf_encdec_graph *out);

/* T5's relative-position buckets of a decoder token at `position` for keys 0 .. capacity-1
 * (causal bucketing; keys past the position get any valid bucket: kv_len hides them). Writes
 * `capacity` values. No-op for models without relative positions. */
void vkf_encdec_step_buckets(const vkf_encdec_model *model, int64_t position, int64_t capacity,
                             int32_t *out);

#endif
