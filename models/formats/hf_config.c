/* config.json / preprocessor_config.json parsing: typed field readers that name the file and the
 * field on every error, the per-model-type default tables, and the consistency checks. */
#include "models/formats/hf_config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "graph/base/log.h"
#include "models/formats/hf_config_bigbird.h"
#include "models/formats/hf_config_decoder.h"
#include "models/formats/hf_config_longformer.h"
#include "models/formats/hf_config_reformer.h"
#include "models/formats/hf_config_seq2seq.h"
#include "models/formats/json_fields.h"

/* ---- config.json ---- */

/* Defaults of the Hugging Face config classes (ViTConfig, DeiTConfig, BertConfig, RobertaConfig,
 * XLMRobertaConfig) for the fields that differ between them; the rest are shared below. */
static const struct model_defaults {
  const char *model_type;
  vkf_hf_family family;
  int64_t vocab_size;
  int64_t pad_token_id;
} model_defaults[] = {
    {"vit", VKF_HF_FAMILY_VISION, 0, -1},          {"deit", VKF_HF_FAMILY_VISION, 0, -1},
    {"bert", VKF_HF_FAMILY_TEXT, 30522, 0},        {"roberta", VKF_HF_FAMILY_TEXT, 50265, 1},
    {"xlm-roberta", VKF_HF_FAMILY_TEXT, 30522, 1}, {"gpt2", VKF_HF_FAMILY_DECODER, 50257, -1},
    {"llama", VKF_HF_FAMILY_DECODER, 32000, -1},   {"mistral", VKF_HF_FAMILY_DECODER, 32000, -1},
    {"qwen2", VKF_HF_FAMILY_DECODER, 151936, -1},  {"bart", VKF_HF_FAMILY_SEQ2SEQ, 50265, 1},
    {"marian", VKF_HF_FAMILY_SEQ2SEQ, 58101, 58100}, {"t5", VKF_HF_FAMILY_SEQ2SEQ, 32128, 0},
    {"mt5", VKF_HF_FAMILY_SEQ2SEQ, 250112, 0},     {"d2l_transformer", VKF_HF_FAMILY_SEQ2SEQ, 0, -1},
    {"d2l_seq2seq_attention", VKF_HF_FAMILY_SEQ2SEQ, 0, -1},
    {"nystromformer", VKF_HF_FAMILY_TEXT, 30000, 1},
    {"big_bird", VKF_HF_FAMILY_TEXT, 50358, 0},
    {"longformer", VKF_HF_FAMILY_TEXT, 30522, 1},
    {"reformer", VKF_HF_FAMILY_TEXT, 320, 0},
};

const char *vkf_hf_config_label(const vkf_hf_config *config, int64_t id) {
  if (id < 0 || id >= config->num_labels) return NULL;
  return config->id2label[id];
}

static vkf_status parse_architectures(const char *file, const cJSON *root, vkf_hf_config *c) {
  const cJSON *arr = vkf_json_field(root, "architectures");
  if (!arr) return VKF_OK;
  if (!cJSON_IsArray(arr))
    return vkf_status_make(VKF_STATUS_PARSE, "%s: field \"architectures\" must be an array", file);
  size_t n = (size_t)cJSON_GetArraySize(arr);
  c->architectures = vkf_arena_alloc(c->arena, (n ? n : 1) * sizeof *c->architectures);
  if (!c->architectures) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: no memory", file);
  for (const cJSON *e = arr->child; e; e = e->next) {
    if (!cJSON_IsString(e))
      return vkf_status_make(VKF_STATUS_PARSE, "%s: field \"architectures\" must hold only strings",
                             file);
    const char *s = vkf_arena_strdup(c->arena, e->valuestring);
    if (!s) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: no memory", file);
    c->architectures[c->architecture_count++] = s;
  }
  return VKF_OK;
}

