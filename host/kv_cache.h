/* The KV cache: device buffers that outlive any one run, one K and one V buffer per layer, each
 * [batch, kv_heads, capacity, head_dim]. A prefill plan and a decode plan of the same model bind
 * them as graph inputs (vkf_runner_options.bindings) and write new rows in place (the kv_write
 * op) at positions the caller passes at run time; attention reads the first kv_len rows. */
#ifndef VKF_HOST_KV_CACHE_H
#define VKF_HOST_KV_CACHE_H

#include <stdint.h>

#include "graph/ir/graph.h"
#include "host/buffer.h"
#include "host/device.h"

typedef struct vkf_kv_cache_options {
  int64_t batch, layers, kv_heads, capacity, head_dim; /* all > 0 */
  vkf_dtype dtype; /* VKF_F32 (default) or VKF_F16 */
} vkf_kv_cache_options;

typedef struct vkf_kv_cache vkf_kv_cache;

/* Allocates 2 · layers buffers (contents undefined until a prefill writes them). OUT_OF_MEMORY
 * names the bytes asked for when a buffer exceeds the device's limits. */
vkf_status vkf_kv_cache_create(vkf_device *device, const vkf_kv_cache_options *options,
                               vkf_kv_cache **out_cache);
void vkf_kv_cache_destroy(vkf_kv_cache *cache);

vkf_buffer *vkf_kv_cache_keys(const vkf_kv_cache *cache, int64_t layer);
vkf_buffer *vkf_kv_cache_values(const vkf_kv_cache *cache, int64_t layer);
int64_t vkf_kv_cache_capacity(const vkf_kv_cache *cache);
/* The options the cache was created with (its batch, layers, heads, capacity, head dim, dtype). */
const vkf_kv_cache_options *vkf_kv_cache_options_of(const vkf_kv_cache *cache);
/* Device bytes of all the cache's buffers. */
uint64_t vkf_kv_cache_bytes(const vkf_kv_cache *cache);

#endif
