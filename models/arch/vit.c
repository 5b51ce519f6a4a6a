/* ViT / DeiT checkpoints: loading (config, image processor, every tensor's presence and shape)
 * and the parts of the graph that are ViT's own (patch embedding, class and distillation tokens,
 * final norm, pooler, heads); every encoder layer comes from transformer_block.h. */
#include "models/arch/vit.h"

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

enum { VIT_NAME_MAX = VKF_ARCH_NAME_MAX };

/* Hugging Face's ViTLayer / DeiTLayer: pre-norm, LayerNorm, GELU MLP, separate Q, K, V. */
static const vkf_block_names vit_block_names = {
    .attn_norm = "layernorm_before",
    .attention = "attention",
    .attn_out = "attention.output",
    .mlp_norm = "layernorm_after",
    .mlp_up = "intermediate",
    .mlp_down = "output",
    .q_weight = "attention.attention.query.weight",
    .k_weight = "attention.attention.key.weight",
    .v_weight = "attention.attention.value.weight",
    .q_bias = "attention.attention.query.bias",
    .k_bias = "attention.attention.key.bias",
    .v_bias = "attention.attention.value.bias",
    .out_weight = "attention.output.dense.weight",
    .out_bias = "attention.output.dense.bias",
    .attn_norm_weight = "layernorm_before.weight",
    .attn_norm_bias = "layernorm_before.bias",
    .up_weight = "intermediate.dense.weight",
    .up_bias = "intermediate.dense.bias",
    .down_weight = "output.dense.weight",
    .down_bias = "output.dense.bias",
    .mlp_norm_weight = "layernorm_after.weight",
    .mlp_norm_bias = "layernorm_after.bias",
};

struct vkf_vit_model {
  vkf_arch_files f; /* dir, config, weights */
  vkf_hf_preprocessor pre;
  vkf_image_preprocess_params params;
  const char *prefix;     /* "vit.", "deit." or "" (bare ViTModel) */
  int64_t special_tokens; /* CLS (+ distillation) tokens before the patches */
  vkf_vit_head head;
  int has_pooler;
  int64_t label_count;
  const char *architecture;
};

/* ---- loading ---- */

static vkf_status load_preprocessor(void *model, const char *model_dir) {
  vkf_vit_model *m = model;
  char path[4096];
  snprintf(path, sizeof path, "%s/preprocessor_config.json", model_dir);
  struct stat sb;
  if (stat(path, &sb) == 0) {
    VKF_RETURN_IF_ERROR(vkf_hf_preprocessor_load(path, &m->pre));
  } else {
    /* Old checkpoints ship no processor file: the class defaults for the model type apply. */
    const char *json = strcmp(m->f.config.model_type, "deit") == 0
                           ? "{\"image_processor_type\": \"DeiTImageProcessor\"}"
                           : "{}";
    VKF_RETURN_IF_ERROR(vkf_hf_preprocessor_parse(json, strlen(json), path, &m->pre));
  }
  const vkf_hf_preprocessor *p = &m->pre;
  vkf_image_preprocess_params *o = &m->params;
  if (p->channel_count != 3 || m->f.config.num_channels != 3)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: %d normalisation channels and %lld model channels; only RGB (3) "
                           "is supported",
                           path, p->channel_count, (long long)m->f.config.num_channels);
  o->do_resize = p->do_resize;
  if (p->size_mode == VKF_HF_SIZE_SHORTEST_EDGE) {
    o->shortest_edge = (uint32_t)p->shortest_edge;
  } else {
    o->resize_height = (uint32_t)p->size_height;
    o->resize_width = (uint32_t)p->size_width;
  }
  o->resample = (vkf_image_resample)p->resample; /* both follow Pillow's numbering */
  o->do_center_crop = p->do_center_crop;
  o->crop_height = (uint32_t)p->crop_height;
  o->crop_width = (uint32_t)p->crop_width;
  o->do_rescale = p->do_rescale;
  o->rescale_factor = p->rescale_factor;
  o->do_normalize = p->do_normalize;
  for (int c = 0; c < 3; c++) o->mean[c] = p->image_mean[c], o->std[c] = p->image_std[c];
  /* The graph has a fixed input size, so the processor must give image_size squared whatever the
   * aspect ratio: try a landscape and a portrait image. */
  static const uint32_t probe[2][2] = {{640, 480}, {480, 640}};
  for (int i = 0; i < 2; i++) {
    uint32_t h = 0, w = 0;
    VKF_RETURN_IF_ERROR(vkf_image_preprocess_output_size(o, probe[i][0], probe[i][1], &h, &w));
    if ((int64_t)h != m->f.config.image_size || (int64_t)w != m->f.config.image_size)
      return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                             "%s: the processor makes %ux%u pixel values from a %ux%u image but "
                             "the model expects %lldx%lld",
                             path, w, h, probe[i][0], probe[i][1],
                             (long long)m->f.config.image_size, (long long)m->f.config.image_size);
  }
  return VKF_OK;
}

