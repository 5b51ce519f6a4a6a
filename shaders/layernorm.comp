#version 450
// Row normalisation over the last axis: layernorm ((x - mean) / sqrt(var + eps)), RMSNorm
// (x / sqrt(mean(x^2) + eps)) and L2 normalisation (x / max(||x||, eps)), each optionally times
// gamma (+ beta for layernorm). One workgroup per row; statistics in fp32, two passes over the
// row (mean, then the centred sum of squares: no cancellation), a third pass writes. Layernorm
// works on x - x[0] (the shifted-data method): for rows with a large mean (residual streams) the
// differences are exact and the fp32 sums lose nothing to the offset.
// Defines:
//   X_F16            x and y are float16 storage (else float)
//   P_F16            gamma and beta are float16 storage (else float)
//   SUBGROUP_REDUCE  reductions with subgroup arithmetic (else a shared-memory tree)
// Bindings: 0 x (read), 1 y (write), 2 gamma (read), 3 beta (read); an absent gamma/beta is
//   bound to x's range and never read.
// Push constants (uint unless noted): lead0, lead1, lead2 (leading dims, rank padded to 4 with
//   leading 1s; rows = lead0*lead1*lead2), d (row length), x_off, x_s0..x_s3 (element offset and
//   strides), y_off, y_s0..y_s3, g_off, g_s, b_off, b_s, gx (workgroups along x:
//   row = wg.y * gx + wg.x), eps (float).
// Specialization constants: 0 WG (local_size_x, power of two), 1 OP (0 layernorm, 1 RMSNorm,
//   2 L2), 2 HAS_GAMMA, 3 HAS_BETA.
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

#ifdef X_F16
#define XTYPE float16_t
#else
#define XTYPE float
#endif
#ifdef P_F16
#define PTYPE float16_t
#else
#define PTYPE float
#endif

layout(std430, binding = 0) readonly buffer X { XTYPE x[]; };
layout(std430, binding = 1) writeonly buffer Y { XTYPE y[]; };
layout(std430, binding = 2) readonly buffer G { PTYPE gamma[]; };
layout(std430, binding = 3) readonly buffer B { PTYPE beta[]; };
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

void main() {
  uint row = gl_WorkGroupID.y * p.gx + gl_WorkGroupID.x;
  if (row >= p.lead0 * p.lead1 * p.lead2) return; // whole workgroup: barriers stay uniform
  uint lid = gl_LocalInvocationID.x;
  uint xb = p.x_off + row_offset(row, p.x_s0, p.x_s1, p.x_s2);
  uint yb = p.y_off + row_offset(row, p.y_s0, p.y_s1, p.y_s2);

  // mean = shift + (mean of x - shift); every later use of x is (x - shift) - delta.
  float shift = OP == 0 ? float(x[xb]) : 0.0, delta = 0.0;
  if (OP == 0) {
    float s = 0.0;
    for (uint j = lid; j < p.d; j += WG) s += float(x[xb + j * p.x_s3]) - shift;
    delta = wg_sum(s) / float(p.d);
  }
  float q = 0.0;
  for (uint j = lid; j < p.d; j += WG) {
    float v = (float(x[xb + j * p.x_s3]) - shift) - delta;
    q += v * v;
  }
  q = wg_sum(q);
  float inv = OP == 2 ? 1.0 / max(sqrt(q), p.eps) : 1.0 / sqrt(q / float(p.d) + p.eps);

  for (uint j = lid; j < p.d; j += WG) {
    float v = ((float(x[xb + j * p.x_s3]) - shift) - delta) * inv;
    if (HAS_GAMMA) v *= float(gamma[p.g_off + j * p.g_s]);
    if (HAS_BETA) v += float(beta[p.b_off + j * p.b_s]);
    y[yb + j * p.y_s3] = XTYPE(v);
  }
}
