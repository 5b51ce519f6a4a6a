#version 450
// Feature maps of linear attention (LINEAR_FEATURES, graph/lower/lower_linear.c), output
// [B, H, N, F] contiguous, rows r = (b, h, n), x' = scale * x:
//   ELU1:  y = x_j > 0 ? x_j + 1 : exp(x_j)                                   (F = D)
//   FAVOR: y = exp(omega_j . x' - |x'|^2 / 2) / sqrt(M)                       (F = M)
//   RFF:   y_j = sin(omega_j . x') / sqrt(M), y_{M+j} = cos(omega_j . x') / sqrt(M)  (F = 2M)
// ELU1: one invocation per output element. FAVOR / RFF: one invocation per 4 rows x 4 random
// vectors, the dots in named vec4 accumulators (8 loads per 16 FMAs: on lavapipe every buffer
// load is a loop over the SIMD lanes), rows and vectors past the end clamped and not stored.
// Defines: KIND = 0 (elu1), 1 (favor), 2 (rff).
// Bindings: 0 x (read), 1 y (write), 2 omega [M, D] (read, strided; FAVOR/RFF only).
// Push constants: count (elements for ELU1, tiles otherwise), rows, tiles_k, H, N, F, D, M,
//                 x_off, x_st[4], w_off, w_st[2], y_off, scale.
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
  uint count, rows, tiles_k, heads, n, f, dim, m;
  uint x_off, x_st0, x_st1, x_st2, x_st3;
  uint w_off, w_st0, w_st1, y_off;
  float scale;
} p;

// Element offset of row r's x[0].
uint row_base(uint r) {
  uint t = r % p.n, bh = r / p.n;
  return p.x_off + (bh / p.heads) * p.x_st0 + (bh % p.heads) * p.x_st1 + t * p.x_st2;
}

#if KIND != 0
void store_row(uint r, uint k0, vec4 dotv, float norm) {
  if (r >= p.rows) return;
  float inv_sqrt_m = inversesqrt(float(p.m));
  uint ob = p.y_off + r * p.f;
#if KIND == 1
  vec4 val = exp(dotv - 0.5 * norm) * inv_sqrt_m;
#else
  vec4 sv = sin(dotv) * inv_sqrt_m, cv = cos(dotv) * inv_sqrt_m;
#endif
  for (uint q = 0u; q < 4u; q++) {
    uint k = k0 + q;
    if (k >= p.m) break;
#if KIND == 1
    y[ob + k] = val[q];
#else
    y[ob + k] = sv[q];
    y[ob + p.m + k] = cv[q];
#endif
  }
}
#endif

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.count; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
#if KIND == 0
    uint r = i / p.f, j = i % p.f;
    float v = x[row_base(r) + j * p.x_st3];
    y[p.y_off + i] = v > 0.0 ? v + 1.0 : exp(v);
#else
    uint kt = i % p.tiles_k, r0 = i / p.tiles_k * 4u, k0 = kt * 4u;
    uvec4 rb = uvec4(row_base(min(r0, p.rows - 1u)), row_base(min(r0 + 1u, p.rows - 1u)),
                     row_base(min(r0 + 2u, p.rows - 1u)), row_base(min(r0 + 3u, p.rows - 1u)));
    uvec4 wb = p.w_off + min(uvec4(k0, k0 + 1u, k0 + 2u, k0 + 3u), uvec4(p.m - 1u)) * p.w_st0;
    vec4 d0 = vec4(0.0), d1 = vec4(0.0), d2 = vec4(0.0), d3 = vec4(0.0), norm = vec4(0.0);
    for (uint d = 0; d < p.dim; d++) {
      uint xo = d * p.x_st3, wo = d * p.w_st1;
      vec4 xs = p.scale * vec4(x[rb.x + xo], x[rb.y + xo], x[rb.z + xo], x[rb.w + xo]);
      vec4 wv = vec4(w[wb.x + wo], w[wb.y + wo], w[wb.z + wo], w[wb.w + wo]);
      d0 += xs.x * wv;
      d1 += xs.y * wv;
      d2 += xs.z * wv;
      d3 += xs.w * wv;
      norm += xs * xs;
    }
    store_row(r0, k0, d0, norm.x);
    store_row(r0 + 1u, k0, d1, norm.y);
    store_row(r0 + 2u, k0, d2, norm.z);
    store_row(r0 + 3u, k0, d3, norm.w);
#endif
  }
}
