/* BERT checkpoints: loading (config, sentence-transformers pipeline, every tensor's presence and
 * shape, the task head) and the graph: embeddings, post-norm blocks (transformer_block.h), then
 * the sentence-embedding pipeline, the pooler or the task head. */
#include "models/arch/bert.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "graph/ir/builder.h"
#include "models/arch/arch_weights.h"
#include "models/arch/transformer_block.h"
#include "models/formats/checkpoint.h"
#include "models/formats/weight_cache.h"

enum { BERT_NAME_MAX = VKF_ARCH_NAME_MAX };


struct vkf_bert_model {
  vkf_arch_files f; /* dir, config, weights */
  vkf_bert_pipeline pipeline;
  const char *prefix; /* "bert." (task-head checkpoints) or "" (BertModel) */
  vkf_bert_head head;
  int has_pooler;
};

#define NAME VKF_NAME

/* Hugging Face's BertLayer: post-norm, LayerNorm, plain MLP, separate Q, K, V with biases. */
static const vkf_block_names bert_block_names = {
    .attn_norm = "attention.output.LayerNorm",
    .attention = "attention.self",
    .attn_out = "attention.output",
    .mlp_norm = "output.LayerNorm",
    .mlp_up = "intermediate",
    .mlp_down = "output",
    .q_weight = "attention.self.query.weight",
    .k_weight = "attention.self.key.weight",
    .v_weight = "attention.self.value.weight",
    .q_bias = "attention.self.query.bias",
    .k_bias = "attention.self.key.bias",
    .v_bias = "attention.self.value.bias",
    .out_weight = "attention.output.dense.weight",
    .out_bias = "attention.output.dense.bias",
    .attn_norm_weight = "attention.output.LayerNorm.weight",
    .attn_norm_bias = "attention.output.LayerNorm.bias",
    .up_weight = "intermediate.dense.weight",
    .up_bias = "intermediate.dense.bias",
    .down_weight = "output.dense.weight",
    .down_bias = "output.dense.bias",
    .mlp_norm_weight = "output.LayerNorm.weight",
    .mlp_norm_bias = "output.LayerNorm.bias",
};

static vkf_block_config block_config(const vkf_hf_config *c, const char *prefix) {
  return (vkf_block_config){
      .attention = &c->attention,
      .root_prefix = prefix,
      .positions = c->max_position_embeddings,
      .hidden = c->hidden_size,
      .heads = c->num_attention_heads,
      .head_dim = c->head_dim,
      .intermediate = c->intermediate_size,
      .norm = VKF_BLOCK_LAYERNORM,
      .order = VKF_BLOCK_POST_NORM,
      .norm_eps = (float)c->layer_norm_eps,
      .mlp = VKF_BLOCK_MLP_PLAIN,
      .act = vkf_block_activation(c->hidden_act),
  };
}

/* ---- loading ---- */

static vkf_status expect(const vkf_bert_model *m, const char *suffix, int64_t d0, int64_t d1) {
  return vkf_arch_expect2(m->f.ck, m->prefix, suffix, d0, d1);
}

