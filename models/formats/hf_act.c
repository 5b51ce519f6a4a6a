/* The activation names config.json files use (hidden_act, activation_function) and what each
 * means here. */
#include <string.h>

#include "models/formats/hf_act.h"

static const struct {
  const char *name;
  vkf_hf_act act;
} act_names[] = {
    {"gelu", VKF_HF_ACT_GELU},           {"gelu_python", VKF_HF_ACT_GELU},
    {"gelu_new", VKF_HF_ACT_GELU_TANH},  {"gelu_pytorch_tanh", VKF_HF_ACT_GELU_TANH},
    {"gelu_fast", VKF_HF_ACT_GELU_TANH}, {"relu", VKF_HF_ACT_RELU},
    {"silu", VKF_HF_ACT_SILU},           {"swish", VKF_HF_ACT_SILU},
};

vkf_status vkf_hf_act_parse(const char *file, const char *key, const char *name,
                            vkf_hf_act *out_act) {
  size_t i = 0, n = sizeof act_names / sizeof *act_names;
  while (i < n && strcmp(act_names[i].name, name) != 0) i++;
  if (i == n)
    return vkf_status_make(
        VKF_STATUS_UNSUPPORTED,
        "%s: field \"%s\" value \"%s\" is not supported (known: gelu, "
        "gelu_python, gelu_new, gelu_pytorch_tanh, gelu_fast, relu, silu, swish)",
        file, key, name);
  *out_act = act_names[i].act;
  return VKF_OK;
}

const char *vkf_hf_act_name(vkf_hf_act act) {
  static const char *const names[VKF_HF_ACT_COUNT] = {"gelu", "gelu_tanh", "relu", "silu"};
  VKF_ASSERT(act >= 0 && act < VKF_HF_ACT_COUNT);
  return names[act];
}
