/* spiece.model -> the tokenizer.json document T5Converter writes (spm_t5.h). */
#include "text/spm_t5.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "models/formats/json_fields.h"
#include "text/added_tokens.h"
#include "text/spm.h"

#define SPACE "\xE2\x96\x81" /* U+2581 */
#define MAX_EXTRA_IDS 100000

static char *join(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/%s", dir, name);
  return p;
}

int vkf_spm_t5_present(const char *model_dir) {
  char *p = join(model_dir, "spiece.model");
  struct stat st;
  int ok = p && stat(p, &st) == 0;
  free(p);
  return ok;
}

/* A JSON file of the folder as an object (NULL when absent). */
static vkf_status read_optional(const char *dir, const char *name, cJSON **out) {
  *out = NULL;
  char *path = join(dir, name), *text = NULL;
  size_t size;
  if (!path) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", dir);
  vkf_status st = vkf_json_read_file(path, &text, &size);
  if (vkf_status_code_of(st) == VKF_STATUS_NOT_FOUND) {
    vkf_status_free(st);
    st = VKF_OK;
  } else if (!st) {
    st = vkf_json_parse_object(text, size, path, out);
  }
  free(text);
  free(path);
  return st;
}

static const char *string_of(const cJSON *obj, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* T5's tokenizer, by tokenizer_config.json's class or config.json's model_type. */
static vkf_status check_t5(const char *dir, const cJSON *tc, const cJSON *config) {
  const char *cls = string_of(tc, "tokenizer_class");
  if (cls) {
    if (!strcmp(cls, "T5Tokenizer") || !strcmp(cls, "T5TokenizerFast")) return VKF_OK;
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: spiece.model without tokenizer.json: tokenizer_class \"%s\" is not "
                           "converted (only T5's, T5Tokenizer); add the tokenizer.json its fast "
                           "tokenizer writes",
                           dir, cls);
  }
  const char *type = string_of(config, "model_type");
  if (type && (!strcmp(type, "t5") || !strcmp(type, "mt5") || !strcmp(type, "umt5")))
    return VKF_OK;
  return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                         "%s: spiece.model without tokenizer.json, and neither tokenizer_config.json's "
                         "tokenizer_class nor config.json's model_type says T5 (model_type \"%s\"); "
                         "only T5's SentencePiece model is converted",
                         dir, type ? type : "(none)");
}

static char *base64(const uint8_t *p, size_t n) {
  static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char *out = malloc(4 * ((n + 2) / 3) + 1), *o = out;
  if (!out) return NULL;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
                 (i + 2 < n ? p[i + 2] : 0);
    *o++ = tab[v >> 18 & 63];
    *o++ = tab[v >> 12 & 63];
    *o++ = i + 1 < n ? tab[v >> 6 & 63] : '=';
    *o++ = i + 2 < n ? tab[v & 63] : '=';
  }
  *o = '\0';
  return out;
}

static cJSON *typed(cJSON *parent, const char *key, const char *type) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  if (key ? !cJSON_AddItemToObject(parent, key, o) : !cJSON_AddItemToArray(parent, o)) {
    cJSON_Delete(o);
    return NULL;
  }
  return cJSON_AddStringToObject(o, "type", type) ? o : NULL;
}

static int add_token(cJSON *added, long id, const char *content, int strip) {
  cJSON *t = cJSON_CreateObject();
  if (!t || !cJSON_AddItemToArray(added, t)) return 0;
  return cJSON_AddNumberToObject(t, "id", (double)id) &&
         cJSON_AddStringToObject(t, "content", content) && cJSON_AddBoolToObject(t, "special", 1) &&
         cJSON_AddBoolToObject(t, "lstrip", strip) && cJSON_AddBoolToObject(t, "rstrip", strip) &&
         cJSON_AddBoolToObject(t, "normalized", 0) && cJSON_AddBoolToObject(t, "single_word", 0);
}

/* added_tokens: tokenizer_config.json's added_tokens_decoder as it is, else what transformers
 * 4.38's T5Tokenizer adds (pad, eos and unk of the model, then the extra ids; none strips). */
