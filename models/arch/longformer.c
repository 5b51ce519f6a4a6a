/* Longformer checkpoints: loading (config, every tensor's presence and shape) and the graph:
 * RoBERTa embeddings, the window padding, post-norm layers whose attention is
 * longformer_attention.c's, the trim back to the caller's length, the pooler. */
#include "models/arch/longformer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ir/builder.h"
#include "models/arch/arch_weights.h"
#include "models/arch/longformer_internal.h"
#include "models/formats/weight_cache.h"

struct vkf_longformer_model {
  vkf_arch_files f;
  const char *prefix; /* "longformer." (task-head checkpoints) or "" */
  int has_pooler;
  vkf_longformer_head head;
  vkf_longformer_layouts *layouts;
};

#define NAME VKF_NAME

/* LongformerLayer: BERT's post-norm layer with the global projections beside Q, K, V. */
static const vkf_block_names names = {
    .attn_norm = "attention.output.LayerNorm",
    .attention = "attention.self",
    .attn_out = "attention.output.dense",
    .mlp_norm = "output.LayerNorm",
    .mlp_up = "intermediate.dense",
    .mlp_down = "output.dense",
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
static const char *const global_names[3] = {"query_global", "key_global", "value_global"};

static vkf_block_config block_config(const vkf_hf_config *c) {
  return (vkf_block_config){
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

static vkf_status check_tensors(vkf_longformer_model *m) {
  m->prefix = vkf_checkpoint_find(m->f.ck, "longformer.embeddings.word_embeddings.weight")
                  ? "longformer."
                  : "";
  const vkf_hf_config *c = &m->f.config;
  const char *p = m->prefix;
  int64_t d = c->hidden_size;
  VKF_RETURN_IF_ERROR(
      vkf_arch_expect2(m->f.ck, p, "embeddings.word_embeddings.weight", c->vocab_size, d));
  VKF_RETURN_IF_ERROR(vkf_arch_expect2(m->f.ck, p, "embeddings.position_embeddings.weight",
                                       c->max_position_embeddings, d));
  VKF_RETURN_IF_ERROR(vkf_arch_expect2(m->f.ck, p, "embeddings.token_type_embeddings.weight",
                                       c->type_vocab_size, d));
  VKF_RETURN_IF_ERROR(vkf_arch_expect2(m->f.ck, p, "embeddings.LayerNorm.weight", d, 0));
  VKF_RETURN_IF_ERROR(vkf_arch_expect2(m->f.ck, p, "embeddings.LayerNorm.bias", d, 0));
  vkf_block_config bc = block_config(c);
  for (int64_t l = 0; l < c->num_hidden_layers; l++) {
    char lp[VKF_ARCH_NAME_MAX], t[VKF_ARCH_NAME_MAX];
    NAME(lp, "%sencoder.layer.%lld.", p, (long long)l);
    VKF_RETURN_IF_ERROR(vkf_block_expect(m->f.ck, lp, &names, &bc));
    for (int i = 0; i < 3; i++) {
      VKF_RETURN_IF_ERROR(vkf_arch_expect2(
          m->f.ck, lp, NAME(t, "attention.self.%s.weight", global_names[i]), d, d));
      VKF_RETURN_IF_ERROR(
          vkf_arch_expect2(m->f.ck, lp, NAME(t, "attention.self.%s.bias", global_names[i]), d, 0));
    }
  }
  m->has_pooler = vkf_arch_has(m->f.ck, p, "pooler.dense.weight");
  if (m->has_pooler) {
    VKF_RETURN_IF_ERROR(vkf_arch_expect2(m->f.ck, p, "pooler.dense.weight", d, d));
    VKF_RETURN_IF_ERROR(vkf_arch_expect2(m->f.ck, p, "pooler.dense.bias", d, 0));
  }
  /* Heads sit outside the "longformer." prefix. */
  int64_t labels = c->num_labels;
  if (vkf_arch_has(m->f.ck, "", "classifier.out_proj.weight")) {
    m->head = VKF_LONGFORMER_HEAD_SEQUENCE_CLASSIFICATION;
    VKF_RETURN_IF_ERROR(vkf_arch_expect2(m->f.ck, "", "classifier.dense.weight", d, d));
    VKF_RETURN_IF_ERROR(vkf_arch_expect2(m->f.ck, "", "classifier.dense.bias", d, 0));
    VKF_RETURN_IF_ERROR(vkf_arch_expect2(m->f.ck, "", "classifier.out_proj.weight", labels, d));
    VKF_RETURN_IF_ERROR(vkf_arch_expect2(m->f.ck, "", "classifier.out_proj.bias", labels, 0));
  } else if (vkf_arch_has(m->f.ck, "", "qa_outputs.weight")) {
    /* HF splits qa_outputs' num_labels outputs into exactly start and end logits. */
    m->head = VKF_LONGFORMER_HEAD_QUESTION_ANSWERING;
    VKF_RETURN_IF_ERROR(vkf_arch_expect2(m->f.ck, "", "qa_outputs.weight", 2, d));
    VKF_RETURN_IF_ERROR(vkf_arch_expect2(m->f.ck, "", "qa_outputs.bias", 2, 0));
  } else if (vkf_arch_has(m->f.ck, "", "classifier.weight")) {
    m->head = VKF_LONGFORMER_HEAD_TOKEN_CLASSIFICATION;
    VKF_RETURN_IF_ERROR(vkf_arch_expect2(m->f.ck, "", "classifier.weight", labels, d));
    VKF_RETURN_IF_ERROR(vkf_arch_expect2(m->f.ck, "", "classifier.bias", labels, 0));
  }
  return VKF_OK;
}

vkf_status vkf_longformer_load(const char *model_dir, vkf_longformer_model **out_model) {
  *out_model = NULL;
  vkf_longformer_model *m = calloc(1, sizeof *m);
  if (!m) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "loading %s", model_dir);
  vkf_status s = vkf_arch_files_open(model_dir, &m->f);
  const vkf_hf_config *c = &m->f.config;
  if (!s && strcmp(c->model_type, "longformer") != 0)
    s = vkf_status_make(VKF_STATUS_UNSUPPORTED,
                        "%s/config.json: model_type \"%s\" is not supported (longformer)",
                        model_dir, c->model_type);
  /* Positions count from pad_token_id + 1 (RoBERTa): without one there are none. */
  if (!s && (c->pad_token_id < 0 || c->pad_token_id + 2 > c->max_position_embeddings))
    s = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                        "%s/config.json: pad_token_id %lld leaves no position of the %lld "
                        "max_position_embeddings (RoBERTa positions start at pad_token_id + 1)",
                        model_dir, (long long)c->pad_token_id,
                        (long long)c->max_position_embeddings);
  if (!s) s = vkf_arch_files_open_weights(&m->f);
  if (!s) s = check_tensors(m);
  if (s) {
    vkf_longformer_destroy(m);
    return s;
  }
  *out_model = m;
  return VKF_OK;
}

vkf_status vkf_longformer_quantize(vkf_longformer_model *m, const char *format) {
  return vkf_arch_files_quantize(&m->f, format);
}

const struct vkf_arch_files *vkf_longformer_files(const vkf_longformer_model *m) {
  return &m->f;
}

void vkf_longformer_destroy(vkf_longformer_model *m) {
  if (!m) return;
  vkf_longformer_layouts_free(&m->layouts);
  vkf_arch_files_close(&m->f);
  free(m);
}

const vkf_hf_config *vkf_longformer_config(const vkf_longformer_model *m) {
  return &m->f.config;
}
int vkf_longformer_has_pooler(const vkf_longformer_model *m) {
  return m->has_pooler;
}
vkf_longformer_head vkf_longformer_head_of(const vkf_longformer_model *m) {
  return m->head;
}
const char *vkf_longformer_architecture(const vkf_longformer_model *m) {
  return m->head == VKF_LONGFORMER_HEAD_TOKEN_CLASSIFICATION ? "LongformerForTokenClassification"
         : m->head == VKF_LONGFORMER_HEAD_SEQUENCE_CLASSIFICATION
             ? "LongformerForSequenceClassification"
         : m->head == VKF_LONGFORMER_HEAD_QUESTION_ANSWERING ? "LongformerForQuestionAnswering"
                                                             : "LongformerModel";
}
int64_t vkf_longformer_max_seq(const vkf_longformer_model *m) {
  return m->f.config.max_position_embeddings - m->f.config.pad_token_id - 1;
}

int64_t vkf_longformer_prefix_len(int64_t global_tokens) {
  const int64_t b = VKF_LONGFORMER_BLOCK;
  return (global_tokens + b - 1) / b * b;
}

static int64_t max_window(const vkf_hf_config *c) {
  int64_t w = 0;
  for (int64_t l = 0; l < c->num_hidden_layers; l++)
    if (c->attention_window[l] > w) w = c->attention_window[l];
  return w;
}

int64_t vkf_longformer_padded_len(const vkf_longformer_model *m, int64_t seq) {
  int64_t w = max_window(&m->f.config);
  return (seq + w - 1) / w * w;
}

/* ---- graph ---- */

static vkf_arch_weights weights_of(vkf_longformer_model *m, const char *prefix, vkf_dtype dt) {
  return (vkf_arch_weights){m->f.ck, &m->f.owned, prefix, dt, m->f.quantize};
}

static void fill_value(float *out, size_t count, const void *user) {
  for (size_t i = 0; i < count; i++) out[i] = *(const float *)user;
}

/* Row b holds b · stride (turns a row's own indices into rows of the flattened batch). */
static void fill_offsets(float *out, size_t count, const void *user) {
  for (size_t i = 0; i < count; i++) out[i] = (float)i * *(const float *)user;
}

typedef struct pad_fill {
  vkf_longformer_model *m;
  vkf_status status;
} pad_fill;

/* The embedding sum of a window-padding token: word[pad] + position[pad] + token_type[0]
 * (LongformerModel pads input_ids with pad_token_id, positions come out as pad_token_id). */
static void fill_pad_row(float *out, size_t count, const void *user) {
  pad_fill *f = (pad_fill *)user;
  const vkf_hf_config *c = &f->m->f.config;
  size_t d = (size_t)c->hidden_size, pad = (size_t)c->pad_token_id;
  const char *tables[3] = {"word_embeddings", "position_embeddings", "token_type_embeddings"};
  size_t row[3] = {pad, pad, 0};
  for (size_t i = 0; i < count; i++) out[i] = 0.0f;
  for (int t = 0; t < 3 && !f->status; t++) {
    char name[VKF_ARCH_NAME_MAX];
    float *v = NULL;
    f->status = vkf_weight_read_f32(
        f->m->f.ck, NAME(name, "%sembeddings.%s.weight", f->m->prefix, tables[t]), &v, NULL);
    for (size_t i = 0; i < count && !f->status; i++) out[i] += v[row[t] * d + i % d];
    free(v);
  }
}

static vkf_value constant(vkf_longformer_model *m, vkf_graph *g, const char *key, vkf_dtype dt,
                          uint32_t rank, const int64_t *shape, float value) {
  vkf_arch_weights w = weights_of(m, "", dt);
  return vkf_arch_computed(&w, g, key, dt, rank, shape, fill_value, &value);
}

/* [B, S] f32 of 0 / 1 -> [B, Np] f32 of 0 / -big, the padding tail masked. */
static vkf_value keep_to_bias(vkf_longformer_model *m, vkf_graph *g, const char *name,
                              vkf_value keep, int64_t batch, int64_t seq, int64_t np) {
  char nm[VKF_ARCH_NAME_MAX], key[64];
  int64_t one[1] = {1};
  vkf_value lowest =
      constant(m, g, "longformer.masked_score", VKF_F32, 1, one, -VKF_MASKED_SCORE);
  vkf_value bias = vkf_scale(g, NAME(nm, "%s.scaled", name), keep, VKF_MASKED_SCORE);
  bias = vkf_add(g, NAME(nm, "%s.bias", name), bias, lowest);
  if (np == seq) return bias;
  int64_t tail[2] = {batch, np - seq};
  vkf_value parts[2] = {bias, constant(m, g,
                                       NAME(key, "longformer.masked_tail.%lld.%lld",
                                            (long long)batch, (long long)(np - seq)),
                                       VKF_F32, 2, tail, -VKF_MASKED_SCORE)};
  return vkf_concat(g, name, parts, 2, 1);
}

/* i32 [B, K] row-local indices -> rows of the flattened [B·stride] table. The sum runs in f32,
 * exact below 2^24 (the build checks the batch stays under it). */
static vkf_value flat_rows(vkf_longformer_model *m, vkf_graph *g, const char *name, vkf_value ids,
                           int64_t batch, int64_t stride) {
  char nm[VKF_ARCH_NAME_MAX], key[64];
  int64_t shape[2] = {batch, 1};
  float s = (float)stride;
  vkf_arch_weights w = weights_of(m, "", VKF_F32);
  vkf_value off = vkf_arch_computed(
      &w, g, NAME(key, "longformer.row_offsets.%lld.%lld", (long long)batch, (long long)stride),
      VKF_F32, 2, shape, fill_offsets, &s);
  vkf_value f = vkf_cast(g, NAME(nm, "%s.f32", name), ids, VKF_F32);
  f = vkf_add(g, NAME(nm, "%s.flat", name), f, off);
  return vkf_cast(g, name, f, VKF_I32);
}

static vkf_value linear(vkf_longformer_model *m, vkf_graph *g, const char *prefix,
                        const char *module, vkf_value x, vkf_dtype dt) {
  char a[VKF_ARCH_NAME_MAX], b[VKF_ARCH_NAME_MAX], nm[VKF_ARCH_NAME_MAX];
  vkf_arch_weights w = weights_of(m, prefix, dt);
  vkf_matmul_options o = {.transpose_b = 1,
                          .bias = vkf_arch_weight(&w, g, NAME(b, "%s.bias", module))};
  return vkf_matmul(g, NAME(nm, "%s%s", prefix, module), x,
                    vkf_arch_weight(&w, g, NAME(a, "%s.weight", module)), &o);
}

static vkf_value layernorm(vkf_longformer_model *m, vkf_graph *g, const char *name, vkf_value x,
                           vkf_value gamma, vkf_value beta) {
  vkf_norm_options o = {.eps = (float)m->f.config.layer_norm_eps, .gamma = gamma, .beta = beta};
  return vkf_layernorm(g, name, x, &o);
}

static void global_weights(vkf_longformer_model *m, vkf_graph *g, const char *layer, vkf_dtype dt,
                           vkf_longformer_global_weights *out) {
  vkf_arch_weights w = weights_of(m, m->prefix, dt);
  char a[VKF_ARCH_NAME_MAX], b[VKF_ARCH_NAME_MAX], c[VKF_ARCH_NAME_MAX], key[VKF_ARCH_NAME_MAX];
  out->q.weight = vkf_arch_weight(&w, g, NAME(a, "%sattention.self.query_global.weight", layer));
  out->q.bias = vkf_arch_weight(&w, g, NAME(a, "%sattention.self.query_global.bias", layer));
  const char *wn[2] = {NAME(a, "%sattention.self.key_global.weight", layer),
                       NAME(b, "%sattention.self.value_global.weight", layer)};
  out->kv.weight =
      vkf_arch_joined(&w, g, NAME(key, "%s%sattention.self.kv_global.weight", m->prefix, layer), wn,
                      2, VKF_ARCH_STACK, 1.0f);
  const char *bn[2] = {NAME(b, "%sattention.self.key_global.bias", layer),
                       NAME(c, "%sattention.self.value_global.bias", layer)};
  out->kv.bias =
      vkf_arch_joined(&w, g, NAME(key, "%s%sattention.self.kv_global.bias", m->prefix, layer), bn,
                      2, VKF_ARCH_STACK, 1.0f);
}

static vkf_status check_build(const vkf_longformer_model *m, int64_t batch, int64_t seq, int64_t np,
                              int64_t p, vkf_dtype dt) {
  const vkf_hf_config *c = &m->f.config;
  if (batch < 1 || seq < 1 || seq > vkf_longformer_max_seq(m) || (dt != VKF_F32 && dt != VKF_F16))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: batch %lld, seq_len %lld (max %lld), dtype %s not supported",
                           m->f.dir, (long long)batch, (long long)seq,
                           (long long)vkf_longformer_max_seq(m), vkf_dtype_name(dt));
  for (int64_t l = 0; l < c->num_hidden_layers; l++)
    if (np % c->attention_window[l] != 0)
      return vkf_status_make(
          VKF_STATUS_INVALID_ARGUMENT,
          "%s: layer %lld's attention_window %lld does not divide the padded sequence length %lld "
          "(the largest window's multiple); transformers refuses it too (\"Sequence length should "
          "be multiple of %lld\")",
          m->f.dir, (long long)l, (long long)c->attention_window[l], (long long)np,
          (long long)c->attention_window[l]);
  if (batch * (np + p + 1) >= ((int64_t)1 << 24))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: %lld rows of %lld tokens (%lld global slots) are too many for one "
                           "run's row indices (2^24)",
                           m->f.dir, (long long)batch, (long long)np, (long long)p);
  return VKF_OK;
}

