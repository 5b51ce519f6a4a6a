/* The pieces the GGUF tokenizer makers share (gguf_tokens.h). */
#include "models/formats/gguf_tokens.h"

#include <stdlib.h>
#include <string.h>

vkf_status vkf_gguf_oom(const vkf_gguf *g) {
  return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: building its JSON files", vkf_gguf_path(g));
}

char *vkf_gguf_dup_n(const char *s, size_t n) {
  char *c = malloc(n + 1);
  if (c) {
    memcpy(c, s, n);
    c[n] = 0;
  }
  return c;
}

vkf_status vkf_gguf_token_id(const vkf_gguf *g, const char *key, uint64_t vocab, int64_t *out) {
  *out = -1;
  if (!vkf_gguf_find_kv(g, key)) return VKF_OK;
  uint64_t v;
  VKF_RETURN_IF_ERROR(vkf_gguf_get_uint_or(g, key, vocab ? vocab - 1 : 0, 0, &v));
  *out = (int64_t)v;
  return VKF_OK;
}

/* add_bos_token / add_eos_token: a template around the text, as transformers' converters add it. */
vkf_status vkf_gguf_add_template(const vkf_gguf *g, cJSON *doc, const vkf_gguf_kv *tokens,
                                 int default_bos) {
  const char *path = vkf_gguf_path(g);
  int add_bos = 0, add_eos = 0;
  VKF_RETURN_IF_ERROR(
      vkf_gguf_get_bool_or(g, "tokenizer.ggml.add_bos_token", default_bos, &add_bos));
  VKF_RETURN_IF_ERROR(vkf_gguf_get_bool_or(g, "tokenizer.ggml.add_eos_token", 0, &add_eos));
  int64_t bos, eos;
  VKF_RETURN_IF_ERROR(vkf_gguf_token_id(g, "tokenizer.ggml.bos_token_id", tokens->count, &bos));
  VKF_RETURN_IF_ERROR(vkf_gguf_token_id(g, "tokenizer.ggml.eos_token_id", tokens->count, &eos));
  /* a default add_bos needs a BOS to add; only a file that asks for one without it is wrong */
  if (bos < 0 && !vkf_gguf_find_kv(g, "tokenizer.ggml.add_bos_token")) add_bos = 0;
  if ((add_bos && bos < 0) || (add_eos && eos < 0))
    return vkf_status_make(VKF_STATUS_PARSE, "%s: add_%s_token is true but no %s_token_id is given",
                           path, add_bos && bos < 0 ? "bos" : "eos", add_bos && bos < 0 ? "bos" : "eos");
  if (add_bos || add_eos) {
    cJSON *post = cJSON_AddObjectToObject(doc, "post_processor");
    cJSON *single = post ? cJSON_AddArrayToObject(post, "single") : NULL;
    cJSON *specials = post ? cJSON_AddObjectToObject(post, "special_tokens") : NULL;
    if (!single || !specials || !cJSON_AddStringToObject(post, "type", "TemplateProcessing"))
      return vkf_gguf_oom(g);
    for (int part = 0; part < 3; part++) {
      int64_t id = part == 0 ? (add_bos ? bos : -1) : part == 2 ? (add_eos ? eos : -1) : -1;
      if (part != 1 && id < 0) continue;
      cJSON *item = cJSON_CreateObject();
      cJSON *inner = item ? cJSON_AddObjectToObject(item, part == 1 ? "Sequence" : "SpecialToken")
                          : NULL;
      if (!inner || !cJSON_AddItemToArray(single, item)) {
        cJSON_Delete(item);
        return vkf_gguf_oom(g);
      }
      if (!cJSON_AddNumberToObject(inner, "type_id", 0)) return vkf_gguf_oom(g);
      if (part == 1) {
        if (!cJSON_AddStringToObject(inner, "id", "A")) return vkf_gguf_oom(g);
        continue;
      }
      const char *s;
      size_t n;
      vkf_gguf_array_string(g, tokens, (uint64_t)id, &s, &n);
      char *tok = vkf_gguf_dup_n(s, n);
      cJSON *st = tok ? cJSON_AddObjectToObject(specials, tok) : NULL;
      cJSON *ids = st ? cJSON_AddArrayToObject(st, "ids") : NULL;
      int ok = ids && cJSON_AddStringToObject(inner, "id", tok) &&
               cJSON_AddStringToObject(st, "id", tok) &&
               cJSON_AddItemToArray(ids, cJSON_CreateNumber((double)id));
      free(tok);
      if (!ok) return vkf_gguf_oom(g);
    }
  }
  return VKF_OK;
}
