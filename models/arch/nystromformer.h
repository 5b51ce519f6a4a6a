/* NystromformerModel (transformers 4.38.2, eval mode) from a Hugging Face checkpoint: BERT-like
 * embeddings with positions offset by 2, post-norm layers whose self-attention is Nystrom
 * attention (models/arch/lowrank_attention.h) with the depthwise convolution skip on V, and
 * last_hidden_state out. */
#ifndef VKF_MODELS_ARCH_NYSTROMFORMER_H
#define VKF_MODELS_ARCH_NYSTROMFORMER_H

#include <stdint.h>

#include "graph/ir/graph.h"
#include "models/formats/hf_config.h"
#include "models/formats/hf_config_nystromformer.h"

typedef struct vkf_nystromformer vkf_nystromformer;

/* Reads DIR/config.json (model_type "nystromformer", absolute positions) and the weights
 * (names with or without the "nystromformer." prefix task heads save), checking every tensor the
 * builder reads. Errors are one line naming the directory and the file, field or tensor. */
vkf_status vkf_nystromformer_load(const char *model_dir, vkf_nystromformer **out);
void vkf_nystromformer_destroy(vkf_nystromformer *model);
/* --quantize: linear weights of the builds that follow become ggml blocks (see
 * vkf_arch_files_quantize for the names and vkf_arch_linear_weight for which weights). */
vkf_status vkf_nystromformer_quantize(vkf_nystromformer *model, const char *format);
/* The checkpoint and the weights its builds made (vkf_model_quantized reads what --quantize made). */
const struct vkf_arch_files *vkf_nystromformer_files(const vkf_nystromformer *model);
const vkf_hf_config *vkf_nystromformer_config(const vkf_nystromformer *model);
const vkf_nystrom_config *vkf_nystromformer_nystrom_config(const vkf_nystromformer *model);

typedef struct vkf_nystromformer_graph {
  vkf_graph *graph;            /* owned by the caller */
  vkf_value input_ids;         /* i32 [B, N] */
  vkf_value attention_mask;    /* i32 [B, N] of 0/1, applied as HF's extended additive mask */
  vkf_value token_type_ids;    /* i32 [B, N] */
  vkf_value last_hidden_state; /* f32 [B, N, D] */
} vkf_nystromformer_graph;

/* batch 0: 1; seq_len must be segment_means_seq_len unless num_landmarks equals it (HF's
 * landmark reshape assumes that length); dtype VKF_F32 or VKF_F16. */
vkf_status vkf_nystromformer_build(vkf_nystromformer *model, int64_t batch, int64_t seq_len,
                                   vkf_dtype dtype, vkf_nystromformer_graph *out);

#endif
