/* Sentence embeddings as sentence-transformers computes them, as `vkf embed` and vkformer_embed
 * run them: the WordPiece tokenizer (truncation to the pipeline's max_seq_length, one padded
 * batch), the BERT encoder's embedding fast path (padding through kv_len), batched to fit the
 * device. */
#ifndef VKF_RUNTIME_TEXT_EMBED_H
#define VKF_RUNTIME_TEXT_EMBED_H

#include <stddef.h>
#include <stdint.h>

#include "host/device.h"
#include "models/arch/bert.h"
#include "text/wordpiece.h"

/* Embeds `count` texts: *out_e is f32 [count, hidden] (malloc'd), *out_tokens (may be NULL) each
 * text's token count after truncation (malloc'd). `tool` prefixes VKF_CHECK's line. */
vkf_status vkf_rt_embed(vkf_device *device, vkf_bert_model *model, const vkf_wordpiece *tok,
                        const char *const *texts, int64_t count, vkf_dtype dtype, const char *tool,
                        float **out_e, size_t **out_tokens);

#endif
