/* ReformerConfig (transformers 4.38): the shared fields onto vkf_hf_config (hidden_size,
 * num_hidden_layers = len(attn_layers), attention_head_size as head_dim, feed_forward_size as
 * intermediate_size, ...) and Reformer's own fields (attention kind per layer, chunking, LSH
 * hashing, axial positions) in vkf_reformer_config. */
#ifndef VKF_MODELS_HF_CONFIG_REFORMER_H
#define VKF_MODELS_HF_CONFIG_REFORMER_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "graph/base/status.h"
#include "models/formats/hf_config.h"

enum {
  VKF_REFORMER_MAX_LAYERS = 256,     /* entries of attn_layers */
  VKF_REFORMER_MAX_BUCKET_FACTORS = 4, /* entries of a factorised num_buckets */
  VKF_REFORMER_MAX_HASHES = 64,
  VKF_REFORMER_MAX_CHUNKS_AROUND = 64, /* *_num_chunks_before / after */
};

typedef enum vkf_reformer_attn {
  VKF_REFORMER_LOCAL = 0, /* LocalSelfAttention */
  VKF_REFORMER_LSH,       /* LSHSelfAttention */
} vkf_reformer_attn;

typedef struct vkf_reformer_chunking {
  int64_t chunk_length;                  /* *_attn_chunk_length (64) */
  int64_t chunks_before, chunks_after;   /* *_num_chunks_before (1) / after (0) */
} vkf_reformer_chunking;

typedef struct vkf_reformer_config {
  int64_t layer_count;
  uint8_t attn[VKF_REFORMER_MAX_LAYERS]; /* vkf_reformer_attn per layer */
  vkf_reformer_chunking local, lsh;
  int64_t num_hashes;                     /* 1 */
  /* num_buckets: bucket_factor_count 0 when null (HF derives it from the sequence length), 1
   * for an int, else the factors of a list; each factor even. */
  int bucket_factor_count;
  int64_t bucket_factors[VKF_REFORMER_MAX_BUCKET_FACTORS];
  bool has_hash_seed;
  int64_t hash_seed;
  bool is_decoder;
  bool axial_pos_embds;             /* true: AxialPositionEmbeddings, else a [max_pos, D] table */
  int64_t axial_pos_shape[2];       /* (64, 64) */
  int64_t axial_pos_embds_dim[2];   /* (64, 192), summing to hidden_size */
  bool tie_word_embeddings;
} vkf_reformer_config;

/* The shared fields, for hf_config.c's parser (TEXT family, model_type "reformer"); errors as
 * vkf_hf_config_parse's. */
vkf_status vkf_hf_config_parse_reformer(const char *file, const cJSON *root, vkf_hf_config *c);

/* Reformer's own fields from config.json text (`name` in messages), with ReformerConfig's
 * defaults. One-line errors naming the file and field: PARSE (wrong type), INVALID_ARGUMENT
 * (attn_layers empty, too long or naming another kind; a chunk length not positive; an odd bucket
 * count; axial_pos_shape / axial_pos_embds_dim not two positive entries). Checks against the
 * shared fields (the axial dims' sum) are the loader's. */
vkf_status vkf_reformer_config_parse(const char *json, size_t size, const char *name,
                                     vkf_reformer_config *out);
vkf_status vkf_reformer_config_load(const char *path, vkf_reformer_config *out);

#endif
