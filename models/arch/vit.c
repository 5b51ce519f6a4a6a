/* ViT / DeiT checkpoints: loading (config, image processor, every tensor's presence and shape),
 * the weight cache (in-place f32, converted f16, fused QKV and teacher head) and the builder. */
#include "models/arch/vit.h"

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

enum { VIT_NAME_MAX = 256 };

struct vkf_vit_model {
  char *dir;
  vkf_hf_config config;
  vkf_hf_preprocessor pre;
  vkf_image_preprocess_params params;
  vkf_safetensors *st;
  const char *prefix;     /* "vit.", "deit." or "" (bare ViTModel) */
  int64_t special_tokens; /* CLS (+ distillation) tokens before the patches */
  vkf_vit_head head;
  int has_pooler;
  int64_t label_count;
  const char *architecture;
  vkf_weight_cache *owned; /* converted / assembled weights */
};

/* ---- loading ---- */

static vkf_status load_preprocessor(vkf_vit_model *m) {
  char path[4096];
  snprintf(path, sizeof path, "%s/preprocessor_config.json", m->dir);
  struct stat sb;
  if (stat(path, &sb) == 0) {
    VKF_RETURN_IF_ERROR(vkf_hf_preprocessor_load(path, &m->pre));
  } else {
    /* Old checkpoints ship no processor file: the class defaults for the model type apply. */
    const char *json = strcmp(m->config.model_type, "deit") == 0
                           ? "{\"image_processor_type\": \"DeiTImageProcessor\"}"
                           : "{}";
    VKF_RETURN_IF_ERROR(vkf_hf_preprocessor_parse(json, strlen(json), path, &m->pre));
  }
  const vkf_hf_preprocessor *p = &m->pre;
  vkf_image_preprocess_params *o = &m->params;
  if (p->channel_count != 3 || m->config.num_channels != 3)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: %d normalisation channels and %lld model channels; only RGB (3) "
                           "is supported",
                           path, p->channel_count, (long long)m->config.num_channels);
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
    if ((int64_t)h != m->config.image_size || (int64_t)w != m->config.image_size)
      return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                             "%s: the processor makes %ux%u pixel values from a %ux%u image but "
                             "the model expects %lldx%lld",
                             path, w, h, probe[i][0], probe[i][1], (long long)m->config.image_size,
                             (long long)m->config.image_size);
  }
  return VKF_OK;
}

/* Checks one tensor: name = m->prefix + `suffix` when `prefixed`, else `suffix`. */
static vkf_status expect(const vkf_vit_model *m, int prefixed, const char *suffix, int rank,
                         int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
  char name[VIT_NAME_MAX];
  snprintf(name, sizeof name, "%s%s", prefixed ? m->prefix : "", suffix);
  const int64_t dims[4] = {d0, d1, d2, d3};
  const vkf_safetensors_info *info = NULL;
  VKF_RETURN_IF_ERROR(vkf_safetensors_expect(m->st, name, rank, dims, &info));
  if (info->dtype != VKF_SAFETENSORS_F32 && info->dtype != VKF_SAFETENSORS_F16 &&
      info->dtype != VKF_SAFETENSORS_BF16)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "tensor \"%s\" has dtype %s in %s; F32, F16 "
                           "or BF16 expected",
                           name, vkf_safetensors_dtype_name(info->dtype),
                           vkf_safetensors_path(m->st));
  return VKF_OK;
}

static int has(const vkf_vit_model *m, int prefixed, const char *suffix) {
  char name[VIT_NAME_MAX];
  snprintf(name, sizeof name, "%s%s", prefixed ? m->prefix : "", suffix);
  return vkf_safetensors_find(m->st, name) != NULL;
}

