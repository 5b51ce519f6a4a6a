/* ReformerConfig's fields (see hf_config_reformer.h). */
#include "models/formats/hf_config_reformer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/formats/json_fields.h"

vkf_status vkf_hf_config_parse_reformer(const char *f, const cJSON *r, vkf_hf_config *c) {
  VKF_RETURN_IF_ERROR(vkf_json_get_size(f, r, "hidden_size", 256, VKF_HF_MAX_HIDDEN, &c->hidden_size));
  VKF_RETURN_IF_ERROR(vkf_json_get_size(f, r, "num_attention_heads", 12, VKF_HF_MAX_HIDDEN,
                                        &c->num_attention_heads));
  VKF_RETURN_IF_ERROR(
      vkf_json_get_size(f, r, "attention_head_size", 64, VKF_HF_MAX_HIDDEN, &c->head_dim));
  if (c->num_attention_heads * c->head_dim > VKF_HF_MAX_HIDDEN)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: num_attention_heads %lld times attention_head_size %lld is more "
                           "than %lld",
                           f, (long long)c->num_attention_heads, (long long)c->head_dim,
                           (long long)VKF_HF_MAX_HIDDEN);
  VKF_RETURN_IF_ERROR(vkf_json_get_size(f, r, "feed_forward_size", 512, VKF_HF_MAX_INTERMEDIATE,
                                        &c->intermediate_size));
  VKF_RETURN_IF_ERROR(vkf_json_get_double(f, r, "layer_norm_eps", 1e-12, &c->layer_norm_eps));
  if (!(c->layer_norm_eps > 0.0) || !isfinite(c->layer_norm_eps))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"layer_norm_eps\" is %g, must be a positive number", f,
                           c->layer_norm_eps);
  const char *act;
  VKF_RETURN_IF_ERROR(vkf_json_get_string(f, r, "hidden_act", &act));
  c->hidden_act = VKF_HF_ACT_RELU;
  if (act) VKF_RETURN_IF_ERROR(vkf_hf_act_parse(f, "hidden_act", act, &c->hidden_act));
  VKF_RETURN_IF_ERROR(vkf_json_get_size(f, r, "vocab_size", 320, VKF_HF_MAX_VOCAB, &c->vocab_size));
  VKF_RETURN_IF_ERROR(vkf_json_get_size(f, r, "max_position_embeddings", 4096,
                                        VKF_HF_MAX_POSITIONS, &c->max_position_embeddings));
  const cJSON *pad = cJSON_GetObjectItemCaseSensitive(r, "pad_token_id");
  VKF_RETURN_IF_ERROR(
      vkf_json_get_int(f, r, "pad_token_id", pad && cJSON_IsNull(pad) ? -1 : 0, &c->pad_token_id));
  if (c->pad_token_id < -1 || c->pad_token_id >= c->vocab_size)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"pad_token_id\" %lld is outside the vocabulary of %lld", f,
                           (long long)c->pad_token_id, (long long)c->vocab_size);
  const cJSON *eos = cJSON_GetObjectItemCaseSensitive(r, "eos_token_id");
  VKF_RETURN_IF_ERROR(
      vkf_json_get_int(f, r, "eos_token_id", eos && cJSON_IsNull(eos) ? -1 : 2, &c->eos_token_id));
  c->bos_token_id = -1;
  VKF_RETURN_IF_ERROR(
      vkf_json_get_bool(f, r, "tie_word_embeddings", false, &c->tie_word_embeddings));
  const cJSON *layers = vkf_json_field(r, "attn_layers");
  c->num_hidden_layers = layers && cJSON_IsArray(layers) ? cJSON_GetArraySize(layers) : 6;
  if (c->num_hidden_layers < 1 || c->num_hidden_layers > VKF_REFORMER_MAX_LAYERS)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"attn_layers\" has %lld entries (1 to %d supported)", f,
                           (long long)c->num_hidden_layers, VKF_REFORMER_MAX_LAYERS);
  c->qkv_bias = false;
  return VKF_OK;
}

static vkf_status parse_chunking(const char *f, const cJSON *r, const char *kind,
                                 vkf_reformer_chunking *out) {
  char key[64];
  snprintf(key, sizeof key, "%s_attn_chunk_length", kind);
  VKF_RETURN_IF_ERROR(vkf_json_get_size(f, r, key, 64, VKF_HF_MAX_POSITIONS, &out->chunk_length));
  snprintf(key, sizeof key, "%s_num_chunks_before", kind);
  VKF_RETURN_IF_ERROR(vkf_json_get_int(f, r, key, 1, &out->chunks_before));
  if (out->chunks_before < 0 || out->chunks_before > VKF_REFORMER_MAX_CHUNKS_AROUND)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s: field \"%s\" %lld is not in [0, %d]",
                           f, key, (long long)out->chunks_before, VKF_REFORMER_MAX_CHUNKS_AROUND);
  snprintf(key, sizeof key, "%s_num_chunks_after", kind);
  VKF_RETURN_IF_ERROR(vkf_json_get_int(f, r, key, 0, &out->chunks_after));
  if (out->chunks_after < 0 || out->chunks_after > VKF_REFORMER_MAX_CHUNKS_AROUND)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s: field \"%s\" %lld is not in [0, %d]",
                           f, key, (long long)out->chunks_after, VKF_REFORMER_MAX_CHUNKS_AROUND);
  return VKF_OK;
}

