/* BERT checkpoints: loading (config, sentence-transformers pipeline, every tensor's presence and
 * shape), the weight cache (in-place f32, converted f16, fused QKV, position + token-type table)
 * and the sentence-embedding graph builder. */
#include "models/arch/bert.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "graph/base/half.h"
#include "graph/ir/builder.h"
#include "models/formats/safetensors.h"
#include "models/formats/weight_cache.h"

enum { BERT_NAME_MAX = 256 };

struct vkf_bert_model {
  char *dir;
  vkf_hf_config config;
  vkf_bert_pipeline pipeline;
  vkf_safetensors *st;
  const char *prefix; /* "bert." (task-head checkpoints) or "" (BertModel) */
  vkf_weight_cache *owned; /* converted / assembled weights */
};

/* Small printf into a stack buffer for node and weight names. */
#define NAME(buf, ...) (snprintf(buf, sizeof buf, __VA_ARGS__), buf)

/* ---- loading ---- */

/* Checks m->prefix + `suffix`: rank-1 [d0] when d1 == 0, else [d0, d1]; a float dtype. */
static vkf_status expect(const vkf_bert_model *m, const char *suffix, int64_t d0, int64_t d1) {
  char name[BERT_NAME_MAX];
  const int64_t dims[2] = {d0, d1};
  const vkf_safetensors_info *info = NULL;
  VKF_RETURN_IF_ERROR(vkf_safetensors_expect(m->st, NAME(name, "%s%s", m->prefix, suffix),
                                             d1 ? 2 : 1, dims, &info));
  if (info->dtype != VKF_SAFETENSORS_F32 && info->dtype != VKF_SAFETENSORS_F16 &&
      info->dtype != VKF_SAFETENSORS_BF16)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "tensor \"%s\" has dtype %s in %s; F32, F16 or BF16 expected", name,
                           vkf_safetensors_dtype_name(info->dtype), vkf_safetensors_path(m->st));
  return VKF_OK;
}

static vkf_status check_tensors(vkf_bert_model *m) {
  m->prefix = vkf_safetensors_find(m->st, "bert.embeddings.word_embeddings.weight") ? "bert." : "";
  const vkf_hf_config *c = &m->config;
  int64_t d = c->hidden_size, in = c->intermediate_size;
  VKF_RETURN_IF_ERROR(expect(m, "embeddings.word_embeddings.weight", c->vocab_size, d));
  VKF_RETURN_IF_ERROR(
      expect(m, "embeddings.position_embeddings.weight", c->max_position_embeddings, d));
  VKF_RETURN_IF_ERROR(expect(m, "embeddings.token_type_embeddings.weight", c->type_vocab_size, d));
  VKF_RETURN_IF_ERROR(expect(m, "embeddings.LayerNorm.weight", d, 0));
  VKF_RETURN_IF_ERROR(expect(m, "embeddings.LayerNorm.bias", d, 0));
  static const struct {
    const char *suffix;
    int shape; /* 0: [D, D]; 1: [I, D]; 2: [D, I]; 3: [D]; 4: [I] */
  } w[] = {
      /* clang-format off */
      {"attention.self.query.weight", 0},       {"attention.self.query.bias", 3},
      {"attention.self.key.weight", 0},         {"attention.self.key.bias", 3},
      {"attention.self.value.weight", 0},       {"attention.self.value.bias", 3},
      {"attention.output.dense.weight", 0},     {"attention.output.dense.bias", 3},
      {"attention.output.LayerNorm.weight", 3}, {"attention.output.LayerNorm.bias", 3},
      {"intermediate.dense.weight", 1},         {"intermediate.dense.bias", 4},
      {"output.dense.weight", 2},               {"output.dense.bias", 3},
      {"output.LayerNorm.weight", 3},           {"output.LayerNorm.bias", 3},
      /* clang-format on */
  };
  const int64_t shapes[5][2] = {{d, d}, {in, d}, {d, in}, {d, 0}, {in, 0}};
  for (int64_t l = 0; l < c->num_hidden_layers; l++) {
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
      char name[BERT_NAME_MAX];
      NAME(name, "encoder.layer.%lld.%s", (long long)l, w[i].suffix);
      VKF_RETURN_IF_ERROR(expect(m, name, shapes[w[i].shape][0], shapes[w[i].shape][1]));
    }
  }
  return VKF_OK;
}

