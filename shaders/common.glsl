// Shared scalar helpers for every kernel: erf and the activations built on it (matching the CPU
// reference in graph/interp/interp_elementwise.c), and exact fp16 <-> fp32 conversions on bit patterns.
// Include after #version with `#extension GL_GOOGLE_include_directive : require`.
// Defines: none. Bindings, push constants, specialization constants: none (functions only).
#ifndef VKF_COMMON_GLSL
#define VKF_COMMON_GLSL

// erf with max abs error 7e-8 over the floats (polynomial after N. Juffa's erff: odd polynomial
// below 0.921875, exp of a polynomial above). vkf_erfc_tail is erfc(t) for t >= 0.921875, kept
// separate so GELU of large negative x avoids 1 + erf(x) cancelling to nothing.
float vkf_erfc_tail(float t) {
  float s = t * t;
  float r = fma(1.72948930e-5, t, -3.83208680e-4);
  float u = fma(3.88393435e-3, t, -2.42545605e-2);
  r = fma(r, s, u);
  r = fma(r, t, 1.06777847e-1);
  r = fma(r, t, 6.34846687e-1);
  r = fma(r, t, 1.28717512e-1);
  r = fma(r, t, t);
  return exp2(r * -1.442695);
}

float vkf_erf_small(float a) {
  float s = a * a;
  float r = -5.99104969e-4;
  r = fma(r, s, 4.99339588e-3);
  r = fma(r, s, -2.67667342e-2);
  r = fma(r, s, 1.12818025e-1);
  r = fma(r, s, -3.76124859e-1);
  r = fma(r, s, 1.28379151e-1);
  return fma(r, a, a);
}

float vkf_erf(float a) {
  float t = abs(a);
  if (t >= 0.921875) return sign(a) * (1.0 - vkf_erfc_tail(t));
  return vkf_erf_small(a);
}

// 0.5 x (1 + erf(x / sqrt 2)), as HF ViT/BERT's exact GELU.
// One tail evaluation per element: SIMD devices run both sides of the branch.
float vkf_gelu_erf(float x) {
  float z = x * 0.70710678118654752;
  float t = abs(z);
  if (t >= 0.921875) {
    float e = vkf_erfc_tail(t);                // erfc(|z|)
    return 0.5 * x * (z < 0.0 ? e : 2.0 - e); // 1 + erf(z)
  }
  return 0.5 * x * (1.0 + vkf_erf_small(z));
}

// tanh that cannot overflow to inf/inf (the naive exp ratio does for |x| > 44): odd Taylor series
// near zero, where 1 - exp(-2|x|) would lose relative precision, else (1 - e) / (1 + e).
float vkf_tanh(float x) {
  float t = abs(x);
  if (t < 0.25) {
    float s = x * x;
    float r = fma(s, -0.00886323552990219657, 0.02186948853615520282); // -1382/155925, 62/2835
    r = fma(r, s, -0.05396825396825396825);                             // -17/315
    r = fma(r, s, 0.13333333333333333333);                              // 2/15
    r = fma(r, s, -0.33333333333333333333);                             // -1/3
    return fma(r * s, x, x);
  }
  float e = exp(-2.0 * t);
  return sign(x) * ((1.0 - e) / (1.0 + e));
}

float vkf_gelu_tanh(float x) {
  return 0.5 * x * (1.0 + vkf_tanh(0.79788456080286536 * (x + 0.044715 * x * x * x)));
}

float vkf_silu(float x) { return x / (1.0 + exp(-x)); }

float vkf_relu(float x) { return max(x, 0.0); }

// n / d for n < 2^31 without a hardware divide (which CPU devices such as lavapipe scalarise per
// lane): (magic, shift) come from vkf_fastdiv_make (graph/lower/lower_layout.h); magic 0 means d == 1.
uint vkf_fastdiv(uint n, uint magic, uint shift) {
  uint hi, lo;
  umulExtended(n, magic, hi, lo);
  return magic == 0u ? n : hi >> shift;
}

// binary16 bit pattern (low 16 bits) -> float; exact for every pattern.
float vkf_half_to_float(uint h) { return unpackHalf2x16(h).x; }

// float -> binary16 bit pattern, round to nearest even on the bits, so results match the CPU
// reference (graph/base/half.c) on every device whatever its conversion rounding mode.
uint vkf_float_to_half(float f) {
  uint u = floatBitsToUint(f);
  uint sign_bit = (u >> 16) & 0x8000u;
  uint a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) { // inf or NaN: keep the payload's top bits, stay a NaN
    uint m = (a & 0x7fffffu) >> 13;
    return sign_bit | 0x7c00u | (a == 0x7f800000u ? 0u : (m != 0u ? m : 0x200u));
  }
  if (a >= 0x477ff000u) return sign_bit | 0x7c00u; // >= 65520 rounds to infinity
  if (a < 0x38800000u) {
    // Half subnormal or zero: the result is |f| * 2^24 rounded to an integer (exact scaling).
    return sign_bit | uint(roundEven(uintBitsToFloat(a) * 16777216.0));
  }
  a += 0xfffu + ((a >> 13) & 1u); // round to nearest, ties to even
  return sign_bit | ((a - 0x38000000u) >> 13);
}

#endif
