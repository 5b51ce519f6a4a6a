/* ggml's block layouts, dequantize_row_* and quantize_row_*_ref for the formats vkformer keeps as
 * weights. Every product and sum is done in float in ggml's order, so the values are bit-identical
 * to ggml's (no FMA contraction: the file is compiled with -ffp-contract=off, see
 * graph/CMakeLists.txt). */
#include "graph/base/quant.h"

#include <math.h>
#include <string.h>

#include "graph/base/half.h"

#define QK 32    /* the legacy quants' block */
#define QK_K 256 /* the K-quants' super-block */

vkf_quant_layout vkf_quant_layout_of(vkf_quant_format format) {
  static const vkf_quant_layout layouts[VKF_QUANT_COUNT] = {
      {"Q8_0", QK, 34},    {"Q4_0", QK, 18},    {"Q4_1", QK, 20},    {"Q5_0", QK, 22},
      {"Q5_1", QK, 24},    {"Q4_K", QK_K, 144}, {"Q5_K", QK_K, 176}, {"Q6_K", QK_K, 210}};
  return format >= 0 && format < VKF_QUANT_COUNT ? layouts[format] : (vkf_quant_layout){"?", 1, 0};
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

void vkf_quant_dequantize(vkf_quant_format format, const void *src, size_t count, float *dst) {
  static void (*const rows[VKF_QUANT_COUNT])(const uint8_t *, float *) = {
      q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q5_k, q6_k};
  vkf_quant_layout l = vkf_quant_layout_of(format);
  const uint8_t *s = src;
  for (size_t i = 0; i < count / l.block; i++) rows[format](s + i * l.bytes, dst + i * l.block);
}

static void put_half(uint8_t *p, float v) {
  uint16_t h = vkf_float_to_half(v);
  p[0] = (uint8_t)(h & 0xFF);
  p[1] = (uint8_t)(h >> 8);
}

/* quantize_row_q8_0_ref */
static void quant_q8_0(const float *x, uint8_t *y) {
  float amax = 0.0f;
  for (int j = 0; j < QK; j++) amax = fmaxf(amax, fabsf(x[j]));
  const float d = amax / ((1 << 7) - 1);
  const float id = d ? 1.0f / d : 0.0f;
  put_half(y, d);
  for (int j = 0; j < QK; j++) y[2 + j] = (uint8_t)(int8_t)roundf(x[j] * id);
}

/* quantize_row_q4_0_ref: the value of largest magnitude maps to -8 */
static void quant_q4_0(const float *x, uint8_t *y) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < QK; j++)
    if (amax < fabsf(x[j])) {
      amax = fabsf(x[j]);
      max = x[j];
    }
  const float d = max / -8;
  const float id = d ? 1.0f / d : 0.0f;
  put_half(y, d);
  for (int j = 0; j < QK / 2; j++) {
    const float x0 = x[j] * id, x1 = x[QK / 2 + j] * id;
    int8_t t0 = (int8_t)(x0 + 8.5f), t1 = (int8_t)(x1 + 8.5f);
    const uint8_t xi0 = (uint8_t)(t0 < 15 ? t0 : 15), xi1 = (uint8_t)(t1 < 15 ? t1 : 15);
    y[2 + j] = (uint8_t)(xi0 | xi1 << 4);
  }
}

/* quantize_row_q4_1_ref: [min, max] onto 0..15 */
static void quant_q4_1(const float *x, uint8_t *y) {
  float min = INFINITY, max = -INFINITY;
  for (int j = 0; j < QK; j++) {
    if (x[j] < min) min = x[j];
    if (x[j] > max) max = x[j];
  }
  const float d = (max - min) / ((1 << 4) - 1);
  const float id = d ? 1.0f / d : 0.0f;
  put_half(y, d);
  put_half(y + 2, min);
  for (int j = 0; j < QK / 2; j++) {
    const float x0 = (x[j] - min) * id, x1 = (x[QK / 2 + j] - min) * id;
    int8_t t0 = (int8_t)(x0 + 0.5f), t1 = (int8_t)(x1 + 0.5f);
    const uint8_t xi0 = (uint8_t)(t0 < 15 ? t0 : 15), xi1 = (uint8_t)(t1 < 15 ? t1 : 15);
    y[4 + j] = (uint8_t)(xi0 | xi1 << 4);
  }
}