static vkf_status add_specials(cJSON *doc, const vkf_spm *spm, const cJSON *tc, long extra,
                               const char *where) {
  cJSON *added = cJSON_AddArrayToObject(doc, "added_tokens");
  if (!added) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", where);
  const cJSON *decoder = cJSON_GetObjectItemCaseSensitive(tc, "added_tokens_decoder");
  if (decoder) return vkf_added_tokens_from_decoder(added, decoder, where);
  static const char *const keys[] = {"pad_token", "eos_token", "unk_token"};
  static const char *const defaults[] = {"<pad>", "</s>", "<unk>"};
  for (int k = 0; k < 3; k++) {
    const char *name = string_of(tc, keys[k]);
    if (!name) name = defaults[k];
    int32_t id = vkf_spm_piece_id(spm, name, strlen(name));
    if (id >= 0 && !add_token(added, id, name, 0))
      return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", where);
  }
  long pieces = (long)vkf_spm_piece_count(spm);
  for (long i = 0; i < extra; i++) {
    char name[32];
    snprintf(name, sizeof name, "<extra_id_%ld>", i);
    if (!add_token(added, pieces + extra - 1 - i, name, 0))
      return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", where);
  }
  return VKF_OK;
}

static vkf_status build(cJSON *doc, const vkf_spm *spm, const cJSON *tc, const char *where) {
  int64_t extra = 100;
  bool legacy = true, prefix = true;
  const cJSON *lg = cJSON_GetObjectItemCaseSensitive(tc, "legacy");
  VKF_RETURN_IF_ERROR(vkf_json_get_int(where, tc, "extra_ids", 100, &extra));
  if (extra < 0 || extra > MAX_EXTRA_IDS)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: extra_ids %lld is outside [0, %d]", where, (long long)extra,
                           MAX_EXTRA_IDS);
  if (lg && !cJSON_IsNull(lg)) VKF_RETURN_IF_ERROR(vkf_json_get_bool(where, tc, "legacy", true, &legacy));
  VKF_RETURN_IF_ERROR(vkf_json_get_bool(where, tc, "add_prefix_space", true, &prefix));
  VKF_RETURN_IF_ERROR(add_specials(doc, spm, tc, (long)extra, where));
  vkf_status oom = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: converting spiece.model", where);
  /* model: Unigram over the pieces, then the extra ids from the last down (T5Converter.vocab) */
  cJSON *model = typed(doc, "model", "Unigram");
  cJSON *vocab = model ? cJSON_AddArrayToObject(model, "vocab") : NULL;
  if (!vocab || !cJSON_AddNumberToObject(model, "unk_id", vkf_spm_unk_id(spm)) ||
      !cJSON_AddBoolToObject(model, "byte_fallback", 0))
    return oom;
  size_t count = vkf_spm_piece_count(spm);
  for (size_t i = 0; i < count + (size_t)extra; i++) {
    char name[32];
    const char *piece = name;
    double score = 0.0;
    if (i < count) {
      piece = vkf_spm_piece(spm, (int32_t)i);
      score = vkf_spm_piece_score(spm, (int32_t)i);
    } else {
      snprintf(name, sizeof name, "<extra_id_%lld>", (long long)(extra - 1 - (int64_t)(i - count)));
    }
    cJSON *pair = cJSON_CreateArray();
    if (!pair || !cJSON_AddItemToArray(vocab, pair) ||
        !cJSON_AddItemToArray(pair, cJSON_CreateString(piece)) ||
        !cJSON_AddItemToArray(pair, cJSON_CreateNumber(score)))
      return oom;
  }
  /* normalizer: Precompiled (when the model has a charsmap), Strip right, runs of spaces */
  cJSON *norm = typed(doc, "normalizer", "Sequence");
  cJSON *list = norm ? cJSON_AddArrayToObject(norm, "normalizers") : NULL;
  if (!list) return oom;
  size_t map_size;
  const uint8_t *map = vkf_spm_charsmap_bytes(spm, &map_size);
  if (map && map_size) {
    char *b64 = base64(map, map_size);
    cJSON *pre = b64 ? typed(list, NULL, "Precompiled") : NULL;
    int ok = pre && cJSON_AddStringToObject(pre, "precompiled_charsmap", b64);
    free(b64);
    if (!ok) return oom;
  }
  cJSON *strip = typed(list, NULL, "Strip"), *rep = typed(list, NULL, "Replace");
  cJSON *pat = rep ? cJSON_AddObjectToObject(rep, "pattern") : NULL;
  if (!strip || !pat || !cJSON_AddBoolToObject(strip, "strip_left", 0) ||
      !cJSON_AddBoolToObject(strip, "strip_right", 1) ||
      !cJSON_AddStringToObject(pat, "Regex", " {2,}") ||
      !cJSON_AddStringToObject(rep, "content", SPACE))
    return oom;
  /* pre-tokenizer and decoder: Metaspace; prepend_scheme "first" when legacy is false */
  cJSON *pre = typed(doc, "pre_tokenizer", "Metaspace"), *dec = typed(doc, "decoder", "Metaspace");
  if (!pre || !dec || !cJSON_AddStringToObject(pre, "replacement", SPACE) ||
      !cJSON_AddBoolToObject(pre, "add_prefix_space", prefix) ||
      !cJSON_AddStringToObject(pre, "prepend_scheme", legacy ? "always" : "first") ||
      !cJSON_AddStringToObject(dec, "replacement", SPACE) ||
      !cJSON_AddBoolToObject(dec, "add_prefix_space", prefix))
    return oom;
  /* post-processor: $A </s> (and $A </s> $B </s>) */
  const char *eos = "</s>";
  int32_t eos_id = vkf_spm_piece_id(spm, eos, strlen(eos));
  const cJSON *added = cJSON_GetObjectItemCaseSensitive(doc, "added_tokens"), *t;
  cJSON_ArrayForEach(t, added) {
    const char *c = string_of(t, "content");
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(t, "id");
    if (c && !strcmp(c, eos) && cJSON_IsNumber(id)) eos_id = (int32_t)id->valuedouble;
  }
  if (eos_id < 0)
    return vkf_status_make(VKF_STATUS_PARSE, "%s: spiece.model has no \"</s>\" piece (T5's eos)",
                           where);
  char post_json[512];
  snprintf(post_json, sizeof post_json,
           "{\"type\": \"TemplateProcessing\", \"single\": [{\"Sequence\": {\"id\": \"A\", "
           "\"type_id\": 0}}, {\"SpecialToken\": {\"id\": \"</s>\", \"type_id\": 0}}], \"pair\": "
           "[{\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}, {\"SpecialToken\": {\"id\": \"</s>\", "
           "\"type_id\": 0}}, {\"Sequence\": {\"id\": \"B\", \"type_id\": 0}}, {\"SpecialToken\": "
           "{\"id\": \"</s>\", \"type_id\": 0}}], \"special_tokens\": {\"</s>\": {\"id\": \"</s>\", "
           "\"ids\": [%d], \"tokens\": [\"</s>\"]}}}",
           (int)eos_id);
  cJSON *post = cJSON_Parse(post_json);
  if (!post || !cJSON_AddItemToObject(doc, "post_processor", post)) {
    cJSON_Delete(post);
    return oom;
  }
  vkf_status_free(oom);
  return VKF_OK;
}

