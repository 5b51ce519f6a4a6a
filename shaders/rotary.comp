#version 450
// Rotary position embedding in one pass (VKF_OP_ROTARY, Hugging Face's apply_rotary_pos_emb):
//   y = x * cos + rotate_half(x) * sin,  rotate_half(x) = [-x[..., D/2:], x[..., :D/2]]
// One invocation per pair (j, j + D/2) of a row: it reads both x values once and writes both
// outputs. x, cos and sin are rank-4 views (padded on the left with size-1 dims; cos and sin
// broadcast with stride 0), y is dense. The products are added unfused, in fp32, as the
// reference's mul, mul, add.
// Defines: IO_F16: x and y are f16; CS_F16: cos and sin are f16 (uint16_t bits either way).
// Bindings: 0 x (read), 1 cos (read), 2 sin (read), 3 y (write).
// Push constants (elements): lead[3], d, x_off, xs[4], c_off, cs[4], s_off, ss[4], y_off, ys[4].
// Specialization constants: 0 workgroup size (default 256).
#extension GL_GOOGLE_include_directive : require
#if defined(IO_F16) || defined(CS_F16)
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "common.glsl"
#ifdef IO_F16
#define IO_T uint16_t
#define LOAD_X(i) vkf_half_to_float(uint(x[i]))
#define STORE_Y(i, v) y[i] = uint16_t(vkf_float_to_half(v))
#else
#define IO_T float
#define LOAD_X(i) x[i]
#define STORE_Y(i, v) y[i] = (v)
#endif
#ifdef CS_F16
#define CS_T uint16_t
#define LOAD_CS(buf, i) vkf_half_to_float(uint(buf[i]))
#else
#define CS_T float
#define LOAD_CS(buf, i) buf[i]
#endif

layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { IO_T x[]; };
layout(std430, binding = 1) readonly buffer C { CS_T c[]; };
layout(std430, binding = 2) readonly buffer S { CS_T s[]; };
layout(std430, binding = 3) writeonly buffer Y { IO_T y[]; };
layout(push_constant) uniform Params {
  uint lead0, lead1, lead2, d;
  uint x_off, xs0, xs1, xs2, xs3;
  uint c_off, cs0, cs1, cs2, cs3;
  uint s_off, ss0, ss1, ss2, ss3;
  uint y_off, ys0, ys1, ys2, ys3;
} p;

void main() {
  uint half_d = p.d / 2u, rows = p.lead0 * p.lead1 * p.lead2, total = rows * half_d;
  for (uint i = gl_GlobalInvocationID.x; i < total; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    uint j = i % half_d, r = i / half_d;
    uint i2 = r % p.lead2, i1 = (r / p.lead2) % p.lead1, i0 = r / (p.lead2 * p.lead1);
    uint xb = p.x_off + i0 * p.xs0 + i1 * p.xs1 + i2 * p.xs2;
    uint cb = p.c_off + i0 * p.cs0 + i1 * p.cs1 + i2 * p.cs2;
    uint sb = p.s_off + i0 * p.ss0 + i1 * p.ss1 + i2 * p.ss2;
    uint yb = p.y_off + i0 * p.ys0 + i1 * p.ys1 + i2 * p.ys2;
    uint lo = j, hi = j + half_d;
    float x_lo = LOAD_X(xb + lo * p.xs3), x_hi = LOAD_X(xb + hi * p.xs3);
    float a_lo = x_lo * LOAD_CS(c, cb + lo * p.cs3), b_lo = -x_hi * LOAD_CS(s, sb + lo * p.ss3);
    float a_hi = x_hi * LOAD_CS(c, cb + hi * p.cs3), b_hi = x_lo * LOAD_CS(s, sb + hi * p.ss3);
    STORE_Y(yb + lo * p.ys3, a_lo + b_lo);
    STORE_Y(yb + hi * p.ys3, a_hi + b_hi);
  }
}
