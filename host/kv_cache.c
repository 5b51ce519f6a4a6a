/* Owns the KV cache's device buffers: sizes checked, one K and one V buffer per layer. */
#include "host/kv_cache.h"

#include <stdio.h>
#include <stdlib.h>

struct vkf_kv_cache {
  vkf_kv_cache_options o;
  vkf_buffer **buffers; /* [2 · layers]: K then V of each layer */
  uint64_t each;        /* bytes per buffer */
};

vkf_status vkf_kv_cache_create(vkf_device *device, const vkf_kv_cache_options *options,
                               vkf_kv_cache **out_cache) {
  *out_cache = NULL;
  vkf_kv_cache_options o = *options;
  if (o.batch < 1 || o.layers < 1 || o.kv_heads < 1 || o.capacity < 1 || o.head_dim < 1 ||
      (o.dtype != VKF_F32 && o.dtype != VKF_F16))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "KV cache: batch %lld, layers %lld, heads %lld, capacity %lld, head dim "
                           "%lld, dtype %s",
                           (long long)o.batch, (long long)o.layers, (long long)o.kv_heads,
                           (long long)o.capacity, (long long)o.head_dim, vkf_dtype_name(o.dtype));
  /* Each factor was read from a config or the command line: multiply with an overflow check. */
  uint64_t each = vkf_dtype_size(o.dtype);
  const int64_t dims[4] = {o.batch, o.kv_heads, o.capacity, o.head_dim};
  for (int i = 0; i < 4; i++) {
    if (each > UINT64_MAX / (uint64_t)dims[i])
      return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "KV cache: size overflows");
    each *= (uint64_t)dims[i];
  }
  vkf_kv_cache *c = calloc(1, sizeof *c);
  if (!c) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "KV cache");
  c->o = o;
  c->each = each;
  c->buffers = calloc((size_t)(2 * o.layers), sizeof *c->buffers);
  vkf_status s = c->buffers ? VKF_OK : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "KV cache");
  for (int64_t i = 0; i < 2 * o.layers && !s; i++) {
    char label[64];
    snprintf(label, sizeof label, "kv_cache.%lld.%s", (long long)(i / 2), i % 2 ? "v" : "k");
    /* Plans round every input buffer up to their alignment (at most 256 bytes); a cache bound
     * as an input must be at least that big whatever its shape. */
    s = each > UINT64_MAX - 255 ? vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "KV cache: size overflows")
                                : vkf_buffer_create(device, (each + 255) & ~(uint64_t)255, label,
                                                    &c->buffers[i]);
    /* Zeroed once: rows no token has written yet are read as finite numbers (long-short
     * attention's compressed segments mix every cache row before masking the unfinished ones). */
    if (!s) s = vkf_buffer_zero(device, c->buffers[i], 0, (each + 255) & ~(uint64_t)255);
  }
  if (s) {
    vkf_kv_cache_destroy(c);
    return vkf_status_annotate(s, "KV cache of %lld positions: ", (long long)o.capacity);
  }
  *out_cache = c;
  return VKF_OK;
}

void vkf_kv_cache_destroy(vkf_kv_cache *c) {
  if (!c) return;
  for (int64_t i = 0; c->buffers && i < 2 * c->o.layers; i++) vkf_buffer_destroy(c->buffers[i]);
  free(c->buffers);
  free(c);
}

vkf_buffer *vkf_kv_cache_keys(const vkf_kv_cache *c, int64_t layer) {
  return layer >= 0 && layer < c->o.layers ? c->buffers[2 * layer] : NULL;
}
vkf_buffer *vkf_kv_cache_values(const vkf_kv_cache *c, int64_t layer) {
  return layer >= 0 && layer < c->o.layers ? c->buffers[2 * layer + 1] : NULL;
}
int64_t vkf_kv_cache_capacity(const vkf_kv_cache *c) {
  return c->o.capacity;
}
const vkf_kv_cache_options *vkf_kv_cache_options_of(const vkf_kv_cache *c) {
  return &c->o;
}
uint64_t vkf_kv_cache_bytes(const vkf_kv_cache *c) {
  return c->each * 2 * (uint64_t)c->o.layers;
}
