/* The encoder–decoder families as data over the block builder: their tensor and module names,
 * how positions and embeddings enter, and the load-time check of every tensor. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/arch/encdec_internal.h"

#define NAME VKF_NAME

/* BartEncoderLayer / BartDecoderLayer; MarianEncoderLayer / MarianDecoderLayer use the same. */
#define BART_SELF                                                                                 \
  {                                                                                               \
    .attn_norm = "self_attn_layer_norm", .attention = "self_attn",                                \
    .attn_out = "self_attn.out_proj", .mlp_norm = "final_layer_norm", .mlp_up = "fc1",            \
    .mlp_down = "fc2", .q_weight = "self_attn.q_proj.weight", .k_weight = "self_attn.k_proj.weight", \
    .v_weight = "self_attn.v_proj.weight", .q_bias = "self_attn.q_proj.bias",                     \
    .k_bias = "self_attn.k_proj.bias", .v_bias = "self_attn.v_proj.bias",                         \
    .out_weight = "self_attn.out_proj.weight", .out_bias = "self_attn.out_proj.bias",             \
    .attn_norm_weight = "self_attn_layer_norm.weight",                                            \
    .attn_norm_bias = "self_attn_layer_norm.bias", .up_weight = "fc1.weight", .up_bias = "fc1.bias", \
    .down_weight = "fc2.weight", .down_bias = "fc2.bias",                                         \
    .mlp_norm_weight = "final_layer_norm.weight", .mlp_norm_bias = "final_layer_norm.bias",       \
  }
#define BART_CROSS                                                                                \
  {                                                                                               \
    .attn_norm = "encoder_attn_layer_norm", .attention = "encoder_attn",                          \
    .attn_out = "encoder_attn.out_proj", .q_weight = "encoder_attn.q_proj.weight",                \
    .k_weight = "encoder_attn.k_proj.weight", .v_weight = "encoder_attn.v_proj.weight",           \
    .q_bias = "encoder_attn.q_proj.bias", .k_bias = "encoder_attn.k_proj.bias",                   \
    .v_bias = "encoder_attn.v_proj.bias", .out_weight = "encoder_attn.out_proj.weight",           \
    .out_bias = "encoder_attn.out_proj.bias",                                                     \
    .attn_norm_weight = "encoder_attn_layer_norm.weight",                                         \
    .attn_norm_bias = "encoder_attn_layer_norm.bias",                                             \
  }

/* T5Block: layer.0 self-attention, (decoder) layer.1 cross attention, then the feed-forward
 * layer; no biases anywhere; the MLP names are set per feed_forward_proj at load. */
#define T5_ATTN(l, mod)                                                                      \
  .attn_norm = "layer." #l ".layer_norm", .attention = "layer." #l "." mod,                  \
  .attn_out = "layer." #l "." mod ".o", .q_weight = "layer." #l "." mod ".q.weight",         \
  .k_weight = "layer." #l "." mod ".k.weight", .v_weight = "layer." #l "." mod ".v.weight",  \
  .out_weight = "layer." #l "." mod ".o.weight", .attn_norm_weight = "layer." #l ".layer_norm.weight"
#define T5_MLP(l)                                                                             \
  .mlp_norm = "layer." #l ".layer_norm", .mlp_up = "layer." #l ".DenseReluDense.wi",           \
  .mlp_gate = "layer." #l ".DenseReluDense.wi_0", .mlp_down = "layer." #l ".DenseReluDense.wo", \
  .up_weight = "layer." #l ".DenseReluDense.wi.weight",                                        \
  .gate_weight = "layer." #l ".DenseReluDense.wi_0.weight",                                    \
  .down_weight = "layer." #l ".DenseReluDense.wo.weight",                                      \
  .mlp_norm_weight = "layer." #l ".layer_norm.weight"

/* D2L's TransformerEncoderBlock / TransformerDecoderBlock (D2L names). */
#define D2L_ATTN(mod, norm)                                                                     \
  .attn_norm = norm, .attention = mod, .attn_out = mod ".W_o", .q_weight = mod ".W_q.weight",   \
  .k_weight = mod ".W_k.weight", .v_weight = mod ".W_v.weight", .q_bias = mod ".W_q.bias",       \
  .k_bias = mod ".W_k.bias", .v_bias = mod ".W_v.bias", .out_weight = mod ".W_o.weight",         \
  .out_bias = mod ".W_o.bias", .attn_norm_weight = norm ".weight", .attn_norm_bias = norm ".bias"
#define D2L_MLP(norm)                                                                            \
  .mlp_norm = norm, .mlp_up = "ffn.dense1", .mlp_down = "ffn.dense2",                            \
  .up_weight = "ffn.dense1.weight", .up_bias = "ffn.dense1.bias", .down_weight = "ffn.dense2.weight", \
  .down_bias = "ffn.dense2.bias", .mlp_norm_weight = norm ".weight", .mlp_norm_bias = norm ".bias"