static vkf_status check_tensors(vkf_bert_model *m) {
  m->prefix = vkf_checkpoint_find(m->f.ck, "bert.embeddings.word_embeddings.weight") ? "bert." : "";
  const vkf_hf_config *c = &m->f.config;
  int64_t d = c->hidden_size;
  VKF_RETURN_IF_ERROR(expect(m, "embeddings.word_embeddings.weight", c->vocab_size, d));
  VKF_RETURN_IF_ERROR(
      expect(m, "embeddings.position_embeddings.weight", c->max_position_embeddings, d));
  VKF_RETURN_IF_ERROR(expect(m, "embeddings.token_type_embeddings.weight", c->type_vocab_size, d));
  VKF_RETURN_IF_ERROR(expect(m, "embeddings.LayerNorm.weight", d, 0));
  VKF_RETURN_IF_ERROR(expect(m, "embeddings.LayerNorm.bias", d, 0));
  vkf_block_config bc = block_config(c, m->prefix);
  for (int64_t l = 0; l < c->num_hidden_layers; l++) {
    char lp[BERT_NAME_MAX];
    bc.layer = l;
    NAME(lp, "%sencoder.layer.%lld.", m->prefix, (long long)l);
    VKF_RETURN_IF_ERROR(vkf_block_expect(m->f.ck, lp, &bert_block_names, &bc));
  }
  m->has_pooler = vkf_arch_has(m->f.ck, m->prefix, "pooler.dense.weight");
  if (m->has_pooler) {
    VKF_RETURN_IF_ERROR(expect(m, "pooler.dense.weight", d, d));
    VKF_RETURN_IF_ERROR(expect(m, "pooler.dense.bias", d, 0));
  }
  /* Heads sit outside the "bert." prefix. */
  m->head = vkf_arch_has(m->f.ck, "", "cls.predictions.bias") ? VKF_BERT_HEAD_MASKED_LM
            : vkf_arch_has(m->f.ck, "", "classifier.weight")  ? VKF_BERT_HEAD_CLASSIFICATION
                                                              : VKF_BERT_HEAD_NONE;
  if (m->head == VKF_BERT_HEAD_MASKED_LM) {
    VKF_RETURN_IF_ERROR(
        vkf_arch_expect2(m->f.ck, "", "cls.predictions.transform.dense.weight", d, d));
    VKF_RETURN_IF_ERROR(
        vkf_arch_expect2(m->f.ck, "", "cls.predictions.transform.dense.bias", d, 0));
    VKF_RETURN_IF_ERROR(
        vkf_arch_expect2(m->f.ck, "", "cls.predictions.transform.LayerNorm.weight", d, 0));
    VKF_RETURN_IF_ERROR(
        vkf_arch_expect2(m->f.ck, "", "cls.predictions.transform.LayerNorm.bias", d, 0));
    VKF_RETURN_IF_ERROR(vkf_arch_expect2(m->f.ck, "", "cls.predictions.bias", c->vocab_size, 0));
    if (vkf_arch_has(m->f.ck, "", "cls.predictions.decoder.weight"))
      VKF_RETURN_IF_ERROR(
          vkf_arch_expect2(m->f.ck, "", "cls.predictions.decoder.weight", c->vocab_size, d));
  } else if (m->head == VKF_BERT_HEAD_CLASSIFICATION) {
    if (!m->has_pooler)
      return vkf_status_make(VKF_STATUS_NOT_FOUND,
                             "tensor \"%spooler.dense.weight\" not found in %s (the classifier "
                             "reads the pooler output)",
                             m->prefix, vkf_checkpoint_path(m->f.ck));
    VKF_RETURN_IF_ERROR(vkf_arch_expect2(m->f.ck, "", "classifier.weight", c->num_labels, d));
    VKF_RETURN_IF_ERROR(vkf_arch_expect2(m->f.ck, "", "classifier.bias", c->num_labels, 0));
  }
  return VKF_OK;
}

vkf_status vkf_bert_load(const char *model_dir, vkf_bert_model **out_model) {
  *out_model = NULL;
  vkf_bert_model *m = calloc(1, sizeof *m);
  if (!m) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "loading %s", model_dir);
  vkf_status s = vkf_arch_files_open(model_dir, &m->f);
  /* roberta / xlm-roberta share the TEXT family but use BPE vocabularies and offset positions. */
  if (!s && strcmp(m->f.config.model_type, "bert") != 0)
    s = vkf_status_make(VKF_STATUS_UNSUPPORTED,
                        "%s/config.json: model_type \"%s\" is not supported (bert)", model_dir,
                        m->f.config.model_type);
  if (!s) s = vkf_bert_pipeline_load(model_dir, &m->f.config, &m->pipeline);
  if (!s) s = vkf_arch_files_open_weights(&m->f);
  if (!s) s = check_tensors(m);
  if (s) {
    vkf_bert_destroy(m);
    return s;
  }
  *out_model = m;
  return VKF_OK;
}

vkf_status vkf_bert_quantize(vkf_bert_model *m, const char *format) {
  return vkf_arch_files_quantize(&m->f, format);
}

const struct vkf_arch_files *vkf_bert_files(const vkf_bert_model *m) {
  return &m->f;
}

