/* BigBird encoders (Hugging Face BigBirdModel, transformers 4.38.2, eval mode) from checkpoints
 * (config.json + model.safetensors): loading with every tensor checked, and the graph with
 * attention_type "block_sparse" (the sparse attention op over bigbird_layout.h's layout) or
 * "original_full" (the fused dense attention), including BigBirdModel.forward's fallback to
 * original_full for short sequences and its padding to a multiple of block_size. */
#ifndef VKF_MODELS_BIGBIRD_H
#define VKF_MODELS_BIGBIRD_H

#include <stdint.h>

#include "graph/ir/graph.h"
#include "models/arch/bigbird_heads.h"
#include "models/formats/hf_config.h"

/* A loaded checkpoint; owns the weights' mapping, converted weights and the layout tables that
 * graph constants point into, so it must outlive every graph built from it. Not thread-safe. */
typedef struct vkf_bigbird_model vkf_bigbird_model;

/* Reads DIR/config.json (model_type "big_bird") and DIR/model.safetensors (tensor names with or
 * without the "bert." prefix that task-head classes save) and checks every tensor the builder
 * uses. Errors are one line naming the directory and the file, field or tensor. */
vkf_status vkf_bigbird_load(const char *model_dir, vkf_bigbird_model **out_model);
void vkf_bigbird_destroy(vkf_bigbird_model *model);
/* --quantize: linear weights of the builds that follow become ggml blocks (see
 * vkf_arch_files_quantize for the names and vkf_arch_linear_weight for which weights). */
vkf_status vkf_bigbird_quantize(vkf_bigbird_model *model, const char *format);
/* The checkpoint and the weights its builds made (vkf_model_quantized reads what --quantize made). */
const struct vkf_arch_files *vkf_bigbird_files(const vkf_bigbird_model *model);

const vkf_hf_config *vkf_bigbird_config(const vkf_bigbird_model *model);
int vkf_bigbird_has_pooler(const vkf_bigbird_model *model);
/* The task head in the checkpoint and the Hugging Face class it makes ("BigBirdModel",
 * "BigBirdForMaskedLM", "BigBirdForSequenceClassification"). */
vkf_bigbird_head vkf_bigbird_head_of(const vkf_bigbird_model *model);
const char *vkf_bigbird_architecture(const vkf_bigbird_model *model);
/* Whether BigBirdModel.forward runs `seq_len` tokens block-sparse: attention_type block_sparse and
 * seq_len > (5 + 2·num_random_blocks)·block_size; otherwise (its "Changing attention type to
 * 'original_full'" warning) full attention. */
int vkf_bigbird_runs_sparse(const vkf_bigbird_model *model, int64_t seq_len);

enum {
  VKF_BIGBIRD_OUT_LAST_HIDDEN_STATE = 1, /* f32 [B, T, D] */
  VKF_BIGBIRD_OUT_POOLER_OUTPUT = 2,     /* f32 [B, D]: tanh(pooler(first token)) */
  VKF_BIGBIRD_OUT_LOGITS = 4, /* f32 [B, T, vocab] (ForMaskedLM) or [B, labels] (ForSequence...) */
};

typedef struct vkf_bigbird_build_options {
  int64_t batch;    /* 0: 1 */
  int64_t seq_len;  /* T, tokens per sequence (before the padding to a block multiple) */
  vkf_dtype dtype;  /* VKF_F32 (default) or VKF_F16 for weights and activations */
  uint32_t outputs; /* VKF_BIGBIRD_OUT_* bits; 0: last_hidden_state */
} vkf_bigbird_build_options;

typedef struct vkf_bigbird_graph {
  vkf_graph *graph;         /* owned by the caller: vkf_graph_destroy */
  vkf_value input_ids;      /* i32 [B, T] */
  vkf_value attention_mask; /* i32 [B, T], any pattern of 0/1 */
  vkf_value token_type_ids; /* i32 [B, T] in [0, type_vocab_size) */
  vkf_value last_hidden_state, pooler_output, logits;
} vkf_bigbird_graph;

/* Emits BigBirdModel's forward pass: word embeddings (times sqrt(D) with rescale_embeddings) +
 * token types + learned positions, LayerNorm, post-norm layers, the pooler and the task head.
 * Block-sparse builds pad the sequence to a multiple of block_size with pad_token_id (mask 0, type
 * 0) as HF does, mask padding with a -10000 key bias, zero the attention output of masked queries
 * (HF multiplies by from_mask) and trim the output back to T. Errors (INVALID_ARGUMENT naming the
 * sizes: a padded length past max_position_embeddings, padding without a pad_token_id) leave *out
 * zeroed. */
vkf_status vkf_bigbird_build(vkf_bigbird_model *model, const vkf_bigbird_build_options *options,
                             vkf_bigbird_graph *out);

#endif
