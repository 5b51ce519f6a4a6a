/* NystromformerConfig's own fields (see hf_config_nystromformer.h). */
#include "models/formats/hf_config_nystromformer.h"

#include <stdlib.h>
#include <string.h>

#include "models/formats/hf_config.h"
#include "models/formats/json_fields.h"

static vkf_status parse(const char *f, const cJSON *r, void *out) {
  vkf_nystrom_config *c = out;
  VKF_RETURN_IF_ERROR(vkf_json_get_size(f, r, "segment_means_seq_len", 64, VKF_HF_MAX_POSITIONS,
                                        &c->segment_means_seq_len));
  VKF_RETURN_IF_ERROR(
      vkf_json_get_size(f, r, "num_landmarks", 64, VKF_HF_MAX_POSITIONS, &c->num_landmarks));
  /* Absent: the class default 65; an explicit null: no convolution (conv_kernel_size is None). */
  const cJSON *k = cJSON_GetObjectItemCaseSensitive(r, "conv_kernel_size");
  c->conv_kernel_size = 0;
  if (!k || !cJSON_IsNull(k))
    VKF_RETURN_IF_ERROR(vkf_json_get_size(f, r, "conv_kernel_size", 65, VKF_HF_MAX_POSITIONS,
                                          &c->conv_kernel_size));
  if (c->conv_kernel_size && c->conv_kernel_size % 2 == 0)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"conv_kernel_size\" %lld is even (the convolution's output "
                           "would be one longer than the sequence)",
                           f, (long long)c->conv_kernel_size);
  if (c->num_landmarks > c->segment_means_seq_len ||
      c->segment_means_seq_len % c->num_landmarks != 0)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"segment_means_seq_len\" %lld is not a multiple of "
                           "\"num_landmarks\" %lld",
                           f, (long long)c->segment_means_seq_len, (long long)c->num_landmarks);
  return vkf_json_get_bool(f, r, "inv_coeff_init_option", false, &c->inv_coeff_init_option);
}

vkf_status vkf_nystrom_config_parse(const char *json, size_t size, const char *name,
                                    vkf_nystrom_config *out) {
  return vkf_json_parse_with(json, size, name, parse, out, sizeof *out);
}

vkf_status vkf_nystrom_config_load(const char *path, vkf_nystrom_config *out) {
  return vkf_json_load_with(path, parse, out, sizeof *out);
}
