/* The sentence-transformers modules around a BERT encoder (bert_pipeline.c): pooling,
 * normalisation and max_seq_length, read from the files saved beside the checkpoint. */
#ifndef VKF_MODELS_ARCH_BERT_PIPELINE_H
#define VKF_MODELS_ARCH_BERT_PIPELINE_H

#include <stdint.h>

#include "graph/base/status.h"
#include "models/formats/hf_config.h"

/* How token vectors become one sentence vector (sentence-transformers' Pooling module). */
typedef enum vkf_bert_pooling {
  VKF_BERT_POOL_MEAN = 0, /* mean over the attention mask (pooling_mode_mean_tokens) */
  VKF_BERT_POOL_CLS,      /* the first token's vector (pooling_mode_cls_token) */
} vkf_bert_pooling;

/* The sentence-transformers modules around the encoder, read from the files it saves beside the
 * checkpoint. A folder without them (a plain Hugging Face BERT) gets sentence-transformers'
 * defaults for such a model: mean pooling, no normalisation, the config's max positions. */
typedef struct vkf_bert_pipeline {
  vkf_bert_pooling pooling; /* 1_Pooling/config.json (or the Pooling module's path) */
  int normalize;            /* modules.json lists sentence_transformers.models.Normalize */
  int64_t max_seq_length;   /* sentence_bert_config.json, clamped to max_position_embeddings */
} vkf_bert_pipeline;

/* Reads the sentence-transformers files of `model_dir` (modules.json, the Pooling module's
 * config.json, sentence_bert_config.json; each optional) into `out_pipeline`, with `config` giving
 * the defaults, and checks the config.json fields vkf_hf_config does not carry
 * (position_embedding_type must be "absolute"). Modules that would change the vector (Dense,
 * max / weighted pooling, concatenated pooling modes) are UNSUPPORTED, naming the file. */
vkf_status vkf_bert_pipeline_load(const char *model_dir, const vkf_hf_config *config,
                                  vkf_bert_pipeline *out_pipeline);

#endif
