/* The slow byte-level BPE tokenizers' files (BartTokenizer: vocab.json + merges.txt +
 * tokenizer_config.json) turned into the tokenizer.json document the fast converter would write,
 * then loaded by the one BPE loader. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/formats/file_read.h"
#include "models/formats/json_fields.h"
#include "text/added_tokens.h"
#include "text/bpe.h"

#define MAX_FILE ((size_t)256 << 20)

static char *join(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/%s", dir, name);
  return p;
}

/* merges.txt as BartTokenizer reads it: split("\n")[1:-1], each line split on white space; lines
 * that are not two parts never match a pair and are left out. */
static vkf_status add_merges(cJSON *model, const char *path) {
  char *text = NULL;
  size_t size;
  VKF_RETURN_IF_ERROR(vkf_file_read_bounded(path, MAX_FILE, "a merges.txt", &text, &size));
  cJSON *merges = cJSON_AddArrayToObject(model, "merges");
  vkf_status st = merges ? VKF_OK : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", path);
  char *line = memchr(text, '\n', size); /* the first line (#version) is skipped */
  while (!st && line) {
    line++;
    char *end = memchr(line, '\n', size - (size_t)(line - text));
    if (!end) break; /* the last piece of split("\n") is dropped */
    *end = '\0';
    char *parts[3] = {0};
    int count = 0;
    for (char *tok = strtok(line, " \t\r\v\f"); tok && count < 3; tok = strtok(NULL, " \t\r\v\f"))
      parts[count++] = tok;
    if (count == 2) {
      cJSON *pair = cJSON_CreateArray();
      if (!pair || !cJSON_AddItemToArray(pair, cJSON_CreateString(parts[0])) ||
          !cJSON_AddItemToArray(pair, cJSON_CreateString(parts[1])) ||
          !cJSON_AddItemToArray(merges, pair))
        st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", path);
    }
    line = end;
  }
  free(text);
  return st;
}

static const char *token_name(const cJSON *config, const char *key, const char *fallback) {
  const cJSON *f = vkf_json_field(config, key);
  if (cJSON_IsObject(f)) f = cJSON_GetObjectItemCaseSensitive(f, "content");
  return cJSON_IsString(f) ? f->valuestring : fallback;
}

static int add_token(cJSON *added, int id, const char *content, int lstrip) {
  cJSON *t = cJSON_CreateObject();
  if (!t || !cJSON_AddItemToArray(added, t)) return 0;
  return cJSON_AddNumberToObject(t, "id", id) && cJSON_AddStringToObject(t, "content", content) &&
         cJSON_AddBoolToObject(t, "special", 1) && cJSON_AddBoolToObject(t, "lstrip", lstrip) &&
         cJSON_AddBoolToObject(t, "rstrip", 0) && cJSON_AddBoolToObject(t, "normalized", 0);
}

/* added_tokens_decoder {"id": {content, lstrip, rstrip, single_word, special}} copied as
 * tokenizer.json's added_tokens; without it the BART defaults found in the vocabulary. */
static vkf_status add_specials(cJSON *doc, const cJSON *vocab, const cJSON *config,
                               const char *config_path) {
  cJSON *added = cJSON_AddArrayToObject(doc, "added_tokens");
  if (!added) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", config_path);
  const cJSON *decoder = vkf_json_field(config, "added_tokens_decoder");
  if (decoder) return vkf_added_tokens_from_decoder(added, decoder, config_path);
  static const char *const keys[] = {"bos_token", "pad_token", "eos_token", "unk_token",
                                     "mask_token"};
  static const char *const defaults[] = {"<s>", "<pad>", "</s>", "<unk>", "<mask>"};
  for (size_t k = 0; k < 5; k++) {
    const char *name = token_name(config, keys[k], defaults[k]);
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(vocab, name);
    /* an id that is no int is left to the vocabulary's own check, which names it */
    if (cJSON_IsNumber(id) && id->valuedouble >= 0 && id->valuedouble <= INT32_MAX &&
        !add_token(added, (int)id->valuedouble, name, k == 4))
      return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", config_path);
  }
  return VKF_OK;
}

