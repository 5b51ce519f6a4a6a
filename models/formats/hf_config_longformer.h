/* config.json fields of LongformerConfig (transformers 4.38) beyond RobertaConfig's: the local
 * attention window of every layer. Called by hf_config.c for model_type "longformer". */
#ifndef VKF_MODELS_HF_CONFIG_LONGFORMER_H
#define VKF_MODELS_HF_CONFIG_LONGFORMER_H

#include <cjson/cJSON.h>

#include "models/formats/hf_config.h"

/* Fills c->attention_window ([num_hidden_layers], in c->arena) from "attention_window": an int for
 * every layer or a list of one per layer (default 512). Each must be even and positive, as
 * LongformerModel asserts, not 2 (transformers' sliding chunks fail on it), and a list as long as
 * the layers; errors name `file`, the field and the
 * layer. */
vkf_status vkf_hf_config_parse_longformer(const char *file, const cJSON *root, vkf_hf_config *c);

#endif
