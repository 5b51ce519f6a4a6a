/* config.json's "vkf_attention" key (see hf_config_attention.h and docs/efficient-attention.md). Every key is checked
 * against the kind's list, so a typo ("feature", "orthogonnal") or a key of another kind is an
 * error, never silently ignored. */
#include "models/formats/hf_config_attention.h"

#include <math.h>
#include <string.h>

#include "models/formats/json_fields.h"

#define FIELD "vkf_attention"

static const char *const k_kind_names[] = {"softmax",   "linear",  "performer",    "rfa",
                                           "linformer", "nystrom", "adaptive_span",
                                           "long_short"};

const char *vkf_hf_attn_kind_name(vkf_hf_attn_kind kind) {
  return (unsigned)kind < sizeof k_kind_names / sizeof *k_kind_names ? k_kind_names[kind] : "?";
}

/* The keys each kind takes besides "kind" (space-separated, each followed by a space). */
static const char *keys_of(vkf_hf_attn_kind kind) {
  switch (kind) {
    case VKF_HF_ATTN_LINEAR:
      return "eps ";
    case VKF_HF_ATTN_PERFORMER:
      return "features seed orthogonal scale eps ";
    case VKF_HF_ATTN_RFA:
      return "features seed orthogonal gate scale eps ";
    case VKF_HF_ATTN_LINFORMER:
      return "k sharing ";
    case VKF_HF_ATTN_NYSTROM:
      return "landmarks inv_init conv_kernel_size ";
    case VKF_HF_ATTN_ADAPTIVE_SPAN:
      return "ramp spans ";
    case VKF_HF_ATTN_LONG_SHORT:
      return "window rank segment dual_ln ";
    default:
      return "";
  }
}

static int key_allowed(const char *keys, const char *key) {
  size_t n = strlen(key);
  for (const char *p = keys; *p;) {
    const char *end = strchr(p, ' ');
    if ((size_t)(end - p) == n && !strncmp(p, key, n)) return 1;
    p = end + 1;
  }
  return 0;
}

static vkf_status parse_sharing(const char *file, const cJSON *obj, vkf_hf_attention *a) {
  static const char *const names[] = {"none", "headwise", "key-value", "layerwise"};
  const char *s;
  VKF_RETURN_IF_ERROR(vkf_json_get_string(file, obj, "sharing", &s));
  if (!s) return VKF_OK;
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (!strcmp(s, names[i])) {
      a->sharing = (vkf_hf_linformer_share)i;
      return VKF_OK;
    }
  return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                         "%s: field \"" FIELD
                         ".sharing\" value \"%s\" is not known (none, "
                         "headwise, key-value, layerwise)",
                         file, s);
}

static vkf_status parse_nystrom(const char *file, const cJSON *obj, vkf_hf_attention *a) {
  if (!vkf_json_field(obj, "landmarks"))
    return vkf_status_make(VKF_STATUS_NOT_FOUND, "%s: field \"" FIELD ".landmarks\" is missing",
                           file);
  VKF_RETURN_IF_ERROR(
      vkf_json_get_size(file, obj, "landmarks", 1, VKF_HF_MAX_FEATURES, &a->landmarks));
  const char *init;
  VKF_RETURN_IF_ERROR(vkf_json_get_string(file, obj, "inv_init", &init));
  if (init && strcmp(init, "original") != 0 && strcmp(init, "per_head") != 0)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: field \"" FIELD
                           ".inv_init\" value \"%s\" is not known "
                           "(original, per_head)",
                           file, init);
  a->inv_per_head = init && !strcmp(init, "per_head");
  const cJSON *conv = vkf_json_field(obj, "conv_kernel_size");
  if (conv) {
    VKF_RETURN_IF_ERROR(
        vkf_json_get_size(file, obj, "conv_kernel_size", 1, 1 << 12, &a->conv_kernel_size));
    if (a->conv_kernel_size % 2 == 0)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "%s: field \"" FIELD
                             ".conv_kernel_size\" %lld is even (the skip "
                             "keeps the length only with an odd kernel)",
                             file, (long long)a->conv_kernel_size);
  }
  return VKF_OK;
}

/* One span z: a finite number in [0, VKF_HF_MAX_SPAN]. */
static vkf_status span_value(const char *file, const cJSON *item, int64_t layer, int64_t head,
                             double *out) {
  char where[64];
  if (head < 0)
    snprintf(where, sizeof where, "layer %lld", (long long)layer);
  else
    snprintf(where, sizeof where, "layer %lld head %lld", (long long)layer, (long long)head);
  if (!cJSON_IsNumber(item))
    return vkf_status_make(VKF_STATUS_PARSE,
                           "%s: field \"" FIELD ".spans\" of %s is not a number", file, where);
  double z = item->valuedouble;
  if (!isfinite(z) || z < 0.0 || z > VKF_HF_MAX_SPAN)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"" FIELD ".spans\" of %s is %g; a span is in [0, %.0f] tokens",
                           file, where, z, VKF_HF_MAX_SPAN);
  *out = z;
  return VKF_OK;
}

