/* ggml's tensor types: their block layouts (elements and bytes per block) and the reference
 * dequantisation to f32, bit-exact with ggml's dequantize_row_* (the gguf Python package's
 * gguf.quants.dequantize computes the same values and is the test's independent reference). */
#ifndef VKF_MODELS_GGUF_QUANT_H
#define VKF_MODELS_GGUF_QUANT_H

#include <stddef.h>
#include <stdint.h>

#include "graph/base/status.h"
#include "models/formats/gguf.h"

/* Elements per block and bytes per block of a known type (both 0 for an unknown or removed id),
 * and its ggml name ("Q4_K"; NULL when unknown). */
typedef struct vkf_gguf_type_info {
  const char *name;
  uint32_t block;
  uint32_t bytes;
  int dequantizable; /* vkf_gguf_dequantize handles it */
} vkf_gguf_type_info;

vkf_gguf_type_info vkf_gguf_type_info_of(uint32_t type);

/* Dequantises `count` elements (a multiple of the type's block) of `type` from `src` into `dst`,
 * exactly as ggml does. UNSUPPORTED naming the type for one it cannot (the I-quants, Q2_K, Q3_K,
 * Q8_1, TQ, integers). */
vkf_status vkf_gguf_dequantize(uint32_t type, const void *src, size_t count, float *dst);

/* The vkf_quant_format of a GGUF block type (Q8_0 ... Q6_K), or -1 for any other type. */
int vkf_gguf_quant_format(uint32_t type);

#endif