/* Which prefix, tokens and head the file holds, then every tensor against the config. */
static vkf_status check_tensors(vkf_vit_model *m) {
  static const char *prefixes[] = {"vit.", "deit.", ""};
  m->prefix = NULL;
  for (int i = 0; i < 3 && !m->prefix; i++) {
    char name[64];
    snprintf(name, sizeof name, "%sembeddings.cls_token", prefixes[i]);
    if (vkf_safetensors_find(m->st, name)) m->prefix = prefixes[i];
  }
  if (!m->prefix)
    return vkf_status_make(VKF_STATUS_NOT_FOUND,
                           "tensor \"vit.embeddings.cls_token\" not found in %s (nor the deit. or "
                           "unprefixed one): not a ViT/DeiT checkpoint",
                           vkf_safetensors_path(m->st));
  const vkf_hf_config *c = &m->config;
  int64_t d = c->hidden_size, p = c->patch_size, in = c->intermediate_size;
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
                           m->prefix, vkf_safetensors_path(m->st));
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
  for (int64_t l = 0; l < c->num_hidden_layers; l++) {
    static const struct {
      const char *suffix;
      int out_in; /* 0: [D, D]; 1: [I, D]; 2: [D, I]; 3: [D] norm; 4: [I] */
      int qkv_bias;
    } w[] = {
        {"attention.attention.query.weight", 0, 0},
        {"attention.attention.query.bias", 3, 1},
        {"attention.attention.key.weight", 0, 0},
        {"attention.attention.key.bias", 3, 1},
        {"attention.attention.value.weight", 0, 0},
        {"attention.attention.value.bias", 3, 1},
        {"attention.output.dense.weight", 0, 0},
        {"attention.output.dense.bias", 3, 0},
        {"intermediate.dense.weight", 1, 0},
        {"intermediate.dense.bias", 4, 0},
        {"output.dense.weight", 2, 0},
        {"output.dense.bias", 3, 0},
        {"layernorm_before.weight", 3, 0},
        {"layernorm_before.bias", 3, 0},
        {"layernorm_after.weight", 3, 0},
        {"layernorm_after.bias", 3, 0},
    };
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
      if (w[i].qkv_bias && !c->qkv_bias) continue;
      char name[VIT_NAME_MAX];
      snprintf(name, sizeof name, "encoder.layer.%lld.%s", (long long)l, w[i].suffix);
      int64_t shapes[5][2] = {{d, d}, {in, d}, {d, in}, {d, 0}, {in, 0}};
      int rank = w[i].out_in >= 3 ? 1 : 2;
      VKF_RETURN_IF_ERROR(
          expect(m, 1, name, rank, shapes[w[i].out_in][0], shapes[w[i].out_in][1], 0, 0));
    }
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

vkf_status vkf_vit_load(const char *model_dir, vkf_vit_model **out_model) {
  *out_model = NULL;
  struct stat sb;
  if (stat(model_dir, &sb) != 0)
    return vkf_status_make(errno == ENOENT ? VKF_STATUS_NOT_FOUND : VKF_STATUS_IO,
                           "model directory %s: %s", model_dir, strerror(errno));
  if (!S_ISDIR(sb.st_mode))
    return vkf_status_make(VKF_STATUS_NOT_FOUND, "model directory %s: not a directory", model_dir);
  vkf_vit_model *m = calloc(1, sizeof *m);
  if (!m) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "loading %s", model_dir);
  m->dir = strdup(model_dir);
  char path[4096];
  snprintf(path, sizeof path, "%s/config.json", model_dir);
  vkf_status s = m->dir ? VKF_OK : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", model_dir);
  if (!s) s = vkf_hf_config_load(path, &m->config);
  if (!s && m->config.family != VKF_HF_FAMILY_VISION)
    s = vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: model_type \"%s\" is not a ViT/DeiT model",
                        path, m->config.model_type);
  if (!s) s = load_preprocessor(m);
  if (!s) {
    snprintf(path, sizeof path, "%s/model.safetensors", model_dir);
    s = vkf_safetensors_open(path, &m->st);
  }
  if (!s) s = check_tensors(m);
  if (s) {
    vkf_vit_destroy(m);
    return s;
  }
  *out_model = m;
  return VKF_OK;
}

void vkf_vit_destroy(vkf_vit_model *m) {
  if (!m) return;
  vkf_weight_cache_free(&m->owned);
  vkf_safetensors_close(m->st);
  vkf_hf_config_release(&m->config);
  free(m->dir);
  free(m);
}

const vkf_hf_config *vkf_vit_config(const vkf_vit_model *m) {
  return &m->config;
}
vkf_vit_head vkf_vit_head_of(const vkf_vit_model *m) {
  return m->head;
}
int64_t vkf_vit_label_count(const vkf_vit_model *m) {
  return m->label_count;
}
const char *vkf_vit_label(const vkf_vit_model *m, int64_t id) {
  return id >= 0 && id < m->label_count ? vkf_hf_config_label(&m->config, id) : NULL;
}
const vkf_image_preprocess_params *vkf_vit_preprocess_params(const vkf_vit_model *m) {
  return &m->params;
}
int64_t vkf_vit_image_size(const vkf_vit_model *m) {
  return m->config.image_size;
}
const char *vkf_vit_architecture(const vkf_vit_model *m) {
  return m->architecture;
}

/* ---- weights ---- */

