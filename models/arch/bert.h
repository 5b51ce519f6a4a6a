/* BERT-family encoders from Hugging Face checkpoints (config.json + model.safetensors) as sentence
 * embedders: loading with every tensor checked, the sentence-transformers pipeline settings
 * (pooling, normalisation, max_seq_length) and the graph builder: encoder -> pool -> normalise. */
#ifndef VKF_MODELS_BERT_H
#define VKF_MODELS_BERT_H

#include <stdint.h>

#include "graph/ir/graph.h"
#include "models/arch/bert_pipeline.h"
#include "models/formats/hf_config.h"

/* A loaded checkpoint. Owns the mapping of model.safetensors (graph constants point into it) and
 * every weight it converted or assembled, so it must outlive each graph built from it. Not
 * thread-safe: builds convert and cache weights. */
typedef struct vkf_bert_model vkf_bert_model;

/* Reads DIR/config.json (model_type "bert", absolute positions), the sentence-transformers files
 * when present, and DIR/model.safetensors, accepting tensor names with or without the "bert."
 * prefix that task heads (BertForMaskedLM, ...) save, and checks that every tensor the builder
 * uses is present with the configured shape and a float dtype. Errors are one line naming the
 * directory and the file, field or tensor at fault: NOT_FOUND (directory, file, tensor), PARSE,
 * SHAPE, UNSUPPORTED (model type, position embedding type, pooling mode, dtype). */
vkf_status vkf_bert_load(const char *model_dir, vkf_bert_model **out_model);
void vkf_bert_destroy(vkf_bert_model *model);
/* --quantize: linear weights of the builds that follow become ggml blocks (see
 * vkf_arch_files_quantize for the names and vkf_arch_linear_weight for which weights). */
vkf_status vkf_bert_quantize(vkf_bert_model *model, const char *format);
/* The checkpoint and the weights its builds made (vkf_model_quantized reads what --quantize made). */
const struct vkf_arch_files *vkf_bert_files(const vkf_bert_model *model);

const vkf_hf_config *vkf_bert_config(const vkf_bert_model *model);
const vkf_bert_pipeline *vkf_bert_pipeline_of(const vkf_bert_model *model);
const char *vkf_bert_dir(const vkf_bert_model *model);

/* Outputs a build can make (bits of vkf_bert_build_options.outputs). */
enum {
  VKF_BERT_OUT_SENTENCE_EMBEDDING = 1, /* f32 [B, D]: the sentence-transformers pipeline's vector */
  VKF_BERT_OUT_LAST_HIDDEN_STATE = 2,  /* f32 [B, N, D]: BertModel's last_hidden_state */
  VKF_BERT_OUT_POOLER_OUTPUT = 4,      /* f32 [B, D]: tanh(dense(CLS)); checkpoints with a pooler */
  VKF_BERT_OUT_LOGITS = 8, /* f32 [B, N, V] (BertForMaskedLM) or [B, L] (ForSequenceClassification) */
};

/* The task head found in the checkpoint (absent: a BertModel). */
typedef enum vkf_bert_head {
  VKF_BERT_HEAD_NONE = 0,
  VKF_BERT_HEAD_MASKED_LM,      /* cls.predictions.*: transform, then the tied word embeddings */
  VKF_BERT_HEAD_CLASSIFICATION, /* classifier.* on the pooler output */
} vkf_bert_head;

typedef struct vkf_bert_build_options {
  int64_t batch;   /* sentences per run; 0: 1 */
  int64_t seq_len; /* tokens per sentence, padding included; 0: the pipeline's max_seq_length */
  vkf_dtype dtype; /* VKF_F32 (default) or VKF_F16: weights and activations of the encoder; the
                      pooling, the normalisation and the outputs stay f32 */
  uint32_t outputs; /* VKF_BERT_OUT_* bits; 0: the sentence embedding */
  /* Hugging Face's forward semantics: attention_mask is applied as BertModel's additive mask, so
   * any pattern of ones and zeros (left padding, holes) gives what transformers gives, and
   * token_type_ids is an input. 0: the embedding pipeline's fast path, where the mask must be
   * ones then zeros per row (as the tokenizer pads) and becomes key lengths that skip padded key
   * blocks, and every token has type 0. */
  int hf_forward;
  /* Hugging Face's output_attentions: when non-NULL (num_hidden_layers entries), attentions[l] is
   * layer l's softmax probabilities, f32 [B, H, N, N], a graph output "attentions.l"; the layers'
   * attention is then built unfused. NULL: the fused attention. */
  vkf_value *attentions;
} vkf_bert_build_options;

/* The graph of one build and the values a caller binds and reads (absent ones are VKF_NO_VALUE). */
typedef struct vkf_bert_graph {
  vkf_graph *graph;             /* owned by the caller: vkf_graph_destroy */
  vkf_value input_ids;          /* input, i32 [B, N] (vkf_wordpiece_encode_batch ids) */
  vkf_value attention_mask;     /* input, i32 [B, N] of 0/1; see hf_forward. An all-zero row gives
                                   a zero sentence vector */
  vkf_value token_type_ids;     /* input with hf_forward, i32 [B, N] in [0, type_vocab_size) */
  vkf_value sentence_embedding; /* outputs, f32, per the requested bits */
  vkf_value last_hidden_state;
  vkf_value pooler_output;
  vkf_value logits;
} vkf_bert_graph;

/* The task head of the checkpoint, its number of classification labels (0 for others) and
 * whether it has a pooler. */
vkf_bert_head vkf_bert_head_of(const vkf_bert_model *model);
int vkf_bert_has_pooler(const vkf_bert_model *model);
/* "BertModel", "BertForMaskedLM", "BertForSequenceClassification". */
const char *vkf_bert_architecture(const vkf_bert_model *model);

/* Emits the forward pass through graph/ir/builder.h: word + position + token-type-0 embeddings and
 * LayerNorm; per layer one fused QKV GEMM, attention with key padding (kv_len[b] = sum of mask row
 * b, computed in the graph), output projection + residual, LayerNorm, GELU MLP + residual,
 * LayerNorm (post-norm); then the pipeline's pooling and normalisation. Node names follow the
 * checkpoint's module names ("encoder.layer.3.attention", ...). f32 weights are read in place
 * from the mapping; converted and assembled ones are cached in the model. *out is zeroed first;
 * on failure nothing is kept. */
vkf_status vkf_bert_build(vkf_bert_model *model, const vkf_bert_build_options *options,
                          vkf_bert_graph *out);

#endif
