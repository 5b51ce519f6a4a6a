/* runtime/token_text.h */
#include "runtime/token_text.h"

vkf_status vkf_gen_decoder_push(const vkf_text_tokenizer *tok, vkf_text_decoder *dec, int64_t id,
                                const char **out_text, size_t *out_size) {
  if (id >= 0 && (uint64_t)id >= vkf_text_tokenizer_vocab_count(tok)) {
    *out_text = "";
    *out_size = 0;
    return VKF_OK;
  }
  return vkf_text_decoder_push(dec, (int32_t)id, out_text, out_size);
}
