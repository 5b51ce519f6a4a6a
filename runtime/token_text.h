/* A generated id's text, for every generation loop (vkf generate, vkf chat, vkf serve). */
#ifndef VKF_RUNTIME_TOKEN_TEXT_H
#define VKF_RUNTIME_TOKEN_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "text/text_tokenizer.h"

/* vkf_text_decoder_push of `id`, except that an id past the tokenizer's vocabulary (a model whose
 * vocabulary is padded past its tokenizer's, as Qwen2's and Phi-3's are, sampled a padding id)
 * is the text "" and leaves the decoder as it was, as transformers decodes such an id, rather
 * than an error that ends the generation. */
vkf_status vkf_gen_decoder_push(const vkf_text_tokenizer *tok, vkf_text_decoder *dec, int64_t id,
                                const char **out_text, size_t *out_size);

#endif
