/* ggml's tensor types as GGUF names them: block layouts, and dequantisation through
 * graph/base/quant.c (which holds ggml's dequantize_row_* for the block formats). */
#include "models/formats/gguf_quant.h"

#include <string.h>

#include "graph/base/half.h"
#include "graph/base/quant.h"

#define QK 32   /* the legacy quants' block */
#define QK_K 256 /* the K-quants' super-block */

vkf_gguf_type_info vkf_gguf_type_info_of(uint32_t type) {
  switch (type) {
  case VKF_GGUF_F32: return (vkf_gguf_type_info){"F32", 1, 4, 1};
  case VKF_GGUF_F16: return (vkf_gguf_type_info){"F16", 1, 2, 1};
  case VKF_GGUF_Q4_0: return (vkf_gguf_type_info){"Q4_0", QK, 18, 1};
  case VKF_GGUF_Q4_1: return (vkf_gguf_type_info){"Q4_1", QK, 20, 1};
  case VKF_GGUF_Q5_0: return (vkf_gguf_type_info){"Q5_0", QK, 22, 1};
  case VKF_GGUF_Q5_1: return (vkf_gguf_type_info){"Q5_1", QK, 24, 1};
  case VKF_GGUF_Q8_0: return (vkf_gguf_type_info){"Q8_0", QK, 34, 1};
  case VKF_GGUF_Q8_1: return (vkf_gguf_type_info){"Q8_1", QK, 36, 0};
  case VKF_GGUF_Q2_K: return (vkf_gguf_type_info){"Q2_K", QK_K, 84, 0};
  case VKF_GGUF_Q3_K: return (vkf_gguf_type_info){"Q3_K", QK_K, 110, 0};
  case VKF_GGUF_Q4_K: return (vkf_gguf_type_info){"Q4_K", QK_K, 144, 1};
  case VKF_GGUF_Q5_K: return (vkf_gguf_type_info){"Q5_K", QK_K, 176, 1};
  case VKF_GGUF_Q6_K: return (vkf_gguf_type_info){"Q6_K", QK_K, 210, 1};
  case VKF_GGUF_Q8_K: return (vkf_gguf_type_info){"Q8_K", QK_K, 292, 0};
  case 16: return (vkf_gguf_type_info){"IQ2_XXS", QK_K, 66, 0};
  case 17: return (vkf_gguf_type_info){"IQ2_XS", QK_K, 74, 0};
  case 18: return (vkf_gguf_type_info){"IQ3_XXS", QK_K, 98, 0};
  case 19: return (vkf_gguf_type_info){"IQ1_S", QK_K, 50, 0};
  case 20: return (vkf_gguf_type_info){"IQ4_NL", QK, 18, 0};
  case 21: return (vkf_gguf_type_info){"IQ3_S", QK_K, 110, 0};
  case 22: return (vkf_gguf_type_info){"IQ2_S", QK_K, 82, 0};
  case 23: return (vkf_gguf_type_info){"IQ4_XS", QK_K, 136, 0};
  case VKF_GGUF_I8: return (vkf_gguf_type_info){"I8", 1, 1, 0};
  case VKF_GGUF_I16: return (vkf_gguf_type_info){"I16", 1, 2, 0};
  case VKF_GGUF_I32: return (vkf_gguf_type_info){"I32", 1, 4, 0};
  case VKF_GGUF_I64: return (vkf_gguf_type_info){"I64", 1, 8, 0};
  case VKF_GGUF_F64: return (vkf_gguf_type_info){"F64", 1, 8, 0};
  case 29: return (vkf_gguf_type_info){"IQ1_M", QK_K, 56, 0};
  case VKF_GGUF_BF16: return (vkf_gguf_type_info){"BF16", 1, 2, 1};
  case 34: return (vkf_gguf_type_info){"TQ1_0", QK_K, 54, 0};
  case 35: return (vkf_gguf_type_info){"TQ2_0", QK_K, 66, 0};
  case 39: return (vkf_gguf_type_info){"MXFP4", QK, 17, 0};
  default: return (vkf_gguf_type_info){NULL, 0, 0, 0}; /* 4, 5, 31-33, 36-38: removed from ggml */
  }
}

static float half_at(const uint8_t *p) {
  return vkf_half_to_float((uint16_t)(p[0] | p[1] << 8));
}

int vkf_gguf_quant_format(uint32_t type) {
  switch (type) {
  case VKF_GGUF_Q8_0: return VKF_QUANT_Q8_0;
  case VKF_GGUF_Q4_0: return VKF_QUANT_Q4_0;
  case VKF_GGUF_Q4_1: return VKF_QUANT_Q4_1;
  case VKF_GGUF_Q5_0: return VKF_QUANT_Q5_0;
  case VKF_GGUF_Q5_1: return VKF_QUANT_Q5_1;
  case VKF_GGUF_Q4_K: return VKF_QUANT_Q4_K;
  case VKF_GGUF_Q5_K: return VKF_QUANT_Q5_K;
  case VKF_GGUF_Q6_K: return VKF_QUANT_Q6_K;
  default: return -1;
  }
}

vkf_status vkf_gguf_dequantize(uint32_t type, const void *src, size_t count, float *dst) {
  vkf_gguf_type_info t = vkf_gguf_type_info_of(type);
  if (!t.dequantizable)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "tensor type %s (%u) cannot be read yet; supported: F32, F16, BF16, "
                           "Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K",
                           t.name ? t.name : "unknown", type);
  VKF_ASSERT(count % t.block == 0);
  const uint8_t *s = src;
  switch (type) {
  case VKF_GGUF_F32: memcpy(dst, src, count * sizeof *dst); return VKF_OK;
  case VKF_GGUF_F16:
    for (size_t i = 0; i < count; i++) dst[i] = half_at(s + 2 * i);
    return VKF_OK;
  case VKF_GGUF_BF16:
    for (size_t i = 0; i < count; i++) {
      uint32_t bits = (uint32_t)(s[2 * i] | s[2 * i + 1] << 8) << 16;
      memcpy(&dst[i], &bits, sizeof bits);
    }
    return VKF_OK;
  default: break;
  }
  vkf_quant_dequantize((vkf_quant_format)vkf_gguf_quant_format(type), src, count, dst);
  return VKF_OK;
}
