/* Weights a model builder converted (f16/bf16 -> the run dtype) or assembled (fused QKV, folded
 * tables), owned for the model's lifetime so graph constants can point at them; and the one way a
 * builder turns a checkpoint tensor into a graph constant. */
#ifndef VKF_MODELS_WEIGHT_CACHE_H
#define VKF_MODELS_WEIGHT_CACHE_H

#include <stddef.h>

#include "graph/ir/graph.h"
#include "models/formats/checkpoint.h"

typedef struct vkf_weight_cache vkf_weight_cache; /* a list; NULL is the empty cache */

/* Frees every entry and sets *cache to NULL. */
void vkf_weight_cache_free(vkf_weight_cache **cache);
/* The data stored under (key, dtype), or NULL. */
const void *vkf_weight_cache_find(const vkf_weight_cache *cache, const char *key, vkf_dtype dtype);
/* Stores fp32 `values` (taken over and freed here) as `dtype` (f32 or f16) under `key`; returns
 * the stored data, or NULL when out of memory. */
const void *vkf_weight_cache_put(vkf_weight_cache **cache, const char *key, vkf_dtype dtype,
                                 float *values, size_t count);

/* Stores `data` (taken over and freed here, even on failure) as it is under (key, dtype);
 * returns it, or NULL when out of memory. For weights assembled in their storage format. */
const void *vkf_weight_cache_put_raw(vkf_weight_cache **cache, const char *key, vkf_dtype dtype,
                                     void *data);

/* How many entries the cache holds in `dtype`. */
size_t vkf_weight_cache_count(const vkf_weight_cache *cache, vkf_dtype dtype);

/* Checkpoint tensor `name` converted to fp32 in a new malloc'ed buffer (caller frees). */
vkf_status vkf_weight_read_f32(const vkf_checkpoint *ck, const char *name, float **out_values,
                               const vkf_safetensors_info **out_info);
/* A graph constant for checkpoint tensor `name` in `dtype`: the mapped bytes themselves when they
 * are aligned f32 already, bf16 kept as bf16 or ggml blocks kept as blocks, otherwise a converted
 * copy kept in `cache` (VKF_BF16 needs a BF16 tensor, a quantised dtype the same GGML_* one). Errors (missing tensor,
 * out of memory) become the graph's sticky error and VKF_NO_VALUE is returned. */
vkf_value vkf_weight_constant(vkf_weight_cache **cache, const vkf_checkpoint *ck, vkf_graph *g,
                              const char *name, vkf_dtype dtype);

#endif
