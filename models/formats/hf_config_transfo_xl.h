/* TransfoXLConfig (transformers 4.36, model_type "transfo-xl"): the sizes, the memory, the
 * relative attention's switches and the adaptive embedding / softmax clusters, with the class
 * defaults. Read by models/arch/transfo_xl.c; vkf_hf_config does not carry these names. */
#ifndef VKF_MODELS_HF_CONFIG_TRANSFO_XL_H
#define VKF_MODELS_HF_CONFIG_TRANSFO_XL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph/base/status.h"

/* Most cutoffs (adaptive clusters - 1) a file may list. */
enum { VKF_TXL_MAX_CUTOFFS = 16 };

typedef struct vkf_txl_config {
  int64_t vocab_size; /* n_token (267735) */
  int64_t d_model, d_embed, n_head, d_head, d_inner, n_layer;
  int64_t div_val;    /* >= 1; cluster i's width is d_embed / div_val^i (> 0) */
  int64_t cutoff_count;
  int64_t cutoffs[VKF_TXL_MAX_CUTOFFS + 1]; /* increasing, in (0, vocab_size), then vocab_size */
  bool tie_projs[VKF_TXL_MAX_CUTOFFS + 1];  /* the file's list, else [False] + [True] * cutoffs */
  bool tie_word_embeddings;                 /* true */
  int64_t mem_len;   /* >= 0 (1600) */
  int64_t clamp_len; /* > 0: relative distances clamped to it (1000); <= 0: none */
  bool same_length, pre_lnorm, untie_r;
  double layer_norm_epsilon;
  int64_t eos_token_id; /* 0; -1 when null */
} vkf_txl_config;

/* Bounds: sizes as vkf_hf_config's (VKF_HF_MAX_*), mem_len and clamp_len at most 2^20.
 * One-line errors naming the file and the key: PARSE (wrong type), INVALID_ARGUMENT (mem_len < 0,
 * cutoffs not increasing or outside the vocabulary, div_val < 1, a cluster width of 0, d_embed or
 * sizes not positive), UNSUPPORTED (attn_type other than 0, sample_softmax > 0). */
vkf_status vkf_txl_config_parse(const char *json, size_t size, const char *name,
                                vkf_txl_config *out);
vkf_status vkf_txl_config_load(const char *path, vkf_txl_config *out);

#endif