/* A list of exactly two positive integers of at most `max` (absent: `def`). */
static vkf_status parse_pair(const char *f, const cJSON *r, const char *key, const int64_t *def,
                             int64_t max, int64_t *out) {
  const cJSON *a = vkf_json_field(r, key);
  if (!a) {
    out[0] = def[0], out[1] = def[1];
    return VKF_OK;
  }
  if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != 2)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"%s\" must be a list of two integers (vkformer reads "
                           "two-dimensional axial positions)",
                           f, key);
  for (int i = 0; i < 2; i++) {
    const cJSON *e = cJSON_GetArrayItem(a, i);
    if (!vkf_json_is_int(e) || e->valuedouble < 1 || e->valuedouble > (double)max)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "%s: field \"%s\" entry %d is not an integer in [1, %lld]", f, key, i,
                             (long long)max);
    out[i] = (int64_t)e->valuedouble;
  }
  return VKF_OK;
}

static vkf_status parse_buckets(const char *f, const cJSON *r, vkf_reformer_config *c) {
  const cJSON *b = vkf_json_field(r, "num_buckets");
  c->bucket_factor_count = 0;
  if (!b) return VKF_OK;
  int n = cJSON_IsArray(b) ? cJSON_GetArraySize(b) : 1;
  if (n < 1 || n > VKF_REFORMER_MAX_BUCKET_FACTORS)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"num_buckets\" has %d factors (1 to %d supported)", f, n,
                           VKF_REFORMER_MAX_BUCKET_FACTORS);
  int64_t product = 1;
  for (int i = 0; i < n; i++) {
    const cJSON *e = cJSON_IsArray(b) ? cJSON_GetArrayItem(b, i) : b;
    if (!vkf_json_is_int(e) || e->valuedouble < 2 || e->valuedouble > (double)(1 << 16) ||
        (int64_t)e->valuedouble % 2 != 0)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "%s: field \"num_buckets\" entry %d is not an even integer in [2, "
                             "65536] (LSH hashing takes the argmax over [r, -r])",
                             f, i);
    c->bucket_factors[i] = (int64_t)e->valuedouble;
    product *= c->bucket_factors[i];
    if (product > (1 << 20))
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "%s: field \"num_buckets\" gives more than %d buckets", f, 1 << 20);
  }
  c->bucket_factor_count = n;
  return VKF_OK;
}

static vkf_status parse(const char *f, const cJSON *r, void *out) {
  vkf_reformer_config *c = out;
  static const char *const def_layers[] = {"local", "lsh", "local", "lsh", "local", "lsh"};
  const cJSON *layers = vkf_json_field(r, "attn_layers");
  if (layers && !cJSON_IsArray(layers))
    return vkf_status_make(VKF_STATUS_PARSE, "%s: field \"attn_layers\" must be a list", f);
  int n = layers ? cJSON_GetArraySize(layers) : 6;
  if (n < 1 || n > VKF_REFORMER_MAX_LAYERS)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"attn_layers\" has %d entries (1 to %d supported)", f, n,
                           VKF_REFORMER_MAX_LAYERS);
  c->layer_count = n;
  for (int i = 0; i < n; i++) {
    const char *s = def_layers[i % 6];
    if (layers) {
      const cJSON *e = cJSON_GetArrayItem(layers, i);
      s = cJSON_IsString(e) ? e->valuestring : NULL;
    }
    if (s && !strcmp(s, "local"))
      c->attn[i] = VKF_REFORMER_LOCAL;
    else if (s && !strcmp(s, "lsh"))
      c->attn[i] = VKF_REFORMER_LSH;
    else
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "%s: field \"attn_layers\" entry %d is not \"local\" or \"lsh\"", f,
                             i);
  }
  VKF_RETURN_IF_ERROR(parse_chunking(f, r, "local", &c->local));
  VKF_RETURN_IF_ERROR(parse_chunking(f, r, "lsh", &c->lsh));
  VKF_RETURN_IF_ERROR(vkf_json_get_int(f, r, "num_hashes", 1, &c->num_hashes));
  if (c->num_hashes < 1 || c->num_hashes > VKF_REFORMER_MAX_HASHES)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"num_hashes\" %lld is not in [1, %d]", f,
                           (long long)c->num_hashes, VKF_REFORMER_MAX_HASHES);
  VKF_RETURN_IF_ERROR(parse_buckets(f, r, c));
  const cJSON *seed = vkf_json_field(r, "hash_seed");
  c->has_hash_seed = seed != NULL;
  if (seed) {
    if (!vkf_json_is_int(seed) || seed->valuedouble < 0 || seed->valuedouble > 9007199254740991.0)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "%s: field \"hash_seed\" is not a non-negative integer", f);
    c->hash_seed = (int64_t)seed->valuedouble;
  }
  VKF_RETURN_IF_ERROR(vkf_json_get_bool(f, r, "is_decoder", false, &c->is_decoder));
  VKF_RETURN_IF_ERROR(vkf_json_get_bool(f, r, "axial_pos_embds", true, &c->axial_pos_embds));
  static const int64_t shape_def[2] = {64, 64}, dim_def[2] = {64, 192};
  VKF_RETURN_IF_ERROR(
      parse_pair(f, r, "axial_pos_shape", shape_def, VKF_HF_MAX_POSITIONS, c->axial_pos_shape));
  VKF_RETURN_IF_ERROR(
      parse_pair(f, r, "axial_pos_embds_dim", dim_def, VKF_HF_MAX_HIDDEN, c->axial_pos_embds_dim));
  return vkf_json_get_bool(f, r, "tie_word_embeddings", false, &c->tie_word_embeddings);
}

vkf_status vkf_reformer_config_parse(const char *json, size_t size, const char *name,
                                     vkf_reformer_config *out) {
  return vkf_json_parse_with(json, size, name, parse, out, sizeof *out);
}

vkf_status vkf_reformer_config_load(const char *path, vkf_reformer_config *out) {
  return vkf_json_load_with(path, parse, out, sizeof *out);
}
