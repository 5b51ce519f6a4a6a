/* TransfoXLConfig's fields (see hf_config_transfo_xl.h). */
#include "models/formats/hf_config_transfo_xl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/formats/hf_config.h"
#include "models/formats/json_fields.h"

#define VKF_TXL_MAX_MEMORY ((int64_t)1 << 20)

static vkf_status parse_cutoffs(const char *f, const cJSON *r, vkf_txl_config *c) {
  const cJSON *a = vkf_json_field(r, "cutoffs");
  static const int64_t defaults[] = {20000, 40000, 200000};
  if (!a) {
    c->cutoff_count = 3;
    memcpy(c->cutoffs, defaults, sizeof defaults);
  } else {
    if (!cJSON_IsArray(a))
      return vkf_status_make(VKF_STATUS_PARSE, "%s: field \"cutoffs\" must be an array", f);
    int n = cJSON_GetArraySize(a);
    if (n > VKF_TXL_MAX_CUTOFFS)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "%s: field \"cutoffs\" lists %d values, more than %d", f, n,
                             VKF_TXL_MAX_CUTOFFS);
    c->cutoff_count = 0;
    for (const cJSON *e = a->child; e; e = e->next) {
      if (!vkf_json_is_int(e))
        return vkf_status_make(VKF_STATUS_PARSE, "%s: field \"cutoffs\" must hold integers", f);
      /* Bounded before the cast: a double past int64 would not convert. */
      double v = e->valuedouble;
      c->cutoffs[c->cutoff_count++] = v < 0 ? -1 : v >= (double)c->vocab_size ? c->vocab_size
                                                                             : (int64_t)v;
    }
  }
  int64_t prev = 0;
  for (int64_t i = 0; i < c->cutoff_count; i++) {
    if (c->cutoffs[i] <= prev || c->cutoffs[i] >= c->vocab_size)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "%s: field \"cutoffs\" is not increasing inside (0, vocab_size %lld): "
                             "entry %lld is %lld",
                             f, (long long)c->vocab_size, (long long)i, (long long)c->cutoffs[i]);
    prev = c->cutoffs[i];
  }
  c->cutoffs[c->cutoff_count] = c->vocab_size;
  return VKF_OK;
}

static vkf_status parse_tie_projs(const char *f, const cJSON *r, vkf_txl_config *c) {
  bool share;
  VKF_RETURN_IF_ERROR(vkf_json_get_bool(f, r, "proj_share_all_but_first", true, &share));
  for (int64_t i = 0; i <= c->cutoff_count; i++) c->tie_projs[i] = i > 0 && share;
  const cJSON *a = vkf_json_field(r, "tie_projs");
  if (!a) return VKF_OK;
  if (!cJSON_IsArray(a))
    return vkf_status_make(VKF_STATUS_PARSE, "%s: field \"tie_projs\" must be an array", f);
  int64_t i = 0;
  for (const cJSON *e = a->child; e; e = e->next, i++) {
    if (!cJSON_IsBool(e))
      return vkf_status_make(VKF_STATUS_PARSE, "%s: field \"tie_projs\" must hold booleans", f);
    /* Hugging Face zips it with the clusters: entries past them are never read. */
    if (i <= c->cutoff_count) c->tie_projs[i] = cJSON_IsTrue(e);
  }
  return VKF_OK;
}