/* Checks one tensor: name = m->prefix + `suffix` when `prefixed`, else `suffix`. */
static vkf_status expect(const vkf_vit_model *m, int prefixed, const char *suffix, int rank,
                         int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
  const int64_t dims[4] = {d0, d1, d2, d3};
  return vkf_arch_expect(m->f.ck, prefixed ? m->prefix : "", suffix, rank, dims);
}

static int has(const vkf_vit_model *m, int prefixed, const char *suffix) {
  return vkf_arch_has(m->f.ck, prefixed ? m->prefix : "", suffix);
}

/* The block's config from config.json (the same for every layer). */
static vkf_block_config block_config(const vkf_hf_config *c) {
  return (vkf_block_config){
      .hidden = c->hidden_size,
      .heads = c->num_attention_heads,
      .head_dim = c->head_dim,
      .intermediate = c->intermediate_size,
      .norm = VKF_BLOCK_LAYERNORM,
      .order = VKF_BLOCK_PRE_NORM,
      .norm_eps = (float)c->layer_norm_eps,
      .mlp = VKF_BLOCK_MLP_PLAIN,
      .act = vkf_block_activation(c->hidden_act),
  };
}

/* The block names without the Q/K/V biases when the config has none (qkv_bias false). */
static vkf_block_names names_of(const vkf_hf_config *c) {
  vkf_block_names n = vit_block_names;
  if (!c->qkv_bias) n.q_bias = n.k_bias = n.v_bias = NULL;
  return n;
}