/* id2label keys are decimal strings; each id in [0, n) must appear exactly once. */
static vkf_status parse_labels(const char *file, const cJSON *root, vkf_hf_config *c) {
  const cJSON *map = vkf_json_field(root, "id2label");
  const cJSON *num = vkf_json_field(root, "num_labels");
  int64_t num_labels = 2; /* PretrainedConfig's default */
  if (num) {
    VKF_RETURN_IF_ERROR(vkf_json_get_int(file, root, "num_labels", 2, &num_labels));
    if (num_labels < 0)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "%s: field \"num_labels\" is %lld, must be >= 0", file,
                             (long long)num_labels);
    if (num_labels > VKF_HF_MAX_LABELS)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "%s: field \"num_labels\" is %lld, more than the %lld a model can use",
                             file, (long long)num_labels, (long long)VKF_HF_MAX_LABELS);
  }
  if (map) {
    if (!cJSON_IsObject(map))
      return vkf_status_make(VKF_STATUS_PARSE, "%s: field \"id2label\" must be an object", file);
    int64_t n = cJSON_GetArraySize(map);
    if (n > VKF_HF_MAX_LABELS)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "%s: field \"id2label\" has %lld entries, more than the %lld a model "
                             "can use",
                             file, (long long)n, (long long)VKF_HF_MAX_LABELS);
    if (num && num_labels != n) /* Hugging Face keeps id2label and only warns; so do we */
      vkf_log(VKF_LOG_WARN, "%s: num_labels is %lld but id2label has %lld entries; using id2label",
              file, (long long)num_labels, (long long)n);
    num_labels = n;
  }
  c->num_labels = num_labels;
  c->id2label = vkf_arena_alloc(c->arena, (size_t)(num_labels ? num_labels : 1) * sizeof(char *));
  if (!c->id2label) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: no memory", file);
  if (!map) {
    for (int64_t i = 0; i < num_labels; i++) {
      c->id2label[i] = vkf_arena_printf(c->arena, "LABEL_%lld", (long long)i);
      if (!c->id2label[i]) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: no memory", file);
    }
    return VKF_OK;
  }
  for (const cJSON *e = map->child; e; e = e->next) {
    const char *key = e->string;
    char *end = NULL;
    errno = 0;
    long long id = strtoll(key, &end, 10);
    if (key[0] < '0' || key[0] > '9' || *end != '\0' || errno || id >= num_labels)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "%s: field \"id2label\" has key \"%s\", expected an id in [0, %lld)",
                             file, key, (long long)num_labels);
    if (!cJSON_IsString(e))
      return vkf_status_make(VKF_STATUS_PARSE,
                             "%s: field \"id2label\" entry \"%s\" is not a string", file, key);
    if (c->id2label[id])
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "%s: field \"id2label\" lists id %lld twice", file, id);
    c->id2label[id] = vkf_arena_strdup(c->arena, e->valuestring);
    if (!c->id2label[id]) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: no memory", file);
  }
  /* n distinct keys in [0, n) cover every id, so no slot is left NULL. */
  return VKF_OK;
}