void vkf_bert_destroy(vkf_bert_model *m) {
  if (!m) return;
  vkf_arch_files_close(&m->f);
  free(m);
}

const vkf_hf_config *vkf_bert_config(const vkf_bert_model *m) {
  return &m->f.config;
}
const vkf_bert_pipeline *vkf_bert_pipeline_of(const vkf_bert_model *m) {
  return &m->pipeline;
}
const char *vkf_bert_dir(const vkf_bert_model *m) {
  return m->f.dir;
}

vkf_bert_head vkf_bert_head_of(const vkf_bert_model *m) {
  return m->head;
}
int vkf_bert_has_pooler(const vkf_bert_model *m) {
  return m->has_pooler;
}
const char *vkf_bert_architecture(const vkf_bert_model *m) {
  return m->head == VKF_BERT_HEAD_MASKED_LM        ? "BertForMaskedLM"
         : m->head == VKF_BERT_HEAD_CLASSIFICATION ? "BertForSequenceClassification"
                                                   : "BertModel";
}

/* ---- graph ---- */

static vkf_arch_weights weights_of(vkf_bert_model *m, int prefixed, vkf_dtype dt) {
  return (vkf_arch_weights){m->f.ck, &m->f.owned, prefixed ? m->prefix : "", dt, m->f.quantize};
}

static vkf_value weight(vkf_bert_model *m, vkf_graph *g, const char *suffix, vkf_dtype dt) {
  vkf_arch_weights w = weights_of(m, 1, dt);
  return vkf_arch_weight(&w, g, suffix);
}

typedef struct table_fill {
  const vkf_bert_model *m;
  int64_t n;
  int with_type0;
  vkf_status status;
} table_fill;

/* position_embeddings[0:n] (+ token_type_embeddings[0] when every token has type 0: the two
 * lookups that do not depend on the ids fold into one table added after the word gather). */
static void fill_positions(float *out, size_t count, const void *user) {
  table_fill *f = (table_fill *)user;
  int64_t d = f->m->f.config.hidden_size;
  char name[BERT_NAME_MAX];
  float *pos = NULL, *type = NULL;
  f->status = vkf_weight_read_f32(
      f->m->f.ck, NAME(name, "%sembeddings.position_embeddings.weight", f->m->prefix), &pos, NULL);
  if (!f->status && f->with_type0)
    f->status = vkf_weight_read_f32(
        f->m->f.ck, NAME(name, "%sembeddings.token_type_embeddings.weight", f->m->prefix), &type,
        NULL);
  for (size_t i = 0; i < count; i++)
    out[i] = f->status ? 0.0f : pos[i] + (type ? type[i % (size_t)d] : 0.0f);
  free(pos);
  free(type);
}

static vkf_value position_table(vkf_bert_model *m, vkf_graph *g, int64_t n, int with_type0,
                                vkf_dtype dt) {
  char key[BERT_NAME_MAX];
  NAME(key, "%sembeddings.position%s.%lld", m->prefix, with_type0 ? "_and_type" : "", (long long)n);
  int64_t shape[2] = {n, m->f.config.hidden_size};
  table_fill f = {m, n, with_type0, VKF_OK};
  vkf_arch_weights w = weights_of(m, 0, dt);
  vkf_value v = vkf_arch_computed(&w, g, key, dt, 2, shape, fill_positions, &f);
  if (f.status) vkf_graph_set_error(g, f.status);
  return v;
}

static void fill_ones(float *out, size_t count, const void *user) {
  (void)user;
  for (size_t i = 0; i < count; i++) out[i] = 1.0f;
}

static void fill_value(float *out, size_t count, const void *user) {
  for (size_t i = 0; i < count; i++) out[i] = *(const float *)user;
}