/* A graph constant for checkpoint tensor `name` (see vkf_weight_constant). */
static vkf_value weight(vkf_vit_model *m, vkf_graph *g, const char *name, vkf_dtype dtype) {
  return vkf_weight_constant(&m->owned, m->st, g, name, dtype);
}

/* How `assembled` combines checkpoint tensors of one shape [R, ...] (C elements after the first
 * dim). */
typedef enum vit_join {
  VIT_STACK, /* rows after rows: [count·R, ...] (fused QKV, CLS tokens over a batch) */
  VIT_SUM,   /* elementwise sum: [R, ...] (teacher head bias) */
  VIT_SIDE,  /* rank 2, side by side: [R, count·C] (teacher head weight) */
} vit_join;

/* One constant `key` made of `count` checkpoint tensors joined as `join`, every value multiplied
 * by `scale`. Built once per dtype and cached in the model. */
static vkf_value assembled(vkf_vit_model *m, vkf_graph *g, const char *key,
                           const char *const *names, int count, vit_join join, float scale,
                           vkf_dtype dtype) {
  const vkf_safetensors_info *first = vkf_safetensors_find(m->st, names[0]);
  if (!first || (join == VIT_SIDE && first->rank != 2)) {
    vkf_graph_set_error(g, vkf_status_make(VKF_STATUS_NOT_FOUND, "tensor \"%s\" not found in %s",
                                           names[0], vkf_safetensors_path(m->st)));
    return VKF_NO_VALUE;
  }
  int64_t shape[VKF_MAX_DIMS];
  for (int i = 0; i < first->rank; i++) shape[i] = first->shape[i];
  size_t each = (size_t)first->element_count;
  size_t rows = (size_t)first->shape[0], cols = rows ? each / rows : 0;
  size_t total = join == VIT_SUM ? each : each * (size_t)count;
  if (join == VIT_STACK) shape[0] *= count;
  if (join == VIT_SIDE) shape[1] *= count;
  const void *data = vkf_weight_cache_find(m->owned, key, dtype);
  if (!data) {
    float *all = calloc(total + 1, sizeof *all);
    if (!all) {
      vkf_graph_set_error(g, vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "assembling %s", key));
      return VKF_NO_VALUE;
    }
    for (int i = 0; i < count; i++) {
      float *v = NULL;
      const vkf_safetensors_info *info = NULL;
      vkf_status s = vkf_weight_read_f32(m->st, names[i], &v, &info);
      if (!s && (info->rank != first->rank || (size_t)info->element_count != each))
        s = vkf_status_make(VKF_STATUS_SHAPE, "tensor \"%s\" and \"%s\" differ in shape", names[i],
                            names[0]);
      if (s) {
        free(v);
        free(all);
        vkf_graph_set_error(g, s);
        return VKF_NO_VALUE;
      }
      for (size_t j = 0; j < each; j++) {
        if (join == VIT_SUM)
          all[j] += scale * v[j];
        else if (join == VIT_STACK)
          all[(size_t)i * each + j] = scale * v[j];
        else /* row j / cols of the joined [R, count·C] */
          all[(j / cols) * cols * (size_t)count + (size_t)i * cols + j % cols] = scale * v[j];
      }
      free(v);
    }
    data = vkf_weight_cache_put(&m->owned, key, dtype, all, total);
    if (!data) {
      vkf_graph_set_error(g, vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "assembling %s", key));
      return VKF_NO_VALUE;
    }
  }
  return vkf_graph_constant(g, key, dtype, (uint32_t)first->rank, shape, data);
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

/* Small printf into a stack buffer for node and weight names. */
#define NAME(buf, ...) (snprintf(buf, sizeof buf, __VA_ARGS__), buf)

