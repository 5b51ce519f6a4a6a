/* BartConfig / MarianConfig / T5Config / MT5Config (transformers 4.38) and D2L's Transformer
 * config onto vkf_hf_config: the names each class uses, its defaults, and consistency checks. */
#include "models/formats/hf_config_seq2seq.h"

#include <math.h>
#include <string.h>

#include "models/formats/json_fields.h"

#define GET_SIZE(key, def, max, out) VKF_RETURN_IF_ERROR(vkf_json_get_size(f, r, key, def, max, out))

/* BART and Marian share BartConfig's field names; the classes differ in defaults. */
static vkf_status parse_bart_like(const char *f, const cJSON *r, vkf_hf_config *c, int marian) {
  GET_SIZE("vocab_size", marian ? 58101 : 50265, VKF_HF_MAX_VOCAB, &c->vocab_size);
  c->src_vocab_size = c->vocab_size;
  if (marian) {
    /* Separate decoder vocabularies (share_encoder_decoder_embeddings false) are not built. */
    bool share = true;
    VKF_RETURN_IF_ERROR(vkf_json_get_bool(f, r, "share_encoder_decoder_embeddings", true, &share));
    int64_t dv = c->vocab_size;
    GET_SIZE("decoder_vocab_size", c->vocab_size, VKF_HF_MAX_VOCAB, &dv);
    if (!share || dv != c->vocab_size)
      return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                             "%s: separate encoder and decoder vocabularies "
                             "(share_encoder_decoder_embeddings false) are not supported",
                             f);
  }
  GET_SIZE("max_position_embeddings", 1024, VKF_HF_MAX_POSITIONS, &c->max_position_embeddings);
  GET_SIZE("d_model", 1024, VKF_HF_MAX_HIDDEN, &c->hidden_size);
  GET_SIZE("encoder_layers", 12, VKF_HF_MAX_LAYERS, &c->num_hidden_layers);
  GET_SIZE("decoder_layers", 12, VKF_HF_MAX_LAYERS, &c->decoder_layers);
  GET_SIZE("encoder_attention_heads", 16, VKF_HF_MAX_HIDDEN, &c->num_attention_heads);
  GET_SIZE("decoder_attention_heads", 16, VKF_HF_MAX_HIDDEN, &c->decoder_heads);
  GET_SIZE("encoder_ffn_dim", 4096, VKF_HF_MAX_INTERMEDIATE, &c->intermediate_size);
  GET_SIZE("decoder_ffn_dim", 4096, VKF_HF_MAX_INTERMEDIATE, &c->decoder_intermediate);
  const char *act = NULL;
  VKF_RETURN_IF_ERROR(vkf_json_get_string(f, r, "activation_function", &act));
  c->hidden_act = VKF_HF_ACT_GELU;
  if (act) VKF_RETURN_IF_ERROR(vkf_hf_act_parse(f, "activation_function", act, &c->hidden_act));
  VKF_RETURN_IF_ERROR(vkf_json_get_bool(f, r, "scale_embedding", false, &c->scale_embedding));
  c->layer_norm_eps = 1e-5; /* nn.LayerNorm's default: the classes have no field for it */
  c->attention_bias = c->o_proj_bias = true;
  c->pad_token_id = marian ? 58100 : 1;
  c->bos_token_id = marian ? -1 : 0;
  c->eos_token_id = marian ? 0 : 2;
  c->decoder_start_token_id = marian ? 58100 : 2;
  return vkf_json_get_bool(f, r, "tie_word_embeddings", true, &c->tie_word_embeddings);
}

