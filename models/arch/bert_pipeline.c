/* The sentence-transformers files saved beside a BERT checkpoint (modules.json, the Pooling
 * module's config.json, sentence_bert_config.json) and the config.json fields vkf_hf_config leaves
 * out: what turns token vectors into the sentence vector the model was trained to give. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "models/arch/bert_pipeline.h"
#include "models/formats/json_fields.h"

/* Parses `dir`/`file` as JSON into *out_root; a missing file leaves *out_root NULL and is OK. */
static vkf_status read_json(const char *dir, const char *file, cJSON **out_root) {
  *out_root = NULL;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  char *text = NULL;
  size_t size = 0;
  vkf_status s = vkf_json_read_file(path, &text, &size);
  if (vkf_status_code_of(s) == VKF_STATUS_NOT_FOUND) {
    vkf_status_free(s);
    return VKF_OK;
  }
  /* Not vkf_json_parse_object: modules.json is an array. */
  if (!s && !(*out_root = cJSON_ParseWithLength(text, size)))
    s = vkf_status_make(VKF_STATUS_PARSE, "%s: invalid JSON", path);
  free(text);
  return s;
}

static int json_true(const cJSON *obj, const char *key) {
  return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(obj, key));
}

/* Pooling/config.json: exactly one of the flags we reproduce may be set. */
static vkf_status read_pooling(const char *dir, const char *sub, vkf_bert_pipeline *p) {
  char file[1024];
  snprintf(file, sizeof file, "%s%sconfig.json", sub, sub[0] ? "/" : "");
  cJSON *root = NULL;
  VKF_RETURN_IF_ERROR(read_json(dir, file, &root));
  if (!root) return VKF_OK; /* sentence-transformers' Pooling default is mean */
  static const char *const unsupported[] = {
      "pooling_mode_max_tokens", "pooling_mode_mean_sqrt_len_tokens",
      "pooling_mode_weightedmean_tokens", "pooling_mode_lasttoken"};
  vkf_status s = VKF_OK;
  for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0] && !s; i++)
    if (json_true(root, unsupported[i]))
      s = vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s/%s: %s is not supported (mean or cls only)",
                          dir, file, unsupported[i]);
  int mean = json_true(root, "pooling_mode_mean_tokens");
  int cls = json_true(root, "pooling_mode_cls_token");
  if (!s && mean && cls)
    s = vkf_status_make(VKF_STATUS_UNSUPPORTED,
                        "%s/%s: both mean and cls pooling (a concatenated vector) is not supported",
                        dir, file);
  if (!s) p->pooling = cls ? VKF_BERT_POOL_CLS : VKF_BERT_POOL_MEAN;
  cJSON_Delete(root);
  return s;
}

/* modules.json: Transformer, Pooling, optional Normalize, in that order; nothing else. */
static vkf_status read_modules(const char *dir, vkf_bert_pipeline *p) {
  cJSON *root = NULL;
  VKF_RETURN_IF_ERROR(read_json(dir, "modules.json", &root));
  if (!root) return read_pooling(dir, "1_Pooling", p);
  vkf_status s = cJSON_IsArray(root)
                     ? VKF_OK
                     : vkf_status_make(VKF_STATUS_PARSE, "%s/modules.json: not a JSON array", dir);
  const cJSON *mod = NULL;
  int index = 0;
  cJSON_ArrayForEach(mod, root) {
    if (s) break;
    const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(mod, "type"));
    const char *path = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(mod, "path"));
    const char *cls = type ? strrchr(type, '.') : NULL;
    cls = cls ? cls + 1 : type;
    if (!cls || !path)
      s = vkf_status_make(VKF_STATUS_PARSE, "%s/modules.json: entry %d lacks \"type\"/\"path\"",
                          dir, index);
    else if (strcmp(cls, "Pooling") == 0)
      s = read_pooling(dir, path, p);
    else if (strcmp(cls, "Normalize") == 0)
      p->normalize = 1;
    else if (strcmp(cls, "Transformer") != 0)
      s = vkf_status_make(VKF_STATUS_UNSUPPORTED,
                          "%s/modules.json: module \"%s\" is not "
                          "supported (Transformer, Pooling and Normalize are)",
                          dir, type);
    index++;
  }
  cJSON_Delete(root);
  return s;
}

vkf_status vkf_bert_pipeline_load(const char *dir, const vkf_hf_config *config,
                                  vkf_bert_pipeline *out) {
  *out = (vkf_bert_pipeline){.pooling = VKF_BERT_POOL_MEAN,
                             .max_seq_length = config->max_position_embeddings};
  cJSON *root = NULL;
  VKF_RETURN_IF_ERROR(read_json(dir, "config.json", &root));
  const char *pos =
      root ? cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "position_embedding_type"))
           : NULL;
  /* relative_key(_query) adds learned distance terms inside attention that this builder lacks. */
  vkf_status s = pos && strcmp(pos, "absolute") != 0
                     ? vkf_status_make(VKF_STATUS_UNSUPPORTED,
                                       "%s/config.json: "
                                       "position_embedding_type \"%s\" is not supported (absolute "
                                       "only)",
                                       dir, pos)
                     : VKF_OK;
  cJSON_Delete(root);
  if (!s) s = read_modules(dir, out);
  if (!s) s = read_json(dir, "sentence_bert_config.json", &root);
  if (!s && root) {
    const cJSON *len = cJSON_GetObjectItemCaseSensitive(root, "max_seq_length");
    if (cJSON_IsNumber(len) && len->valuedouble >= 2 && len->valuedouble < out->max_seq_length)
      out->max_seq_length = (int64_t)len->valuedouble;
    cJSON_Delete(root);
  }
  return s;
}
