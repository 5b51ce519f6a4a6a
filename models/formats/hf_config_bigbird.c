/* BigBirdConfig (transformers 4.38) onto vkf_hf_config. */
#include "models/formats/hf_config_bigbird.h"

#include <string.h>

#include "models/formats/json_fields.h"

vkf_status vkf_hf_config_parse_bigbird(const char *f, const cJSON *r, vkf_hf_config *c) {
  /* The shared text parser used BertConfig's defaults; BigBirdConfig's differ for these two. */
  if (!vkf_json_field(r, "hidden_act")) c->hidden_act = VKF_HF_ACT_GELU_TANH;
  if (!vkf_json_field(r, "max_position_embeddings")) c->max_position_embeddings = 4096;
  const char *type = NULL;
  VKF_RETURN_IF_ERROR(vkf_json_get_string(f, r, "attention_type", &type));
  if (type && strcmp(type, "block_sparse") != 0 && strcmp(type, "original_full") != 0)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: field \"attention_type\" value \"%s\" is not supported "
                           "(block_sparse, original_full)",
                           f, type);
  c->block_sparse = !type || strcmp(type, "block_sparse") == 0;
  VKF_RETURN_IF_ERROR(
      vkf_json_get_size(f, r, "block_size", 64, c->max_position_embeddings, &c->block_size));
  VKF_RETURN_IF_ERROR(vkf_json_get_int(f, r, "num_random_blocks", 3, &c->num_random_blocks));
  if (c->num_random_blocks < 0 || c->num_random_blocks > VKF_HF_MAX_RANDOM_BLOCKS)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "%s: field \"num_random_blocks\" %lld is outside [0, %d]", f,
                           (long long)c->num_random_blocks, VKF_HF_MAX_RANDOM_BLOCKS);
  /* A decoder (BigBirdForCausalLM, cross attention) would need causal masks this encoder lacks. */
  bool decoder = false;
  VKF_RETURN_IF_ERROR(vkf_json_get_bool(f, r, "is_decoder", false, &decoder));
  if (decoder)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: field \"is_decoder\" true: BigBird runs as an encoder only", f);
  VKF_RETURN_IF_ERROR(vkf_json_get_bool(f, r, "use_bias", true, &c->qkv_bias));
  return vkf_json_get_bool(f, r, "rescale_embeddings", false, &c->rescale_embeddings);
}