vkf_status vkf_bert_load(const char *model_dir, vkf_bert_model **out_model) {
  *out_model = NULL;
  struct stat sb;
  errno = 0;
  if (stat(model_dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
    return vkf_status_make(errno == ENOENT || errno == 0 ? VKF_STATUS_NOT_FOUND : VKF_STATUS_IO,
                           "model directory %s: %s", model_dir,
                           errno == 0 ? "not a directory" : strerror(errno));
  vkf_bert_model *m = calloc(1, sizeof *m);
  if (!m) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "loading %s", model_dir);
  m->dir = strdup(model_dir);
  char path[4096];
  snprintf(path, sizeof path, "%s/config.json", model_dir);
  vkf_status s = m->dir ? VKF_OK : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", model_dir);
  if (!s) s = vkf_hf_config_load(path, &m->config);
  /* roberta / xlm-roberta share the TEXT family but use BPE vocabularies and offset positions. */
  if (!s && strcmp(m->config.model_type, "bert") != 0)
    s = vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: model_type \"%s\" is not supported (bert)",
                        path, m->config.model_type);
  if (!s) s = vkf_bert_pipeline_load(model_dir, &m->config, &m->pipeline);
  if (!s) {
    snprintf(path, sizeof path, "%s/model.safetensors", model_dir);
    s = vkf_safetensors_open(path, &m->st);
  }
  if (!s) s = check_tensors(m);
  if (s) {
    vkf_bert_destroy(m);
    return s;
  }
  *out_model = m;
  return VKF_OK;
}

void vkf_bert_destroy(vkf_bert_model *m) {
  if (!m) return;
  vkf_weight_cache_free(&m->owned);
  vkf_safetensors_close(m->st);
  vkf_hf_config_release(&m->config);
  free(m->dir);
  free(m);
}

const vkf_hf_config *vkf_bert_config(const vkf_bert_model *m) {
  return &m->config;
}
const vkf_bert_pipeline *vkf_bert_pipeline_of(const vkf_bert_model *m) {
  return &m->pipeline;
}
const char *vkf_bert_dir(const vkf_bert_model *m) {
  return m->dir;
}

/* ---- weights ---- */

/* Stores fp32 `values` (taken over) as `dtype` under `key`; returns the data, or NULL and records
 * an out-of-memory error in `g`. */
static const void *owned_put(vkf_bert_model *m, vkf_graph *g, const char *key, vkf_dtype dtype,
                             float *values, size_t count) {
  const void *data = vkf_weight_cache_put(&m->owned, key, dtype, values, count);
  if (!data)
    vkf_graph_set_error(g, vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "converting \"%s\"", key));
  return data;
}

/* Checkpoint tensor `name` (prefix included) as fp32 in a new buffer; errors go to `g`. */
static float *read_f32(const vkf_bert_model *m, vkf_graph *g, const char *name,
                       const vkf_safetensors_info **out_info) {
  float *v = NULL;
  vkf_status s = vkf_weight_read_f32(m->st, name, &v, out_info);
  if (s) vkf_graph_set_error(g, s);
  return v;
}

/* A graph constant for checkpoint tensor prefix + `suffix` in `dtype`: the mapped bytes
 * themselves when they are aligned f32 already, otherwise a converted copy cached in the model. */
static vkf_value weight(vkf_bert_model *m, vkf_graph *g, const char *suffix, vkf_dtype dtype) {
  char name[BERT_NAME_MAX];
  NAME(name, "%s%s", m->prefix, suffix);
  return vkf_weight_constant(&m->owned, m->st, g, name, dtype);
}

/* The Q, K and V tensors of layer-prefix `p` (`what` "weight" [D, D] or "bias" [D]) stacked into
 * one [3D, ...] constant, so one GEMM computes all three projections. */