/* One pre-norm encoder layer: x + attn(ln(x)), then + mlp(ln(.)). x [B, N, D] -> [B, N, D]. */
static vkf_value encoder_layer(vkf_vit_model *m, vkf_graph *g, int64_t l, vkf_value x,
                               int64_t batch, vkf_dtype dt) {
  const vkf_hf_config *c = &m->config;
  int64_t d = c->hidden_size, h = c->num_attention_heads, hd = c->head_dim;
  int64_t n = c->num_patches + m->special_tokens;
  float eps = (float)c->layer_norm_eps;
  char p[64], a[VIT_NAME_MAX], b[VIT_NAME_MAX], nm[VIT_NAME_MAX];
  snprintf(p, sizeof p, "%sencoder.layer.%lld.", m->prefix, (long long)l);

  vkf_norm_options ln1 = {
      .eps = eps,
      .gamma = weight(m, g, NAME(a, "%slayernorm_before.weight", p), dt),
      .beta = weight(m, g, NAME(b, "%slayernorm_before.bias", p), dt),
  };
  vkf_value hx = vkf_layernorm(g, NAME(nm, "%slayernorm_before", p), x, &ln1); /* [B, N, D] */

  /* One GEMM for Q, K and V: HF's three [D, D] Linear weights stacked into [3D, D]. */
  const char *wn[3], *bn[3];
  char wq[VIT_NAME_MAX], wk[VIT_NAME_MAX], wv[VIT_NAME_MAX];
  char bq[VIT_NAME_MAX], bk[VIT_NAME_MAX], bv[VIT_NAME_MAX];
  wn[0] = NAME(wq, "%sattention.attention.query.weight", p);
  wn[1] = NAME(wk, "%sattention.attention.key.weight", p);
  wn[2] = NAME(wv, "%sattention.attention.value.weight", p);
  bn[0] = NAME(bq, "%sattention.attention.query.bias", p);
  bn[1] = NAME(bk, "%sattention.attention.key.bias", p);
  bn[2] = NAME(bv, "%sattention.attention.value.bias", p);
  vkf_matmul_options qkv_opt = {
      .transpose_b = 1,
      .bias = c->qkv_bias ? assembled(m, g, NAME(b, "%sattention.attention.qkv.bias", p), bn, 3,
                                      VIT_STACK, 1.0f, dt)
                          : VKF_NO_VALUE,
  };
  vkf_value wqkv = assembled(m, g, NAME(a, "%sattention.attention.qkv.weight", p), wn, 3, VIT_STACK,
                             1.0f, dt);                                              /* [3D, D] */
  vkf_value qkv = vkf_matmul(g, NAME(nm, "%sattention.qkv", p), hx, wqkv, &qkv_opt); /* [B,N,3D] */
  int64_t split[4] = {batch, n, 3 * h, hd};
  qkv = vkf_reshape(g, NAME(nm, "%sattention.qkv_heads", p), qkv, 4, split); /* [B, N, 3H, Dh] */
  static const uint32_t to_bhnd[4] = {0, 2, 1, 3};
  vkf_value qkv_bhnd[3];
  static const char *const part[3] = {"q", "k", "v"};
  for (int i = 0; i < 3; i++) {
    vkf_value s = vkf_slice(g, NAME(nm, "%sattention.%s_slice", p, part[i]), qkv, 2, i * h,
                            (i + 1) * h); /* [B, N, H, Dh] */
    qkv_bhnd[i] = vkf_permute(g, NAME(nm, "%sattention.%s", p, part[i]), s, to_bhnd); /* BHND */
  }
  vkf_attention_options att_opt = {.scale = 1.0f / sqrtf((float)hd)};
  vkf_value att = vkf_attention(g, NAME(nm, "%sattention", p), qkv_bhnd[0], qkv_bhnd[1],
                                qkv_bhnd[2], &att_opt);                       /* [B, H, N, Dh] */
  att = vkf_permute(g, NAME(nm, "%sattention.merge_heads", p), att, to_bhnd); /* [B, N, H, Dh] */
  int64_t merged[3] = {batch, n, d};
  att = vkf_reshape(g, NAME(nm, "%sattention.context", p), att, 3, merged); /* [B, N, D] copy */
  vkf_matmul_options out_opt = {
      .transpose_b = 1,
      .bias = weight(m, g, NAME(b, "%sattention.output.dense.bias", p), dt),
      .residual = x,
  };
  x = vkf_matmul(g, NAME(nm, "%sattention.output", p), att,
                 weight(m, g, NAME(a, "%sattention.output.dense.weight", p), dt), &out_opt);

  vkf_norm_options ln2 = {
      .eps = eps,
      .gamma = weight(m, g, NAME(a, "%slayernorm_after.weight", p), dt),
      .beta = weight(m, g, NAME(b, "%slayernorm_after.bias", p), dt),
  };
  hx = vkf_layernorm(g, NAME(nm, "%slayernorm_after", p), x, &ln2);
  vkf_matmul_options up_opt = {
      .transpose_b = 1,
      .bias = weight(m, g, NAME(b, "%sintermediate.dense.bias", p), dt),
      .activation = activation_of(c->hidden_act),
  };
  vkf_value mid = vkf_matmul(g, NAME(nm, "%sintermediate", p), hx,
                             weight(m, g, NAME(a, "%sintermediate.dense.weight", p), dt),
                             &up_opt); /* [B, N, I] */
  vkf_matmul_options down_opt = {
      .transpose_b = 1,
      .bias = weight(m, g, NAME(b, "%soutput.dense.bias", p), dt),
      .residual = x,
  };
  return vkf_matmul(g, NAME(nm, "%soutput", p), mid,
                    weight(m, g, NAME(a, "%soutput.dense.weight", p), dt), &down_opt);
}

