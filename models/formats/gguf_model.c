/* A GGUF's metadata as the JSON files of a Hugging Face folder: config.json from the
 * architecture's hyperparameters (transformers' GGUF_CONFIG_MAPPING), tokenizer.json from
 * tokenizer.ggml.* (llama.cpp's pre-tokenizer types as the tokenizers components that split the
 * same way), tokenizer_config.json with the chat template and special tokens. */
#include "models/formats/gguf_model.h"
#include "models/formats/gguf_spm.h"
#include "models/formats/gguf_tokens.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

/* llama.cpp token types (llama_token_type). */
enum { TOKEN_NORMAL = 1, TOKEN_UNKNOWN = 2, TOKEN_CONTROL = 3, TOKEN_USER_DEFINED = 4 };

typedef struct arch_map {
  const char *gguf;       /* general.architecture */
  const char *model_type; /* config.json */
  const char *hf_class;
} arch_map;

static const arch_map k_archs[] = {
    {"llama", "llama", "LlamaForCausalLM"},
    {"qwen2", "qwen2", "Qwen2ForCausalLM"},
    {"gpt2", "gpt2", "GPT2LMHeadModel"},
};




static vkf_status arch_of(const vkf_gguf *g, const arch_map **out, char arch[64]) {
  const char *s;
  size_t n;
  VKF_RETURN_IF_ERROR(vkf_gguf_get_string(g, "general.architecture", &s, &n));
  snprintf(arch, 64, "%.*s", (int)(n < 63 ? n : 63), s);
  for (size_t i = 0; i < sizeof k_archs / sizeof *k_archs; i++)
    if (strlen(k_archs[i].gguf) == n && !memcmp(k_archs[i].gguf, s, n)) {
      *out = &k_archs[i];
      return VKF_OK;
    }
  return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                         "%s: general.architecture \"%s\" is not supported; supported: %s",
                         vkf_gguf_path(g), arch, VKF_GGUF_ARCHITECTURES);
}

/* `arch`.`key` as a uint into doc[field]; required fields fail NOT_FOUND when absent and are
 * sizes (width, layers, heads), so 0 is refused here by its key: passed on, a zero width surfaced
 * as a later, unrelated error (the rope dimension "differs from the head size 0"). */
static vkf_status put_uint(const vkf_gguf *g, const char *arch, const char *key, cJSON *doc,
                           const char *field, int required, uint64_t *out) {
  char full[128];
  snprintf(full, sizeof full, "%s.%s", arch, key);
  uint64_t v = 0;
  if (required) {
    VKF_RETURN_IF_ERROR(vkf_gguf_get_uint(g, full, INT32_MAX, &v));
    if (!v)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s: metadata \"%s\" is 0; 1 to %d allowed",
                             vkf_gguf_path(g), full, INT32_MAX);
  } else if (!vkf_gguf_find_kv(g, full)) return VKF_OK;
  else VKF_RETURN_IF_ERROR(vkf_gguf_get_uint_or(g, full, INT32_MAX, 0, &v));
  if (out) *out = v;
  if (field && !cJSON_AddNumberToObject(doc, field, (double)v)) return vkf_gguf_oom(g);
  return VKF_OK;
}

/* `arch`.`key` as a number into doc[field] when present; `positive`: it must be > 0 (the norm
 * epsilons), refused here by its GGUF key rather than by the config.json field it becomes, which
 * a GGUF user never sees. */
static vkf_status put_float(const vkf_gguf *g, const char *arch, const char *key, cJSON *doc,
                            const char *field, int positive) {
  char full[128];
  snprintf(full, sizeof full, "%s.%s", arch, key);
  if (!vkf_gguf_find_kv(g, full)) return VKF_OK;
  double v;
  VKF_RETURN_IF_ERROR(vkf_gguf_get_float_or(g, full, 0, &v));
  /* JSON has no NaN or infinity: cJSON would write null, which the config reader takes as "use
   * the default", so a NaN epsilon would pass as 1e-6 */
  if (!isfinite(v) || (positive && !(v > 0)))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s: metadata \"%s\" is %g, not a %sfinite number",
                           vkf_gguf_path(g), full, v, positive ? "positive " : "");
  return cJSON_AddNumberToObject(doc, field, v) ? VKF_OK : vkf_gguf_oom(g);
}