static vkf_value qkv(vkf_bert_model *m, vkf_graph *g, const char *p, const char *what,
                     vkf_dtype dtype) {
  char key[BERT_NAME_MAX];
  NAME(key, "%s%sattention.self.qkv.%s", m->prefix, p, what);
  int64_t d = m->config.hidden_size;
  int is_weight = strcmp(what, "weight") == 0;
  size_t each = (size_t)(is_weight ? d * d : d);
  const void *data = vkf_weight_cache_find(m->owned, key, dtype);
  if (!data) {
    float *all = malloc(3 * each * sizeof *all);
    if (!all) {
      vkf_graph_set_error(g, vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "assembling %s", key));
      return VKF_NO_VALUE;
    }
    static const char *const part[3] = {"query", "key", "value"};
    for (int i = 0; i < 3; i++) {
      char name[BERT_NAME_MAX];
      const vkf_safetensors_info *info = NULL;
      float *v = read_f32(m, g, NAME(name, "%s%sattention.self.%s.%s", m->prefix, p, part[i], what),
                          &info);
      if (!v) { /* shapes were checked at load */
        free(all);
        return VKF_NO_VALUE;
      }
      memcpy(all + (size_t)i * each, v, each * sizeof *v);
      free(v);
    }
    data = owned_put(m, g, key, dtype, all, 3 * each);
    if (!data) return VKF_NO_VALUE;
  }
  int64_t shape[2] = {3 * d, d};
  return vkf_graph_constant(g, key, dtype, is_weight ? 2 : 1, shape, data);
}

/* position_embeddings[0:n] + token_type_embeddings[0] as one [N, D] constant: every token has
 * type 0 for single-sentence inputs, so the two lookups that do not depend on the ids fold into
 * one table added after the word-embedding gather. */
static vkf_value position_table(vkf_bert_model *m, vkf_graph *g, int64_t n, vkf_dtype dtype) {
  char key[BERT_NAME_MAX], name[BERT_NAME_MAX];
  NAME(key, "%sembeddings.position_and_type.%lld", m->prefix, (long long)n);
  int64_t d = m->config.hidden_size;
  const void *data = vkf_weight_cache_find(m->owned, key, dtype);
  if (!data) {
    const vkf_safetensors_info *pi = NULL, *ti = NULL;
    float *pos =
        read_f32(m, g, NAME(name, "%sembeddings.position_embeddings.weight", m->prefix), &pi);
    float *type =
        pos ? read_f32(m, g, NAME(name, "%sembeddings.token_type_embeddings.weight", m->prefix),
                       &ti)
            : NULL;
    if (!type) {
      free(pos);
      return VKF_NO_VALUE;
    }
    for (int64_t i = 0; i < n * d; i++) pos[i] += type[i % d]; /* rows 0..n-1 of [P, D] */
    free(type);
    data = owned_put(m, g, key, dtype, pos, (size_t)(n * d));
    if (!data) return VKF_NO_VALUE;
  }
  int64_t shape[2] = {n, d};
  return vkf_graph_constant(g, key, dtype, 2, shape, data);
}

/* A column of `n` ones [N, 1] (f32), cached: mask [B, N] · ones = tokens per sentence. */
static vkf_value ones_column(vkf_bert_model *m, vkf_graph *g, int64_t n) {
  char key[64];
  NAME(key, "kv_len.ones.%lld", (long long)n);
  const void *data = vkf_weight_cache_find(m->owned, key, VKF_F32);
  if (!data) {
    float *v = malloc((size_t)n * sizeof *v);
    for (int64_t i = 0; v && i < n; i++) v[i] = 1.0f;
    data = owned_put(m, g, key, VKF_F32, v, (size_t)n);
    if (!data) return VKF_NO_VALUE;
  }
  int64_t shape[2] = {n, 1};
  return vkf_graph_constant(g, key, VKF_F32, 2, shape, data);
}

/* ---- graph ---- */

static vkf_activation activation_of(vkf_hf_act act) {
  switch (act) {
    case VKF_HF_ACT_GELU_TANH:
      return VKF_ACT_GELU_TANH;
    case VKF_HF_ACT_RELU:
      return VKF_ACT_RELU;
    case VKF_HF_ACT_SILU:
      return VKF_ACT_SILU;
    default:
      return VKF_ACT_GELU_ERF;
  }
}

