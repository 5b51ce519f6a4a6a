/* Sentence embeddings as `vkf embed` and vkformer_embed run them. BERT (an embed facet with an
 * encoder): sentence-transformers' pipeline, the WordPiece tokenizer (truncation to the pipeline's
 * max_seq_length, one padded batch), the encoder's embedding fast path (padding through kv_len),
 * batched to fit the device. The other text encoders: their forward pass, pooled on the host. */
#ifndef VKF_RUNTIME_TEXT_EMBED_H
#define VKF_RUNTIME_TEXT_EMBED_H

#include <stddef.h>
#include <stdint.h>

#include "host/device.h"
#include "models/arch/bert.h"
#include "models/registry/model.h"
#include "text/text_tokenizer.h"
#include "text/wordpiece.h"

/* Embeds `count` texts: *out_e is f32 [count, hidden] (malloc'd), *out_tokens (may be NULL) each
 * text's token count after truncation (malloc'd). `tool` prefixes VKF_CHECK's line. */
vkf_status vkf_rt_embed(vkf_device *device, vkf_bert_model *model, const vkf_wordpiece *tok,
                        const char *const *texts, int64_t count, vkf_dtype dtype, const char *tool,
                        float **out_e, size_t **out_tokens);

/* Sentence embeddings of any text encoder through its forward pass: each text through the
 * checkpoint's tokenizer (special tokens added; a text past the model's positions keeps its first
 * tokens and its last, closing one), one batch padded to the longest (or to the length the
 * checkpoint fixes) with attention_mask 0 there, last_hidden_state pooled over each text's tokens
 * (`pooling`: VKF_POOL_MEAN, the mean over the mask as sentence-transformers computes it, or
 * VKF_POOL_CLS, the first token's). Padding is what the model makes of it (Nystromformer's
 * landmarks average it in, as Hugging Face's do). *out_e f32 [count, hidden] and *out_tokens (may
 * be NULL: each text's tokens after truncation) are malloc'd. */
vkf_status vkf_rt_embed_pooled(vkf_device *device, vkf_model *model, const vkf_text_tokenizer *tok,
                               const char *const *texts, int64_t count, vkf_dtype dtype,
                               vkf_embed_pooling pooling, const char *tool, float **out_e,
                               size_t **out_tokens);

#endif