static vkf_status parse_config(const char *file, const cJSON *root, vkf_hf_config *c) {
  const char *model_type;
  VKF_RETURN_IF_ERROR(vkf_json_get_string(file, root, "model_type", &model_type));
  if (!model_type)
    return vkf_status_make(VKF_STATUS_NOT_FOUND, "%s: missing required field \"model_type\"", file);
  const struct model_defaults *d = NULL;
  for (size_t i = 0; i < sizeof model_defaults / sizeof *model_defaults; i++)
    if (strcmp(model_defaults[i].model_type, model_type) == 0) d = &model_defaults[i];
  if (!d)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: field \"model_type\" value \"%s\" is not supported (known: vit, "
                           "deit, bert, roberta, xlm-roberta, gpt2, llama, mistral, qwen2, bart, marian, "
                           "t5, mt5, d2l_transformer, d2l_seq2seq_attention, nystromformer, big_bird, longformer, reformer)",
                           file, model_type);
  c->model_type = vkf_arena_strdup(c->arena, model_type);
  if (!c->model_type) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: no memory", file);
  c->family = d->family;
  VKF_RETURN_IF_ERROR(parse_architectures(file, root, c));
  if (c->family == VKF_HF_FAMILY_DECODER) {
    VKF_RETURN_IF_ERROR(vkf_hf_config_parse_decoder(file, root, c));
    return parse_labels(file, root, c);
  }
  if (c->family == VKF_HF_FAMILY_SEQ2SEQ) {
    VKF_RETURN_IF_ERROR(vkf_hf_config_parse_seq2seq(file, root, c));
    return parse_labels(file, root, c);
  }
  if (!strcmp(model_type, "reformer")) {
    VKF_RETURN_IF_ERROR(vkf_hf_config_parse_reformer(file, root, c));
    return parse_labels(file, root, c);
  }

  /* Shared by ViTConfig and BertConfig alike; NystromformerConfig differs in three defaults. */
  bool nystrom = strcmp(model_type, "nystromformer") == 0;
  VKF_RETURN_IF_ERROR(
      vkf_json_get_size(file, root, "hidden_size", 768, VKF_HF_MAX_HIDDEN, &c->hidden_size));
  VKF_RETURN_IF_ERROR(vkf_json_get_size(file, root, "num_hidden_layers", 12, VKF_HF_MAX_LAYERS,
                                        &c->num_hidden_layers));
  VKF_RETURN_IF_ERROR(vkf_json_get_size(file, root, "num_attention_heads", 12, VKF_HF_MAX_HIDDEN,
                                        &c->num_attention_heads));
  VKF_RETURN_IF_ERROR(vkf_json_get_size(file, root, "intermediate_size", 3072,
                                        VKF_HF_MAX_INTERMEDIATE, &c->intermediate_size));
  VKF_RETURN_IF_ERROR(vkf_json_get_double(file, root, "layer_norm_eps", nystrom ? 1e-5 : 1e-12,
                                          &c->layer_norm_eps));
  if (!(c->layer_norm_eps > 0.0) || !isfinite(c->layer_norm_eps))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"layer_norm_eps\" is %g, must be a positive number", file,
                           c->layer_norm_eps);
  if (c->hidden_size % c->num_attention_heads != 0)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"hidden_size\" %lld is not divisible by "
                           "\"num_attention_heads\" %lld",
                           file, (long long)c->hidden_size, (long long)c->num_attention_heads);
  c->head_dim = c->hidden_size / c->num_attention_heads;

  const char *act;
  VKF_RETURN_IF_ERROR(vkf_json_get_string(file, root, "hidden_act", &act));
  c->hidden_act = nystrom ? VKF_HF_ACT_GELU_TANH : VKF_HF_ACT_GELU; /* "gelu_new" */
  if (act) VKF_RETURN_IF_ERROR(vkf_hf_act_parse(file, "hidden_act", act, &c->hidden_act));

  c->pad_token_id = -1;
  if (c->family == VKF_HF_FAMILY_VISION) {
    VKF_RETURN_IF_ERROR(
        vkf_json_get_size(file, root, "image_size", 224, VKF_HF_MAX_IMAGE_SIZE, &c->image_size));
    VKF_RETURN_IF_ERROR(
        vkf_json_get_size(file, root, "patch_size", 16, VKF_HF_MAX_IMAGE_SIZE, &c->patch_size));
    VKF_RETURN_IF_ERROR(
        vkf_json_get_size(file, root, "num_channels", 3, VKF_HF_MAX_CHANNELS, &c->num_channels));
    VKF_RETURN_IF_ERROR(vkf_json_get_bool(file, root, "qkv_bias", true, &c->qkv_bias));
    if (c->image_size % c->patch_size != 0)
      return vkf_status_make(
          VKF_STATUS_INVALID_ARGUMENT,
          "%s: field \"image_size\" %lld is not divisible by \"patch_size\" %lld", file,
          (long long)c->image_size, (long long)c->patch_size);
    /* Both sizes are bounded by VKF_HF_MAX_IMAGE_SIZE, so side * side fits in int64; the patch
     * count (plus the class token) is a sequence length and bounded like positions. */
    int64_t side = c->image_size / c->patch_size;
    c->num_patches = side * side;
    if (c->num_patches + 1 > VKF_HF_MAX_POSITIONS)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "%s: field \"image_size\" %lld with \"patch_size\" %lld gives %lld "
                             "patches, more than the %lld positions a model can use",
                             file, (long long)c->image_size, (long long)c->patch_size,
                             (long long)c->num_patches, (long long)VKF_HF_MAX_POSITIONS - 1);
  } else {
    c->qkv_bias = true;
    VKF_RETURN_IF_ERROR(vkf_json_get_size(file, root, "vocab_size", d->vocab_size, VKF_HF_MAX_VOCAB,
                                          &c->vocab_size));
    VKF_RETURN_IF_ERROR(vkf_json_get_size(file, root, "max_position_embeddings", nystrom ? 510 : 512,
                                          VKF_HF_MAX_POSITIONS, &c->max_position_embeddings));
    VKF_RETURN_IF_ERROR(
        vkf_json_get_size(file, root, "type_vocab_size", 2, VKF_HF_MAX_VOCAB, &c->type_vocab_size));
    /* An explicit null means "no padding token"; absence means the class default. */
    const cJSON *pad = cJSON_GetObjectItemCaseSensitive(root, "pad_token_id");
    int64_t pad_default = pad && cJSON_IsNull(pad) ? -1 : d->pad_token_id;
    VKF_RETURN_IF_ERROR(vkf_json_get_int(file, root, "pad_token_id", pad_default, &c->pad_token_id));
    if (c->pad_token_id < -1 || c->pad_token_id >= c->vocab_size)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "%s: field \"pad_token_id\" %lld is outside the vocabulary of %lld",
                             file, (long long)c->pad_token_id, (long long)c->vocab_size);
    if (strcmp(c->model_type, "big_bird") == 0)
      VKF_RETURN_IF_ERROR(vkf_hf_config_parse_bigbird(file, root, c));
    if (!strcmp(model_type, "longformer"))
      VKF_RETURN_IF_ERROR(vkf_hf_config_parse_longformer(file, root, c));
  }
  return parse_labels(file, root, c);
}