static vkf_value layernorm(vkf_bert_model *m, vkf_graph *g, const char *module, vkf_value x,
                           vkf_dtype dt) {
  char a[BERT_NAME_MAX], b[BERT_NAME_MAX], nm[BERT_NAME_MAX];
  vkf_norm_options o = {
      .eps = (float)m->config.layer_norm_eps,
      .gamma = weight(m, g, NAME(a, "%s.weight", module), dt),
      .beta = weight(m, g, NAME(b, "%s.bias", module), dt),
  };
  return vkf_layernorm(g, NAME(nm, "%s%s", m->prefix, module), x, &o);
}

/* Linear layer prefix + `module` (torch weight [out, in]) with the GEMM epilogue. */
static vkf_value linear(vkf_bert_model *m, vkf_graph *g, const char *module, const char *node,
                        vkf_value x, vkf_activation act, vkf_value residual, vkf_dtype dt) {
  char a[BERT_NAME_MAX], b[BERT_NAME_MAX], nm[BERT_NAME_MAX];
  vkf_matmul_options o = {
      .transpose_b = 1,
      .bias = weight(m, g, NAME(b, "%s.bias", module), dt),
      .activation = act,
      .residual = residual,
  };
  return vkf_matmul(g, NAME(nm, "%s%s", m->prefix, node), x,
                    weight(m, g, NAME(a, "%s.weight", module), dt), &o);
}

/* One post-norm encoder layer: ln(x + attn(x)), then ln(. + mlp(.)). x [B, N, D] -> [B, N, D]. */
static vkf_value encoder_layer(vkf_bert_model *m, vkf_graph *g, int64_t l, vkf_value x,
                               vkf_value kv_len, int64_t batch, int64_t n, vkf_dtype dt) {
  const vkf_hf_config *c = &m->config;
  int64_t d = c->hidden_size, h = c->num_attention_heads, hd = c->head_dim;
  char p[64], a[BERT_NAME_MAX], b[BERT_NAME_MAX], nm[BERT_NAME_MAX];
  NAME(p, "encoder.layer.%lld.", (long long)l);

  vkf_matmul_options qkv_opt = {.transpose_b = 1, .bias = qkv(m, g, p, "bias", dt)};
  vkf_value y = vkf_matmul(g, NAME(nm, "%s%sattention.self.qkv", m->prefix, p), x,
                           qkv(m, g, p, "weight", dt), &qkv_opt); /* [B, N, 3D] */
  int64_t split[4] = {batch, n, 3 * h, hd};
  y = vkf_reshape(g, NAME(nm, "%s%sattention.self.heads", m->prefix, p), y, 4, split);
  static const uint32_t swap12[4] = {0, 2, 1, 3};
  static const char *const part[3] = {"query", "key", "value"};
  vkf_value qkv_bhnd[3];
  for (int i = 0; i < 3; i++) {
    vkf_value s = vkf_slice(g, NAME(nm, "%s%sattention.self.%s.heads", m->prefix, p, part[i]), y, 2,
                            i * h, (i + 1) * h); /* [B, N, H, Dh] */
    qkv_bhnd[i] = vkf_permute(g, NAME(nm, "%s%sattention.self.%s", m->prefix, p, part[i]), s,
                              swap12); /* [B, H, N, Dh], a strided view of the QKV output */
  }
  vkf_attention_options att_opt = {.scale = 1.0f / sqrtf((float)hd), .kv_len = kv_len};
  vkf_value att = vkf_attention(g, NAME(nm, "%s%sattention.self", m->prefix, p), qkv_bhnd[0],
                                qkv_bhnd[1], qkv_bhnd[2], &att_opt); /* [B, H, N, Dh] */
  att = vkf_permute(g, NAME(nm, "%s%sattention.self.merge_heads", m->prefix, p), att, swap12);
  int64_t merged[3] = {batch, n, d};
  att = vkf_reshape(g, NAME(nm, "%s%sattention.self.context", m->prefix, p), att, 3,
                    merged); /* [B, N, D], copied from the [B, N, H, Dh] view */

  x = linear(m, g, NAME(a, "%sattention.output.dense", p), NAME(b, "%sattention.output", p), att,
             VKF_ACT_NONE, x, dt);
  x = layernorm(m, g, NAME(a, "%sattention.output.LayerNorm", p), x, dt);
  vkf_value mid = linear(m, g, NAME(a, "%sintermediate.dense", p), NAME(b, "%sintermediate", p), x,
                         activation_of(c->hidden_act), VKF_NO_VALUE, dt); /* [B, N, I] */
  x = linear(m, g, NAME(a, "%soutput.dense", p), NAME(b, "%soutput", p), mid, VKF_ACT_NONE, x, dt);
  return layernorm(m, g, NAME(a, "%soutput.LayerNorm", p), x, dt);
}