/* tokenizer.ggml.KEY_token_id into doc[field] when present. */
static vkf_status put_token_id(const vkf_gguf *g, const char *key, cJSON *doc, const char *field) {
  char full[96];
  snprintf(full, sizeof full, "tokenizer.ggml.%s", key);
  if (!vkf_gguf_find_kv(g, full)) return VKF_OK;
  uint64_t v;
  VKF_RETURN_IF_ERROR(vkf_gguf_get_uint_or(g, full, INT32_MAX, 0, &v));
  return cJSON_AddNumberToObject(doc, field, (double)v) ? VKF_OK : vkf_gguf_oom(g);
}

/* vocab_size (the key, else the token list, as transformers' loader does, else the embedding's
 * rows), tie_word_embeddings (no output.weight) and the special token ids. */
static vkf_status put_vocab_and_ids(const vkf_gguf *g, const char *arch, cJSON *doc) {
  uint64_t vocab = 0;
  VKF_RETURN_IF_ERROR(put_uint(g, arch, "vocab_size", doc, NULL, 0, &vocab));
  const vkf_gguf_kv *tokens = vkf_gguf_find_kv(g, "tokenizer.ggml.tokens");
  if (!vocab && tokens && tokens->type == VKF_GGUF_ARRAY) vocab = tokens->count;
  const vkf_gguf_tensor *embd = vkf_gguf_find_tensor(g, "token_embd.weight");
  if (!vocab && embd) vocab = (uint64_t)embd->dims[1];
  if (vocab && !cJSON_AddNumberToObject(doc, "vocab_size", (double)vocab)) return vkf_gguf_oom(g);
  if (!cJSON_AddBoolToObject(doc, "tie_word_embeddings", !vkf_gguf_find_tensor(g, "output.weight")))
    return vkf_gguf_oom(g);
  VKF_RETURN_IF_ERROR(put_token_id(g, "bos_token_id", doc, "bos_token_id"));
  VKF_RETURN_IF_ERROR(put_token_id(g, "eos_token_id", doc, "eos_token_id"));
  return put_token_id(g, "padding_token_id", doc, "pad_token_id");
}

/* GPT2Config's own names for the gpt2.* keys. */
static vkf_status gpt2_config(const vkf_gguf *g, const char *arch, cJSON *doc) {
  VKF_RETURN_IF_ERROR(put_uint(g, arch, "embedding_length", doc, "n_embd", 1, NULL));
  VKF_RETURN_IF_ERROR(put_uint(g, arch, "block_count", doc, "n_layer", 1, NULL));
  VKF_RETURN_IF_ERROR(put_uint(g, arch, "attention.head_count", doc, "n_head", 1, NULL));
  VKF_RETURN_IF_ERROR(put_uint(g, arch, "feed_forward_length", doc, "n_inner", 0, NULL));
  VKF_RETURN_IF_ERROR(put_uint(g, arch, "context_length", doc, "n_positions", 0, NULL));
  VKF_RETURN_IF_ERROR(put_float(g, arch, "attention.layer_norm_epsilon", doc, "layer_norm_epsilon", 1));
  return put_vocab_and_ids(g, arch, doc);
}

