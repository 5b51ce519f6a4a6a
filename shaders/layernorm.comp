#version 450
// Row normalisation over the last axis: layernorm ((x - mean) / sqrt(var + eps)), RMSNorm
// (x / sqrt(mean(x^2) + eps)) and L2 normalisation (x / max(||x||, eps)), each optionally times
// gamma (+ beta for layernorm). One workgroup per row, two passes over it: statistics in fp32,
// then the write. Layernorm's mean and centred sum of squares come from one pass: each invocation
// runs Welford's update over its elements (in groups of 4 with VEC4, merged by Chan's rule), and
// the workgroup combines them exactly (M2 = sum(M2_i + n_i (mean_i - mean)^2)), so there is no
// E[x^2] - E[x]^2 cancellation. It works on x - shift (shifted data), shift = the median of x's
// first, middle and last element: for rows with a large mean (residual streams) the differences
// are exact and the fp32 statistics lose nothing to the offset, and a lone outlier channel (the
// "massive activations" of large transformers) cannot become the shift.
// Defines:
//   X_F16            x and y are float16 storage (else float)
//   P_F16            gamma and beta are float16 storage (else float)
//   SUBGROUP_REDUCE  reductions with subgroup arithmetic (else a shared-memory tree)
//   TEXEL            x, gamma and beta are uniform texel buffers of vec4s (RGBA32F, RGBA16F for
//                    float16 storage); only with VEC4 (CPU devices: one gather per vec4)
// Bindings: 0 x (read), 1 y (write), 2 gamma (read), 3 beta (read); an absent gamma/beta is
//   bound to x's range and never read.
// Push constants (uint unless noted): lead0, lead1, lead2 (leading dims, rank padded to 4 with
//   leading 1s; rows = lead0*lead1*lead2), d (row length), x_off, x_s0..x_s3 (element offset and
//   strides), y_off, y_s0..y_s3, g_off, g_s, b_off, b_s, gx (workgroups along x: the workgroup
//   wg.y * gx + wg.x owns rows ROWS times that, and the ROWS - 1 after), eps (float).
// Specialization constants: 0 WG (local_size_x, power of two), 1 OP (0 layernorm, 1 RMSNorm,
//   2 L2), 2 HAS_GAMMA, 3 HAS_BETA, 4 VEC4: rows of x, y (and gamma, beta) are contiguous,
//   d % 4 == 0 and every row starts at a multiple of 4 elements; the kernel then moves 4 elements
//   per access (x4/y4/gamma4/beta4 alias bindings 0-3). Per-lane gathers dominate on CPU devices,
//   and 16-byte accesses help GPUs too. 5 ROWS: consecutive rows per workgroup (short rows: the
//   per-workgroup cost would dominate). 6 ONE_SUBGROUP: the workgroup is one subgroup
//   (wg_reduce.glsl: reductions without shared memory or barriers).
#if defined(X_F16) || defined(P_F16)
#extension GL_EXT_shader_16bit_storage : require
#endif
#ifdef SUBGROUP_REDUCE
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
#extension GL_GOOGLE_include_directive : require

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const uint OP = 0;
layout(constant_id = 2) const bool HAS_GAMMA = false;
layout(constant_id = 3) const bool HAS_BETA = false;
layout(constant_id = 4) const bool VEC4 = false;
layout(constant_id = 5) const uint ROWS = 1;
layout(constant_id = 6) const bool ONE_SUBGROUP = false;

#ifdef X_F16
#define XTYPE float16_t
#define XVEC4 f16vec4
#else
#define XTYPE float
#define XVEC4 vec4
#endif
#ifdef P_F16
#define PTYPE float16_t
#define PVEC4 f16vec4
#else
#define PTYPE float
#define PVEC4 vec4
#endif