/* Which prefix, tokens and head the file holds, then every tensor against the config. */
static vkf_status check_tensors(void *model) {
  vkf_vit_model *m = model;
  static const char *prefixes[] = {"vit.", "deit.", ""};
  m->prefix = NULL;
  for (int i = 0; i < 3 && !m->prefix; i++) {
    char name[64];
    snprintf(name, sizeof name, "%sembeddings.cls_token", prefixes[i]);
    if (vkf_checkpoint_find(m->f.ck, name)) m->prefix = prefixes[i];
  }
  if (!m->prefix)
    return vkf_status_make(VKF_STATUS_NOT_FOUND,
                           "tensor \"vit.embeddings.cls_token\" not found in %s (nor the deit. or "
                           "unprefixed one): not a ViT/DeiT checkpoint",
                           vkf_checkpoint_path(m->f.ck));
  const vkf_hf_config *c = &m->f.config;
  int64_t d = c->hidden_size, p = c->patch_size;
  m->special_tokens = has(m, 1, "embeddings.distillation_token") ? 2 : 1;
  if (has(m, 0, "cls_classifier.weight") || has(m, 0, "distillation_classifier.weight"))
    m->head = VKF_VIT_HEAD_TEACHER;
  else if (has(m, 0, "classifier.weight"))
    m->head = VKF_VIT_HEAD_CLASSIFIER;
  else
    m->head = VKF_VIT_HEAD_NONE;
  if (m->head == VKF_VIT_HEAD_TEACHER && m->special_tokens != 2)
    return vkf_status_make(VKF_STATUS_NOT_FOUND,
                           "tensor \"%sembeddings.distillation_token\" not found in %s (the file "
                           "has a distillation classifier)",
                           m->prefix, vkf_checkpoint_path(m->f.ck));
  m->has_pooler = m->head == VKF_VIT_HEAD_NONE && has(m, 0, "pooler.dense.weight");
  int deit = strcmp(c->model_type, "deit") == 0;
  m->architecture = m->head == VKF_VIT_HEAD_TEACHER ? "DeiTForImageClassificationWithTeacher"
                    : m->head == VKF_VIT_HEAD_CLASSIFIER
                        ? (deit ? "DeiTForImageClassification" : "ViTForImageClassification")
                        : (deit ? "DeiTModel" : "ViTModel");
  m->label_count = m->head == VKF_VIT_HEAD_NONE ? 0 : c->num_labels;

  int64_t n = c->num_patches + m->special_tokens;
  VKF_RETURN_IF_ERROR(expect(m, 1, "embeddings.cls_token", 3, 1, 1, d, 0));
  if (m->special_tokens == 2)
    VKF_RETURN_IF_ERROR(expect(m, 1, "embeddings.distillation_token", 3, 1, 1, d, 0));
  VKF_RETURN_IF_ERROR(expect(m, 1, "embeddings.position_embeddings", 3, 1, n, d, 0));
  VKF_RETURN_IF_ERROR(
      expect(m, 1, "embeddings.patch_embeddings.projection.weight", 4, d, c->num_channels, p, p));
  VKF_RETURN_IF_ERROR(expect(m, 1, "embeddings.patch_embeddings.projection.bias", 1, d, 0, 0, 0));
  vkf_block_config bc = block_config(c);
  vkf_block_names bn = names_of(c);
  for (int64_t l = 0; l < c->num_hidden_layers; l++) {
    char lp[VIT_NAME_MAX];
    snprintf(lp, sizeof lp, "%sencoder.layer.%lld.", m->prefix, (long long)l);
    VKF_RETURN_IF_ERROR(vkf_block_expect(m->f.ck, lp, &bn, &bc));
  }
  VKF_RETURN_IF_ERROR(expect(m, 1, "layernorm.weight", 1, d, 0, 0, 0));
  VKF_RETURN_IF_ERROR(expect(m, 1, "layernorm.bias", 1, d, 0, 0, 0));
  if (m->head == VKF_VIT_HEAD_CLASSIFIER) {
    VKF_RETURN_IF_ERROR(expect(m, 0, "classifier.weight", 2, c->num_labels, d, 0, 0));
    VKF_RETURN_IF_ERROR(expect(m, 0, "classifier.bias", 1, c->num_labels, 0, 0, 0));
  } else if (m->head == VKF_VIT_HEAD_TEACHER) {
    VKF_RETURN_IF_ERROR(expect(m, 0, "cls_classifier.weight", 2, c->num_labels, d, 0, 0));
    VKF_RETURN_IF_ERROR(expect(m, 0, "cls_classifier.bias", 1, c->num_labels, 0, 0, 0));
    VKF_RETURN_IF_ERROR(expect(m, 0, "distillation_classifier.weight", 2, c->num_labels, d, 0, 0));
    VKF_RETURN_IF_ERROR(expect(m, 0, "distillation_classifier.bias", 1, c->num_labels, 0, 0, 0));
  } else if (m->has_pooler) {
    VKF_RETURN_IF_ERROR(expect(m, 0, "pooler.dense.weight", 2, d, d, 0, 0));
    VKF_RETURN_IF_ERROR(expect(m, 0, "pooler.dense.bias", 1, d, 0, 0, 0));
  }
  return VKF_OK;
}

static int is_vision(void *model) {
  return ((vkf_vit_model *)model)->f.config.family == VKF_HF_FAMILY_VISION;
}

const vkf_arch_loader vkf_vit_loader = {.size = sizeof(vkf_vit_model),
                                        .files_at = offsetof(vkf_vit_model, f),
                                        .accepts = is_vision,
                                        .refusal = "is not a ViT/DeiT model",
                                        .configure = load_preprocessor,
                                        .check = check_tensors};

vkf_status vkf_vit_load(const char *model_dir, vkf_vit_model **out_model) {
  void *m = NULL;
  vkf_status s = vkf_arch_load(&vkf_vit_loader, model_dir, &m);
  *out_model = m;
  return s;
}