static vkf_status config_json(const vkf_gguf *g, cJSON *doc) {
  const arch_map *a = NULL;
  char arch[64];
  VKF_RETURN_IF_ERROR(arch_of(g, &a, arch));
  cJSON *classes = cJSON_AddArrayToObject(doc, "architectures");
  if (!classes || !cJSON_AddItemToArray(classes, cJSON_CreateString(a->hf_class)) ||
      !cJSON_AddStringToObject(doc, "model_type", a->model_type))
    return vkf_gguf_oom(g);
  if (!strcmp(a->model_type, "gpt2")) return gpt2_config(g, arch, doc);
  uint64_t hidden = 0, heads = 0, rope_dims = 0;
  VKF_RETURN_IF_ERROR(put_uint(g, arch, "embedding_length", doc, "hidden_size", 1, &hidden));
  VKF_RETURN_IF_ERROR(put_uint(g, arch, "block_count", doc, "num_hidden_layers", 1, NULL));
  VKF_RETURN_IF_ERROR(put_uint(g, arch, "feed_forward_length", doc, "intermediate_size", 1, NULL));
  VKF_RETURN_IF_ERROR(put_uint(g, arch, "attention.head_count", doc, "num_attention_heads", 1,
                               &heads));
  VKF_RETURN_IF_ERROR(
      put_uint(g, arch, "attention.head_count_kv", doc, "num_key_value_heads", 0, NULL));
  VKF_RETURN_IF_ERROR(
      put_uint(g, arch, "context_length", doc, "max_position_embeddings", 0, NULL));
  VKF_RETURN_IF_ERROR(put_float(g, arch, "attention.layer_norm_rms_epsilon", doc, "rms_norm_eps", 1));
  VKF_RETURN_IF_ERROR(put_float(g, arch, "rope.freq_base", doc, "rope_theta", 1));
  VKF_RETURN_IF_ERROR(put_uint(g, arch, "rope.dimension_count", doc, NULL, 0, &rope_dims));
  if (rope_dims && heads && rope_dims != hidden / heads)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: %s.rope.dimension_count %llu differs from the head size %llu "
                           "(partial rotary is not supported)",
                           vkf_gguf_path(g), arch, (unsigned long long)rope_dims,
                           (unsigned long long)(hidden / heads));
  char full[128];
  snprintf(full, sizeof full, "%s.rope.scaling.type", arch);
  const char *scaling;
  size_t scaling_len;
  if (vkf_gguf_find_kv(g, full)) {
    VKF_RETURN_IF_ERROR(vkf_gguf_get_string(g, full, &scaling, &scaling_len));
    char type[32];
    snprintf(type, sizeof type, "%.*s", (int)(scaling_len < 31 ? scaling_len : 31), scaling);
    if (strcmp(type, "none")) {
      cJSON *rs = cJSON_AddObjectToObject(doc, "rope_scaling");
      if (!rs || !cJSON_AddStringToObject(rs, "type", type)) return vkf_gguf_oom(g);
      VKF_RETURN_IF_ERROR(put_float(g, arch, "rope.scaling.factor", rs, "factor", 1));
    }
  }
  if (vkf_gguf_find_tensor(g, "rope_freqs.weight"))
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: tensor \"rope_freqs.weight\" (Llama 3.1 rope scaling as a tensor) "
                           "is not supported",
                           vkf_gguf_path(g));
  if (!strcmp(a->model_type, "llama") &&
      !cJSON_AddBoolToObject(doc, "attention_bias", vkf_gguf_find_tensor(g, "blk.0.attn_q.bias") != NULL))
    return vkf_gguf_oom(g);
  return put_vocab_and_ids(g, arch, doc);
}

/* llama.cpp's pre-tokenizer types (llama-vocab.cpp) as tokenizers pre_tokenizer JSON that splits
 * identically: each group shares its regexes there. */