vkf_status vkf_hf_config_parse(const char *json, size_t size, const char *name,
                               vkf_hf_config *out_config) {
  VKF_ASSERT(json && name && out_config);
  memset(out_config, 0, sizeof *out_config);
  cJSON *root;
  VKF_RETURN_IF_ERROR(vkf_json_parse_object(json, size, name, &root));
  vkf_hf_config c = {0};
  c.arena = vkf_arena_create();
  vkf_status status = c.arena ? parse_config(name, root, &c)
                              : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: no memory", name);
  if (!status) status = vkf_hf_attention_parse(name, root, c.model_type, c.num_hidden_layers,
                                                   c.num_attention_heads, c.arena, &c.attention);
  cJSON_Delete(root);
  if (status) {
    vkf_hf_config_release(&c);
    return status;
  }
  *out_config = c;
  return VKF_OK;
}

vkf_status vkf_hf_config_load(const char *path, vkf_hf_config *out_config) {
  memset(out_config, 0, sizeof *out_config);
  char *text;
  size_t size;
  VKF_RETURN_IF_ERROR(vkf_json_read_file(path, &text, &size));
  vkf_status status = vkf_hf_config_parse(text, size, path, out_config);
  free(text);
  return status;
}

void vkf_hf_config_release(vkf_hf_config *config) {
  if (!config) return;
  if (config->arena) vkf_arena_destroy(config->arena);
  memset(config, 0, sizeof *config);
}

/* ---- preprocessor_config.json ---- */

/* `size` / `crop_size`: {"height","width"}, {"shortest_edge"[,"longest_edge"]} or an int, which
 * ViT and DeiT read as a square (get_size_dict with default_to_square=True). */
