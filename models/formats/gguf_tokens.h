/* Internal to models/formats: what the GGUF tokenizer makers (gguf_model.c for gpt2-style BPE,
 * gguf_spm.c for SentencePiece vocabularies) share. */
#ifndef VKF_MODELS_GGUF_TOKENS_H
#define VKF_MODELS_GGUF_TOKENS_H

#include <cjson/cJSON.h>

#include "models/formats/gguf.h"

/* OUT_OF_MEMORY naming the file. */
vkf_status vkf_gguf_oom(const vkf_gguf *g);
/* A GGUF string as a NUL-terminated copy (strings in the file are not terminated); NULL: no
 * memory. */
char *vkf_gguf_dup_n(const char *s, size_t n);
/* A token id key (tokenizer.ggml.X_token_id) checked against `vocab` tokens; -1 when absent. */
vkf_status vkf_gguf_token_id(const vkf_gguf *g, const char *key, uint64_t vocab, int64_t *out);
/* doc.post_processor: a TemplateProcessing adding BOS / EOS as tokenizer.ggml.add_bos_token /
 * add_eos_token say (add_bos defaults to `default_bos` when the file names a BOS id, add_eos to
 * false); nothing when neither. A key asking for a token the file has no id for is PARSE. */
vkf_status vkf_gguf_add_template(const vkf_gguf *g, cJSON *doc, const vkf_gguf_kv *tokens,
                                 int default_bos);

#endif