vkf_status vkf_bert_build(vkf_bert_model *m, const vkf_bert_build_options *options,
                          vkf_bert_graph *out) {
  memset(out, 0, sizeof *out);
  vkf_bert_build_options o = options ? *options : (vkf_bert_build_options){0};
  const vkf_hf_config *c = &m->config;
  int64_t batch = o.batch ? o.batch : 1;
  int64_t n = o.seq_len ? o.seq_len : m->pipeline.max_seq_length;
  vkf_dtype dt = o.dtype;
  if (batch < 0 || n < 1 || n > c->max_position_embeddings || (dt != VKF_F32 && dt != VKF_F16))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: batch %lld, seq_len %lld (max %lld), dtype %s not supported",
                           m->dir, (long long)batch, (long long)n,
                           (long long)c->max_position_embeddings, vkf_dtype_name(dt));
  vkf_graph *g = NULL;
  VKF_RETURN_IF_ERROR(vkf_graph_create("BertModel+pooling", &g));
  char nm[BERT_NAME_MAX];

  int64_t bn[2] = {batch, n};
  vkf_value ids = vkf_graph_input(g, "input_ids", VKF_I32, 2, bn);
  vkf_value mask = vkf_graph_input(g, "attention_mask", VKF_I32, 2, bn);

  /* Key padding: the mask is ones then zeros, so its row sums are the kv_len of the attention
   * op, which skips padded key blocks instead of adding a -inf bias. Sums of 0/1 in f32 are exact
   * and the cast back truncates an exact integer. */
  vkf_value mask_f = vkf_cast(g, "attention_mask.f32", mask, VKF_F32);
  vkf_value lens = vkf_matmul(g, "attention_mask.sum", mask_f, ones_column(m, g, n), NULL);
  int64_t b1[1] = {batch};
  lens = vkf_reshape(g, "attention_mask.rows", lens, 1, b1);
  vkf_value kv_len = vkf_cast(g, "kv_len", lens, VKF_I32); /* i32 [B] */

  vkf_value x = vkf_gather(g, NAME(nm, "%sembeddings.word_embeddings", m->prefix),
                           weight(m, g, "embeddings.word_embeddings.weight", dt), ids);
  x = vkf_add(g, NAME(nm, "%sembeddings", m->prefix), x, position_table(m, g, n, dt));
  x = layernorm(m, g, "embeddings.LayerNorm", x, dt); /* [B, N, D] */
  for (int64_t l = 0; l < c->num_hidden_layers; l++)
    x = encoder_layer(m, g, l, x, kv_len, batch, n, dt);
  if (dt != VKF_F32) x = vkf_cast(g, "last_hidden_state.f32", x, VKF_F32);

  vkf_value e;
  if (m->pipeline.pooling == VKF_BERT_POOL_CLS) {
    e = vkf_slice(g, "pooling.cls_token", x, 1, 0, 1); /* [B, 1, D] */
    int64_t bd[2] = {batch, c->hidden_size};
    e = vkf_reshape(g, "pooling", e, 2, bd);
  } else {
    e = vkf_mean_pool(g, "pooling", x, mask); /* [B, D] */
  }
  /* sentence-transformers' Normalize is F.normalize(p=2, dim=1), eps 1e-12. */
  if (m->pipeline.normalize) e = vkf_l2_normalize(g, "normalize", e, 1e-12f);
  out->sentence_embedding = vkf_graph_output(g, e, "sentence_embedding");
  vkf_status st = vkf_graph_status(g);
  if (st) {
    vkf_graph_destroy(g);
    memset(out, 0, sizeof *out);
    return vkf_status_annotate(st, "building BERT from %s: ", m->dir);
  }
  out->graph = g;
  out->input_ids = ids;
  out->attention_mask = mask;
  return VKF_OK;
}
