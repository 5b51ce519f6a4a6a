/* LongformerConfig's attention_window onto vkf_hf_config, with LongformerModel's own checks. */
#include "models/formats/hf_config_longformer.h"

#include "models/formats/json_fields.h"

/* One layer's window: LongformerSelfAttention asserts it even and positive. Bounded by the
 * positions a model can have, so window arithmetic (padding, blocks) stays far from overflow. */
static vkf_status check_window(const char *file, const cJSON *item, int64_t layer, int64_t *out) {
  if (!vkf_json_is_int(item))
    return vkf_status_make(VKF_STATUS_PARSE,
                           "%s: field \"attention_window\" entry %lld is not an integer", file,
                           (long long)layer);
  double v = item->valuedouble;
  if (v <= 0 || v > (double)VKF_HF_MAX_POSITIONS || (int64_t)v % 2 != 0)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"attention_window\" of layer %lld is %.0f; it must be an "
                           "even value in [2, %lld]",
                           file, (long long)layer, v, (long long)VKF_HF_MAX_POSITIONS);
  /* A one-token overlap breaks the sliding chunks' first-chunk copy in transformers 4.38
   * (every forward raises "The expanded size of the tensor (0) must match..."). */
  if (v == 2)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: field \"attention_window\" of layer %lld is 2, which transformers' "
                           "LongformerSelfAttention cannot run (its sliding chunks need a window "
                           "of at least 4)",
                           file, (long long)layer);
  *out = (int64_t)v;
  return VKF_OK;
}

vkf_status vkf_hf_config_parse_longformer(const char *file, const cJSON *root, vkf_hf_config *c) {
  int64_t n = c->num_hidden_layers;
  int64_t *w = vkf_arena_alloc(c->arena, (size_t)n * sizeof *w);
  if (!w) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "%s: no memory", file);
  const cJSON *f = vkf_json_field(root, "attention_window");
  if (!f) {
    for (int64_t l = 0; l < n; l++) w[l] = 512; /* LongformerConfig's default */
  } else if (cJSON_IsArray(f)) {
    int count = cJSON_GetArraySize(f);
    if (count != n)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "%s: field \"attention_window\" has %d entries, expected one per "
                             "layer (num_hidden_layers %lld)",
                             file, count, (long long)n);
    int64_t l = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, f) {
      VKF_RETURN_IF_ERROR(check_window(file, item, l, &w[l]));
      l++;
    }
  } else {
    int64_t v;
    VKF_RETURN_IF_ERROR(check_window(file, f, 0, &v));
    for (int64_t l = 0; l < n; l++) w[l] = v;
  }
  c->attention_window = w;
  const cJSON *sep = cJSON_GetObjectItemCaseSensitive(root, "sep_token_id");
  VKF_RETURN_IF_ERROR(vkf_json_get_int(file, root, "sep_token_id",
                                       sep && cJSON_IsNull(sep) ? -1 : 2, &c->sep_token_id));
  return VKF_OK;
}