vkf_status vkf_vit_quantize(vkf_vit_model *m, const char *format) {
  return vkf_arch_quantize(&vkf_vit_loader, m, format);
}

const struct vkf_arch_files *vkf_vit_files(const vkf_vit_model *m) {
  return &m->f;
}

void vkf_vit_destroy(vkf_vit_model *m) {
  vkf_arch_unload(&vkf_vit_loader, m);
}

const vkf_hf_config *vkf_vit_config(const vkf_vit_model *m) {
  return &m->f.config;
}
vkf_vit_head vkf_vit_head_of(const vkf_vit_model *m) {
  return m->head;
}
int64_t vkf_vit_label_count(const vkf_vit_model *m) {
  return m->label_count;
}
const char *vkf_vit_label(const vkf_vit_model *m, int64_t id) {
  return id >= 0 && id < m->label_count ? vkf_hf_config_label(&m->f.config, id) : NULL;
}
const vkf_image_preprocess_params *vkf_vit_preprocess_params(const vkf_vit_model *m) {
  return &m->params;
}
int64_t vkf_vit_image_size(const vkf_vit_model *m) {
  return m->f.config.image_size;
}
int vkf_vit_has_pooler(const vkf_vit_model *m) {
  return m->has_pooler;
}
int64_t vkf_vit_token_count(const vkf_vit_model *m) {
  return m->f.config.num_patches + m->special_tokens;
}
const char *vkf_vit_architecture(const vkf_vit_model *m) {
  return m->architecture;
}

/* ---- graph ---- */

/* The checkpoint as the builder reads it: tensors under the model's prefix, or unprefixed (heads).
 */
static vkf_arch_weights weights_of(vkf_vit_model *m, int prefixed, vkf_dtype dt) {
  return (vkf_arch_weights){m->f.ck, &m->f.owned, prefixed ? m->prefix : "", dt, m->f.quantize};
}

#define NAME VKF_NAME

/* A graph constant for checkpoint tensor `name` (full name, prefix included). */
static vkf_value weight(vkf_vit_model *m, vkf_graph *g, const char *name, vkf_dtype dtype) {
  vkf_arch_weights w = weights_of(m, 0, dtype);
  return vkf_arch_weight(&w, g, name);
}

/* One constant `key` made of the full-named tensors `names` (see vkf_arch_joined). */
static vkf_value assembled(vkf_vit_model *m, vkf_graph *g, const char *key,
                           const char *const *names, int count, vkf_arch_join join, float scale,
                           vkf_dtype dtype) {
  vkf_arch_weights w = weights_of(m, 0, dtype);
  return vkf_arch_joined(&w, g, key, names, count, join, scale);
}

/* One encoder layer: x [B, N, D] -> [B, N, D]. */
static vkf_value encoder_layer(vkf_vit_model *m, vkf_graph *g, int64_t l, vkf_value x, vkf_dtype dt,
                               vkf_value *attentions) {
  const vkf_hf_config *c = &m->f.config;
  vkf_block_config bc = block_config(c);
  vkf_block_names bn = names_of(c);
  vkf_arch_weights aw = weights_of(m, 1, dt);
  char tp[64], np[64];
  snprintf(tp, sizeof tp, "encoder.layer.%lld.", (long long)l);
  snprintf(np, sizeof np, "%s%s", m->prefix, tp);
  vkf_block_weights w;
  vkf_block_weights_get(&aw, g, tp, &bn, &bc, &w);
  if (!attentions) return vkf_block_build(g, np, &bn, &bc, &w, NULL, x);
  vkf_value probs = VKF_NO_VALUE;
  vkf_block_io io = {.probs = &probs};
  x = vkf_block_build(g, np, &bn, &bc, &w, &io, x);
  snprintf(tp, sizeof tp, "attentions.%lld", (long long)l);
  attentions[l] = vkf_arch_f32_output(g, probs, tp);
  return x;
}

/* CLS (+ distillation) tokens repeated over the batch: the T tokens as a [T, D] table gathered
 * by a constant [B, T] of ids 0..T-1. The batch costs 4·B·T bytes of ids rather than a [B, T, D]
 * copy of the tokens (gigabytes for the batches a split probes before it finds what fits). */