/* quantize_row_q5_0_ref: as Q4_0 with 5 bits, the fifth bits gathered into qh */
static void quant_q5_0(const float *x, uint8_t *y) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < QK; j++)
    if (amax < fabsf(x[j])) {
      amax = fabsf(x[j]);
      max = x[j];
    }
  const float d = max / -16;
  const float id = d ? 1.0f / d : 0.0f;
  put_half(y, d);
  uint32_t qh = 0;
  for (int j = 0; j < QK / 2; j++) {
    const float x0 = x[j] * id, x1 = x[QK / 2 + j] * id;
    int8_t t0 = (int8_t)(x0 + 16.5f), t1 = (int8_t)(x1 + 16.5f);
    const uint8_t xi0 = (uint8_t)(t0 < 31 ? t0 : 31), xi1 = (uint8_t)(t1 < 31 ? t1 : 31);
    y[6 + j] = (uint8_t)((xi0 & 0x0F) | (xi1 & 0x0F) << 4);
    qh |= (uint32_t)((xi0 & 0x10u) >> 4) << j;
    qh |= (uint32_t)((xi1 & 0x10u) >> 4) << (j + QK / 2);
  }
  for (int b = 0; b < 4; b++) y[2 + b] = (uint8_t)(qh >> 8 * b);
}

/* quantize_row_q5_1_ref: [min, max] onto 0..31 */
static void quant_q5_1(const float *x, uint8_t *y) {
  float min = INFINITY, max = -INFINITY;
  for (int j = 0; j < QK; j++) {
    if (x[j] < min) min = x[j];
    if (x[j] > max) max = x[j];
  }
  const float d = (max - min) / ((1 << 5) - 1);
  const float id = d ? 1.0f / d : 0.0f;
  put_half(y, d);
  put_half(y + 2, min);
  uint32_t qh = 0;
  for (int j = 0; j < QK / 2; j++) {
    const uint8_t xi0 = (uint8_t)((x[j] - min) * id + 0.5f);
    const uint8_t xi1 = (uint8_t)((x[QK / 2 + j] - min) * id + 0.5f);
    y[8 + j] = (uint8_t)((xi0 & 0x0F) | (xi1 & 0x0F) << 4);
    qh |= (uint32_t)((xi0 & 0x10u) >> 4) << j;
    qh |= (uint32_t)((xi1 & 0x10u) >> 4) << (j + QK / 2);
  }
  for (int b = 0; b < 4; b++) y[4 + b] = (uint8_t)(qh >> 8 * b);
}

/* ggml's nearest_int: round half to even through the float mantissa (|v| < 2^22). */
static int nearest_int(float v) {
  float t = v + 12582912.f;
  int32_t i;
  memcpy(&i, &t, sizeof i);
  return (i & 0x007fffff) - 0x00400000;
}

static int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* make_qkx2_quants: the scale and (negated) min of n values on 0..nmax minimising the weighted
 * squared error, searched over nstep + 1 candidate scales around nmax / (max - min). */