vkf_status vkf_longformer_build(vkf_longformer_model *m,
                                const vkf_longformer_build_options *options,
                                vkf_longformer_graph *out) {
  memset(out, 0, sizeof *out);
  const vkf_hf_config *c = &m->f.config;
  vkf_longformer_build_options o = *options;
  int64_t batch = o.batch, seq = o.seq_len, np = vkf_longformer_padded_len(m, seq),
          p = vkf_longformer_prefix_len(o.global_tokens), d = c->hidden_size;
  uint32_t want = o.outputs ? o.outputs : VKF_LONGFORMER_OUT_LAST_HIDDEN_STATE;
  vkf_dtype dt = o.dtype;
  VKF_RETURN_IF_ERROR(check_build(m, batch, seq, np, p, dt));
  if ((want & VKF_LONGFORMER_OUT_POOLER_OUTPUT) && !m->has_pooler)
    return vkf_status_make(VKF_STATUS_NOT_FOUND, "%s: the checkpoint has no pooler (pooler_output)",
                           m->f.dir);
  int qa = m->head == VKF_LONGFORMER_HEAD_QUESTION_ANSWERING;
  if ((want & VKF_LONGFORMER_OUT_LOGITS) && (m->head == VKF_LONGFORMER_HEAD_NONE || qa))
    return vkf_status_make(VKF_STATUS_NOT_FOUND, "%s: the checkpoint has no classifier (logits)",
                           m->f.dir);
  if ((want & (VKF_LONGFORMER_OUT_START_LOGITS | VKF_LONGFORMER_OUT_END_LOGITS)) && !qa)
    return vkf_status_make(VKF_STATUS_NOT_FOUND,
                           "%s: the checkpoint has no qa_outputs (start_logits, end_logits)",
                           m->f.dir);
  vkf_graph *g = NULL;
  VKF_RETURN_IF_ERROR(vkf_graph_create(vkf_longformer_architecture(m), &g));
  char nm[VKF_ARCH_NAME_MAX + 64], key[VKF_ARCH_NAME_MAX];
  const char *pre = m->prefix;
  vkf_arch_weights aw = weights_of(m, pre, dt);

  int64_t bs[2] = {batch, seq}, bnp[2] = {batch, np}, bp[2] = {batch, p};
  vkf_value ids = vkf_graph_input(g, "input_ids", VKF_I32, 2, bs);
  vkf_value mask = vkf_graph_input(g, "attention_mask", VKF_I32, 2, bs);
  vkf_value types = vkf_graph_input(g, "token_type_ids", VKF_I32, 2, bs);
  vkf_value pos = vkf_graph_input(g, "position_ids", VKF_I32, 2, bs);
  vkf_value scatter = vkf_graph_input(g, "scatter_index", VKF_I32, 2, bnp);
  int64_t bk[2] = {batch, p + np};
  vkf_value key_bias = vkf_graph_input(g, "key_bias", VKF_F32, 2, bk);
  vkf_value gidx = p ? vkf_graph_input(g, "global_index", VKF_I32, 2, bp) : VKF_NO_VALUE;

  /* Embeddings; the window padding's rows are one constant row (pad id, pad position, type 0). */
  vkf_value x = vkf_gather(g, NAME(nm, "%sembeddings.word_embeddings", pre),
                           vkf_arch_weight(&aw, g, "embeddings.word_embeddings.weight"), ids);
  x = vkf_add(g, NAME(nm, "%sembeddings.positions", pre), x,
              vkf_gather(g, NAME(nm, "%sembeddings.position_embeddings", pre),
                         vkf_arch_weight(&aw, g, "embeddings.position_embeddings.weight"), pos));
  x = vkf_add(
      g, NAME(nm, "%sembeddings", pre), x,
      vkf_gather(g, NAME(nm, "%sembeddings.token_type_embeddings", pre),
                 vkf_arch_weight(&aw, g, "embeddings.token_type_embeddings.weight"), types));
  if (np > seq) {
    int64_t tail[3] = {batch, np - seq, d};
    pad_fill f = {m, VKF_OK};
    vkf_arch_weights w0 = weights_of(m, "", dt);
    vkf_value pad_rows = vkf_arch_computed(&w0, g,
                                           NAME(key, "%sembeddings.window_padding.%lld.%lld", pre,
                                                (long long)batch, (long long)(np - seq)),
                                           dt, 3, tail, fill_pad_row, &f);
    if (f.status) vkf_graph_set_error(g, f.status);
    vkf_value parts[2] = {x, pad_rows};
    x = vkf_concat(g, NAME(nm, "%sembeddings.padded", pre), parts, 2, 1);
  }
  x = layernorm(m, g, NAME(nm, "%sembeddings.LayerNorm", pre), x,
                vkf_arch_weight(&aw, g, "embeddings.LayerNorm.weight"),
                vkf_arch_weight(&aw, g, "embeddings.LayerNorm.bias"));

  /* The local rows' key masks come from the host (key_bias); global rows see every real token. */
  vkf_longformer_attn_io io = {.batch = batch, .np = np, .prefix = p, .key_bias = key_bias};
  if (p) {
    vkf_value mask_f = vkf_cast(g, "attention_mask.f32", mask, VKF_F32);
    int64_t b4[4] = {batch, 1, 1, np};
    io.global_bias =
        vkf_reshape(g, "global_key_bias",
                    keep_to_bias(m, g, "global_key_bias.rows", mask_f, batch, seq, np), 4, b4);
    io.global_rows = flat_rows(m, g, "global_rows", gidx, batch, np);
  }
  io.scatter = flat_rows(m, g, "scatter_rows", scatter, batch, np + p + 1);
  int64_t zs[3] = {batch, 1, d};
  io.zero_rows =
      constant(m, g, NAME(key, "longformer.zero_rows.%lld.%lld", (long long)batch, (long long)d),
               dt, 3, zs, 0.0f);

  vkf_block_config bc = block_config(c);
  vkf_status st = VKF_OK;
  for (int64_t l = 0; l < c->num_hidden_layers && !st; l++) {
    char tp[64], np_[VKF_ARCH_NAME_MAX];
    NAME(tp, "encoder.layer.%lld.", (long long)l);
    NAME(np_, "%s%s", pre, tp);
    io.one_sided = c->attention_window[l] / 2;
    io.layout = vkf_longformer_layout(&m->layouts, io.one_sided, np, p, &st);
    if (st) break;
    vkf_block_weights w;
    vkf_block_weights_get(&aw, g, tp, &names, &bc, &w);
    vkf_longformer_global_weights gw;
    global_weights(m, g, tp, dt, &gw);
    x = vkf_longformer_attention(g, np_, &bc, &w, &gw, &io, x);
    x = layernorm(m, g, NAME(nm, "%sattention.output.LayerNorm", np_), x, w.attn_norm_gamma,
                  w.attn_norm_beta);
    x = vkf_block_mlp_build(g, np_, &names, &bc, &w, x, x);
    x = layernorm(m, g, NAME(nm, "%soutput.LayerNorm", np_), x, w.mlp_norm_gamma, w.mlp_norm_beta);
  }
  if (np > seq) x = vkf_slice(g, "unpad", x, 1, 0, seq); /* HF trims the window padding */
  if (want & VKF_LONGFORMER_OUT_LAST_HIDDEN_STATE)
    out->last_hidden_state = vkf_arch_f32_output(g, x, "last_hidden_state");
  if (want & VKF_LONGFORMER_OUT_POOLER_OUTPUT) {
    vkf_value cls = vkf_slice(g, NAME(nm, "%spooler.first_token", pre), x, 1, 0, 1);
    int64_t bd[2] = {batch, d};
    cls = vkf_reshape(g, NAME(nm, "%spooler.first_token_flat", pre), cls, 2, bd);
    vkf_value pooled =
        vkf_tanh(g, NAME(nm, "%spooler", pre), linear(m, g, pre, "pooler.dense", cls, dt));
    out->pooler_output = vkf_arch_f32_output(g, pooled, "pooler_output");
  }
  if (want & VKF_LONGFORMER_OUT_LOGITS) {
    vkf_value logits;
    if (m->head == VKF_LONGFORMER_HEAD_TOKEN_CLASSIFICATION) {
      logits = linear(m, g, "", "classifier", x, dt); /* [B, S, labels] */
    } else {
      /* LongformerClassificationHead: dense, tanh, out_proj on the first token. */
      vkf_value cls = vkf_slice(g, "classifier.first_token", x, 1, 0, 1);
      int64_t bd[2] = {batch, d};
      cls = vkf_reshape(g, "classifier.first_token_flat", cls, 2, bd);
      vkf_value h = vkf_tanh(g, "classifier.tanh", linear(m, g, "", "classifier.dense", cls, dt));
      logits = linear(m, g, "", "classifier.out_proj", h, dt); /* [B, labels] */
    }
    out->logits = vkf_arch_f32_output(g, logits, "logits");
  }
  if (want & (VKF_LONGFORMER_OUT_START_LOGITS | VKF_LONGFORMER_OUT_END_LOGITS)) {
    /* qa_outputs, then logits.split(1, dim=-1) and squeeze(-1): [B, S, 2] -> two [B, S]. */
    vkf_value both = linear(m, g, "", "qa_outputs", x, dt);
    const char *qa_names[2] = {"start_logits", "end_logits"};
    uint32_t bits[2] = {VKF_LONGFORMER_OUT_START_LOGITS, VKF_LONGFORMER_OUT_END_LOGITS};
    vkf_value *dst[2] = {&out->start_logits, &out->end_logits};
    for (int k = 0; k < 2; k++) {
      if (!(want & bits[k])) continue;
      vkf_value v = vkf_slice(g, NAME(nm, "qa_outputs.%s", qa_names[k]), both, 2, k, k + 1);
      v = vkf_reshape(g, NAME(nm, "qa_outputs.%s.flat", qa_names[k]), v, 2, bs);
      *dst[k] = vkf_arch_f32_output(g, v, qa_names[k]);
    }
  }
  if (!st) st = vkf_graph_status(g);
  if (st) {
    vkf_graph_destroy(g);
    memset(out, 0, sizeof *out);
    return vkf_status_annotate(st, "building Longformer from %s: ", m->f.dir);
  }
  out->graph = g;
  vkf_value in[8] = {ids, mask, VKF_NO_VALUE, types, pos, scatter, key_bias, gidx};
  for (int i = 0; i < 8; i++) out->inputs[i] = in[i];
  out->derived_count = p ? 4 : 3;
  return VKF_OK;
}
