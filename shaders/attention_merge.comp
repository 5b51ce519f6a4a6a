#version 450
// Exact merge of split-K attention partials (flash-decoding), written by attention.comp with
// SPLIT=1: per row, m = max_s m_s, l = sum_s 2^(m_s - m) l_s, out = sum_s 2^(m_s - m) O_s / l
// (m in log2 units). A row whose every split saw no key (l = 0) gives zeros.
//
// Defines: F16=0|1 (the output is float16 in storage).
// Bindings (set 0): 0 partials, fp32: O [rows, S, DV] then (m, l) [rows, S, 2] (read);
//   1 out [B, H, Nq, DV] contiguous, or [B, Nq, H, DV] when merge_heads is 1 (write).
// Push constants: part_off, o_off (element offsets in the bound ranges), rows (B * H * Nq),
//   splits, dv, nq, h, merge_heads.
// Specialization constants: 0 local_size_x (workgroup size).
#if F16
#extension GL_EXT_shader_16bit_storage : require
#define T_IO float16_t
#else
#define T_IO float
#endif

layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer PB { float part[]; };
layout(std430, binding = 1) writeonly buffer OB { T_IO o[]; };

layout(push_constant) uniform Params {
  uint part_off, o_off, rows, splits, dv, nq, h, merge_heads;
} p;

void main() {
  // 2-D grid: rows * dv may exceed the x workgroup-count limit.
  const uint e = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (e >= p.rows * p.dv) return;
  const uint row = e / p.dv, d = e % p.dv;
  const uint ml = p.part_off + p.rows * p.splits * p.dv + row * p.splits * 2u;
  float m = part[ml];
  for (uint s = 1; s < p.splits; s++) m = max(m, part[ml + 2u * s]);
  float l = 0.0, acc = 0.0;
  for (uint s = 0; s < p.splits; s++) {
    const float w = exp2(part[ml + 2u * s] - m);
    l += w * part[ml + 2u * s + 1u];
    acc += w * part[p.part_off + (row * p.splits + s) * p.dv + d];
  }
  // row = (b * H + hh) * Nq + q; with merge_heads it goes to (b * Nq + q) * H + hh.
  const uint bh = row / p.nq, q = row % p.nq;
  const uint orow = p.merge_heads != 0u ? ((bh / p.h) * p.nq + q) * p.h + bh % p.h : row;
  o[p.o_off + orow * p.dv + d] = T_IO(l > 0.0 ? acc / l : 0.0);
}