/* T5Config: feed_forward_proj is "ACT" or "gated-ACT" ("gated-gelu" meaning gelu_new). */
static vkf_status parse_t5(const char *f, const cJSON *r, vkf_hf_config *c, int mt5) {
  GET_SIZE("vocab_size", mt5 ? 250112 : 32128, VKF_HF_MAX_VOCAB, &c->vocab_size);
  c->src_vocab_size = c->vocab_size;
  GET_SIZE("d_model", 512, VKF_HF_MAX_HIDDEN, &c->hidden_size);
  GET_SIZE("d_kv", 64, VKF_HF_MAX_HIDDEN, &c->head_dim);
  GET_SIZE("d_ff", mt5 ? 1024 : 2048, VKF_HF_MAX_INTERMEDIATE, &c->intermediate_size);
  c->decoder_intermediate = c->intermediate_size;
  GET_SIZE("num_layers", mt5 ? 8 : 6, VKF_HF_MAX_LAYERS, &c->num_hidden_layers);
  GET_SIZE("num_decoder_layers", c->num_hidden_layers, VKF_HF_MAX_LAYERS, &c->decoder_layers);
  GET_SIZE("num_heads", mt5 ? 6 : 8, VKF_HF_MAX_HIDDEN, &c->num_attention_heads);
  c->decoder_heads = c->num_attention_heads;
  GET_SIZE("relative_attention_num_buckets", 32, VKF_HF_MAX_POSITIONS, &c->relative_buckets);
  GET_SIZE("relative_attention_max_distance", 128, VKF_HF_MAX_POSITIONS,
           &c->relative_max_distance);
  /* T5's bucket formula divides by log(max_distance / (buckets / 4)) in the bidirectional case:
   * both halves need at least one exact and one logarithmic bucket. */
  if (c->relative_buckets < 4 || c->relative_max_distance <= c->relative_buckets / 2)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: relative_attention_num_buckets %lld with "
                           "relative_attention_max_distance %lld is not a valid bucketing",
                           f, (long long)c->relative_buckets, (long long)c->relative_max_distance);
  VKF_RETURN_IF_ERROR(vkf_json_get_double(f, r, "layer_norm_epsilon", 1e-6, &c->layer_norm_eps));
  const char *proj = NULL;
  VKF_RETURN_IF_ERROR(vkf_json_get_string(f, r, "feed_forward_proj", &proj));
  if (!proj) proj = mt5 ? "gated-gelu" : "relu";
  const char *act = proj;
  c->gated_mlp = !strncmp(proj, "gated-", 6);
  if (c->gated_mlp) act = proj + 6;
  if (strchr(act, '-') || !*act)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: field \"feed_forward_proj\" value \"%s\" is not \"ACT\" or "
                           "\"gated-ACT\" (e.g. \"relu\", \"gated-gelu\")",
                           f, proj);
  if (!strcmp(proj, "gated-gelu")) act = "gelu_new";
  VKF_RETURN_IF_ERROR(vkf_hf_act_parse(f, "feed_forward_proj", act, &c->hidden_act));
  VKF_RETURN_IF_ERROR(vkf_json_get_bool(f, r, "tie_word_embeddings", !mt5, &c->tie_word_embeddings));
  c->max_position_embeddings = 0; /* relative positions: any length */
  c->pad_token_id = 0;
  c->bos_token_id = -1;
  c->eos_token_id = 1;
  c->decoder_start_token_id = -1; /* generate() falls back to bos: the file must say */
  return VKF_OK;
}

/* D2L's Transformer (tools/goldens/seeds_transformer.py): D2L's hyper-parameter names. */
static vkf_status parse_d2l(const char *f, const cJSON *r, vkf_hf_config *c) {
  GET_SIZE("src_vocab_size", 0, VKF_HF_MAX_VOCAB, &c->src_vocab_size);
  GET_SIZE("tgt_vocab_size", 0, VKF_HF_MAX_VOCAB, &c->vocab_size);
  GET_SIZE("num_hiddens", 0, VKF_HF_MAX_HIDDEN, &c->hidden_size);
  GET_SIZE("ffn_num_hiddens", 0, VKF_HF_MAX_INTERMEDIATE, &c->intermediate_size);
  c->decoder_intermediate = c->intermediate_size;
  GET_SIZE("num_heads", 0, VKF_HF_MAX_HIDDEN, &c->num_attention_heads);
  c->decoder_heads = c->num_attention_heads;
  GET_SIZE("num_blks", 0, VKF_HF_MAX_LAYERS, &c->num_hidden_layers);
  c->decoder_layers = c->num_hidden_layers;
  GET_SIZE("max_len", 1000, VKF_HF_MAX_POSITIONS, &c->max_position_embeddings);
  VKF_RETURN_IF_ERROR(vkf_json_get_double(f, r, "layer_norm_eps", 1e-5, &c->layer_norm_eps));
  VKF_RETURN_IF_ERROR(vkf_json_get_bool(f, r, "use_bias", false, &c->attention_bias));
  c->o_proj_bias = c->attention_bias;
  if (c->hidden_size % 2)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"num_hiddens\" %lld must be even (the positional encoding "
                           "interleaves sines and cosines)",
                           f, (long long)c->hidden_size);
  c->hidden_act = VKF_HF_ACT_RELU;
  c->scale_embedding = true;
  c->tie_word_embeddings = false;
  c->pad_token_id = c->bos_token_id = c->eos_token_id = c->decoder_start_token_id = -1;
  return VKF_OK;
}

/* D2L's Bahdanau encoder-decoder (tools/goldens/seeds_seq2seq_attention.py): GRUs, one
 * additive attention; no positions, so no length limit here. dropout is read and checked only. */
