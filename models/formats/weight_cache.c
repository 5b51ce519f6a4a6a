/* Owns the per-model cache of converted / assembled weights and checkpoint-tensor constants. */
#include "models/formats/weight_cache.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "graph/base/half.h"

struct vkf_weight_cache {
  char *key;
  vkf_dtype dtype;
  void *data;
  struct vkf_weight_cache *next;
};

void vkf_weight_cache_free(vkf_weight_cache **cache) {
  for (vkf_weight_cache *o = *cache, *next; o; o = next) {
    next = o->next;
    free(o->key);
    free(o->data);
    free(o);
  }
  *cache = NULL;
}

const void *vkf_weight_cache_find(const vkf_weight_cache *cache, const char *key, vkf_dtype dtype) {
  for (const vkf_weight_cache *o = cache; o; o = o->next)
    if (o->dtype == dtype && strcmp(o->key, key) == 0) return o->data;
  return NULL;
}

size_t vkf_weight_cache_count(const vkf_weight_cache *cache, vkf_dtype dtype) {
  size_t n = 0;
  for (const vkf_weight_cache *o = cache; o; o = o->next) n += o->dtype == dtype;
  return n;
}

const void *vkf_weight_cache_put(vkf_weight_cache **cache, const char *key, vkf_dtype dtype,
                                 float *values, size_t count) {
  void *data = values;
  if (values && dtype == VKF_F16) {
    uint16_t *h = malloc(count * sizeof *h + 1);
    for (size_t i = 0; h && i < count; i++) h[i] = vkf_float_to_half(values[i]);
    free(values);
    data = h;
  }
  return vkf_weight_cache_put_raw(cache, key, dtype, data);
}

const void *vkf_weight_cache_put_raw(vkf_weight_cache **cache, const char *key, vkf_dtype dtype,
                                     void *data) {
  vkf_weight_cache *o = data ? calloc(1, sizeof *o) : NULL;
  if (!o || !(o->key = strdup(key))) {
    free(o);
    free(data);
    return NULL;
  }
  o->dtype = dtype;
  o->data = data;
  o->next = *cache;
  *cache = o;
  return data;
}

vkf_status vkf_weight_read_f32(const vkf_checkpoint *ck, const char *name, float **out_values,
                               const vkf_safetensors_info **out_info) {
  *out_values = NULL;
  const vkf_safetensors_info *info = NULL;
  info = vkf_checkpoint_find(ck, name);
  if (!info)
    return vkf_status_make(VKF_STATUS_NOT_FOUND, "tensor \"%s\" not found in %s", name,
                           vkf_checkpoint_path(ck));
  size_t count = (size_t)info->element_count;
  float *v = malloc(count * sizeof *v + 1);
  if (!v) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "converting tensor \"%s\"", name);
  vkf_status s = vkf_checkpoint_read_f32(ck, info, count, v);
  if (s) {
    free(v);
    return s;
  }
  *out_values = v;
  if (out_info) *out_info = info;
  return VKF_OK;
}

vkf_value vkf_weight_constant(vkf_weight_cache **cache, const vkf_checkpoint *ck, vkf_graph *g,
                              const char *name, vkf_dtype dtype) {
  const vkf_safetensors_info *info = vkf_checkpoint_find(ck, name);
  if (!info) {
    vkf_graph_set_error(g, vkf_status_make(VKF_STATUS_NOT_FOUND, "tensor \"%s\" not found in %s",
                                           name, vkf_checkpoint_path(ck)));
    return VKF_NO_VALUE;
  }
  const void *data = NULL;
  if (dtype == VKF_F32 && info->dtype == VKF_SAFETENSORS_F32 && (uintptr_t)info->data % 4 == 0)
    data = info->data;
  if (dtype == VKF_BF16) {
    /* Only ever the file's own bf16 (read bytewise by the interpreter, copied by the upload). */
    VKF_ASSERT(info->dtype == VKF_SAFETENSORS_BF16);
    data = info->data;
  }
  if (vkf_dtype_is_quant(dtype)) {
    /* Only ever the image's own blocks, as they are (read bytewise everywhere). */
    VKF_ASSERT(vkf_safetensors_quant_format(info->dtype) == (int)(dtype - VKF_Q8_0));
    data = info->data;
  }
  if (!data) data = vkf_weight_cache_find(*cache, name, dtype);
  if (!data) {
    float *v = NULL;
    vkf_status s = vkf_weight_read_f32(ck, name, &v, &info);
    if (s) {
      vkf_graph_set_error(g, s);
      return VKF_NO_VALUE;
    }
    data = vkf_weight_cache_put(cache, name, dtype, v, (size_t)info->element_count);
  }
  if (!data) {
    vkf_graph_set_error(g, vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "converting \"%s\"", name));
    return VKF_NO_VALUE;
  }
  if (info->rank > VKF_MAX_DIMS) {
    vkf_graph_set_error(g, vkf_status_make(VKF_STATUS_UNSUPPORTED,
                                           "tensor \"%s\" has rank %d; at most %d is supported",
                                           name, info->rank, VKF_MAX_DIMS));
    return VKF_NO_VALUE;
  }
  int64_t shape[VKF_MAX_DIMS] = {0};
  for (int i = 0; i < info->rank; i++) shape[i] = info->shape[i];
  return vkf_graph_constant(g, name, dtype, (uint32_t)info->rank, shape, data);
}