static const char *pre_tokenizer_of(const char *pre) {
  static const char *const smollm[] = {"smollm", "starcoder", "refact", "command-r", "codeshell",
                                       "exaone", "minerva", NULL};
  static const char *const gpt2[] = {"gpt-2", "gpt2", "mpt", "olmo", "jais", "trillion", NULL};
  static const char *const llama3[] = {"llama3", "llama-v3", "llama-bpe", "falcon3", NULL};
  static const char *const qwen2[] = {"qwen2", "deepseek-r1-qwen", NULL};
  for (const char *const *p = smollm; *p; p++)
    if (!strcmp(pre, *p))
      return "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Digits\", "
             "\"individual_digits\": true}, {\"type\": \"ByteLevel\", \"add_prefix_space\": false, "
             "\"trim_offsets\": true, \"use_regex\": true}]}";
  for (const char *const *p = gpt2; *p; p++)
    if (!strcmp(pre, *p))
      return "{\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": true, "
             "\"use_regex\": true}";
  for (const char *const *p = llama3; *p; p++)
    if (!strcmp(pre, *p))
      return "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": "
             "{\"Regex\": \"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|"
             "\\\\p{N}{1,3}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|"
             "\\\\s+(?!\\\\S)|\\\\s+\"}, \"behavior\": \"Isolated\", \"invert\": false}, "
             "{\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": true, "
             "\"use_regex\": false}]}";
  for (const char *const *p = qwen2; *p; p++)
    if (!strcmp(pre, *p))
      return "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": "
             "{\"Regex\": \"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|"
             "\\\\p{N}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|"
             "\\\\s+(?!\\\\S)|\\\\s+\"}, \"behavior\": \"Isolated\", \"invert\": false}, "
             "{\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": true, "
             "\"use_regex\": false}]}";
  return NULL;
}

static vkf_status gpt2_tokenizer_json(const vkf_gguf *g, cJSON *doc) {
  const char *path = vkf_gguf_path(g);
  char pre[64] = "gpt2"; /* llama.cpp reads a missing pre as "default" with a warning */
  const char *pre_s;
  size_t pre_n;
  if (vkf_gguf_find_kv(g, "tokenizer.ggml.pre")) {
    VKF_RETURN_IF_ERROR(vkf_gguf_get_string(g, "tokenizer.ggml.pre", &pre_s, &pre_n));
    snprintf(pre, sizeof pre, "%.*s", (int)(pre_n < 63 ? pre_n : 63), pre_s);
  }
  const char *pre_json = pre_tokenizer_of(pre);
  if (!pre_json)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: tokenizer.ggml.pre \"%s\" is not supported (smollm, starcoder, "
                           "gpt2, llama3, qwen2 and their llama.cpp aliases are)",
                           path, pre);
  const vkf_gguf_kv *tokens, *merges, *types = NULL;
  VKF_RETURN_IF_ERROR(vkf_gguf_get_array(g, "tokenizer.ggml.tokens", VKF_GGUF_STRING, &tokens));
  VKF_RETURN_IF_ERROR(vkf_gguf_get_array(g, "tokenizer.ggml.merges", VKF_GGUF_STRING, &merges));
  if (vkf_gguf_find_kv(g, "tokenizer.ggml.token_type")) {
    VKF_RETURN_IF_ERROR(
        vkf_gguf_get_array(g, "tokenizer.ggml.token_type", VKF_GGUF_INT32, &types));
    if (types->count != tokens->count)
      return vkf_status_make(VKF_STATUS_PARSE,
                             "%s: tokenizer.ggml.token_type has %llu entries for %llu tokens", path,
                             (unsigned long long)types->count, (unsigned long long)tokens->count);
  }
  cJSON *model = cJSON_AddObjectToObject(doc, "model");
  cJSON *vocab = model ? cJSON_AddObjectToObject(model, "vocab") : NULL;
  cJSON *merge_list = model ? cJSON_AddArrayToObject(model, "merges") : NULL;
  cJSON *added = cJSON_AddArrayToObject(doc, "added_tokens");
  if (!vocab || !merge_list || !added || !cJSON_AddStringToObject(model, "type", "BPE")) return vkf_gguf_oom(g);
  /* llama.cpp sets ignore_merges for the Llama 3 split (a word found whole is one token) */
  if (strstr(pre_json, "p{N}{1,3}") && !cJSON_AddBoolToObject(model, "ignore_merges", 1))
    return vkf_gguf_oom(g);
  for (uint64_t i = 0; i < tokens->count; i++) {
    const char *s;
    size_t n;
    vkf_gguf_array_string(g, tokens, i, &s, &n);
    char *tok = vkf_gguf_dup_n(s, n);
    if (!tok) return vkf_gguf_oom(g);
    if (strlen(tok) != n) {
      free(tok);
      return vkf_status_make(VKF_STATUS_PARSE, "%s: token %llu holds a NUL byte", path,
                             (unsigned long long)i);
    }
    /* a repeated token string: the later id wins in tokenizers' vocab map, as here */
    cJSON_DeleteItemFromObjectCaseSensitive(vocab, tok);
    int ok = cJSON_AddNumberToObject(vocab, tok, (double)i) != NULL;
    int64_t type = types ? vkf_gguf_array_int(types, i) : TOKEN_NORMAL;
    if (ok && (type == TOKEN_CONTROL || type == TOKEN_USER_DEFINED)) {
      cJSON *a = cJSON_CreateObject();
      ok = a && cJSON_AddItemToArray(added, a) && cJSON_AddNumberToObject(a, "id", (double)i) &&
           cJSON_AddStringToObject(a, "content", tok) &&
           cJSON_AddBoolToObject(a, "single_word", 0) && cJSON_AddBoolToObject(a, "lstrip", 0) &&
           cJSON_AddBoolToObject(a, "rstrip", 0) &&
           cJSON_AddBoolToObject(a, "normalized", type == TOKEN_USER_DEFINED) &&
           cJSON_AddBoolToObject(a, "special", type == TOKEN_CONTROL);
    }
    free(tok);
    if (!ok) return vkf_gguf_oom(g);
  }
  for (uint64_t i = 0; i < merges->count; i++) {
    const char *s;
    size_t n;
    vkf_gguf_array_string(g, merges, i, &s, &n);
    char *m = vkf_gguf_dup_n(s, n);
    if (!m || !cJSON_AddItemToArray(merge_list, cJSON_CreateString(m))) {
      free(m);
      return vkf_gguf_oom(g);
    }
    free(m);
  }
  cJSON *pre_tok = cJSON_Parse(pre_json);
  if (!pre_tok) return vkf_gguf_oom(g);
  cJSON_AddItemToObject(doc, "pre_tokenizer", pre_tok);
  cJSON *dec = cJSON_AddObjectToObject(doc, "decoder");
  if (!dec || !cJSON_AddStringToObject(dec, "type", "ByteLevel")) return vkf_gguf_oom(g);
  return vkf_gguf_add_template(g, doc, tokens, 0);
}

