/* GPT2Config / LlamaConfig / MistralConfig / Qwen2Config (transformers 4.38) onto vkf_hf_config:
 * the attribute names each class uses, its defaults, rope_scaling, and the consistency checks. */
#include "models/formats/hf_config_decoder.h"

#include <math.h>
#include <string.h>

#include "models/formats/json_fields.h"

/* Class defaults for the fields the Llama-like configs share. */
typedef struct decoder_defaults {
  const char *model_type;
  int64_t vocab, hidden, intermediate, layers, heads, kv_heads, positions, sliding_window;
  int tie, qkv_bias, o_bias;
} decoder_defaults;

static const decoder_defaults k_llama_like[] = {
    /* type      vocab   hidden interm layers heads kv positions window tie qkvb ob */
    {"llama", 32000, 4096, 11008, 32, 32, 0, 2048, 0, 0, 0, 0},
    {"mistral", 32000, 4096, 14336, 32, 32, 8, 4096 * 32, 4096, 0, 0, 0},
    {"qwen2", 151936, 4096, 22016, 32, 32, 32, 32768, 4096, 0, 1, 0},
};

static vkf_status parse_gpt2(const char *f, const cJSON *r, vkf_hf_config *c) {
  VKF_RETURN_IF_ERROR(
      vkf_json_get_size(f, r, "vocab_size", 50257, VKF_HF_MAX_VOCAB, &c->vocab_size));
  VKF_RETURN_IF_ERROR(vkf_json_get_size(f, r, "n_positions", 1024, VKF_HF_MAX_POSITIONS,
                                        &c->max_position_embeddings));
  VKF_RETURN_IF_ERROR(vkf_json_get_size(f, r, "n_embd", 768, VKF_HF_MAX_HIDDEN, &c->hidden_size));
  VKF_RETURN_IF_ERROR(
      vkf_json_get_size(f, r, "n_layer", 12, VKF_HF_MAX_LAYERS, &c->num_hidden_layers));
  VKF_RETURN_IF_ERROR(
      vkf_json_get_size(f, r, "n_head", 12, VKF_HF_MAX_HIDDEN, &c->num_attention_heads));
  /* n_inner null means 4 * n_embd. */
  VKF_RETURN_IF_ERROR(vkf_json_get_size(f, r, "n_inner", 4 * c->hidden_size,
                                        VKF_HF_MAX_INTERMEDIATE, &c->intermediate_size));
  VKF_RETURN_IF_ERROR(vkf_json_get_double(f, r, "layer_norm_epsilon", 1e-5, &c->layer_norm_eps));
  const char *act = NULL;
  VKF_RETURN_IF_ERROR(vkf_json_get_string(f, r, "activation_function", &act));
  c->hidden_act = VKF_HF_ACT_GELU_TANH; /* "gelu_new" */
  if (act) VKF_RETURN_IF_ERROR(vkf_hf_act_parse(f, "activation_function", act, &c->hidden_act));
  bool flag;
  /* Variants the builder does not reproduce are refused rather than run differently. */
  static const struct {
    const char *key;
    bool def, supported;
  } flags[] = {{"scale_attn_weights", true, true},
               {"scale_attn_by_inverse_layer_idx", false, false},
               {"reorder_and_upcast_attn", false, false},
               {"add_cross_attention", false, false}};
  for (size_t i = 0; i < sizeof flags / sizeof *flags; i++) {
    VKF_RETURN_IF_ERROR(vkf_json_get_bool(f, r, flags[i].key, flags[i].def, &flag));
    if (flag != flags[i].supported)
      return vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: field \"%s\" %s is not supported", f,
                             flags[i].key, flag ? "true" : "false");
  }
  c->num_key_value_heads = c->num_attention_heads;
  c->attention_bias = c->o_proj_bias = true;
  VKF_RETURN_IF_ERROR(vkf_json_get_int(f, r, "bos_token_id", 50256, &c->bos_token_id));
  VKF_RETURN_IF_ERROR(vkf_json_get_int(f, r, "eos_token_id", 50256, &c->eos_token_id));
  return vkf_json_get_bool(f, r, "tie_word_embeddings", true, &c->tie_word_embeddings);
}