/* CLS (+ distillation) tokens repeated over the batch: a constant [B, T, D] the model caches. */
static vkf_value prefix_tokens(vkf_vit_model *m, vkf_graph *g, int64_t batch, vkf_dtype dt) {
  char key[VIT_NAME_MAX], cls[VIT_NAME_MAX], dist[VIT_NAME_MAX];
  snprintf(key, sizeof key, "%sembeddings.prefix_tokens.batch%lld", m->prefix, (long long)batch);
  const char *names[2] = {NAME(cls, "%sembeddings.cls_token", m->prefix),
                          NAME(dist, "%sembeddings.distillation_token", m->prefix)};
  size_t count = (size_t)(batch * m->special_tokens);
  const char **rows = malloc(count * sizeof *rows);
  if (!rows) {
    vkf_graph_set_error(g, vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s", key));
    return VKF_NO_VALUE;
  }
  for (size_t i = 0; i < count; i++) rows[i] = names[i % (size_t)m->special_tokens];
  vkf_value v = assembled(m, g, key, rows, (int)count, VIT_STACK, 1.0f, dt); /* [B·T, 1, D] */
  free(rows);
  int64_t shape[3] = {batch, m->special_tokens, m->config.hidden_size};
  return vkf_reshape(g, NAME(cls, "%sembeddings.prefix", m->prefix), v, 3, shape);
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
      .eps = (float)m->config.layer_norm_eps,
      .gamma = weight(m, g, NAME(a, "%slayernorm.weight", m->prefix), dt),
      .beta = weight(m, g, NAME(b, "%slayernorm.bias", m->prefix), dt),
  };
  return vkf_layernorm(g, NAME(nm, "%slayernorm", m->prefix), x, &ln);
}

static vkf_value f32_output(vkf_graph *g, vkf_value v, const char *name) {
  const vkf_tensor *t = vkf_graph_tensor(g, v);
  if (t && t->dtype != VKF_F32) v = vkf_cast(g, name, v, VKF_F32);
  return vkf_graph_output(g, v, t && t->dtype != VKF_F32 ? NULL : name);
}

vkf_status vkf_vit_build(vkf_vit_model *m, const vkf_vit_build_options *options,
                         vkf_vit_graph *out) {
  memset(out, 0, sizeof *out);
  vkf_vit_build_options o = options ? *options : (vkf_vit_build_options){0};
  int64_t batch = o.batch ? o.batch : 1;
  vkf_dtype dt = o.dtype;
  if (batch < 0 || (dt != VKF_F32 && dt != VKF_F16))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s: batch %lld / dtype %s not supported",
                           m->dir, (long long)batch, vkf_dtype_name(dt));
  const vkf_hf_config *c = &m->config;
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
  for (int64_t l = 0; l < c->num_hidden_layers; l++) x = encoder_layer(m, g, l, x, batch, dt);

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
      w = assembled(m, g, "head.weight", wn, 2, VIT_SIDE, 0.5f, dt); /* [L, 2D] */
      bias = assembled(m, g, "head.bias", bn, 2, VIT_SUM, 0.5f, dt); /* [L] */
    } else {
      w = weight(m, g, "classifier.weight", dt);
      bias = weight(m, g, "classifier.bias", dt);
    }
    vkf_matmul_options ho = {.transpose_b = 1, .bias = bias};
    logits = vkf_matmul(g, teacher ? "head" : "classifier", tok, w, &ho); /* [B, L] */
  }
  if (vkf_value_valid(logits)) out->logits = f32_output(g, logits, "logits");
  if (vkf_value_valid(hidden)) out->last_hidden_state = f32_output(g, hidden, "last_hidden_state");
  if (vkf_value_valid(pooled)) out->pooler_output = f32_output(g, pooled, "pooler_output");
  vkf_status st = vkf_graph_status(g);
  if (st) {
    vkf_graph_destroy(g);
    memset(out, 0, sizeof *out);
    return vkf_status_annotate(st, "building %s from %s: ", m->architecture, m->dir);
  }
  out->graph = g;
  out->pixel_values = pixels;
  return VKF_OK;
}