static vkf_value layernorm(vkf_bert_model *m, vkf_graph *g, const char *prefix, const char *module,
                           vkf_value x, vkf_dtype dt) {
  char a[BERT_NAME_MAX], b[BERT_NAME_MAX], nm[BERT_NAME_MAX];
  vkf_arch_weights w = {m->f.ck, &m->f.owned, prefix, dt, m->f.quantize};
  vkf_norm_options o = {
      .eps = (float)m->f.config.layer_norm_eps,
      .gamma = vkf_arch_weight(&w, g, NAME(a, "%s.weight", module)),
      .beta = vkf_arch_weight(&w, g, NAME(b, "%s.bias", module)),
  };
  return vkf_layernorm(g, NAME(nm, "%s%s", prefix, module), x, &o);
}

/* Linear layer prefix + `module` (torch weight [out, in]) with the GEMM epilogue. */
static vkf_value linear(vkf_bert_model *m, vkf_graph *g, const char *prefix, const char *module,
                        vkf_value x, vkf_activation act, vkf_dtype dt) {
  char a[BERT_NAME_MAX], b[BERT_NAME_MAX], nm[BERT_NAME_MAX];
  vkf_arch_weights w = {m->f.ck, &m->f.owned, prefix, dt, m->f.quantize};
  vkf_matmul_options o = {.transpose_b = 1,
                          .bias = vkf_arch_weight(&w, g, NAME(b, "%s.bias", module)),
                          .activation = act};
  return vkf_matmul(g, NAME(nm, "%s%s", prefix, module), x,
                    vkf_arch_weight(&w, g, NAME(a, "%s.weight", module)), &o);
}

/* Key padding as lengths: the mask is ones then zeros, so its row sums are the attention's kv_len,
 * which skips padded key blocks instead of adding a bias. Sums of 0/1 in f32 are exact and the
 * cast back truncates an exact integer. mask_f f32 [B, N] -> i32 [B]. */
static vkf_value mask_lengths(vkf_bert_model *m, vkf_graph *g, vkf_value mask_f, int64_t batch,
                              int64_t n) {
  char key[64];
  int64_t ones_shape[2] = {n, 1};
  vkf_arch_weights w = weights_of(m, 0, VKF_F32);
  vkf_value ones = vkf_arch_computed(&w, g, NAME(key, "kv_len.ones.%lld", (long long)n), VKF_F32, 2,
                                     ones_shape, fill_ones, NULL);
  vkf_value lens = vkf_matmul(g, "attention_mask.sum", mask_f, ones, NULL);
  int64_t b1[1] = {batch};
  lens = vkf_reshape(g, "attention_mask.rows", lens, 1, b1);
  return vkf_cast(g, "kv_len", lens, VKF_I32);
}

/* BertModel's extended attention mask: (mask - 1) · big, added to every score of the row's keys.
 * mask_f f32 [B, N] -> f32 [B, 1, 1, N]. */
static vkf_value mask_bias(vkf_bert_model *m, vkf_graph *g, vkf_value mask_f, int64_t batch,
                           int64_t n) {
  const float minus = -VKF_MASKED_SCORE;
  int64_t one[1] = {1};
  vkf_arch_weights w = weights_of(m, 0, VKF_F32);
  vkf_value lowest =
      vkf_arch_computed(&w, g, "attention_mask.masked_score", VKF_F32, 1, one, fill_value, &minus);
  vkf_value bias = vkf_scale(g, "attention_mask.scaled", mask_f, VKF_MASKED_SCORE);
  bias = vkf_add(g, "attention_mask.bias", bias, lowest); /* 0 kept, -big masked */
  int64_t shape[4] = {batch, 1, 1, n};
  return vkf_reshape(g, "attention_mask.bias_rows", bias, 4, shape);
}

static vkf_value sentence_embedding(vkf_bert_model *m, vkf_graph *g, vkf_value x, vkf_value mask,
                                    int64_t batch) {
  vkf_value e;
  if (m->pipeline.pooling == VKF_BERT_POOL_CLS) {
    e = vkf_slice(g, "pooling.cls_token", x, 1, 0, 1); /* [B, 1, D] */
    int64_t bd[2] = {batch, m->f.config.hidden_size};
    e = vkf_reshape(g, "pooling", e, 2, bd);
  } else {
    e = vkf_mean_pool(g, "pooling", x, mask); /* [B, D] */
  }
  /* sentence-transformers' Normalize is F.normalize(p=2, dim=1), eps 1e-12. */
  if (m->pipeline.normalize) e = vkf_l2_normalize(g, "normalize", e, 1e-12f);
  return e;
}