static vkf_status build(cJSON *doc, const char *dir, const char *vocab_path,
                        const char *merges_path, const char *config_path) {
  char *text = NULL;
  size_t size;
  cJSON *config = NULL, *vocab = NULL;
  vkf_status st = vkf_json_read_file(config_path, &text, &size);
  if (vkf_status_code_of(st) == VKF_STATUS_NOT_FOUND) {
    vkf_status_free(st);
    st = VKF_OK;
  } else if (!st) {
    st = vkf_json_parse_object(text, size, config_path, &config);
  }
  free(text);
  text = NULL;
  if (!st) st = vkf_file_read_bounded(vocab_path, MAX_FILE, "a vocab.json", &text, &size);
  if (!st) st = vkf_json_parse_object(text, size, vocab_path, &vocab);
  free(text);
  cJSON *model = NULL;
  if (!st) {
    model = cJSON_AddObjectToObject(doc, "model");
    if (!model || !cJSON_AddStringToObject(model, "type", "BPE"))
      st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", dir);
  }
  if (!st) st = add_specials(doc, vocab, config, config_path);
  bool prefix = false;
  if (!st) st = vkf_json_get_bool(config_path, config, "add_prefix_space", false, &prefix);
  if (!st) {
    cJSON_AddItemToObject(model, "vocab", vocab);
    vocab = NULL;
    st = add_merges(model, merges_path);
  }
  if (!st) {
    /* what BartConverter / RobertaConverter write */
    cJSON *pre = cJSON_AddObjectToObject(doc, "pre_tokenizer");
    cJSON *post = cJSON_AddObjectToObject(doc, "post_processor");
    cJSON *dec = cJSON_AddObjectToObject(doc, "decoder");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(model, "vocab");
    const char *cls = token_name(config, "cls_token", "<s>");
    const char *sep = token_name(config, "sep_token", "</s>");
    const cJSON *cls_id = cJSON_GetObjectItemCaseSensitive(v, cls);
    const cJSON *sep_id = cJSON_GetObjectItemCaseSensitive(v, sep);
    if (!cJSON_IsNumber(cls_id) || !cJSON_IsNumber(sep_id))
      st = vkf_status_make(VKF_STATUS_PARSE,
                           "%s: the cls_token \"%s\" or sep_token \"%s\" is not in "
                           "the vocabulary",
                           vocab_path, cls, sep);
    cJSON *cls_pair = cJSON_AddArrayToObject(post, "cls"),
          *sep_pair = cJSON_AddArrayToObject(post, "sep");
    if (!st && (!pre || !post || !dec || !cls_pair || !sep_pair ||
                !cJSON_AddStringToObject(pre, "type", "ByteLevel") ||
                !cJSON_AddBoolToObject(pre, "add_prefix_space", prefix) ||
                !cJSON_AddBoolToObject(pre, "use_regex", 1) ||
                !cJSON_AddStringToObject(post, "type", "RobertaProcessing") ||
                !cJSON_AddItemToArray(cls_pair, cJSON_CreateString(cls)) ||
                !cJSON_AddItemToArray(cls_pair, cJSON_CreateNumber(cls_id->valuedouble)) ||
                !cJSON_AddItemToArray(sep_pair, cJSON_CreateString(sep)) ||
                !cJSON_AddItemToArray(sep_pair, cJSON_CreateNumber(sep_id->valuedouble)) ||
                !cJSON_AddStringToObject(dec, "type", "ByteLevel")))
      st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", dir);
  }
  cJSON_Delete(vocab);
  cJSON_Delete(config);
  return st;
}

vkf_status vkf_bpe_load_files(const char *dir, vkf_bpe **out_bpe) {
  *out_bpe = NULL;
  char *vocab = join(dir, "vocab.json"), *merges = join(dir, "merges.txt");
  char *config = join(dir, "tokenizer_config.json");
  cJSON *doc = cJSON_CreateObject();
  vkf_status st = vocab && merges && config && doc
                      ? build(doc, dir, vocab, merges, config)
                      : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", dir);
  char type[32];
  if (!st) st = vkf_bpe_from_json(doc, vocab, out_bpe, type);
  cJSON_Delete(doc);
  free(vocab), free(merges), free(config);
  return st;
}