static vkf_status parse_rope_scaling(const char *f, const cJSON *r, vkf_hf_config *c) {
  c->rope_type = VKF_HF_ROPE_DEFAULT;
  c->rope_factor = 1.0;
  const cJSON *rs = vkf_json_field(r, "rope_scaling");
  if (!rs) return VKF_OK;
  if (!cJSON_IsObject(rs))
    return vkf_status_make(VKF_STATUS_PARSE, "%s: field \"rope_scaling\" must be an object", f);
  const char *type = NULL, *rope_type = NULL;
  VKF_RETURN_IF_ERROR(vkf_json_get_string(f, rs, "type", &type));
  VKF_RETURN_IF_ERROR(vkf_json_get_string(f, rs, "rope_type", &rope_type));
  if (!type) type = rope_type;
  if (!type)
    return vkf_status_make(VKF_STATUS_PARSE, "%s: field \"rope_scaling\" has no \"type\"", f);
  if (!strcmp(type, "linear"))
    c->rope_type = VKF_HF_ROPE_LINEAR;
  else if (!strcmp(type, "dynamic"))
    c->rope_type = VKF_HF_ROPE_DYNAMIC;
  else if (!strcmp(type, "llama3"))
    c->rope_type = VKF_HF_ROPE_LLAMA3;
  else if (strcmp(type, "default") != 0)
    return vkf_status_make(
        VKF_STATUS_UNSUPPORTED,
        "%s: rope_scaling type \"%s\" is not supported (linear, dynamic, llama3)", f, type);
  VKF_RETURN_IF_ERROR(vkf_json_get_double(f, rs, "factor", 1.0, &c->rope_factor));
  VKF_RETURN_IF_ERROR(vkf_json_get_double(f, rs, "low_freq_factor", 1.0, &c->rope_low_freq_factor));
  VKF_RETURN_IF_ERROR(
      vkf_json_get_double(f, rs, "high_freq_factor", 4.0, &c->rope_high_freq_factor));
  VKF_RETURN_IF_ERROR(vkf_json_get_size(f, rs, "original_max_position_embeddings", 8192,
                                        VKF_HF_MAX_POSITIONS, &c->rope_original_max_positions));
  if (!(c->rope_factor >= 1.0) || !isfinite(c->rope_factor) ||
      (c->rope_type == VKF_HF_ROPE_LLAMA3 &&
       !(c->rope_high_freq_factor > c->rope_low_freq_factor && c->rope_low_freq_factor > 0)))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: rope_scaling factors (factor %g, low %g, high %g) are out of range",
                           f, c->rope_factor, c->rope_low_freq_factor, c->rope_high_freq_factor);
  return VKF_OK;
}

static vkf_status parse_llama_like(const char *f, const cJSON *r, const decoder_defaults *d,
                                   vkf_hf_config *c) {
  VKF_RETURN_IF_ERROR(
      vkf_json_get_size(f, r, "vocab_size", d->vocab, VKF_HF_MAX_VOCAB, &c->vocab_size));
  VKF_RETURN_IF_ERROR(vkf_json_get_size(f, r, "max_position_embeddings", d->positions,
                                        VKF_HF_MAX_POSITIONS, &c->max_position_embeddings));
  VKF_RETURN_IF_ERROR(
      vkf_json_get_size(f, r, "hidden_size", d->hidden, VKF_HF_MAX_HIDDEN, &c->hidden_size));
  VKF_RETURN_IF_ERROR(vkf_json_get_size(f, r, "intermediate_size", d->intermediate,
                                        VKF_HF_MAX_INTERMEDIATE, &c->intermediate_size));
  VKF_RETURN_IF_ERROR(vkf_json_get_size(f, r, "num_hidden_layers", d->layers, VKF_HF_MAX_LAYERS,
                                        &c->num_hidden_layers));
  VKF_RETURN_IF_ERROR(vkf_json_get_size(f, r, "num_attention_heads", d->heads, VKF_HF_MAX_HIDDEN,
                                        &c->num_attention_heads));
  VKF_RETURN_IF_ERROR(vkf_json_get_size(f, r, "num_key_value_heads",
                                        d->kv_heads ? d->kv_heads : c->num_attention_heads,
                                        VKF_HF_MAX_HIDDEN, &c->num_key_value_heads));
  VKF_RETURN_IF_ERROR(vkf_json_get_double(f, r, "rms_norm_eps", 1e-6, &c->layer_norm_eps));
  VKF_RETURN_IF_ERROR(vkf_json_get_double(f, r, "rope_theta", 10000.0, &c->rope_theta));
  if (!(c->rope_theta > 1.0) || !isfinite(c->rope_theta))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s: field \"rope_theta\" is %g", f,
                           c->rope_theta);
  const char *act = NULL;
  VKF_RETURN_IF_ERROR(vkf_json_get_string(f, r, "hidden_act", &act));
  c->hidden_act = VKF_HF_ACT_SILU;
  if (act) VKF_RETURN_IF_ERROR(vkf_hf_act_parse(f, "hidden_act", act, &c->hidden_act));
  VKF_RETURN_IF_ERROR(
      vkf_json_get_bool(f, r, "tie_word_embeddings", d->tie, &c->tie_word_embeddings));
  bool bias = d->qkv_bias;
  if (!strcmp(d->model_type, "llama"))
    VKF_RETURN_IF_ERROR(vkf_json_get_bool(f, r, "attention_bias", false, &bias));
  c->attention_bias = bias;
  c->o_proj_bias = !strcmp(d->model_type, "llama") && bias; /* qwen2: q, k, v only */
  if (d->sliding_window) {
    /* Mistral and Qwen2 in transformers 4.38's eager attention mask every key more than
     * sliding_window - 1 positions back (Qwen2 whatever use_sliding_window says); null: none. */
    VKF_RETURN_IF_ERROR(
        vkf_json_get_int(f, r, "sliding_window", d->sliding_window, &c->sliding_window));
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(r, "sliding_window");
    int is_null = w && cJSON_IsNull(w);
    /* AttentionMaskConverter refuses a window <= 0 ("a strictly positive integer"). */
    if (!is_null && c->sliding_window <= 0)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "%s: field \"sliding_window\" is %lld, must be > 0 (or null: none)", f,
                             (long long)c->sliding_window);
    if (is_null) c->sliding_window = 0;
  }
  VKF_RETURN_IF_ERROR(vkf_json_get_int(f, r, "bos_token_id", 1, &c->bos_token_id));
  VKF_RETURN_IF_ERROR(vkf_json_get_int(f, r, "eos_token_id", 2, &c->eos_token_id));
  return parse_rope_scaling(f, r, c);
}

