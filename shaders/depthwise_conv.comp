#version 450
// Depthwise convolution along the sequence, zero padded, same length (Nystromformer's conv skip
// on V, torch Conv2d(H, H, (K, 1), padding=(K/2, 0), groups=H)):
//   out[b, h, n, d] = sum_t w[h, t] * x[b, h, n + t - K/2, d]
// One invocation per output element; neighbours in d read neighbouring x elements. fp32 sums.
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

void main() {
  uint total = p.batch * p.heads * p.len * p.dim;
  int half_taps = int(p.taps / 2u);
  for (uint i = gl_GlobalInvocationID.x; i < total; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    uint d = i % p.dim, rest = i / p.dim;
    uint n = rest % p.len;
    rest /= p.len;
    uint h = rest % p.heads, b = rest / p.heads;
    uint xrow = p.x_off + b * p.xs0 + h * p.xs1 + d * p.xs3;
    uint wrow = p.w_off + h * p.ws0;
    // Taps whose source falls outside [0, N) are the zero padding: the loop bounds skip them.
    int lo = max(0, half_taps - int(n));
    int hi = min(int(p.taps), int(p.len) - int(n) + half_taps);
    float acc = 0.0;
    for (int t = lo; t < hi; t++)
      acc += LOAD(w, wrow + uint(t) * p.ws1) *
             LOAD(x, xrow + uint(int(n) + t - half_taps) * p.xs2);
    dst[p.out_off + b * p.ys0 + h * p.ys1 + n * p.ys2 + d * p.ys3] = STORE_T(acc);
  }
}
