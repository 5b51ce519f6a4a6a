/* Tokenizers of vkformer.h: any tokenizer the checkpoint folders carry (text_tokenizer.h), ids
 * with their vocabulary strings, and decoding. */
#include <stdlib.h>
#include <string.h>

#include "api/handles.h"

vkformer_status vkformer_tokenizer_load(const char *model_dir, vkformer_tokenizer **out_tokenizer) {
  VKF_API_REQUIRE(out_tokenizer, "vkformer_tokenizer_load: out_tokenizer is NULL");
  *out_tokenizer = NULL;
  VKF_API_REQUIRE(model_dir, "vkformer_tokenizer_load: model_dir is NULL");
  vkformer_tokenizer *t = calloc(1, sizeof *t);
  if (!t) return vkf_api_status(vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "tokenizer"));
  vkf_status st = vkf_text_tokenizer_load(model_dir, &t->tok);
  if (st) {
    free(t);
    return vkf_api_status(st);
  }
  *out_tokenizer = t;
  return NULL;
}

void vkformer_tokenizer_free(vkformer_tokenizer *tokenizer) {
  if (!tokenizer) return;
  vkf_text_tokenizer_destroy(tokenizer->tok);
  free(tokenizer);
}

vkformer_status vkformer_model_tokenizer(vkformer_model *model,
                                         const vkformer_tokenizer **out_tokenizer) {
  VKF_API_REQUIRE(out_tokenizer, "vkformer_model_tokenizer: out_tokenizer is NULL");
  *out_tokenizer = NULL;
  VKF_API_REQUIRE(model, "vkformer_model_tokenizer: model is NULL");
  if (!model->tokenizer.tok) {
    vkf_status st = vkf_text_tokenizer_load(vkf_model_dir(model->model), &model->tokenizer.tok);
    if (st) return vkf_api_status(st);
  }
  *out_tokenizer = &model->tokenizer;
  return NULL;
}

void vkformer_tokens_release(vkformer_tokens *tokens) {
  if (!tokens) return;
  if (tokens->tokens)
    for (size_t i = 0; i < tokens->count; i++) free(tokens->tokens[i]);
  free(tokens->tokens);
  free(tokens->ids);
  memset(tokens, 0, sizeof *tokens);
}

static vkf_status tokenize(const vkf_text_tokenizer *tok, const char *text, int add_special,
                           vkformer_tokens *out) {
  int32_t *ids = NULL;
  size_t n = 0;
  VKF_RETURN_IF_ERROR(vkf_text_tokenizer_encode(tok, text, add_special, &ids, &n));
  out->ids = malloc((n ? n : 1) * sizeof *out->ids);
  out->tokens = calloc(n ? n : 1, sizeof *out->tokens);
  out->count = n;
  vkf_status st =
      out->ids && out->tokens ? VKF_OK : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%zu tokens", n);
  for (size_t i = 0; !st && i < n; i++) {
    const char *s = vkf_text_tokenizer_id_to_token(tok, ids[i]);
    out->ids[i] = ids[i];
    out->tokens[i] = strdup(s ? s : "");
    if (!out->tokens[i]) st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "token %zu", i);
  }
  free(ids);
  return st;
}

vkformer_status vkformer_tokenize(const vkformer_tokenizer *tokenizer, const char *text,
                                  int32_t add_special_tokens, vkformer_tokens *out) {
  VKF_API_REQUIRE(out, "vkformer_tokenize: out is NULL");
  memset(out, 0, sizeof *out);
  VKF_API_REQUIRE(tokenizer && tokenizer->tok, "vkformer_tokenize: tokenizer is NULL");
  VKF_API_REQUIRE(text, "vkformer_tokenize: text is NULL");
  vkf_status st = tokenize(tokenizer->tok, text, add_special_tokens != 0, out);
  if (st) vkformer_tokens_release(out);
  return vkf_api_status(st);
}

vkformer_status vkformer_decode(const vkformer_tokenizer *tokenizer, const int64_t *ids,
                                size_t count, int32_t skip_special_tokens, char **out_text) {
  VKF_API_REQUIRE(out_text, "vkformer_decode: out_text is NULL");
  *out_text = NULL;
  VKF_API_REQUIRE(tokenizer && tokenizer->tok, "vkformer_decode: tokenizer is NULL");
  VKF_API_REQUIRE(ids || !count, "vkformer_decode: ids is NULL");
  int32_t *ids32 = malloc((count ? count : 1) * sizeof *ids32);
  if (!ids32) return vkf_api_status(vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%zu ids", count));
  for (size_t i = 0; i < count; i++) {
    /* An id past int32 is outside every vocabulary; the decoder names the entry. */
    if (ids[i] < 0 || ids[i] > INT32_MAX) {
      free(ids32);
      return vkf_api_status(vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                                            "ids[%zu] = %lld is outside the vocabulary", i,
                                            (long long)ids[i]));
    }
    ids32[i] = (int32_t)ids[i];
  }
  vkf_status st =
      vkf_text_tokenizer_decode(tokenizer->tok, ids32, count, skip_special_tokens != 0, out_text);
  free(ids32);
  return vkf_api_status(st);
}
