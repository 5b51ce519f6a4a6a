#version 450
// Additive attention (Bahdanau et al. 2015; D2L's AdditiveAttention), fused over the keys:
//   s_j = sum_h w[h] * tanh(qp[b, i, h] + kp[b, j, h]) for j < len (valid length, clamped to
//   [0, Nk]), p = softmax(s), out[b, i, :] = sum_j p_j v[b, j, :]; with WEIGHTS, out[b, i, j] = p_j
//   (0 past len). A row with no key left is zeros. No [B, Nq, Nk, H] tensor: one workgroup per
//   query row walks the keys in tiles of WG, one key per invocation (its H-term score), an online
//   max and sum in fp32 across tiles; the tile's weights go through shared memory to the
//   invocations that own the output columns (d = z*ACC*WG + lid + k*WG, k < ACC; wider values
//   take more workgroups along z, each with the row's scores). WEIGHTS: a first pass for the max
//   and sum, a second that recomputes the scores and writes them normalised.
// Defines: IO_F16 (every tensor f16 storage), WEIGHTS, SUBGROUP_REDUCE (wg_reduce.glsl).
// Bindings: 0 qp, 1 kp, 2 w, 3 v, 4 valid lengths (int; bound to qp's range when absent), 5 out.
// Push constants (uint): nq, nk, h, dv, q_off, q_s0, q_s1, q_s2, k_off, k_s0, k_s1, k_s2, w_off,
//   w_s0, v_off, v_s0, v_s1, v_s2, l_off, l_s0, l_s1, o_off, o_s0, o_s1, o_s2, gx, rows (row =
//   wg.y * gx + wg.x < rows = B * nq; b = row / nq, i = row % nq).
// Specialization constants: 0 WG (power of two), 1 HAS_VL, 2 VL_PER_ROW ([B, Nq]),
//   3 ONE_SUBGROUP (wg_reduce.glsl).
#extension GL_GOOGLE_include_directive : require
#ifdef IO_F16
#extension GL_EXT_shader_16bit_storage : require
#define IO_T uint16_t
#define LD(x) vkf_half_to_float(uint(x))
#define ST(v) uint16_t(vkf_float_to_half(v))
#else
#define IO_T float
#define LD(x) (x)
#define ST(v) (v)
#endif
#ifdef SUBGROUP_REDUCE
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;
layout(constant_id = 1) const bool HAS_VL = false;
layout(constant_id = 2) const bool VL_PER_ROW = false;
layout(constant_id = 3) const bool ONE_SUBGROUP = false;
#include "wg_reduce.glsl"

const uint ACC = 8; // output columns per invocation (the lowering's ADDITIVE_ACC)

layout(std430, binding = 0) readonly buffer Q { IO_T qp[]; };
layout(std430, binding = 1) readonly buffer K { IO_T kp[]; };
layout(std430, binding = 2) readonly buffer W { IO_T w[]; };
layout(std430, binding = 3) readonly buffer V { IO_T v[]; };
layout(std430, binding = 4) readonly buffer L { int lens[]; };
layout(std430, binding = 5) writeonly buffer O { IO_T o[]; };
layout(push_constant) uniform Params {
  uint nq, nk, h, dv;
  uint q_off, q_s0, q_s1, q_s2;
  uint k_off, k_s0, k_s1, k_s2;
  uint w_off, w_s0;
  uint v_off, v_s0, v_s1, v_s2;
  uint l_off, l_s0, l_s1;
  uint o_off, o_s0, o_s1, o_s2;
  uint gx, rows;
} p;

shared float tile_p[WG];

// A finite "minus infinity" (as softmax.comp): exp(LOWEST - s) is 0 without forming inf - inf.
const float LOWEST = -3.402823466e38;

float score(uint qbase, uint kbase) {
  float s = 0.0;
  for (uint c = 0; c < p.h; c++)
    s += LD(w[p.w_off + c * p.w_s0]) * vkf_tanh(LD(qp[qbase + c * p.q_s2]) + LD(kp[kbase + c * p.k_s2]));
  return s;
}

void main() {
  uint row = gl_WorkGroupID.y * p.gx + gl_WorkGroupID.x;
  if (row >= p.rows) return; // the grid's last line may run past the rows
  uint b = row / p.nq, i = row - b * p.nq;
  uint lid = gl_LocalInvocationID.x;
  int len_i = int(p.nk);
  if (HAS_VL) len_i = lens[p.l_off + b * p.l_s0 + (VL_PER_ROW ? i * p.l_s1 : 0u)];
  uint len = uint(clamp(len_i, 0, int(p.nk)));
  uint qbase = p.q_off + b * p.q_s0 + i * p.q_s1;
  uint kb = p.k_off + b * p.k_s0, vb = p.v_off + b * p.v_s0;
  uint obase = p.o_off + b * p.o_s0 + i * p.o_s1;
  uint dbase = gl_WorkGroupID.z * ACC * WG; // this workgroup's first output column
  float m = LOWEST, l = 0.0;
#ifndef WEIGHTS
  float acc[ACC];
  for (uint a = 0; a < ACC; a++) acc[a] = 0.0;
#endif
  // Tiles of WG keys: the online max and sum (and, for the context, the rescaled accumulators).
  for (uint j0 = 0; j0 < len; j0 += WG) {
    uint j = j0 + lid;
    float s = j < len ? score(qbase, kb + j * p.k_s1) : LOWEST;
    float mt = wg_max(s);
    float mn = max(m, mt);
    float e = j < len ? exp(s - mn) : 0.0;
    float scale = exp(m - mn); // 0 on the first tile (m = LOWEST, mn a score)
    l = l * scale + wg_sum(e);
    m = mn;
#ifndef WEIGHTS
    tile_p[lid] = e;
    barrier();
    uint count = min(WG, len - j0);
    for (uint a = 0; a < ACC; a++) {
      uint d = dbase + lid + a * WG;
      if (d >= p.dv) break;
      float t = acc[a] * scale;
      uint vi = vb + j0 * p.v_s1 + d * p.v_s2;
      for (uint jj = 0; jj < count; jj++, vi += p.v_s1) t += tile_p[jj] * LD(v[vi]);
      acc[a] = t;
    }
    barrier();
#endif
  }
  float inv = l > 0.0 ? 1.0 / l : 0.0;
#ifdef WEIGHTS
  for (uint j = lid; j < p.nk; j += WG)
    o[obase + j * p.o_s2] = ST(j < len ? exp(score(qbase, kb + j * p.k_s1) - m) * inv : 0.0);
#else
  for (uint a = 0; a < ACC; a++) {
    uint d = dbase + lid + a * WG;
    if (d >= p.dv) break;
    o[obase + d * p.o_s2] = ST(acc[a] * inv);
  }
#endif
}
