#version 450
// Sum (default), max or argmax of x along one axis, kept as a size-1 dim (torch's keepdim=True).
// x is padded to rank 4 on the left by the lowering; one invocation per output element walks the
// axis, except for ARGMAX, where one workgroup does (a row of logits is 50k-150k values long; its
// lanes stride over it and combine in shared memory: no subgroup operation, any subgroup size).
// Accumulation in fp32.
// Defines: MAX: the maximum instead of the sum; ARGMAX: the index of the first maximum (NaN the
// largest, as torch.argmax) as int; IO_F16: x (and out unless ARGMAX) are f16 (uint16_t bits).
// Bindings: 0 x (read), 1 out (write; int with ARGMAX).
// Push constants: dims[4] of x, x strides[4], out strides[4], axis, x_off, out_off (elements).
// Specialization constants: 0 workgroup size (default 256).
#extension GL_GOOGLE_include_directive : require
#ifdef IO_F16
#extension GL_EXT_shader_16bit_storage : require
#define IO_T uint16_t
#define LOAD_X(i) vkf_half_to_float(uint(x[i]))
#define STORE_T(v) uint16_t(vkf_float_to_half(v))
#else
#define IO_T float
#define LOAD_X(i) x[i]
#define STORE_T(v) (v)
#endif
#include "common.glsl"

layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { IO_T x[]; };
#ifdef ARGMAX
layout(std430, binding = 1) writeonly buffer Out { int dst[]; };
shared float best_v[gl_WorkGroupSize.x];
shared uint best_i[gl_WorkGroupSize.x];

// (bv, bi) beats (av, ai): greater, or equal at a lower index; NaN is the largest value.
bool beats(float bv, uint bi, float av, uint ai) {
  bool bn = isnan(bv), an = isnan(av);
  if (bn || an) return bn && (!an || bi < ai);
  return bv > av || (bv == av && bi < ai);
}
#else
layout(std430, binding = 1) writeonly buffer Out { IO_T dst[]; };
#endif
layout(push_constant) uniform Params {
  uint d0, d1, d2, d3;
  uint xs0, xs1, xs2, xs3;
  uint ys0, ys1, ys2, ys3;
  uint axis, x_off, out_off;
} p;

void main() {
  uint dims[4] = uint[4](p.d0, p.d1, p.d2, p.d3);
  uint xs[4] = uint[4](p.xs0, p.xs1, p.xs2, p.xs3);
  uint ys[4] = uint[4](p.ys0, p.ys1, p.ys2, p.ys3);
  uint len = dims[p.axis], step = xs[p.axis];
  dims[p.axis] = 1u;
  uint total = dims[0] * dims[1] * dims[2] * dims[3];
#ifdef ARGMAX
  uint lane = gl_LocalInvocationID.x, wg = gl_WorkGroupSize.x;
  for (uint i = gl_WorkGroupID.x; i < total; i += gl_NumWorkGroups.x) {
#else
  for (uint i = gl_GlobalInvocationID.x; i < total; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
#endif
    uint rest = i, xi = p.x_off, yi = p.out_off;
    for (int k = 3; k >= 0; k--) {
      uint c = rest % dims[k];
      rest /= dims[k];
      xi += c * xs[k];
      yi += c * ys[k];
    }
#if defined(ARGMAX)
    // Each lane's first maximum over t = lane, lane + wg, ...; then a tree over the lanes that
    // keeps the lower index on ties, so the result is the first maximum whatever wg is.
    float bv = 0.0;
    uint bi = 0xffffffffu;
    for (uint t = lane; t < len; t += wg) {
      float v = LOAD_X(xi + t * step);
      if (bi == 0xffffffffu || beats(v, t, bv, bi)) {
        bv = v;
        bi = t;
      }
    }
    best_v[lane] = bv;
    best_i[lane] = bi;
    barrier();
    for (uint s = 1u; s < wg; s *= 2u) {
      if (lane % (2u * s) == 0u && lane + s < wg) {
        float ov = best_v[lane + s];
        uint oi = best_i[lane + s];
        if (oi != 0xffffffffu &&
            (best_i[lane] == 0xffffffffu || beats(ov, oi, best_v[lane], best_i[lane]))) {
          best_v[lane] = ov;
          best_i[lane] = oi;
        }
      }
      barrier();
    }
    if (lane == 0u) dst[yi] = int(best_i[0] == 0xffffffffu ? 0u : best_i[0]);
    barrier(); // best_* are rewritten for the next output
#elif defined(MAX)
    float acc = LOAD_X(xi);
    for (uint t = 1u; t < len; t++) acc = max(acc, LOAD_X(xi + t * step));
#else
    float acc = 0.0;
    for (uint t = 0u; t < len; t++) acc += LOAD_X(xi + t * step);
#endif
#ifndef ARGMAX
    dst[yi] = STORE_T(acc);
#endif
  }
}
