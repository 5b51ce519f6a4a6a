/* Beam search's cache reordering (Hugging Face's _reorder_cache: index_select on the batch dim of
 * every layer's keys and values) on the device: one small recorded plan per KV cache that, for
 * each layer, gathers the batch rows into a temporary and writes them back with kv_write. No
 * cache byte crosses to the host; each step sets one i32 [batch] input and re-submits. Shared by
 * the decoder-only and the encoder-decoder generation engines. */
#ifndef VKF_RUNTIME_KV_REORDER_H
#define VKF_RUNTIME_KV_REORDER_H

#include <stdint.h>

#include "host/device.h"
#include "host/kv_cache.h"

typedef struct vkf_kv_reorder vkf_kv_reorder;

/* A plan over every layer of `cache` (which must outlive it). The temporary is one layer's K or V
 * buffer, reused across layers by the memory plan. */
vkf_status vkf_kv_reorder_create(vkf_device *device, vkf_kv_cache *cache, vkf_kv_reorder **out);
void vkf_kv_reorder_destroy(vkf_kv_reorder *reorder);

/* Row r of every cache buffer becomes what row rows[r] held ([batch] entries, each in
 * [0, batch), repeats allowed). The identity runs nothing. INVALID_ARGUMENT names a bad entry. */
vkf_status vkf_kv_reorder_run(vkf_kv_reorder *reorder, const int64_t *rows);

#endif