/* tokenizer.ggml.model: "gpt2" (byte-level BPE with merges) or "llama" (SentencePiece scores,
 * gguf_spm.c). */
static vkf_status tokenizer_json(const vkf_gguf *g, cJSON *doc) {
  const char *model_s;
  size_t model_n;
  VKF_RETURN_IF_ERROR(vkf_gguf_get_string(g, "tokenizer.ggml.model", &model_s, &model_n));
  if (model_n == 4 && !memcmp(model_s, "gpt2", 4)) return gpt2_tokenizer_json(g, doc);
  if (model_n == 5 && !memcmp(model_s, "llama", 5)) return vkf_gguf_spm_tokenizer_json(g, doc);
  return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                         "%s: tokenizer.ggml.model \"%.*s\" is not supported (gpt2 and llama are)",
                         vkf_gguf_path(g), (int)(model_n < 64 ? model_n : 64), model_s);
}

/* tokenizer_config.json: the chat template and the special tokens' strings. */
static vkf_status tokenizer_config_json(const vkf_gguf *g, cJSON *doc) {
  const vkf_gguf_kv *tokens = NULL;
  if (vkf_gguf_find_kv(g, "tokenizer.ggml.tokens"))
    VKF_RETURN_IF_ERROR(vkf_gguf_get_array(g, "tokenizer.ggml.tokens", VKF_GGUF_STRING, &tokens));
  static const char *const keys[][2] = {{"tokenizer.ggml.bos_token_id", "bos_token"},
                                        {"tokenizer.ggml.eos_token_id", "eos_token"},
                                        {"tokenizer.ggml.unknown_token_id", "unk_token"},
                                        {"tokenizer.ggml.padding_token_id", "pad_token"}};
  for (size_t k = 0; tokens && k < sizeof keys / sizeof *keys; k++) {
    int64_t id;
    VKF_RETURN_IF_ERROR(vkf_gguf_token_id(g, keys[k][0], tokens->count, &id));
    if (id < 0) continue;
    const char *s;
    size_t n;
    vkf_gguf_array_string(g, tokens, (uint64_t)id, &s, &n);
    char *tok = vkf_gguf_dup_n(s, n);
    int ok = tok && cJSON_AddStringToObject(doc, keys[k][1], tok);
    free(tok);
    if (!ok) return vkf_gguf_oom(g);
  }
  /* SentencePiece ("llama") vocabularies add BOS unless the file says otherwise, as llama.cpp
   * and transformers' LlamaTokenizerFast do */
  const char *model_s = "";
  size_t model_n = 0;
  if (vkf_gguf_find_kv(g, "tokenizer.ggml.model"))
    VKF_RETURN_IF_ERROR(vkf_gguf_get_string(g, "tokenizer.ggml.model", &model_s, &model_n));
  int add_bos = 0, spm = model_n == 5 && !memcmp(model_s, "llama", 5);
  VKF_RETURN_IF_ERROR(vkf_gguf_get_bool_or(g, "tokenizer.ggml.add_bos_token", spm, &add_bos));
  if (!cJSON_AddBoolToObject(doc, "add_bos_token", add_bos) ||
      !cJSON_AddBoolToObject(doc, "clean_up_tokenization_spaces", 0))
    return vkf_gguf_oom(g);
  if (vkf_gguf_find_kv(g, "tokenizer.chat_template")) {
    const char *s;
    size_t n;
    VKF_RETURN_IF_ERROR(vkf_gguf_get_string(g, "tokenizer.chat_template", &s, &n));
    char *t = vkf_gguf_dup_n(s, n);
    int ok = t && cJSON_AddStringToObject(doc, "chat_template", t);
    free(t);
    if (!ok) return vkf_gguf_oom(g);
  }
  return VKF_OK;
}

