/* Scalar conversions between fp32 and the 16-bit float formats (IEEE binary16 "half" and bfloat16)
 * shared by the file readers, the CPU interpreter and host uploads. Pure functions, thread-safe. */
#ifndef VKF_GRAPH_HALF_H
#define VKF_GRAPH_HALF_H

#include <stdint.h>

/* Exact: every half (subnormals, infinities, NaN payloads included) is representable as a float. */
float vkf_half_to_float(uint16_t h);
/* Round-to-nearest-even; overflow gives ±infinity, NaN stays NaN (payload's top bits kept), so
 * vkf_float_to_half(vkf_half_to_float(h)) == h for all 65536 bit patterns. */
uint16_t vkf_float_to_half(float f);
/* Exact: bfloat16 is the top half of a float. */
float vkf_bf16_to_float(uint16_t b);
/* Round-to-nearest-even; NaN stays a (quiet) NaN. */
uint16_t vkf_float_to_bf16(float f);

#endif
