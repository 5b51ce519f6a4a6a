/* The fields of NystromformerConfig (transformers 4.38) that vkf_hf_config does not carry: where
 * the landmarks come from, the convolution skip on V and the pseudo-inverse's initial scaling. */
#ifndef VKF_MODELS_HF_CONFIG_NYSTROMFORMER_H
#define VKF_MODELS_HF_CONFIG_NYSTROMFORMER_H

#include <stdbool.h>
#include <stdint.h>

#include "graph/base/status.h"

typedef struct vkf_nystrom_config {
  int64_t segment_means_seq_len; /* the sequence length the landmark segments assume (64) */
  int64_t num_landmarks;         /* m (64); == segment_means_seq_len: full softmax attention */
  int64_t conv_kernel_size;      /* K (65), odd; 0 when the file says null (no conv skip) */
  bool inv_coeff_init_option;    /* false: one max over the whole batch ("original") */
} vkf_nystrom_config;

/* Reads the fields from config.json text (`name` in messages) with the class defaults. Errors are
 * one line naming the file and the field: PARSE (wrong type), INVALID_ARGUMENT (a size not
 * positive or too large, an even conv_kernel_size, which Hugging Face's "+=" of a conv output one
 * longer than the sequence cannot run, segment_means_seq_len not divisible by num_landmarks). */
vkf_status vkf_nystrom_config_parse(const char *json, size_t size, const char *name,
                                    vkf_nystrom_config *out);
vkf_status vkf_nystrom_config_load(const char *path, vkf_nystrom_config *out);

#endif
