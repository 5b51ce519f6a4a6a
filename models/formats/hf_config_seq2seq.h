/* config.json of encoder–decoder models (BartConfig, MarianConfig, T5Config / MT5Config of
 * transformers 4.38, and D2L's Transformer, tools/goldens/seeds_transformer.py): each class's field
 * names and defaults mapped onto vkf_hf_config's shared and SEQ2SEQ fields. Called by hf_config.c. */
#ifndef VKF_MODELS_HF_CONFIG_SEQ2SEQ_H
#define VKF_MODELS_HF_CONFIG_SEQ2SEQ_H

#include <cjson/cJSON.h>

#include "models/formats/hf_config.h"

/* Fills `c` (model_type already set) from `root`; errors name `file` and the field, e.g. an
 * unknown T5 feed_forward_proj is UNSUPPORTED naming the value. */
vkf_status vkf_hf_config_parse_seq2seq(const char *file, const cJSON *root, vkf_hf_config *c);

#endif
