#version 450
// Feature maps of linear attention (LINEAR_FEATURES, graph/lower/lower_linear.c): one invocation
// per element (row r = (b, h, n), feature j) of the output [B, H, N, F] (contiguous):
//   ELU1:  y = x_j > 0 ? x_j + 1 : exp(x_j)                                   (F = D)
//   FAVOR: y = exp(omega_j . x' - |x'|^2 / 2) / sqrt(M), x' = scale * x       (F = M)
//   RFF:   y = sin(omega_j . x') / sqrt(M) for j < M, cos(omega_{j-M} . x') / sqrt(M) after (F = 2M)
// Defines: KIND = 0 (elu1), 1 (favor), 2 (rff).
// Bindings: 0 x (read), 1 y (write), 2 omega [M, D] (read, strided; FAVOR/RFF only).
// Push constants: count, (size, magic, shift) of H, N, F, then D, M, x_off, x_st[4], w_off,
//                 w_st[2], y_off, scale.
// Specialization constants: 0 workgroup size.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
#if KIND != 0
layout(std430, binding = 2) readonly buffer W { float w[]; };
#endif
layout(push_constant) uniform Params {
  uint count;
  uint size_h, magic_h, shift_h, size_n, magic_n, shift_n, size_f, magic_f, shift_f;
  uint dim, m;
  uint x_off, x_st0, x_st1, x_st2, x_st3;
  uint w_off, w_st0, w_st1, y_off;
  float scale;
} p;

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.count; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    uint r = vkf_fastdiv(i, p.magic_f, p.shift_f);
    uint j = i - r * p.size_f;
    uint q = vkf_fastdiv(r, p.magic_n, p.shift_n);
    uint n = r - q * p.size_n;
    uint b = vkf_fastdiv(q, p.magic_h, p.shift_h);
    uint h = q - b * p.size_h;
    uint row = p.x_off + b * p.x_st0 + h * p.x_st1 + n * p.x_st2;
#if KIND == 0
    float v = x[row + j * p.x_st3];
    y[p.y_off + i] = v > 0.0 ? v + 1.0 : exp(v);
#else
    uint k = j < p.m ? j : j - p.m;
    float dot_wx = 0.0, norm = 0.0;
    for (uint d = 0; d < p.dim; d++) {
      float v = p.scale * x[row + d * p.x_st3];
      dot_wx = fma(w[p.w_off + k * p.w_st0 + d * p.w_st1], v, dot_wx);
      norm = fma(v, v, norm);
    }
    float inv_sqrt_m = inversesqrt(float(p.m));
#if KIND == 1
    y[p.y_off + i] = exp(dot_wx - 0.5 * norm) * inv_sqrt_m;
#else
    y[p.y_off + i] = (j < p.m ? sin(dot_wx) : cos(dot_wx)) * inv_sqrt_m;
#endif
#endif
  }
}