/* adaptive_span: "ramp" R and "spans" z per layer and head, [layers][heads] (or one number per
 * layer for all its heads, or one number for every layer and head). */
static vkf_status parse_adaptive_span(const char *file, const cJSON *obj, int64_t layers,
                                      int64_t heads, vkf_arena *arena, vkf_hf_attention *a) {
  VKF_RETURN_IF_ERROR(vkf_json_get_double(file, obj, "ramp", 32.0, &a->ramp));
  if (!isfinite(a->ramp) || !(a->ramp > 0.0) || a->ramp > VKF_HF_MAX_SPAN)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"" FIELD ".ramp\" is %g; the ramp R is in (0, %.0f] tokens",
                           file, a->ramp, VKF_HF_MAX_SPAN);
  const cJSON *spans = vkf_json_field(obj, "spans");
  if (!spans)
    return vkf_status_make(VKF_STATUS_NOT_FOUND,
                           "%s: field \"" FIELD ".spans\" (z per layer and head) is missing", file);
  if (layers < 1 || heads < 1 || layers > (int64_t)1 << 16 || heads > (int64_t)1 << 16)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s: %lld layers of %lld heads", file,
                           (long long)layers, (long long)heads);
  double *z = vkf_arena_alloc(arena, (size_t)(layers * heads) * sizeof *z);
  if (!z) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: no memory", file);
  a->spans = z;
  if (!cJSON_IsArray(spans)) {
    VKF_RETURN_IF_ERROR(span_value(file, spans, 0, -1, &z[0]));
    for (int64_t i = 1; i < layers * heads; i++) z[i] = z[0];
    return VKF_OK;
  }
  int count = cJSON_GetArraySize(spans);
  if (count != layers)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"" FIELD ".spans\" has %d entries, expected one per layer "
                           "(num_hidden_layers %lld)",
                           file, count, (long long)layers);
  int64_t l = 0;
  const cJSON *row;
  cJSON_ArrayForEach(row, spans) {
    double *zl = z + l * heads;
    if (!cJSON_IsArray(row)) {
      VKF_RETURN_IF_ERROR(span_value(file, row, l, -1, &zl[0]));
      for (int64_t h = 1; h < heads; h++) zl[h] = zl[0];
    } else {
      int n = cJSON_GetArraySize(row);
      if (n != heads)
        return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                               "%s: field \"" FIELD ".spans\" of layer %lld has %d entries, "
                               "expected one per head (num_attention_heads %lld)",
                               file, (long long)l, n, (long long)heads);
      int64_t h = 0;
      const cJSON *item;
      cJSON_ArrayForEach(item, row) {
        VKF_RETURN_IF_ERROR(span_value(file, item, l, h, &zl[h]));
        h++;
      }
    }
    l++;
  }
  return VKF_OK;
}

/* long_short: "window" w and "rank" r (required), "segment" l (default w), "dual_ln". */
static vkf_status parse_long_short(const char *file, const cJSON *obj, vkf_hf_attention *a) {
  static const char *const need[] = {"window", "rank"};
  for (int i = 0; i < 2; i++)
    if (!vkf_json_field(obj, need[i]))
      return vkf_status_make(VKF_STATUS_NOT_FOUND, "%s: field \"" FIELD ".%s\" is missing", file,
                             need[i]);
  VKF_RETURN_IF_ERROR(vkf_json_get_size(file, obj, "window", 1, VKF_HF_MAX_LONG_SHORT, &a->window));
  VKF_RETURN_IF_ERROR(vkf_json_get_size(file, obj, "rank", 1, VKF_HF_MAX_FEATURES, &a->rank));
  VKF_RETURN_IF_ERROR(
      vkf_json_get_size(file, obj, "segment", a->window, VKF_HF_MAX_LONG_SHORT, &a->segment));
  return vkf_json_get_bool(file, obj, "dual_ln", true, &a->dual_ln);
}

static int is_decoder(const char *model_type) {
  return !strcmp(model_type, "llama") || !strcmp(model_type, "gpt2") ||
         !strcmp(model_type, "mistral") || !strcmp(model_type, "qwen2");
}