static vkf_status parse_size(const char *file, const cJSON *root, const char *key,
                             bool allow_shortest_edge, vkf_hf_preprocessor *p, int64_t *height,
                             int64_t *width) {
  const cJSON *item = vkf_json_field(root, key);
  if (!item) return VKF_OK;
  if (vkf_json_is_int(item)) {
    *height = *width = (int64_t)item->valuedouble;
    if (allow_shortest_edge) p->size_mode = VKF_HF_SIZE_HEIGHT_WIDTH;
  } else if (cJSON_IsObject(item) && vkf_json_field(item, "height") && vkf_json_field(item, "width")) {
    const cJSON *h = vkf_json_field(item, "height"), *w = vkf_json_field(item, "width");
    if (!vkf_json_is_int(h) || !vkf_json_is_int(w))
      return vkf_status_make(VKF_STATUS_PARSE, "%s: field \"%s\" height and width must be integers",
                             file, key);
    *height = (int64_t)h->valuedouble;
    *width = (int64_t)w->valuedouble;
    if (allow_shortest_edge) p->size_mode = VKF_HF_SIZE_HEIGHT_WIDTH;
  } else if (allow_shortest_edge && cJSON_IsObject(item) && vkf_json_field(item, "shortest_edge")) {
    const cJSON *se = vkf_json_field(item, "shortest_edge"), *le = vkf_json_field(item, "longest_edge");
    if (!vkf_json_is_int(se) || (le && !vkf_json_is_int(le)))
      return vkf_status_make(VKF_STATUS_PARSE,
                             "%s: field \"%s\" shortest_edge and longest_edge must be integers",
                             file, key);
    p->shortest_edge = (int64_t)se->valuedouble;
    p->longest_edge = le ? (int64_t)le->valuedouble : 0;
    if (p->shortest_edge <= 0 || p->longest_edge < 0)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "%s: field \"%s\" has a non-positive edge length", file, key);
    if (p->shortest_edge > VKF_HF_MAX_IMAGE_SIZE || p->longest_edge > VKF_HF_MAX_IMAGE_SIZE)
      return vkf_status_make(
          VKF_STATUS_INVALID_ARGUMENT,
          "%s: field \"%s\" edge %lld is more than the %lld a model can use", file, key,
          (long long)(p->shortest_edge > p->longest_edge ? p->shortest_edge : p->longest_edge),
          (long long)VKF_HF_MAX_IMAGE_SIZE);
    p->size_mode = VKF_HF_SIZE_SHORTEST_EDGE;
    return VKF_OK;
  } else {
    return vkf_status_make(VKF_STATUS_PARSE,
                           "%s: field \"%s\" must be an integer or an object with %s", file, key,
                           allow_shortest_edge ? "\"height\" and \"width\" or \"shortest_edge\""
                                               : "\"height\" and \"width\"");
  }
  if (*height <= 0 || *width <= 0)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"%s\" is %lldx%lld, sizes must be > 0", file, key,
                           (long long)*height, (long long)*width);
  if (*height > VKF_HF_MAX_IMAGE_SIZE || *width > VKF_HF_MAX_IMAGE_SIZE)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"%s\" is %lldx%lld, more than the %lld a model can use",
                           file, key, (long long)*height, (long long)*width,
                           (long long)VKF_HF_MAX_IMAGE_SIZE);
  return VKF_OK;
}

/* image_mean / image_std: a list of per-channel values, or one number for three channels. */
static vkf_status parse_channels(const char *file, const cJSON *root, const char *key,
                                 float *values, int *count) {
  const cJSON *item = vkf_json_field(root, key);
  if (!item) return VKF_OK;
  int n = 0;
  if (cJSON_IsNumber(item)) {
    n = 3;
    for (int i = 0; i < n; i++) values[i] = (float)item->valuedouble;
  } else if (cJSON_IsArray(item)) {
    n = cJSON_GetArraySize(item);
    if (n < 1 || n > VKF_HF_MAX_CHANNELS)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "%s: field \"%s\" has %d entries, expected 1 to %d", file, key, n,
                             VKF_HF_MAX_CHANNELS);
    int i = 0;
    for (const cJSON *e = item->child; e; e = e->next, i++) {
      if (!cJSON_IsNumber(e))
        return vkf_status_make(VKF_STATUS_PARSE, "%s: field \"%s\"[%d] is not a number", file, key,
                               i);
      values[i] = (float)e->valuedouble;
    }
  } else {
    return vkf_status_make(VKF_STATUS_PARSE, "%s: field \"%s\" must be a number or a list", file,
                           key);
  }
  *count = n;
  return VKF_OK;
}

