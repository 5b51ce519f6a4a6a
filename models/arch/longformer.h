/* LongformerModel (transformers 4.38.2, eval mode) from a Hugging Face checkpoint: RoBERTa-style
 * embeddings, then per layer a local sliding window over the keys plus the global tokens' keys
 * (one softmax, through the block-sparse attention op), dense attention of the global tokens over
 * every key with their own query_global / key_global / value_global projections, and the BERT
 * post-norm output and MLP; the sequence padded to a multiple of the largest attention_window as
 * Hugging Face pads it, the output trimmed back.
 *
 * Where the global tokens are is run-time data that changes the graph: vkf_longformer_derive reads
 * the batch's masks on the host and gives the graph's derived inputs (position ids, the global
 * tokens' positions, the masks of the global-key prefix, where each output row comes from) and
 * the build parameter (the most global tokens in one row), so that one build serves every run of
 * a batch split (see vkf_model_derived in models/registry/model.h). */
#ifndef VKF_MODELS_ARCH_LONGFORMER_H
#define VKF_MODELS_ARCH_LONGFORMER_H

#include <stdint.h>

#include "graph/ir/graph.h"
#include "models/formats/hf_config.h"

typedef struct vkf_longformer_model vkf_longformer_model;

/* Reads DIR/config.json (model_type "longformer", a pad_token_id) and DIR/model.safetensors
 * (names with or without the "longformer." prefix task heads save), checking every tensor the
 * builder reads. One-line errors name the directory and the file, field or tensor. */
vkf_status vkf_longformer_load(const char *model_dir, vkf_longformer_model **out_model);
void vkf_longformer_destroy(vkf_longformer_model *model);
/* --quantize: linear weights of the builds that follow become ggml blocks (see
 * vkf_arch_files_quantize for the names and vkf_arch_linear_weight for which weights). */
vkf_status vkf_longformer_quantize(vkf_longformer_model *model, const char *format);
/* The checkpoint and the weights its builds made (vkf_model_quantized reads what --quantize made). */
const struct vkf_arch_files *vkf_longformer_files(const vkf_longformer_model *model);

const vkf_hf_config *vkf_longformer_config(const vkf_longformer_model *model);
int vkf_longformer_has_pooler(const vkf_longformer_model *model);
/* The longest sequence the positions allow: max_position_embeddings - pad_token_id - 1. */
int64_t vkf_longformer_max_seq(const vkf_longformer_model *model);

/* Global keys sit in a prefix of K and V padded to whole blocks of the sparse layout: the prefix
 * length for `global_tokens` (the most in one row). */
int64_t vkf_longformer_prefix_len(int64_t global_tokens);
/* The sequence padded to a multiple of the largest attention_window, as LongformerModel pads it. */
int64_t vkf_longformer_padded_len(const vkf_longformer_model *model, int64_t seq_len);

/* Derived inputs, in this order (batch-first; P = vkf_longformer_prefix_len(global_tokens), Np the
 * padded length): position_ids i32 [B, S] (create_position_ids_from_input_ids),
 * scatter_index i32 [B, Np] (where each attention output row comes from in the row's
 * [local Np | global P | zero 1] rows), key_bias f32 [B, P + Np] (the local attention's keys:
 * 0 for the row's global tokens in the prefix and its local tokens in the window part, a large
 * negative for unused slots, padding and global positions there), and when global_tokens > 0
 * global_index i32 [B, P] (the positions of the row's global tokens, 0 in unused slots). */
enum {
  VKF_LONGFORMER_POSITION_IDS = 0,
  VKF_LONGFORMER_SCATTER_INDEX,
  VKF_LONGFORMER_KEY_BIAS,
  VKF_LONGFORMER_GLOBAL_INDEX,
  VKF_LONGFORMER_DERIVED_COUNT
};

typedef struct vkf_longformer_derived {
  int64_t global_tokens; /* the most global tokens in one row (0: none in the batch) */
  uint32_t count;        /* 3, or 4 with global tokens */
  void *data[VKF_LONGFORMER_DERIVED_COUNT];
  size_t size[VKF_LONGFORMER_DERIVED_COUNT];
} vkf_longformer_derived;

