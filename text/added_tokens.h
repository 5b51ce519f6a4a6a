/* tokenizer_config.json's added_tokens_decoder ({"id": {content, lstrip, rstrip, single_word,
 * special, normalized}}) as tokenizer.json's added_tokens array, for the readers that assemble a
 * tokenizer.json from a folder's other files (vocab.json + merges.txt, spiece.model). */
#ifndef VKF_MODELS_TEXT_ADDED_TOKENS_H
#define VKF_MODELS_TEXT_ADDED_TOKENS_H

#include <cjson/cJSON.h>

#include "graph/base/status.h"

/* Appends a copy of each entry of `decoder` (an object) to `added`, with its key as "id". An entry
 * whose key is no id in [0, 2^24) or without a string "content" is PARSE naming `where` and the
 * key. */
vkf_status vkf_added_tokens_from_decoder(cJSON *added, const cJSON *decoder, const char *where);

#endif