static vkf_status parse_preprocessor(const char *file, const cJSON *root, vkf_hf_preprocessor *p) {
  const char *type, *legacy_type;
  VKF_RETURN_IF_ERROR(vkf_json_get_string(file, root, "image_processor_type", &type));
  VKF_RETURN_IF_ERROR(vkf_json_get_string(file, root, "feature_extractor_type", &legacy_type));
  if (!type) type = legacy_type;
  if (type) snprintf(p->processor_type, sizeof p->processor_type, "%s", type);
  bool deit = type && strncmp(type, "DeiT", 4) == 0;

  /* ViTImageProcessor / DeiTImageProcessor defaults; both normalise with IMAGENET_STANDARD
   * mean = std = 0.5. */
  p->do_resize = true;
  p->size_mode = VKF_HF_SIZE_HEIGHT_WIDTH;
  p->size_height = p->size_width = deit ? 256 : 224;
  p->resample = deit ? VKF_HF_RESAMPLE_BICUBIC : VKF_HF_RESAMPLE_BILINEAR;
  p->do_center_crop = deit;
  p->crop_height = p->crop_width = 224;
  p->do_rescale = true;
  p->rescale_factor = 1.0 / 255.0;
  p->do_normalize = true;
  p->channel_count = 3;
  for (int i = 0; i < 3; i++) p->image_mean[i] = p->image_std[i] = 0.5f;

  VKF_RETURN_IF_ERROR(vkf_json_get_bool(file, root, "do_resize", p->do_resize, &p->do_resize));
  VKF_RETURN_IF_ERROR(parse_size(file, root, "size", true, p, &p->size_height, &p->size_width));
  int64_t resample;
  VKF_RETURN_IF_ERROR(vkf_json_get_int(file, root, "resample", p->resample, &resample));
  if (resample < VKF_HF_RESAMPLE_NEAREST || resample > VKF_HF_RESAMPLE_HAMMING)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: field \"resample\" value %lld is not a PIL resampling filter "
                           "(0 nearest, 1 lanczos, 2 bilinear, 3 bicubic, 4 box, 5 hamming)",
                           file, (long long)resample);
  p->resample = (vkf_hf_resample)resample;
  VKF_RETURN_IF_ERROR(
      vkf_json_get_bool(file, root, "do_center_crop", p->do_center_crop, &p->do_center_crop));
  VKF_RETURN_IF_ERROR(
      parse_size(file, root, "crop_size", false, p, &p->crop_height, &p->crop_width));
  VKF_RETURN_IF_ERROR(vkf_json_get_bool(file, root, "do_rescale", p->do_rescale, &p->do_rescale));
  VKF_RETURN_IF_ERROR(
      vkf_json_get_double(file, root, "rescale_factor", p->rescale_factor, &p->rescale_factor));
  if (!(p->rescale_factor > 0.0) || !isfinite(p->rescale_factor))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"rescale_factor\" is %g, must be a positive number", file,
                           p->rescale_factor);
  VKF_RETURN_IF_ERROR(vkf_json_get_bool(file, root, "do_normalize", p->do_normalize, &p->do_normalize));
  int mean_count = 0, std_count = 0;
  float mean[VKF_HF_MAX_CHANNELS], std[VKF_HF_MAX_CHANNELS];
  VKF_RETURN_IF_ERROR(parse_channels(file, root, "image_mean", mean, &mean_count));
  VKF_RETURN_IF_ERROR(parse_channels(file, root, "image_std", std, &std_count));
  if (mean_count) memcpy(p->image_mean, mean, sizeof mean);
  if (std_count) memcpy(p->image_std, std, sizeof std);
  /* An absent entry keeps the 3-channel default, so compare what the processor will use. */
  int mc = mean_count ? mean_count : 3, sc = std_count ? std_count : 3;
  if (mc != sc)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"image_mean\" has %d entries but \"image_std\" has %d", file,
                           mc, sc);
  p->channel_count = mc;
  for (int i = 0; i < mc; i++) {
    if (!(p->image_std[i] > 0.0f) || !isfinite(p->image_std[i]))
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "%s: field \"image_std\"[%d] is %g, must be > 0", file, i,
                             (double)p->image_std[i]);
  }
  return VKF_OK;
}

vkf_status vkf_hf_preprocessor_parse(const char *json, size_t size, const char *name,
                                     vkf_hf_preprocessor *out_pre) {
  VKF_ASSERT(json && name && out_pre);
  memset(out_pre, 0, sizeof *out_pre);
  cJSON *root;
  VKF_RETURN_IF_ERROR(vkf_json_parse_object(json, size, name, &root));
  vkf_hf_preprocessor p = {0};
  vkf_status status = parse_preprocessor(name, root, &p);
  cJSON_Delete(root);
  if (!status) *out_pre = p;
  return status;
}

vkf_status vkf_hf_preprocessor_load(const char *path, vkf_hf_preprocessor *out_pre) {
  memset(out_pre, 0, sizeof *out_pre);
  char *text;
  size_t size;
  VKF_RETURN_IF_ERROR(vkf_json_read_file(path, &text, &size));
  vkf_status status = vkf_hf_preprocessor_parse(text, size, path, out_pre);
  free(text);
  return status;
}