/* From the whole batch's input_ids, attention_mask (NULL: ones) and global_attention_mask (NULL:
 * none, or as HF defaults it: the first token of every row for LongformerForSequenceClassification,
 * the question (the tokens before the row's first sep_token_id) for
 * LongformerForQuestionAnswering), i32 [B, S] with 0/1 masks already checked: HF's merged mask
 * (attention_mask · (global_attention_mask + 1)) decides padding (0), local (1) and global (2)
 * tokens. The question default needs exactly 3 sep tokens per row in the batch, as transformers
 * asserts (a one-line error otherwise). The arrays are malloc'ed into *out (caller frees each). */
vkf_status vkf_longformer_derive(const vkf_longformer_model *model, const int32_t *input_ids,
                                 const int32_t *attention_mask, const int32_t *global_mask,
                                 int64_t batch, int64_t seq_len, vkf_longformer_derived *out);

/* The task head found in the checkpoint (absent: a LongformerModel). */
typedef enum vkf_longformer_head {
  VKF_LONGFORMER_HEAD_NONE = 0,
  VKF_LONGFORMER_HEAD_TOKEN_CLASSIFICATION,    /* classifier: a linear layer on every token */
  VKF_LONGFORMER_HEAD_SEQUENCE_CLASSIFICATION, /* classifier.dense, tanh, classifier.out_proj on
                                                  the first token */
  VKF_LONGFORMER_HEAD_QUESTION_ANSWERING,      /* qa_outputs [2, D] on every token: start, end */
} vkf_longformer_head;
vkf_longformer_head vkf_longformer_head_of(const vkf_longformer_model *model);
/* "LongformerModel", "LongformerForTokenClassification", "LongformerForSequenceClassification",
 * "LongformerForQuestionAnswering". */
const char *vkf_longformer_architecture(const vkf_longformer_model *model);

enum {
  VKF_LONGFORMER_OUT_LAST_HIDDEN_STATE = 1, /* f32 [B, S, D] */
  VKF_LONGFORMER_OUT_POOLER_OUTPUT = 2,     /* f32 [B, D]: tanh(dense(first token)) */
  VKF_LONGFORMER_OUT_LOGITS = 4,            /* f32 [B, S, labels] or [B, labels] (the head) */
  VKF_LONGFORMER_OUT_START_LOGITS = 8,      /* f32 [B, S] (question answering) */
  VKF_LONGFORMER_OUT_END_LOGITS = 16,       /* f32 [B, S] (question answering) */
};

typedef struct vkf_longformer_build_options {
  int64_t batch, seq_len; /* rows and their tokens (before the window padding) */
  int64_t global_tokens;  /* vkf_longformer_derived.global_tokens of the batch these rows are in */
  vkf_dtype dtype;        /* VKF_F32 or VKF_F16 weights and activations */
  uint32_t outputs;       /* VKF_LONGFORMER_OUT_* bits; 0: last_hidden_state */
} vkf_longformer_build_options;

typedef struct vkf_longformer_graph {
  vkf_graph *graph;
  /* input_ids, attention_mask, global_attention_mask, token_type_ids (i32 [B, S]), then the
   * derived inputs in vkf_longformer_derived's order (count of them in derived_count). The graph
   * reads the global tokens only through the derived inputs: global_attention_mask is
   * VKF_NO_VALUE. */
  vkf_value inputs[4 + VKF_LONGFORMER_DERIVED_COUNT];
  uint32_t derived_count;
  vkf_value last_hidden_state, pooler_output, logits, start_logits, end_logits;
} vkf_longformer_graph;

/* The forward pass. A layer whose attention_window does not divide the padded length is an error
 * as in transformers (its sliding chunks assert it), naming the layer. *out is zeroed first. */
vkf_status vkf_longformer_build(vkf_longformer_model *model,
                                const vkf_longformer_build_options *options,
                                vkf_longformer_graph *out);

#endif