vkf_status vkf_gguf_model_file(const vkf_gguf *g, const char *name, char **out_text,
                               size_t *out_size) {
  *out_text = NULL;
  *out_size = 0;
  vkf_status (*make)(const vkf_gguf *, cJSON *) = NULL;
  if (!strcmp(name, "config.json")) make = config_json;
  else if (!strcmp(name, "tokenizer.json")) make = tokenizer_json;
  else if (!strcmp(name, "tokenizer_config.json")) make = tokenizer_config_json;
  else
    return vkf_status_make(VKF_STATUS_NOT_FOUND, "%s/%s: a GGUF file holds no %s",
                           vkf_gguf_path(g), name, name);
  cJSON *doc = cJSON_CreateObject();
  if (!doc) return vkf_gguf_oom(g);
  vkf_status s = make(g, doc);
  if (!s) {
    *out_text = cJSON_PrintUnformatted(doc);
    if (!*out_text) s = vkf_gguf_oom(g);
    else *out_size = strlen(*out_text);
  }
  cJSON_Delete(doc);
  return s;
}

vkf_status vkf_gguf_model_file_at(const char *path, const char *name, char **out_text,
                                  size_t *out_size) {
  *out_text = NULL;
  *out_size = 0;
  vkf_gguf *g = NULL;
  VKF_RETURN_IF_ERROR(vkf_gguf_open(path, &g));
  vkf_status s = vkf_gguf_model_file(g, name, out_text, out_size);
  vkf_gguf_close(g);
  return s;
}