layout(std430, binding = 1) writeonly buffer Y { XTYPE y[]; };
layout(std430, binding = 1) writeonly buffer Y4 { XVEC4 y4[]; };
#ifdef TEXEL
// x, gamma and beta through uniform texel views of vec4s (element i is component i % 4 of texel
// i / 4): on CPU devices a texel fetch is one vector gather, a storage-buffer load a scalar loop
// over the lanes. Needs VEC4 (the lowering defines TEXEL only then).
layout(binding = 0) uniform samplerBuffer x_tex;
layout(binding = 2) uniform samplerBuffer gamma_tex;
layout(binding = 3) uniform samplerBuffer beta_tex;
#define X1(i) texelFetch(x_tex, int((i) >> 2))[(i) & 3u]
#define X4(i) texelFetch(x_tex, int(i))
#define G1(i) texelFetch(gamma_tex, int((i) >> 2))[(i) & 3u]
#define G4(i) texelFetch(gamma_tex, int(i))
#define B1(i) texelFetch(beta_tex, int((i) >> 2))[(i) & 3u]
#define B4(i) texelFetch(beta_tex, int(i))
#else
layout(std430, binding = 0) readonly buffer X { XTYPE x[]; };
layout(std430, binding = 2) readonly buffer G { PTYPE gamma[]; };
layout(std430, binding = 3) readonly buffer B { PTYPE beta[]; };
layout(std430, binding = 0) readonly buffer X4 { XVEC4 x4[]; };
layout(std430, binding = 2) readonly buffer G4 { PVEC4 gamma4[]; };
layout(std430, binding = 3) readonly buffer B4 { PVEC4 beta4[]; };
#define X1(i) float(x[i])
#define X4(i) vec4(x4[i])
#define G1(i) float(gamma[i])
#define G4(i) vec4(gamma4[i])
#define B1(i) float(beta[i])
#define B4(i) vec4(beta4[i])
#endif
layout(push_constant) uniform Params {
  uint lead0, lead1, lead2, d;
  uint x_off, x_s0, x_s1, x_s2, x_s3;
  uint y_off, y_s0, y_s1, y_s2, y_s3;
  uint g_off, g_s, b_off, b_s;
  uint gx;
  float eps;
} p;

#include "wg_reduce.glsl"

uint row_offset(uint row, uint s0, uint s1, uint s2) {
  uint i2 = row % p.lead2, t = row / p.lead2;
  return (t / p.lead1) * s0 + (t % p.lead1) * s1 + i2 * s2;
}

void norm_row(uint row) {
  uint lid = gl_LocalInvocationID.x;
  uint xb = p.x_off + row_offset(row, p.x_s0, p.x_s1, p.x_s2);
  uint yb = p.y_off + row_offset(row, p.y_s0, p.y_s1, p.y_s2);

  // mean = shift + delta; every later use of x is (x - shift) - delta.
  float shift = 0.0, delta = 0.0, ss = 0.0;
  if (OP == 0) {
    float a = X1(xb), b = X1(xb + (p.d / 2) * p.x_s3);
    float c = X1(xb + (p.d - 1) * p.x_s3);
    shift = max(min(a, b), min(max(a, b), c));
    float n = 0.0, mean = 0.0, m2 = 0.0; // this invocation's Welford state of x - shift
    if (VEC4) {
      for (uint q = lid; q < p.d / 4; q += WG) {
        vec4 v = X4(xb / 4 + q) - shift;
        float bm = ((v.x + v.y) + (v.z + v.w)) * 0.25;
        vec4 dv = v - bm;
        float d = bm - mean, n1 = n + 4.0;
        mean += d * (4.0 / n1);
        m2 += dot(dv, dv) + d * d * (n * 4.0 / n1);
        n = n1;
      }
    } else {
      for (uint j = lid; j < p.d; j += WG) {
        float v = X1(xb + j * p.x_s3) - shift;
        n += 1.0;
        float d = v - mean;
        mean += d / n;
        m2 += d * (v - mean);
      }
    }
    delta = wg_sum(n * mean) / float(p.d);
    float dm = mean - delta;
    ss = wg_sum(m2 + n * dm * dm);
  } else {
    if (VEC4) {
      for (uint q = lid; q < p.d / 4; q += WG) {
        vec4 v = X4(xb / 4 + q);
        ss += dot(v, v);
      }
    } else {
      for (uint j = lid; j < p.d; j += WG) {
        float v = X1(xb + j * p.x_s3);
        ss += v * v;
      }
    }
    ss = wg_sum(ss);
  }
  float inv = OP == 2 ? 1.0 / max(sqrt(ss), p.eps) : 1.0 / sqrt(ss / float(p.d) + p.eps);

  if (VEC4) {
    for (uint q = lid; q < p.d / 4; q += WG) {
      vec4 v = ((X4(xb / 4 + q) - shift) - delta) * inv;
      if (HAS_GAMMA) v *= G4(p.g_off / 4 + q);
      if (HAS_BETA) v += B4(p.b_off / 4 + q);
      y4[yb / 4 + q] = XVEC4(v);
    }
  } else {
    for (uint j = lid; j < p.d; j += WG) {
      float v = ((X1(xb + j * p.x_s3) - shift) - delta) * inv;
      if (HAS_GAMMA) v *= G1(p.g_off + j * p.g_s);
      if (HAS_BETA) v += B1(p.b_off + j * p.b_s);
      y[yb + j * p.y_s3] = XTYPE(v);
    }
  }
}

void main() {
  uint first = (gl_WorkGroupID.y * p.gx + gl_WorkGroupID.x) * ROWS;
  for (uint k = 0; k < ROWS; k++) {
    if (first + k >= p.lead0 * p.lead1 * p.lead2) return; // whole workgroup: barriers uniform
    norm_row(first + k);
  }
}