/* BertPooler: tanh(dense(first token)). x [B, N, D] -> [B, D]. */
static vkf_value pooler(vkf_bert_model *m, vkf_graph *g, vkf_value x, int64_t batch, vkf_dtype dt) {
  char nm[BERT_NAME_MAX];
  vkf_value cls = vkf_slice(g, NAME(nm, "%spooler.first_token", m->prefix), x, 1, 0, 1);
  int64_t bd[2] = {batch, m->f.config.hidden_size};
  cls = vkf_reshape(g, NAME(nm, "%spooler.first_token_flat", m->prefix), cls, 2, bd);
  vkf_value p = linear(m, g, m->prefix, "pooler.dense", cls, VKF_ACT_NONE, dt);
  return vkf_tanh(g, NAME(nm, "%spooler", m->prefix), p);
}

/* BertOnlyMLMHead: transform (dense, activation, LayerNorm), then the decoder, whose weight is
 * the word embeddings unless the file has its own. x [B, N, D] -> [B, N, V]. */
static vkf_value masked_lm_head(vkf_bert_model *m, vkf_graph *g, vkf_value x, vkf_dtype dt) {
  vkf_value h = linear(m, g, "", "cls.predictions.transform.dense", x,
                       vkf_block_activation(m->f.config.hidden_act), dt);
  h = layernorm(m, g, "", "cls.predictions.transform.LayerNorm", h, dt);
  vkf_arch_weights w = weights_of(m, 0, dt);
  char name[BERT_NAME_MAX];
  vkf_value dec =
      vkf_arch_has(m->f.ck, "", "cls.predictions.decoder.weight")
          ? vkf_arch_weight(&w, g, "cls.predictions.decoder.weight")
          : vkf_arch_weight(&w, g, NAME(name, "%sembeddings.word_embeddings.weight", m->prefix));
  vkf_matmul_options o = {.transpose_b = 1, .bias = vkf_arch_weight(&w, g, "cls.predictions.bias")};
  return vkf_matmul(g, "cls.predictions.decoder", h, dec, &o); /* [B, N, V] */
}