static const encdec_family k_families[] = {
    {"bart", ENCDEC_BART, "BartForConditionalGeneration", "BartModel", "model.",
     "encoder.layers.%lld.", "decoder.layers.%lld.", POS_LEARNED_OFFSET2, VKF_BLOCK_LAYERNORM,
     VKF_BLOCK_POST_NORM, BART_SELF, BART_SELF, BART_CROSS, NULL, NULL,
     "encoder.layernorm_embedding", "decoder.layernorm_embedding",
     "encoder.embed_positions.weight", "decoder.embed_positions.weight", NULL},
    {"marian", ENCDEC_MARIAN, "MarianMTModel", "MarianModel", "model.", "encoder.layers.%lld.",
     "decoder.layers.%lld.", POS_SINUSOID_HALVES, VKF_BLOCK_LAYERNORM, VKF_BLOCK_POST_NORM,
     BART_SELF, BART_SELF, BART_CROSS, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
    {"t5", ENCDEC_T5, "T5ForConditionalGeneration", "T5Model", "", "encoder.block.%lld.",
     "decoder.block.%lld.", POS_RELATIVE, VKF_BLOCK_RMSNORM, VKF_BLOCK_PRE_NORM,
     {T5_ATTN(0, "SelfAttention"), T5_MLP(1)}, {T5_ATTN(0, "SelfAttention"), T5_MLP(2)},
     {T5_ATTN(1, "EncDecAttention")}, "encoder.final_layer_norm", "decoder.final_layer_norm", NULL,
     NULL, NULL, NULL, "%s.block.0.layer.0.SelfAttention.relative_attention_bias.weight"},
    {"mt5", ENCDEC_T5, "MT5ForConditionalGeneration", "MT5Model", "", "encoder.block.%lld.",
     "decoder.block.%lld.", POS_RELATIVE, VKF_BLOCK_RMSNORM, VKF_BLOCK_PRE_NORM,
     {T5_ATTN(0, "SelfAttention"), T5_MLP(1)}, {T5_ATTN(0, "SelfAttention"), T5_MLP(2)},
     {T5_ATTN(1, "EncDecAttention")}, "encoder.final_layer_norm", "decoder.final_layer_norm", NULL,
     NULL, NULL, NULL, "%s.block.0.layer.0.SelfAttention.relative_attention_bias.weight"},
    {"d2l_transformer", ENCDEC_D2L, "D2LTransformer", "D2LTransformer", "",
     "encoder.blks.block%lld.", "decoder.blks.block%lld.", POS_SINUSOID_INTERLEAVED,
     VKF_BLOCK_LAYERNORM, VKF_BLOCK_POST_NORM,
     {D2L_ATTN("attention", "addnorm1.ln"), D2L_MLP("addnorm2.ln")},
     {D2L_ATTN("attention1", "addnorm1.ln"), D2L_MLP("addnorm3.ln")},
     {D2L_ATTN("attention2", "addnorm2.ln")}, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

vkf_block_config vkf_encdec_block_config(const vkf_encdec_model *m, int decoder) {
  const vkf_hf_config *c = &m->f.config;
  return (vkf_block_config){
      .hidden = c->hidden_size,
      .heads = decoder ? c->decoder_heads : c->num_attention_heads,
      .head_dim = c->head_dim,
      .intermediate = decoder ? c->decoder_intermediate : c->intermediate_size,
      .norm = m->fam->norm,
      .order = m->fam->order,
      .norm_eps = (float)c->layer_norm_eps,
      .mlp = c->gated_mlp ? VKF_BLOCK_MLP_GATED : VKF_BLOCK_MLP_PLAIN,
      .act = vkf_block_activation(c->hidden_act),
      .position = m->fam->positions == POS_RELATIVE ? VKF_BLOCK_POS_BIAS : VKF_BLOCK_POS_NONE,
      .attn_scale = m->fam->kind == ENCDEC_T5 ? 1.0f : 0.0f, /* T5 folds 1/sqrt(d) into q */
  };
}

/* Names the MLP of this checkpoint uses and drops biases the config says are absent. T5's gated
 * MLP is act(wi_0·x) ⊙ wi_1·x: gate wi_0, up wi_1; the plain one is wi alone. */
static void adapt_names(vkf_encdec_model *m, vkf_block_names *nm, int mlp_layer) {
  const vkf_hf_config *c = &m->f.config;
  if (m->fam->kind == ENCDEC_T5 && c->gated_mlp && nm->mlp_up) {
    nm->mlp_up = mlp_layer == 2 ? "layer.2.DenseReluDense.wi_1" : "layer.1.DenseReluDense.wi_1";
    nm->up_weight = mlp_layer == 2 ? "layer.2.DenseReluDense.wi_1.weight"
                                   : "layer.1.DenseReluDense.wi_1.weight";
  } else if (m->fam->kind == ENCDEC_T5) {
    nm->mlp_gate = NULL;
    nm->gate_weight = NULL;
  }
  if (m->fam->kind == ENCDEC_D2L && !c->attention_bias)
    nm->q_bias = nm->k_bias = nm->v_bias = nm->out_bias = NULL;
}

/* The token table for `stack` ("encoder"/"decoder"): the shared one or the stack's own. */
static vkf_status find_embed(vkf_encdec_model *m, const char *stack, char *out, size_t size) {
  const char *p = m->prefix;
  if (m->fam->kind == ENCDEC_D2L) {
    snprintf(out, size, "%s.embedding.weight", stack);
    return VKF_OK;
  }
  char own[96];
  snprintf(own, sizeof own, "%s.embed_tokens.weight", stack);
  if (vkf_arch_has(m->f.ck, p, "shared.weight"))
    snprintf(out, size, "shared.weight");
  else if (vkf_arch_has(m->f.ck, p, own))
    snprintf(out, size, "%s", own);
  else
    return vkf_status_make(VKF_STATUS_NOT_FOUND,
                           "tensor \"%sshared.weight\" (or \"%s%s\") not found in %s", p, p, own,
                           vkf_checkpoint_path(m->f.ck));
  return VKF_OK;
}

static vkf_status check_stack(vkf_encdec_model *m, int decoder) {
  const vkf_hf_config *c = &m->f.config;
  const encdec_family *fam = m->fam;
  int64_t layers = decoder ? c->decoder_layers : c->num_hidden_layers, d = c->hidden_size;
  vkf_block_config bc = vkf_encdec_block_config(m, decoder);
  const char *stack = decoder ? "decoder" : "encoder";
  for (int64_t l = 0; l < layers; l++) {
    char lp[VKF_ARCH_NAME_MAX], layer[64];
    snprintf(layer, sizeof layer, decoder ? fam->dec_layer_fmt : fam->enc_layer_fmt, (long long)l);
    NAME(lp, "%s%s", m->prefix, layer);
    VKF_RETURN_IF_ERROR(
        vkf_block_expect(m->f.ck, lp, decoder ? &m->dec_self_names : &m->enc_names, &bc));
    if (decoder) {
      vkf_block_config cc = bc;
      cc.mlp = VKF_BLOCK_MLP_PLAIN;
      VKF_RETURN_IF_ERROR(vkf_block_expect(m->f.ck, lp, &m->dec_cross_names, &cc));
    }
  }
  char name[128];
  const char *final_norm = decoder ? fam->dec_final_norm : fam->enc_final_norm;
  if (final_norm)
    VKF_RETURN_IF_ERROR(
        vkf_arch_expect2(m->f.ck, m->prefix, NAME(name, "%s.weight", final_norm), d, 0));
  const char *embed_norm = decoder ? fam->dec_embed_norm : fam->enc_embed_norm;
  if (embed_norm) {
    VKF_RETURN_IF_ERROR(
        vkf_arch_expect2(m->f.ck, m->prefix, NAME(name, "%s.weight", embed_norm), d, 0));
    VKF_RETURN_IF_ERROR(
        vkf_arch_expect2(m->f.ck, m->prefix, NAME(name, "%s.bias", embed_norm), d, 0));
  }
  const char *pos = decoder ? fam->dec_positions : fam->enc_positions;
  if (pos)
    VKF_RETURN_IF_ERROR(
        vkf_arch_expect2(m->f.ck, m->prefix, pos, c->max_position_embeddings + 2, d));
  if (fam->rel_bias_fmt)
    VKF_RETURN_IF_ERROR(vkf_arch_expect2(m->f.ck, m->prefix,
                                         NAME(name, fam->rel_bias_fmt, stack), c->relative_buckets,
                                         decoder ? c->decoder_heads : c->num_attention_heads));
  char *embed = decoder ? m->dec_embed : m->enc_embed;
  VKF_RETURN_IF_ERROR(find_embed(m, stack, embed, sizeof m->enc_embed));
  return vkf_arch_expect2(m->f.ck, m->prefix, embed,
                          decoder ? c->vocab_size : c->src_vocab_size, d);
}

static vkf_status check_tensors(vkf_encdec_model *m) {
  const vkf_hf_config *c = &m->f.config;
  const encdec_family *fam = m->fam;
  /* The task model nests the base model under "model." (BART, Marian); T5 does not nest. */
  int nested = fam->task_prefix[0] && (vkf_arch_has(m->f.ck, fam->task_prefix, "shared.weight") ||
                                       vkf_arch_has(m->f.ck, fam->task_prefix,
                                                    "encoder.embed_tokens.weight"));
  m->prefix = nested ? fam->task_prefix : "";
  m->enc_names = fam->enc_names;
  m->dec_self_names = fam->dec_self_names;
  m->dec_cross_names = fam->dec_cross_names;
  adapt_names(m, &m->enc_names, 1);
  adapt_names(m, &m->dec_self_names, 2);
  adapt_names(m, &m->dec_cross_names, 0);
  VKF_RETURN_IF_ERROR(check_stack(m, 0));
  VKF_RETURN_IF_ERROR(check_stack(m, 1));
  m->embed_scale = c->scale_embedding ? sqrtf((float)c->hidden_size) : 1.0f;
  /* The head: BART, Marian and T5 tie it to the shared table unless tie_word_embeddings is false
   * (then lm_head.weight); D2L's Transformer has its own dense layer with a bias. */
  int task = nested || fam->kind == ENCDEC_D2L || vkf_arch_has(m->f.ck, "", "lm_head.weight") ||
             vkf_arch_has(m->f.ck, "", "final_logits_bias");
  /* A tied T5 head leaves no tensor of its own: config.json's class name says it is there. */
  for (size_t i = 0; i < c->architecture_count; i++)
    if (!strcmp(c->architectures[i], fam->lm_arch)) task = 1;
  if (fam->kind == ENCDEC_D2L) {
    VKF_RETURN_IF_ERROR(vkf_arch_expect2(m->f.ck, "", "decoder.dense.weight", c->vocab_size,
                                         c->hidden_size));
    VKF_RETURN_IF_ERROR(vkf_arch_expect2(m->f.ck, "", "decoder.dense.bias", c->vocab_size, 0));
    m->lm_head = 2;
  } else if (task && !c->tie_word_embeddings) {
    VKF_RETURN_IF_ERROR(
        vkf_arch_expect2(m->f.ck, "", "lm_head.weight", c->vocab_size, c->hidden_size));
    m->lm_head = 2;
  } else {
    m->lm_head = task ? 1 : 0;
  }
  if (m->lm_head && (fam->kind == ENCDEC_BART || fam->kind == ENCDEC_MARIAN) &&
      vkf_arch_has(m->f.ck, "", "final_logits_bias")) {
    int64_t shape[2] = {1, c->vocab_size};
    VKF_RETURN_IF_ERROR(vkf_arch_expect(m->f.ck, "", "final_logits_bias", 2, shape));
    m->final_logits_bias = 1; /* absent: zeros, as transformers initialises the buffer */
  }
  return VKF_OK;
}

vkf_status vkf_encdec_load(const char *model_dir, vkf_encdec_model **out_model) {
  *out_model = NULL;
  vkf_encdec_model *m = calloc(1, sizeof *m);
  if (!m) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "loading %s", model_dir);
  vkf_status s = vkf_arch_files_open(model_dir, &m->f);
  if (!s) {
    const char *type = m->f.config.model_type;
    for (size_t i = 0; i < sizeof k_families / sizeof *k_families; i++)
      if (!strcmp(type, k_families[i].model_type)) m->fam = &k_families[i];
    if (!m->fam)
      s = vkf_status_make(VKF_STATUS_UNSUPPORTED,
                          "%s/config.json: model_type \"%s\" is not an encoder-decoder (bart, "
                          "marian, t5, mt5, d2l_transformer)",
                          model_dir, type);
  }
  if (!s) s = vkf_arch_files_open_weights(&m->f);
  if (!s) s = check_tensors(m);
  if (s) {
    vkf_encdec_destroy(m);
    return s;
  }
  *out_model = m;
  return VKF_OK;
}

vkf_status vkf_encdec_quantize(vkf_encdec_model *m, const char *format) {
  return vkf_arch_files_quantize(&m->f, format);
}

const struct vkf_arch_files *vkf_encdec_files(const vkf_encdec_model *m) {
  return &m->f;
}

void vkf_encdec_destroy(vkf_encdec_model *m) {
  if (!m) return;
  vkf_arch_files_close(&m->f);
  free(m);
}

const vkf_hf_config *vkf_encdec_config(const vkf_encdec_model *m) {
  return &m->f.config;
}
const char *vkf_encdec_architecture(const vkf_encdec_model *m) {
  return m->lm_head ? m->fam->lm_arch : m->fam->base_arch;
}
int vkf_encdec_has_lm_head(const vkf_encdec_model *m) {
  return m->lm_head != 0;
}
int64_t vkf_encdec_max_positions(const vkf_encdec_model *m) {
  return m->fam->positions == POS_RELATIVE ? VKF_ENCDEC_MAX_RELATIVE_POSITIONS
                                           : m->f.config.max_position_embeddings;
}
int64_t vkf_encdec_source_vocab(const vkf_encdec_model *m) {
  return m->f.config.src_vocab_size;
}
