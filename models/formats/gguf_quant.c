/* ggml's block layouts and dequantize_row_* for the types vkformer reads. Every product and sum is
 * done in float in ggml's order, so the values are bit-identical to ggml's (no FMA contraction:
 * the file is compiled with -ffp-contract=off, see models/CMakeLists.txt). */
#include "models/formats/gguf_quant.h"

#include <string.h>

#include "graph/base/half.h"

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

static uint32_t u32_at(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* block_q4_0 {half d; u8 qs[16]}: low nibbles are elements 0..15, high nibbles 16..31. */
static void q4_0(const uint8_t *b, float *y) {
  float d = half_at(b);
  const uint8_t *qs = b + 2;
  for (int j = 0; j < QK / 2; j++) {
    y[j] = (float)((qs[j] & 0x0F) - 8) * d;
    y[j + QK / 2] = (float)((qs[j] >> 4) - 8) * d;
  }
}

/* block_q4_1 {half d, m; u8 qs[16]} */
static void q4_1(const uint8_t *b, float *y) {
  float d = half_at(b), m = half_at(b + 2);
  const uint8_t *qs = b + 4;
  for (int j = 0; j < QK / 2; j++) {
    y[j] = (float)(qs[j] & 0x0F) * d + m;
    y[j + QK / 2] = (float)(qs[j] >> 4) * d + m;
  }
}

/* block_q5_0 {half d; u8 qh[4]; u8 qs[16]}: bit j of qh is element j's fifth bit. */
static void q5_0(const uint8_t *b, float *y) {
  float d = half_at(b);
  uint32_t qh = u32_at(b + 2);
  const uint8_t *qs = b + 6;
  for (int j = 0; j < QK / 2; j++) {
    int xh0 = (int)(((qh >> j) << 4) & 0x10), xh1 = (int)((qh >> (j + 12)) & 0x10);
    y[j] = (float)(((qs[j] & 0x0F) | xh0) - 16) * d;
    y[j + QK / 2] = (float)(((qs[j] >> 4) | xh1) - 16) * d;
  }
}

/* block_q5_1 {half d, m; u8 qh[4]; u8 qs[16]} */
static void q5_1(const uint8_t *b, float *y) {
  float d = half_at(b), m = half_at(b + 2);
  uint32_t qh = u32_at(b + 4);
  const uint8_t *qs = b + 8;
  for (int j = 0; j < QK / 2; j++) {
    int xh0 = (int)(((qh >> j) << 4) & 0x10), xh1 = (int)((qh >> (j + 12)) & 0x10);
    y[j] = (float)((qs[j] & 0x0F) | xh0) * d + m;
    y[j + QK / 2] = (float)((qs[j] >> 4) | xh1) * d + m;
  }
}

/* block_q8_0 {half d; i8 qs[32]} */
static void q8_0(const uint8_t *b, float *y) {
  float d = half_at(b);
  for (int j = 0; j < QK; j++) y[j] = (float)(int8_t)b[2 + j] * d;
}

/* The 6-bit scale and min of sub-block j from the K-quants' packed 12 bytes. */
static void scale_min_k4(int j, const uint8_t *q, uint8_t *d, uint8_t *m) {
  if (j < 4) {
    *d = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *d = (uint8_t)((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *m = (uint8_t)((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

/* block_q4_K {half d, dmin; u8 scales[12]; u8 qs[128]}: 8 sub-blocks of 32. */
static void q4_k(const uint8_t *b, float *y) {
  float d = half_at(b), min = half_at(b + 2);
  const uint8_t *scales = b + 4, *q = b + 16;
  for (int j = 0, is = 0; j < QK_K; j += 64, is += 2, q += 32) {
    uint8_t sc, m;
    scale_min_k4(is, scales, &sc, &m);
    float d1 = d * sc, m1 = min * m;
    scale_min_k4(is + 1, scales, &sc, &m);
    float d2 = d * sc, m2 = min * m;
    for (int l = 0; l < 32; l++) *y++ = d1 * (float)(q[l] & 0xF) - m1;
    for (int l = 0; l < 32; l++) *y++ = d2 * (float)(q[l] >> 4) - m2;
  }
}

/* block_q5_K {half d, dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]} */
static void q5_k(const uint8_t *b, float *y) {
  float d = half_at(b), min = half_at(b + 2);
  const uint8_t *scales = b + 4, *qh = b + 16, *ql = b + 48;
  uint8_t u1 = 1, u2 = 2;
  for (int j = 0, is = 0; j < QK_K; j += 64, is += 2, ql += 32) {
    uint8_t sc, m;
    scale_min_k4(is, scales, &sc, &m);
    float d1 = d * sc, m1 = min * m;
    scale_min_k4(is + 1, scales, &sc, &m);
    float d2 = d * sc, m2 = min * m;
    for (int l = 0; l < 32; l++) *y++ = d1 * (float)((ql[l] & 0xF) + (qh[l] & u1 ? 16 : 0)) - m1;
    for (int l = 0; l < 32; l++) *y++ = d2 * (float)((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
    u1 = (uint8_t)(u1 << 2);
    u2 = (uint8_t)(u2 << 2);
  }
}

/* block_q6_K {u8 ql[128]; u8 qh[64]; i8 scales[16]; half d} */
static void q6_k(const uint8_t *b, float *y) {
  float d = half_at(b + 208);
  const uint8_t *ql = b, *qh = b + 128;
  const int8_t *sc = (const int8_t *)(b + 192);
  for (int n = 0; n < QK_K; n += 128, y += 128, ql += 64, qh += 32, sc += 8) {
    for (int l = 0; l < 32; l++) {
      int is = l / 16;
      int q1 = (int8_t)((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
      int q2 = (int8_t)((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
      int q3 = (int8_t)((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      int q4 = (int8_t)((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      y[l] = d * (float)sc[is] * (float)q1;
      y[l + 32] = d * (float)sc[is + 2] * (float)q2;
      y[l + 64] = d * (float)sc[is + 4] * (float)q3;
      y[l + 96] = d * (float)sc[is + 6] * (float)q4;
    }
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
  size_t blocks = count / t.block;
  void (*row)(const uint8_t *, float *) = NULL;
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
  case VKF_GGUF_Q4_0: row = q4_0; break;
  case VKF_GGUF_Q4_1: row = q4_1; break;
  case VKF_GGUF_Q5_0: row = q5_0; break;
  case VKF_GGUF_Q5_1: row = q5_1; break;
  case VKF_GGUF_Q8_0: row = q8_0; break;
  case VKF_GGUF_Q4_K: row = q4_k; break;
  case VKF_GGUF_Q5_K: row = q5_k; break;
  default: row = q6_k; break;
  }
  for (size_t i = 0; i < blocks; i++) row(s + i * t.bytes, dst + i * t.block);
  return VKF_OK;
}
