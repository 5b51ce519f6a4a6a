#version 450
// Depthwise convolution along the sequence, zero padded, same length (Nystromformer's conv skip
// on V, torch Conv2d(H, H, (K, 1), padding=(K/2, 0), groups=H)):
//   out[b, h, n, d] = sum_t w[h, t] * x[b, h, n + t - K/2, d]
// One invocation per RUN consecutive outputs along n (one d), the taps in the outer loop: a window
// of RUN x values slides one row per tap, so each tap costs one x load and one w load for RUN
// multiply-adds. Loads are what lavapipe pays for (about 10 ns each): one output per invocation
// with every tap reloaded ran at ~10 MFLOP/s. Padding is a clamped load times zero, so every lane
// has the same loop bounds. Neighbouring lanes take neighbouring d, so x reads coalesce. fp32 sums.
// Defines: IO_F16: x, w and out are f16 (uint16_t bits).
// Bindings: 0 x [B, H, N, D] (read), 1 w [H, K] (read), 2 out [B, H, N, D] (write).
// Push constants: B, H, N, D, K, x_off, x strides[4], w_off, w_st0, w_st1, out_off,
//                 out strides[4] (elements).
// Specialization constants: 0 workgroup size (default 256).
#extension GL_GOOGLE_include_directive : require
#ifdef IO_F16
#extension GL_EXT_shader_16bit_storage : require
#define IO_T uint16_t
#define LOAD(buf, i) vkf_half_to_float(uint(buf[i]))
#define STORE_T(v) uint16_t(vkf_float_to_half(v))
#else
#define IO_T float
#define LOAD(buf, i) buf[i]
#define STORE_T(v) (v)
#endif
#include "common.glsl"

layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { IO_T x[]; };
layout(std430, binding = 1) readonly buffer W { IO_T w[]; };
layout(std430, binding = 2) writeonly buffer Out { IO_T dst[]; };
layout(push_constant) uniform Params {
  uint batch, heads, len, dim, taps;
  uint x_off, xs0, xs1, xs2, xs3;
  uint w_off, ws0, ws1;
  uint out_off, ys0, ys1, ys2, ys3;
} p;

#define RUN 32

float x_at(uint row, int s, int last) {
  return LOAD(x, row + uint(clamp(s, 0, last)) * p.xs2) * float(s >= 0 && s <= last);
}

void main() {
  uint runs = (p.len + RUN - 1u) / RUN;
  uint total = p.batch * p.heads * runs * p.dim;
  int half_taps = int(p.taps / 2u), last = int(p.len) - 1;
  for (uint i = gl_GlobalInvocationID.x; i < total; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    uint d = i % p.dim, rest = i / p.dim;
    int n0 = int(rest % runs) * RUN;
    rest /= runs;
    uint h = rest % p.heads, b = rest / p.heads;
    uint xrow = p.x_off + b * p.xs0 + h * p.xs1 + d * p.xs3;
    uint wrow = p.w_off + h * p.ws0;
    // Tap t: output n0 + r reads x[n0 + r + t - half_taps] = win[r].
    float acc[RUN], win[RUN];
    for (int r = 0; r < RUN; r++) {
      acc[r] = 0.0;
      win[r] = x_at(xrow, n0 + r - half_taps, last);
    }
    for (int t = 0; t < int(p.taps); t++) {
      float wt = LOAD(w, wrow + uint(t) * p.ws1);
      for (int r = 0; r < RUN; r++) acc[r] += wt * win[r];
      for (int r = 0; r < RUN - 1; r++) win[r] = win[r + 1];
      win[RUN - 1] = x_at(xrow, n0 + RUN + t - half_taps, last);
    }
    for (int r = 0; r < RUN; r++)
      if (n0 + r <= last)
        dst[p.out_off + b * p.ys0 + h * p.ys1 + uint(n0 + r) * p.ys2 + d * p.ys3] =
            STORE_T(acc[r]);
  }
}
