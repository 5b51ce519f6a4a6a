/* Internal to models/formats: tokenizer.json for a GGUF whose tokenizer.ggml.model is "llama" (a
 * SentencePiece vocabulary with scores), as transformers' GGUFLlamaConverter builds it. */
#ifndef VKF_MODELS_GGUF_SPM_H
#define VKF_MODELS_GGUF_SPM_H

#include <cjson/cJSON.h>

#include "models/formats/gguf.h"

vkf_status vkf_gguf_spm_tokenizer_json(const vkf_gguf *g, cJSON *doc);

#endif