static vkf_status parse_d2l_attention(const char *f, const cJSON *r, vkf_hf_config *c) {
  static const char *const sizes[] = {"src_vocab_size", "tgt_vocab_size", "embed_size",
                                      "num_hiddens", "num_layers"};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
    if (!vkf_json_field(r, sizes[i]))
      return vkf_status_make(VKF_STATUS_NOT_FOUND,
                             "%s: missing field \"%s\" (D2L's Bahdanau encoder-decoder "
                             "needs src_vocab_size, tgt_vocab_size, embed_size, num_hiddens and "
                             "num_layers)",
                             f, sizes[i]);
  GET_SIZE("src_vocab_size", 0, VKF_HF_MAX_VOCAB, &c->src_vocab_size);
  GET_SIZE("tgt_vocab_size", 0, VKF_HF_MAX_VOCAB, &c->vocab_size);
  GET_SIZE("embed_size", 0, VKF_HF_MAX_HIDDEN, &c->embed_size);
  GET_SIZE("num_hiddens", 0, VKF_HF_MAX_HIDDEN, &c->hidden_size);
  GET_SIZE("num_layers", 0, VKF_HF_MAX_LAYERS, &c->num_hidden_layers);
  c->decoder_layers = c->num_hidden_layers;
  double dropout = 0;
  VKF_RETURN_IF_ERROR(vkf_json_get_double(f, r, "dropout", 0, &dropout));
  if (!(dropout >= 0 && dropout < 1))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"dropout\" %g is outside [0, 1)", f, dropout);
  c->num_attention_heads = c->decoder_heads = 1;
  c->head_dim = c->hidden_size;
  c->layer_norm_eps = 1e-5; /* no norms; keeps the shared check quiet */
  c->pad_token_id = c->bos_token_id = c->eos_token_id = c->decoder_start_token_id = -1;
  return VKF_OK;
}

static vkf_status check_id(const char *f, const char *key, int64_t id, int64_t vocab) {
  if (id < -1 || id >= vocab)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"%s\" %lld is outside the vocabulary of %lld", f, key,
                           (long long)id, (long long)vocab);
  return VKF_OK;
}

/* A token id field: absent keeps the class default, null means none (-1). */
static vkf_status get_id(const char *f, const cJSON *r, const char *key, int64_t *id) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(r, key);
  if (item && cJSON_IsNull(item)) {
    *id = -1;
    return VKF_OK;
  }
  if (item && cJSON_IsArray(item)) return VKF_OK; /* an eos list: generation_config reads it */
  return vkf_json_get_int(f, r, key, *id, id);
}

vkf_status vkf_hf_config_parse_seq2seq(const char *f, const cJSON *r, vkf_hf_config *c) {
  const char *t = c->model_type;
  vkf_status s;
  if (!strcmp(t, "bart") || !strcmp(t, "marian"))
    s = parse_bart_like(f, r, c, !strcmp(t, "marian"));
  else if (!strcmp(t, "t5") || !strcmp(t, "mt5"))
    s = parse_t5(f, r, c, !strcmp(t, "mt5"));
  else if (!strcmp(t, "d2l_seq2seq_attention"))
    s = parse_d2l_attention(f, r, c);
  else
    s = parse_d2l(f, r, c);
  VKF_RETURN_IF_ERROR(s);
  if (!strcmp(t, "d2l_transformer") && (c->src_vocab_size == 0 || c->vocab_size == 0))
    return vkf_status_make(VKF_STATUS_NOT_FOUND,
                           "%s: D2L's Transformer needs src_vocab_size, tgt_vocab_size, "
                           "num_hiddens, ffn_num_hiddens, num_heads and num_blks",
                           f);
  VKF_RETURN_IF_ERROR(get_id(f, r, "pad_token_id", &c->pad_token_id));
  VKF_RETURN_IF_ERROR(get_id(f, r, "bos_token_id", &c->bos_token_id));
  VKF_RETURN_IF_ERROR(get_id(f, r, "eos_token_id", &c->eos_token_id));
  VKF_RETURN_IF_ERROR(get_id(f, r, "decoder_start_token_id", &c->decoder_start_token_id));
  if (!(c->layer_norm_eps > 0.0) || !isfinite(c->layer_norm_eps))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s: the norm epsilon is %g", f,
                           c->layer_norm_eps);
  if (!c->head_dim) {
    if (c->hidden_size % c->num_attention_heads || c->hidden_size % c->decoder_heads)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "%s: d_model %lld is not divisible by the attention heads (%lld "
                             "encoder, %lld decoder)",
                             f, (long long)c->hidden_size, (long long)c->num_attention_heads,
                             (long long)c->decoder_heads);
    if (c->num_attention_heads != c->decoder_heads)
      return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                             "%s: different encoder and decoder head counts (%lld, %lld) are not "
                             "supported",
                             f, (long long)c->num_attention_heads, (long long)c->decoder_heads);
    c->head_dim = c->hidden_size / c->num_attention_heads;
  }
  if (c->head_dim * c->num_attention_heads > VKF_HF_MAX_HIDDEN)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: %lld heads of %lld dims exceed the %lld a model can use", f,
                           (long long)c->num_attention_heads, (long long)c->head_dim,
                           (long long)VKF_HF_MAX_HIDDEN);
  c->num_key_value_heads = c->num_attention_heads;
  VKF_RETURN_IF_ERROR(check_id(f, "pad_token_id", c->pad_token_id, c->vocab_size));
  VKF_RETURN_IF_ERROR(check_id(f, "bos_token_id", c->bos_token_id, c->vocab_size));
  VKF_RETURN_IF_ERROR(check_id(f, "eos_token_id", c->eos_token_id, c->vocab_size));
  return check_id(f, "decoder_start_token_id", c->decoder_start_token_id, c->vocab_size);
}
