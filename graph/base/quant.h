/* ggml's quantised block formats as vkformer weight dtypes: the layouts (elements and bytes per
 * block) and the reference dequantisation to f32, bit-exact with ggml's dequantize_row_* (the gguf
 * Python package's gguf.quants.dequantize computes the same values and is the tests' independent
 * reference). The GLSL decoders (shaders/quant_decode.glsl) follow these functions line by line. */
#ifndef VKF_GRAPH_BASE_QUANT_H
#define VKF_GRAPH_BASE_QUANT_H

#include <stddef.h>
#include <stdint.h>

/* The block formats, in the order of vkf_dtype's quantised ids (VKF_Q8_0 + format). */
typedef enum vkf_quant_format {
  VKF_QUANT_Q8_0 = 0,
  VKF_QUANT_Q4_0,
  VKF_QUANT_Q4_1,
  VKF_QUANT_Q5_0,
  VKF_QUANT_Q5_1,
  VKF_QUANT_Q4_K,
  VKF_QUANT_Q5_K,
  VKF_QUANT_Q6_K,
  VKF_QUANT_COUNT
} vkf_quant_format;

typedef struct vkf_quant_layout {
  const char *name; /* ggml's spelling: "Q4_K" */
  uint32_t block;   /* elements per block: 32, or 256 for the K-quants */
  uint32_t bytes;   /* bytes per block */
} vkf_quant_layout;

vkf_quant_layout vkf_quant_layout_of(vkf_quant_format format);

/* Dequantises `count` elements (a multiple of the format's block) from `src` (any alignment) into
 * `dst`, exactly as ggml does. */
void vkf_quant_dequantize(vkf_quant_format format, const void *src, size_t count, float *dst);

/* Quantises `count` elements (a multiple of the block) of `src` into `dst` exactly as ggml's
 * reference quantize_row_*_ref does (what llama-quantize writes without an importance matrix): Q8_0,
 * Q4_0, Q4_1, Q5_0, Q5_1, and Q4_K through ggml's make_qkx2 scale search. Returns 0 for a format
 * without a quantiser here (Q5_K, Q6_K). */
int vkf_quant_quantize(vkf_quant_format format, const float *src, size_t count, void *dst);

#endif
