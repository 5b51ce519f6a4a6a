/* What the public handles of vkformer.h hold, and the conversions between the internal status
 * and the public one, shared by the api/ files (not installed). */
#ifndef VKF_API_HANDLES_H
#define VKF_API_HANDLES_H

#include "api/vkformer.h"
#include "graph/base/status.h"
#include "models/arch/bert.h"
#include "models/registry/model.h"
#include "text/text_tokenizer.h"
#include "text/wordpiece.h"
#include "runtime/device_open.h"

struct vkformer_device {
  vkf_rt_device rt;
  char name[256];
};

struct vkformer_tokenizer {
  vkf_text_tokenizer *tok;
};

struct vkformer_model {
  vkformer_device *device;
  vkf_model *model;
  vkf_dtype dtype;
  int cache_fp16;
  vkformer_tokenizer tokenizer; /* loaded on first use (vkformer_model_tokenizer) */
  vkf_wordpiece *wordpiece;     /* loaded on first use (vkformer_embed) */
};

/* The internal status object is the public one: vkformer_code mirrors vkf_status_code. */
static inline vkformer_status vkf_api_status(vkf_status s) {
  return (vkformer_status)(void *)s;
}
static inline vkf_status vkf_api_internal(vkformer_status s) {
  return (vkf_status)(void *)s;
}

/* An INVALID_ARGUMENT status for a NULL argument that must not be NULL. */
#define VKF_API_REQUIRE(cond, what)                                                               \
  do {                                                                                            \
    if (!(cond)) return vkf_api_status(vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "%s", what)); \
  } while (0)

#endif