vkf_status vkf_hf_attention_parse(const char *file, const cJSON *root, const char *model_type,
                                  int64_t layers, int64_t heads, vkf_arena *arena,
                                  vkf_hf_attention *out) {
  memset(out, 0, sizeof *out);
  const cJSON *obj = vkf_json_field(root, FIELD);
  if (!obj) return VKF_OK;
  if (!cJSON_IsObject(obj))
    return vkf_status_make(VKF_STATUS_PARSE, "%s: field \"" FIELD "\" must be an object", file);
  int causal = !strcmp(model_type, "llama");
  const char *kind;
  VKF_RETURN_IF_ERROR(vkf_json_get_string(file, obj, "kind", &kind));
  if (!kind)
    return vkf_status_make(VKF_STATUS_NOT_FOUND, "%s: field \"" FIELD ".kind\" is missing", file);
  out->kind = VKF_HF_ATTN_SOFTMAX;
  for (int i = VKF_HF_ATTN_LINEAR; i <= VKF_HF_ATTN_LONG_SHORT; i++)
    if (!strcmp(kind, k_kind_names[i])) out->kind = (vkf_hf_attn_kind)i;
  if (out->kind == VKF_HF_ATTN_SOFTMAX)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: field \"" FIELD
                           ".kind\" value \"%s\" is not known (linear, "
                           "performer, rfa, linformer, nystrom, adaptive_span, long_short)",
                           file, kind);
  if (out->kind == VKF_HF_ATTN_ADAPTIVE_SPAN && !is_decoder(model_type))
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: field \"" FIELD
                           ".kind\" adaptive_span is supported for the decoders (model_type "
                           "gpt2, llama, mistral, qwen2), not \"%s\"",
                           file, model_type);
  if (out->kind == VKF_HF_ATTN_LONG_SHORT && !is_decoder(model_type) &&
      strcmp(model_type, "bert") != 0)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: field \"" FIELD
                           ".kind\" long_short is supported for model_type bert, gpt2, llama, "
                           "mistral and qwen2, not \"%s\"",
                           file, model_type);
  if (out->kind != VKF_HF_ATTN_ADAPTIVE_SPAN && out->kind != VKF_HF_ATTN_LONG_SHORT && !causal &&
      strcmp(model_type, "bert") != 0)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: field \"" FIELD
                           "\" kind %s is supported for model_type bert and llama, "
                           "not \"%s\"",
                           file, kind, model_type);
  if (causal && (out->kind == VKF_HF_ATTN_LINFORMER || out->kind == VKF_HF_ATTN_NYSTROM))
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: field \"" FIELD
                           ".kind\" %s mixes every position and has no "
                           "causal form (model_type llama)",
                           file, kind);
  const char *keys = keys_of(out->kind);
  for (const cJSON *it = obj->child; it; it = it->next)
    if (strcmp(it->string, "kind") != 0 && !key_allowed(keys, it->string))
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "%s: field \"" FIELD
                             ".%s\" does not apply to kind %s (its keys: "
                             "%s)",
                             file, it->string, kind, *keys ? keys : "none ");
  VKF_RETURN_IF_ERROR(
      vkf_json_get_size(file, obj, "features", 64, VKF_HF_MAX_FEATURES, &out->features));
  int64_t seed;
  VKF_RETURN_IF_ERROR(vkf_json_get_int(file, obj, "seed", 0, &seed));
  if (seed < 0)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"" FIELD ".seed\" is %lld, must be >= 0", file,
                           (long long)seed);
  out->seed = (uint64_t)seed;
  VKF_RETURN_IF_ERROR(vkf_json_get_bool(file, obj, "orthogonal", out->kind == VKF_HF_ATTN_PERFORMER,
                                        &out->orthogonal));
  VKF_RETURN_IF_ERROR(vkf_json_get_bool(file, obj, "gate", false, &out->gate));
  if (out->gate && !causal)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"" FIELD
                           ".gate\" needs a causal model (llama): the gate is "
                           "a recurrence over positions",
                           file);
  VKF_RETURN_IF_ERROR(vkf_json_get_double(file, obj, "scale", 0.0, &out->scale));
  VKF_RETURN_IF_ERROR(vkf_json_get_double(file, obj, "eps", 1e-6, &out->eps));
  if (!isfinite(out->scale) || out->scale < 0.0 || !isfinite(out->eps) || !(out->eps > 0.0))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"" FIELD "\": scale %g must be >= 0 and eps %g > 0", file,
                           out->scale, out->eps);
  if (out->kind == VKF_HF_ATTN_LINFORMER) {
    if (!vkf_json_field(obj, "k"))
      return vkf_status_make(VKF_STATUS_NOT_FOUND,
                             "%s: field \"" FIELD ".k\" (the projected length) is missing", file);
    VKF_RETURN_IF_ERROR(vkf_json_get_size(file, obj, "k", 1, VKF_HF_MAX_FEATURES, &out->k));
    VKF_RETURN_IF_ERROR(parse_sharing(file, obj, out));
  }
  if (out->kind == VKF_HF_ATTN_NYSTROM) return parse_nystrom(file, obj, out);
  if (out->kind == VKF_HF_ATTN_ADAPTIVE_SPAN)
    return parse_adaptive_span(file, obj, layers, heads, arena, out);
  if (out->kind == VKF_HF_ATTN_LONG_SHORT) return parse_long_short(file, obj, out);
  return VKF_OK;
}
