/* The device side of `vkf generate` for encoder–decoders: the sources are encoded once, every
 * decoder layer's cross-attention K and V written into a cross cache kept on the device; then one
 * recorded decoding step per token against the self-attention cache and the cross cache. */
#ifndef VKF_RUNTIME_SEQ2SEQ_ENGINE_H
#define VKF_RUNTIME_SEQ2SEQ_ENGINE_H

#include <stdint.h>

#include "host/device.h"
#include "host/kv_cache.h"
#include "models/arch/encdec.h"

typedef struct vkf_s2s_engine vkf_s2s_engine;

typedef struct vkf_s2s_engine_options {
  int64_t rows;          /* decoder rows (sources times beams), >= 1 */
  int64_t src_len;       /* the longest source: every row's source is right-padded to it */
  int64_t capacity;      /* self-attention cache positions: decoder start + new tokens */
  vkf_dtype dtype;       /* weights and activations */
  vkf_dtype cache_dtype; /* of both caches */
  int profile;           /* timestamps per dispatch */
} vkf_s2s_engine_options;

vkf_status vkf_s2s_engine_create(vkf_device *device, vkf_encdec_model *model,
                                 const vkf_s2s_engine_options *options, vkf_s2s_engine **out);
void vkf_s2s_engine_destroy(vkf_s2s_engine *engine);

/* Encodes the sources: ids and mask [rows, src_len] row-major (mask 1 on tokens, 0 on padding)
 * and fills the cross caches; later steps attend to the tokens the mask keeps. */
vkf_status vkf_s2s_engine_encode(vkf_s2s_engine *engine, const int32_t *ids, const int32_t *mask);

/* One decoder token per row at position positions[b] (< capacity; the row's earlier tokens fill
 * 0 .. positions[b]-1): returns the next logits [rows, vocab], owned by the engine until the next
 * call. */
vkf_status vkf_s2s_engine_step(vkf_s2s_engine *engine, const int32_t *tokens,
                               const int64_t *positions, const float **out_logits);

/* The self-attention cache (beam search reorders its rows). */
vkf_kv_cache *vkf_s2s_engine_cache(const vkf_s2s_engine *engine);
struct vkf_runner *vkf_s2s_engine_step_runner(const vkf_s2s_engine *engine);
const vkf_graph *vkf_s2s_engine_step_graph(const vkf_s2s_engine *engine);
struct vkf_runner *vkf_s2s_engine_encode_runner(const vkf_s2s_engine *engine);
const vkf_graph *vkf_s2s_engine_encode_graph(const vkf_s2s_engine *engine);

#endif
