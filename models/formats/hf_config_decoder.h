/* config.json of causal language models (GPT2Config, LlamaConfig, MistralConfig, Qwen2Config):
 * each class's field names and defaults mapped onto vkf_hf_config. Called by hf_config.c. */
#ifndef VKF_MODELS_HF_CONFIG_DECODER_H
#define VKF_MODELS_HF_CONFIG_DECODER_H

#include <cjson/cJSON.h>

#include "models/formats/hf_config.h"

/* Fills the shared and DECODER fields of `c` (model_type already set) from `root`; errors name
 * `file` and the field. */
vkf_status vkf_hf_config_parse_decoder(const char *file, const cJSON *root, vkf_hf_config *c);

#endif