static vkf_status parse(const char *f, const cJSON *r, void *out) {
  vkf_txl_config *c = out;
  VKF_RETURN_IF_ERROR(
      vkf_json_get_size(f, r, "vocab_size", 267735, VKF_HF_MAX_VOCAB, &c->vocab_size));
  VKF_RETURN_IF_ERROR(vkf_json_get_size(f, r, "d_model", 1024, VKF_HF_MAX_HIDDEN, &c->d_model));
  VKF_RETURN_IF_ERROR(vkf_json_get_size(f, r, "d_embed", 1024, VKF_HF_MAX_HIDDEN, &c->d_embed));
  VKF_RETURN_IF_ERROR(vkf_json_get_size(f, r, "n_head", 16, VKF_HF_MAX_HIDDEN, &c->n_head));
  VKF_RETURN_IF_ERROR(vkf_json_get_size(f, r, "d_head", 64, VKF_HF_MAX_HIDDEN, &c->d_head));
  VKF_RETURN_IF_ERROR(
      vkf_json_get_size(f, r, "d_inner", 4096, VKF_HF_MAX_INTERMEDIATE, &c->d_inner));
  VKF_RETURN_IF_ERROR(vkf_json_get_size(f, r, "n_layer", 18, VKF_HF_MAX_LAYERS, &c->n_layer));
  if (c->n_head * c->d_head > VKF_HF_MAX_HIDDEN)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"n_head\" %lld times \"d_head\" %lld exceeds %lld", f,
                           (long long)c->n_head, (long long)c->d_head,
                           (long long)VKF_HF_MAX_HIDDEN);
  VKF_RETURN_IF_ERROR(vkf_json_get_int(f, r, "div_val", 4, &c->div_val));
  if (c->div_val < 1)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"div_val\" is %lld, must be at least 1", f,
                           (long long)c->div_val);
  VKF_RETURN_IF_ERROR(parse_cutoffs(f, r, c));
  /* Cluster i's width d_embed / div_val^i must stay positive (Hugging Face would build empty
   * embeddings). */
  if (c->div_val > 1) {
    int64_t w = c->d_embed;
    for (int64_t i = 0; i <= c->cutoff_count; i++, w /= c->div_val)
      if (w < 1)
        return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                               "%s: field \"div_val\" %lld leaves cluster %lld of \"d_embed\" "
                               "%lld with no width",
                               f, (long long)c->div_val, (long long)i, (long long)c->d_embed);
  }
  VKF_RETURN_IF_ERROR(parse_tie_projs(f, r, c));
  VKF_RETURN_IF_ERROR(
      vkf_json_get_bool(f, r, "tie_word_embeddings", true, &c->tie_word_embeddings));
  VKF_RETURN_IF_ERROR(vkf_json_get_int(f, r, "mem_len", 1600, &c->mem_len));
  if (c->mem_len < 0 || c->mem_len > VKF_TXL_MAX_MEMORY)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"mem_len\" is %lld, must be in [0, %lld]", f,
                           (long long)c->mem_len, (long long)VKF_TXL_MAX_MEMORY);
  VKF_RETURN_IF_ERROR(vkf_json_get_int(f, r, "clamp_len", 1000, &c->clamp_len));
  if (c->clamp_len > VKF_TXL_MAX_MEMORY) c->clamp_len = VKF_TXL_MAX_MEMORY; /* no distance reaches it */
  int64_t attn_type, sample_softmax;
  VKF_RETURN_IF_ERROR(vkf_json_get_int(f, r, "attn_type", 0, &attn_type));
  if (attn_type != 0)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: field \"attn_type\" is %lld; only 0 (Transformer-XL's relative "
                           "attention) is supported, as in Hugging Face",
                           f, (long long)attn_type);
  VKF_RETURN_IF_ERROR(vkf_json_get_int(f, r, "sample_softmax", -1, &sample_softmax));
  if (sample_softmax > 0)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: field \"sample_softmax\" is %lld; the sampled softmax is not "
                           "implemented (nor in Hugging Face)",
                           f, (long long)sample_softmax);
  VKF_RETURN_IF_ERROR(vkf_json_get_bool(f, r, "same_length", true, &c->same_length));
  VKF_RETURN_IF_ERROR(vkf_json_get_bool(f, r, "pre_lnorm", false, &c->pre_lnorm));
  VKF_RETURN_IF_ERROR(vkf_json_get_bool(f, r, "untie_r", true, &c->untie_r));
  VKF_RETURN_IF_ERROR(
      vkf_json_get_double(f, r, "layer_norm_epsilon", 1e-5, &c->layer_norm_epsilon));
  if (!(c->layer_norm_epsilon > 0.0) || !isfinite(c->layer_norm_epsilon))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"layer_norm_epsilon\" is %g, must be a positive number", f,
                           c->layer_norm_epsilon);
  const cJSON *eos = cJSON_GetObjectItemCaseSensitive(r, "eos_token_id");
  VKF_RETURN_IF_ERROR(
      vkf_json_get_int(f, r, "eos_token_id", eos && cJSON_IsNull(eos) ? -1 : 0, &c->eos_token_id));
  return VKF_OK;
}

vkf_status vkf_txl_config_parse(const char *json, size_t size, const char *name,
                                vkf_txl_config *out) {
  return vkf_json_parse_with(json, size, name, parse, out, sizeof *out);
}

vkf_status vkf_txl_config_load(const char *path, vkf_txl_config *out) {
  return vkf_json_load_with(path, parse, out, sizeof *out);
}