static float make_qkx2(int n, int nmax, const float *x, const float *weights, uint8_t *L,
                       float *the_min, uint8_t *Laux, float rmin, float rdelta, int nstep) {
  float min = x[0], max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; i++) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    float w = weights[i];
    sum_w += w;
    sum_x += w * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    for (int i = 0; i < n; i++) L[i] = 0;
    *the_min = -min;
    return 0.f;
  }
  float iscale = nmax / (max - min);
  float scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < n; i++) {
    L[i] = (uint8_t)clampi(nearest_int(iscale * (x[i] - min)), 0, nmax);
    float diff = scale * L[i] + min - x[i];
    best_error += weights[i] * (diff * diff);
  }
  for (int is = 0; is <= nstep; is++) {
    iscale = (rmin + rdelta * is + nmax) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; i++) {
      int l = clampi(nearest_int(iscale * (x[i] - min)), 0, nmax);
      Laux[i] = (uint8_t)l;
      float w = weights[i];
      sum_l += w * l;
      sum_l2 += w * l * l;
      sum_xl += w * l * x[i];
    }
    float D = sum_w * sum_l2 - sum_l * sum_l;
    if (D > 0) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
      if (this_min > 0) {
        this_min = 0;
        this_scale = sum_xl / sum_l2;
      }
      float cur_error = 0;
      for (int i = 0; i < n; i++) {
        float diff = this_scale * Laux[i] + this_min - x[i];
        cur_error += weights[i] * (diff * diff);
      }
      if (cur_error < best_error) {
        memcpy(L, Laux, (size_t)n);
        best_error = cur_error;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  *the_min = -min;
  return scale;
}

/* quantize_row_q4_K_ref: 8 sub-blocks of 32, each a scale and min found by make_qkx2 (weights
 * |x| + rms), both then quantised to 6 bits against the super-block's largest. */
static void quant_q4_k(const float *x, uint8_t *y) {
  uint8_t L[QK_K], Laux[32];
  float weights[32], mins[QK_K / 32], scales[QK_K / 32];
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < QK_K / 32; j++) {
    float sum_x2 = 0;
    for (int l = 0; l < 32; l++) sum_x2 += x[32 * j + l] * x[32 * j + l];
    float av_x = sqrtf(sum_x2 / 32);
    for (int l = 0; l < 32; l++) weights[l] = av_x + fabsf(x[32 * j + l]);
    scales[j] = make_qkx2(32, 15, x + 32 * j, weights, L + 32 * j, &mins[j], Laux, -1.f, 0.1f, 20);
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }
  uint8_t *sc = y + 4, *q = y + 16;
  memset(sc, 0, 12);
  float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  for (int j = 0; j < QK_K / 32; j++) {
    uint8_t ls = (uint8_t)nearest_int(inv_scale * scales[j]);
    uint8_t lm = (uint8_t)nearest_int(inv_min * mins[j]);
    if (ls > 63) ls = 63;
    if (lm > 63) lm = 63;
    if (j < 4) {
      sc[j] = ls;
      sc[j + 4] = lm;
    } else {
      sc[j + 4] = (uint8_t)((ls & 0xF) | (lm & 0xF) << 4);
      sc[j - 4] |= (uint8_t)((ls >> 4) << 6);
      sc[j] |= (uint8_t)((lm >> 4) << 6);
    }
  }
  put_half(y, max_scale / 63.f);
  put_half(y + 2, max_min / 63.f);
  const float dall = half_at(y), dmin = half_at(y + 2);
  for (int j = 0; j < QK_K / 32; j++) {
    uint8_t s, m;
    scale_min_k4(j, sc, &s, &m);
    const float d = dall * s;
    if (!d) continue;
    const float dm = dmin * m;
    for (int i = 0; i < 32; i++) L[32 * j + i] = (uint8_t)clampi(nearest_int((x[32 * j + i] + dm) / d), 0, 15);
  }
  for (int j = 0; j < QK_K; j += 64, q += 32)
    for (int l = 0; l < 32; l++) q[l] = (uint8_t)(L[j + l] | L[j + l + 32] << 4);
}

int vkf_quant_quantize(vkf_quant_format format, const float *src, size_t count, void *dst) {
  static void (*const rows[VKF_QUANT_COUNT])(const float *, uint8_t *) = {
      quant_q8_0, quant_q4_0, quant_q4_1, quant_q5_0, quant_q5_1, quant_q4_k, NULL, NULL};
  void (*row)(const float *, uint8_t *) =
      format >= 0 && format < VKF_QUANT_COUNT ? rows[format] : NULL;
  if (!row) return 0;
  vkf_quant_layout l = vkf_quant_layout_of(format);
  uint8_t *d = dst;
  for (size_t i = 0; i < count / l.block; i++) row(src + i * l.block, d + i * l.bytes);
  return 1;
}