vkf_status vkf_bert_build(vkf_bert_model *m, const vkf_bert_build_options *options,
                          vkf_bert_graph *out) {
  memset(out, 0, sizeof *out);
  vkf_bert_build_options o = options ? *options : (vkf_bert_build_options){0};
  const vkf_hf_config *c = &m->f.config;
  int64_t batch = o.batch ? o.batch : 1;
  int64_t n = o.seq_len ? o.seq_len : m->pipeline.max_seq_length;
  uint32_t want = o.outputs ? o.outputs : VKF_BERT_OUT_SENTENCE_EMBEDDING;
  vkf_dtype dt = o.dtype;
  if (batch < 0 || n < 1 || n > c->max_position_embeddings || (dt != VKF_F32 && dt != VKF_F16))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: batch %lld, seq_len %lld (max %lld), dtype %s not supported",
                           m->f.dir, (long long)batch, (long long)n,
                           (long long)c->max_position_embeddings, vkf_dtype_name(dt));
  if ((want & VKF_BERT_OUT_POOLER_OUTPUT) && !m->has_pooler)
    return vkf_status_make(VKF_STATUS_NOT_FOUND, "%s: the checkpoint has no pooler (pooler_output)",
                           m->f.dir);
  if ((want & VKF_BERT_OUT_LOGITS) && m->head == VKF_BERT_HEAD_NONE)
    return vkf_status_make(VKF_STATUS_NOT_FOUND, "%s: the checkpoint has no task head (logits)",
                           m->f.dir);
  vkf_graph *g = NULL;
  VKF_RETURN_IF_ERROR(vkf_graph_create(vkf_bert_architecture(m), &g));
  char nm[BERT_NAME_MAX];

  int64_t bn[2] = {batch, n};
  vkf_value ids = vkf_graph_input(g, "input_ids", VKF_I32, 2, bn);
  vkf_value mask = vkf_graph_input(g, "attention_mask", VKF_I32, 2, bn);
  vkf_value types =
      o.hf_forward ? vkf_graph_input(g, "token_type_ids", VKF_I32, 2, bn) : VKF_NO_VALUE;
  vkf_value mask_f = vkf_cast(g, "attention_mask.f32", mask, VKF_F32);
  vkf_block_io io = {0};
  if (o.hf_forward)
    io.bias = mask_bias(m, g, mask_f, batch, n);
  else
    io.kv_len = mask_lengths(m, g, mask_f, batch, n);

  vkf_value x = vkf_gather(g, NAME(nm, "%sembeddings.word_embeddings", m->prefix),
                           weight(m, g, "embeddings.word_embeddings.weight", dt), ids);
  if (vkf_value_valid(types))
    x = vkf_add(g, NAME(nm, "%sembeddings.token_type", m->prefix), x,
                vkf_gather(g, NAME(nm, "%sembeddings.token_type_embeddings", m->prefix),
                           weight(m, g, "embeddings.token_type_embeddings.weight", dt), types));
  x = vkf_add(g, NAME(nm, "%sembeddings", m->prefix), x,
              position_table(m, g, n, !vkf_value_valid(types), dt));
  x = layernorm(m, g, m->prefix, "embeddings.LayerNorm", x, dt); /* [B, N, D] */
  if (!vkf_hf_attn_is_softmax(c->attention.kind)) io.keep = mask_f;
  vkf_block_config bc = block_config(c, m->prefix);
  vkf_arch_weights aw = weights_of(m, 1, dt);
  for (int64_t l = 0; l < c->num_hidden_layers; l++) {
    bc.layer = l;
    char tp[64], np[BERT_NAME_MAX];
    NAME(tp, "encoder.layer.%lld.", (long long)l);
    NAME(np, "%s%s", m->prefix, tp);
    vkf_block_weights w;
    vkf_block_weights_get(&aw, g, tp, &bert_block_names, &bc, &w);
    vkf_value probs = VKF_NO_VALUE;
    io.probs = o.attentions ? &probs : NULL;
    x = vkf_block_build(g, np, &bert_block_names, &bc, &w, &io, x);
    if (o.attentions)
      o.attentions[l] = vkf_arch_f32_output(g, probs, NAME(nm, "attentions.%lld", (long long)l));
  }

  if (want & VKF_BERT_OUT_LAST_HIDDEN_STATE)
    out->last_hidden_state = vkf_arch_f32_output(g, x, "last_hidden_state");
  vkf_value pooled = VKF_NO_VALUE;
  if ((want & VKF_BERT_OUT_POOLER_OUTPUT) ||
      ((want & VKF_BERT_OUT_LOGITS) && m->head == VKF_BERT_HEAD_CLASSIFICATION))
    pooled = pooler(m, g, x, batch, dt);
  if (want & VKF_BERT_OUT_POOLER_OUTPUT)
    out->pooler_output = vkf_arch_f32_output(g, pooled, "pooler_output");
  if (want & VKF_BERT_OUT_LOGITS) {
    vkf_value logits = m->head == VKF_BERT_HEAD_MASKED_LM
                           ? masked_lm_head(m, g, x, dt)
                           : linear(m, g, "", "classifier", pooled, VKF_ACT_NONE, dt);
    out->logits = vkf_arch_f32_output(g, logits, "logits");
  }
  if (want & VKF_BERT_OUT_SENTENCE_EMBEDDING) {
    vkf_value xf = dt != VKF_F32 ? vkf_cast(g, "last_hidden_state.f32", x, VKF_F32) : x;
    out->sentence_embedding =
        vkf_graph_output(g, sentence_embedding(m, g, xf, mask, batch), "sentence_embedding");
  }
  vkf_status st = vkf_graph_status(g);
  if (st) {
    vkf_graph_destroy(g);
    memset(out, 0, sizeof *out);
    return vkf_status_annotate(st, "building BERT from %s: ", m->f.dir);
  }
  out->graph = g;
  out->input_ids = ids;
  out->attention_mask = mask;
  out->token_type_ids = types;
  return VKF_OK;
}
