#version 450
// Sum (default) or max of x along one axis, kept as a size-1 dim (torch's keepdim=True).
// x is padded to rank 4 on the left by the lowering; one invocation per output element walks the
// axis. Accumulation in fp32.
// Defines: MAX: the maximum instead of the sum; IO_F16: x and out are f16 (uint16_t bits).
// Bindings: 0 x (read), 1 out (write).
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
layout(std430, binding = 1) writeonly buffer Out { IO_T dst[]; };
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
  for (uint i = gl_GlobalInvocationID.x; i < total; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    uint rest = i, xi = p.x_off, yi = p.out_off;
    for (int k = 3; k >= 0; k--) {
      uint c = rest % dims[k];
      rest /= dims[k];
      xi += c * xs[k];
      yi += c * ys[k];
    }
#ifdef MAX
    float acc = LOAD_X(xi);
    for (uint t = 1u; t < len; t++) acc = max(acc, LOAD_X(xi + t * step));
#else
    float acc = 0.0;
    for (uint t = 0u; t < len; t++) acc += LOAD_X(xi + t * step);
#endif
    dst[yi] = STORE_T(acc);
  }
}
