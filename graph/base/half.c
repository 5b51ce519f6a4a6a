/* fp32 <-> binary16 / bfloat16 bit conversions, done on the bit patterns so they do not depend on
 * the compiler's _Float16 support or the FPU's rounding mode. */
#include "graph/base/half.h"

#include <string.h>

static uint32_t float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static float bits_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

float vkf_half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1fu) return bits_float(sign | 0x7f800000u | (mant << 13)); /* inf / NaN */
  if (exp != 0) return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
  if (mant == 0) return bits_float(sign); /* ±0 */
  /* Subnormal half: mant * 2^-24 is exactly a normal float. */
  float v = (float)mant * 0x1p-24f;
  return sign ? -v : v;
}

uint16_t vkf_float_to_half(float f) {
  uint32_t u = float_bits(f);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  uint32_t exp = (u >> 23) & 0xffu;
  uint32_t mant = u & 0x7fffffu;
  if (exp == 0xffu) {
    if (mant == 0) return sign | 0x7c00u;
    /* Keep the payload's top bits; a payload only in the low bits must still read as NaN. */
    uint16_t m = (uint16_t)(mant >> 13);
    return sign | 0x7c00u | (m ? m : 0x200u);
  }
  int32_t e = (int32_t)exp - 127 + 15; /* biased half exponent */
  if (e >= 0x1f) return sign | 0x7c00u;
  if (e <= 0) {
    /* Result is subnormal (or zero): shift the full 24-bit significand right and round. */
    if (e < -10) return sign; /* below half the smallest subnormal: rounds to zero */
    uint32_t sig = mant | 0x800000u;
    uint32_t shift = (uint32_t)(14 - e);
    uint32_t q = sig >> shift;
    uint32_t rem = sig & ((1u << shift) - 1u);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (q & 1u))) q++;
    return sign | (uint16_t)q; /* q may carry into the exponent field: that is the right answer */
  }
  uint32_t q = ((uint32_t)e << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (q & 1u))) q++; /* a carry may round up to infinity */
  return sign | (uint16_t)q;
}

float vkf_bf16_to_float(uint16_t b) {
  return bits_float((uint32_t)b << 16);
}

uint16_t vkf_float_to_bf16(float f) {
  uint32_t u = float_bits(f);
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu)) return (uint16_t)((u >> 16) | 0x40u);
  uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)((u + rounding) >> 16);
}