vkf_status vkf_spm_t5_load(const char *model_dir, vkf_bpe **out_bpe) {
  *out_bpe = NULL;
  cJSON *tc = NULL, *config = NULL, *doc = NULL;
  vkf_spm *spm = NULL;
  char *path = join(model_dir, "spiece.model");
  vkf_status st = path ? read_optional(model_dir, "tokenizer_config.json", &tc)
                       : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", model_dir);
  if (!st) st = read_optional(model_dir, "config.json", &config);
  if (!st) st = check_t5(model_dir, tc, config);
  if (!st) st = vkf_spm_load(path, &spm);
  if (!st && vkf_spm_model_type(spm) != VKF_SPM_UNIGRAM)
    st = vkf_status_make(VKF_STATUS_UNSUPPORTED,
                         "%s: a BPE SentencePiece model; T5's spiece.model is Unigram (add the "
                         "tokenizer.json its fast tokenizer writes)",
                         path);
  if (!st && !(doc = cJSON_CreateObject()))
    st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", path);
  if (!st) st = build(doc, spm, tc, path);
  char type[32];
  if (!st) st = vkf_bpe_from_json(doc, path, out_bpe, type);
  cJSON_Delete(doc);
  cJSON_Delete(tc);
  cJSON_Delete(config);
  vkf_spm_destroy(spm);
  free(path);
  return st;
}