vkf_status vkf_hf_config_parse_decoder(const char *f, const cJSON *r, vkf_hf_config *c) {
  c->pad_token_id = -1;
  c->bos_token_id = c->eos_token_id = -1;
  /* eos_token_id may be a list (Llama 3): the first is kept here; generation reads them all. */
  const cJSON *eos = vkf_json_field(r, "eos_token_id");
  cJSON *copy = NULL;
  if (eos && cJSON_IsArray(eos)) {
    copy = cJSON_Duplicate(r, 1);
    if (!copy) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", f);
    const cJSON *first = cJSON_GetArrayItem(eos, 0);
    cJSON_ReplaceItemInObjectCaseSensitive(copy, "eos_token_id",
                                           first ? cJSON_Duplicate(first, 1) : cJSON_CreateNull());
    r = copy;
  }
  vkf_status s;
  if (!strcmp(c->model_type, "gpt2")) {
    s = parse_gpt2(f, r, c);
  } else {
    const decoder_defaults *d = NULL;
    for (size_t i = 0; i < sizeof k_llama_like / sizeof *k_llama_like; i++)
      if (!strcmp(k_llama_like[i].model_type, c->model_type)) d = &k_llama_like[i];
    s = d ? parse_llama_like(f, r, d, c)
          : vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: model_type \"%s\"", f, c->model_type);
  }
  if (!s) {
    const cJSON *pad = vkf_json_field(r, "pad_token_id");
    if (pad) s = vkf_json_get_int(f, r, "pad_token_id", -1, &c->pad_token_id);
  }
  cJSON_Delete(copy);
  VKF_RETURN_IF_ERROR(s);
  if (!(c->layer_norm_eps > 0.0) || !isfinite(c->layer_norm_eps))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"%s\" is %g, must be a positive number", f,
                           strcmp(c->model_type, "gpt2") ? "rms_norm_eps" : "layer_norm_epsilon",
                           c->layer_norm_eps);
  if (c->hidden_size % c->num_attention_heads != 0)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: hidden size %lld is not divisible by %lld attention heads", f,
                           (long long)c->hidden_size, (long long)c->num_attention_heads);
  if (c->num_attention_heads % c->num_key_value_heads != 0)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: %lld attention heads are not a multiple of %lld key/value heads", f,
                           (long long)c->num_attention_heads, (long long)c->num_key_value_heads);
  c->head_dim = c->hidden_size / c->num_attention_heads;
  if (c->pad_token_id < -1 || c->pad_token_id >= c->vocab_size || c->bos_token_id < -1 ||
      c->bos_token_id >= c->vocab_size || c->eos_token_id < -1 || c->eos_token_id >= c->vocab_size)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: a special token id (pad %lld, bos %lld, eos %lld) is outside the "
                           "vocabulary of %lld",
                           f, (long long)c->pad_token_id, (long long)c->bos_token_id,
                           (long long)c->eos_token_id, (long long)c->vocab_size);
  return VKF_OK;
}