static vkf_value prefix_tokens(vkf_vit_model *m, vkf_graph *g, int64_t batch, vkf_dtype dt) {
  char key[VIT_NAME_MAX], cls[VIT_NAME_MAX], dist[VIT_NAME_MAX];
  const int64_t t = m->special_tokens, d = m->f.config.hidden_size;
  snprintf(key, sizeof key, "%sembeddings.prefix_tokens", m->prefix);
  const char *names[2] = {NAME(cls, "%sembeddings.cls_token", m->prefix),
                          NAME(dist, "%sembeddings.distillation_token", m->prefix)};
  vkf_value table = assembled(m, g, key, names, (int)t, VKF_ARCH_STACK, 1.0f, dt); /* [T, 1, D] */
  int64_t table_shape[2] = {t, d};
  table = vkf_reshape(g, NAME(cls, "%sembeddings.prefix_table", m->prefix), table, 2, table_shape);
  snprintf(key, sizeof key, "%sembeddings.prefix_ids.batch%lld", m->prefix, (long long)batch);
  const void *ids = vkf_weight_cache_find(m->f.owned, key, VKF_I32);
  if (!ids) {
    int32_t *v = malloc((size_t)(batch * t) * sizeof *v + 1);
    for (int64_t i = 0; v && i < batch * t; i++) v[i] = (int32_t)(i % t);
    ids = vkf_weight_cache_put_raw(&m->f.owned, key, VKF_I32, v);
  }
  if (!ids) {
    vkf_graph_set_error(g, vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", key));
    return VKF_NO_VALUE;
  }
  int64_t ids_shape[2] = {batch, t};
  vkf_value idv = vkf_graph_constant(g, key, VKF_I32, 2, ids_shape, ids);
  return vkf_gather(g, NAME(cls, "%sembeddings.prefix", m->prefix), table, idv); /* [B, T, D] */
}

/* Final norm on the first `tokens` tokens only (the norm is per token, so this equals HF's norm
 * of the whole sequence followed by the slice). x [B, N, D] -> [B, tokens, D]. */
static vkf_value final_norm(vkf_vit_model *m, vkf_graph *g, vkf_value x, int64_t tokens,
                            vkf_dtype dt) {
  char a[VIT_NAME_MAX], b[VIT_NAME_MAX], nm[VIT_NAME_MAX];
  if (tokens > 0) {
    x = vkf_slice(g, NAME(nm, "%sfirst_tokens", m->prefix), x, 1, 0, tokens);
    x = vkf_copy(g, NAME(nm, "%sfirst_tokens.copy", m->prefix), x); /* [B, T, D] */
  }
  vkf_norm_options ln = {
      .eps = (float)m->f.config.layer_norm_eps,
      .gamma = weight(m, g, NAME(a, "%slayernorm.weight", m->prefix), dt),
      .beta = weight(m, g, NAME(b, "%slayernorm.bias", m->prefix), dt),
  };
  return vkf_layernorm(g, NAME(nm, "%slayernorm", m->prefix), x, &ln);
}

vkf_status vkf_vit_build(vkf_vit_model *m, const vkf_vit_build_options *options,
                         vkf_vit_graph *out) {
  memset(out, 0, sizeof *out);
  vkf_vit_build_options o = options ? *options : (vkf_vit_build_options){0};
  int64_t batch = o.batch ? o.batch : 1;
  vkf_dtype dt = o.dtype;
  if (batch < 0 || (dt != VKF_F32 && dt != VKF_F16))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s: batch %lld / dtype %s not supported",
                           m->f.dir, (long long)batch, vkf_dtype_name(dt));
  const vkf_hf_config *c = &m->f.config;
  int64_t d = c->hidden_size, s = c->image_size;
  vkf_graph *g = NULL;
  VKF_RETURN_IF_ERROR(vkf_graph_create(m->architecture, &g));
  char a[VIT_NAME_MAX], b[VIT_NAME_MAX];

  int64_t in_shape[4] = {batch, c->num_channels, s, s};
  vkf_value pixels = vkf_graph_input(g, "pixel_values", VKF_F32, 4, in_shape);
  vkf_value x = dt == VKF_F32 ? pixels : vkf_cast(g, "pixel_values.f16", pixels, dt);
  x = vkf_patch_embed(
      g, NAME(a, "%sembeddings.patch_embeddings", m->prefix), x,
      weight(m, g, NAME(a, "%sembeddings.patch_embeddings.projection.weight", m->prefix), dt),
      weight(m, g, NAME(b, "%sembeddings.patch_embeddings.projection.bias", m->prefix),
             dt)); /* [B, P, D] */
  vkf_value parts[2] = {prefix_tokens(m, g, batch, dt), x};
  x = vkf_concat(g, NAME(a, "%sembeddings.tokens", m->prefix), parts, 2, 1); /* [B, N, D] */
  x = vkf_add(g, NAME(a, "%sembeddings", m->prefix), x,
              weight(m, g, NAME(b, "%sembeddings.position_embeddings", m->prefix), dt));
  for (int64_t l = 0; l < c->num_hidden_layers; l++)
    x = encoder_layer(m, g, l, x, dt, o.attentions);

  vkf_value logits = VKF_NO_VALUE, hidden = VKF_NO_VALUE, pooled = VKF_NO_VALUE;
  if (m->head == VKF_VIT_HEAD_NONE) {
    hidden = final_norm(m, g, x, 0, dt); /* [B, N, D] */
    if (m->has_pooler) {
      vkf_value cls = vkf_slice(g, "pooler.cls", hidden, 1, 0, 1);
      int64_t flat[2] = {batch, d};
      cls = vkf_reshape(g, "pooler.cls_flat", cls, 2, flat);
      vkf_matmul_options po = {.transpose_b = 1, .bias = weight(m, g, "pooler.dense.bias", dt)};
      pooled = vkf_matmul(g, "pooler.dense", cls, weight(m, g, "pooler.dense.weight", dt), &po);
      pooled = vkf_tanh(g, "pooler", pooled);
    }
  } else {
    /* The teacher head is one GEMM: 0.5·(Wc·t0 + bc + Wd·t1 + bd) = [t0 | t1]·(0.5·[Wc | Wd])ᵀ +
     * 0.5·(bc + bd), with [t0 | t1] the two normed tokens side by side ([B, 2D], a free view). */
    int teacher = m->head == VKF_VIT_HEAD_TEACHER;
    int64_t t = teacher ? 2 : 1;
    vkf_value tok = final_norm(m, g, x, t, dt); /* [B, T, D] */
    int64_t flat[2] = {batch, t * d};
    tok = vkf_reshape(g, "head.tokens", tok, 2, flat); /* [B, T·D] */
    vkf_value w, bias;
    if (teacher) {
      static const char *const wn[2] = {"cls_classifier.weight", "distillation_classifier.weight"};
      static const char *const bn[2] = {"cls_classifier.bias", "distillation_classifier.bias"};
      w = assembled(m, g, "head.weight", wn, 2, VKF_ARCH_SIDE, 0.5f, dt); /* [L, 2D] */
      bias = assembled(m, g, "head.bias", bn, 2, VKF_ARCH_SUM, 0.5f, dt); /* [L] */
    } else {
      w = weight(m, g, "classifier.weight", dt);
      bias = weight(m, g, "classifier.bias", dt);
    }
    vkf_matmul_options ho = {.transpose_b = 1, .bias = bias};
    logits = vkf_matmul(g, teacher ? "head" : "classifier", tok, w, &ho); /* [B, L] */
  }
  if (vkf_value_valid(logits)) out->logits = vkf_arch_f32_output(g, logits, "logits");
  if (vkf_value_valid(hidden))
    out->last_hidden_state = vkf_arch_f32_output(g, hidden, "last_hidden_state");
  if (vkf_value_valid(pooled)) out->pooler_output = vkf_arch_f32_output(g, pooled, "pooler_output");
  vkf_status st = vkf_graph_status(g);
  if (st) {
    vkf_graph_destroy(g);
    memset(out, 0, sizeof *out);
    return vkf_status_annotate(st, "building %s from %s: ", m->architecture, m->f.dir);
  }
  out->graph = g;
  out->pixel_values = pixels;
  return VKF_OK;
}
