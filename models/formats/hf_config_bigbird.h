/* config.json of BigBird (BigBirdConfig of transformers 4.38, model_type "big_bird"): the fields
 * and defaults where it differs from BertConfig, onto vkf_hf_config's shared, TEXT and BIG_BIRD
 * fields. Called by hf_config.c after the shared text fields are read. */
#ifndef VKF_MODELS_HF_CONFIG_BIGBIRD_H
#define VKF_MODELS_HF_CONFIG_BIGBIRD_H

#include <cjson/cJSON.h>

#include "models/formats/hf_config.h"

/* Fills the BigBird fields of `c` from `root` and applies BigBirdConfig's own defaults to the
 * shared ones it changes (hidden_act "gelu_new", 4096 positions) when the file omits them. An
 * unknown attention_type is UNSUPPORTED naming the value; block_size must be positive and at most
 * max_position_embeddings, num_random_blocks in [0, VKF_HF_MAX_RANDOM_BLOCKS]; is_decoder true is
 * UNSUPPORTED. */
vkf_status vkf_hf_config_parse_bigbird(const char *file, const cJSON *root, vkf_hf_config *c);

#endif
