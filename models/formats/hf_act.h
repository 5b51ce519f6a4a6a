/* The activations config.json files name (hidden_act, activation_function): what each means
 * here (hf_act.c). hf_config.h includes it for the config's field. */
#ifndef VKF_MODELS_FORMATS_HF_ACT_H
#define VKF_MODELS_FORMATS_HF_ACT_H

#include "graph/base/status.h"

typedef enum vkf_hf_act {
  VKF_HF_ACT_GELU = 0,  /* "gelu", "gelu_python": exact erf form */
  VKF_HF_ACT_GELU_TANH, /* "gelu_new", "gelu_pytorch_tanh", "gelu_fast": tanh approximation */
  VKF_HF_ACT_RELU,      /* "relu" */
  VKF_HF_ACT_SILU,      /* "silu", "swish" */
  VKF_HF_ACT_COUNT
} vkf_hf_act;

/* The activation a config.json name (field `key` of `file`) stands for; UNSUPPORTED lists the
 * known names. */
vkf_status vkf_hf_act_parse(const char *file, const char *key, const char *name,
                            vkf_hf_act *out_act);
/* "gelu", "gelu_tanh", "relu", "silu". */
const char *vkf_hf_act_name(vkf_hf_act act);

#endif
