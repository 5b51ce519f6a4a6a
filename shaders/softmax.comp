#version 450
// Masked softmax over the last axis: y = softmax(x*scale + bias) where allowed, 0 elsewhere; a
// fully masked row is all zeros. Both masks are prefixes of the row (valid length, causal
// bottom-right diagonal), so a row only ever touches columns [0, cols) and writes zeros after.
// One workgroup per row, any length: pass 1 keeps a per-invocation online max/sum in fp32
// (rescaled only when the max grows), merged across the workgroup; pass 2 recomputes each score
// and writes exp(s - max) / sum. fp16 storage never overflows: the max is subtracted in fp32.
// Split rows (SPLIT, for few long rows that would leave most of the device idle): S workgroups
// per row (gl_WorkGroupID.z = chunk), two dispatches. SPLIT=1 writes each chunk's (max, sum) to
// the partials buffer; SPLIT=2 merges the row's S partials exactly (M = max m_s,
// L = sum l_s exp(m_s - M)) and writes its chunk.
// Defines:
//   X_F16            x and y are float16 storage (else float)
//   BIAS_F16         bias is float16 storage (else float)
//   SUBGROUP_REDUCE  reductions with subgroup arithmetic (else a shared-memory tree)
// Bindings: 0 x (read), 1 y (write), 2 bias (read), 3 valid lengths (int, read), 4 partials
//   (float [rows, S, 2]: written by SPLIT=1, read by SPLIT=2); an absent bias, valid-length or
//   partials buffer is bound to x's range and never accessed.
// Push constants (uint unless noted): lead0, lead1, lead2 (leading dims, rank padded to 4 with
//   leading 1s; rows = lead0*lead1*lead2), n (row length), x_off, x_s0..x_s3 (element offset,
//   strides), y_off, y_s0..y_s3, b_off, b_s0..b_s3 (bias broadcast to x: stride 0 on broadcast
//   dims), v_off, v_s0, v_s1 (valid lengths [B] or [B, R]), r (R: rows per matrix, x's dim -2),
//   rows_per_batch (rows per index of x's dim 0), gx (workgroups along x: the workgroup
//   wg.y*gx + wg.x owns rows ROWS times that, and the ROWS - 1 after), scale (float), chunk
//   (columns per workgroup with SPLIT; n otherwise).
// Specialization constants: 0 WG (local_size_x, power of two), 1 HAS_BIAS, 2 HAS_VL,
//   3 VL_PER_ROW (valid lengths are [B, R]), 4 CAUSAL (row i sees column j iff j <= i + n - r),
//   5 VEC4: rows of x and y are contiguous and start at the same offset modulo 4 elements; the
//   whole 4-element groups inside each row then move as vec4 (x4/y4 alias bindings 0-1), the
//   up to 3 + 3 columns at its ends one by one. Per-lane gathers dominate on CPU devices, and
//   16-byte accesses help GPUs too.
//   6 BIAS_VEC4 (with VEC4): the bias rows are contiguous with x's phase too (bias4 aliases
//   binding 2); otherwise the vector path reads the bias one element at a time.
//   7 SPLIT: 0 one workgroup per row; 1 chunk partials; 2 merge and write (see above).
//   8 ROWS: consecutive rows per workgroup (short rows: the per-workgroup cost would dominate);
//   1 with SPLIT. 9 ONE_SUBGROUP: the workgroup is one subgroup (wg_reduce.glsl: reductions
//   without shared memory or barriers).
#if defined(X_F16) || defined(BIAS_F16)
#extension GL_EXT_shader_16bit_storage : require
#endif
#ifdef SUBGROUP_REDUCE
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
#extension GL_GOOGLE_include_directive : require

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const bool HAS_BIAS = false;
layout(constant_id = 2) const bool HAS_VL = false;
layout(constant_id = 3) const bool VL_PER_ROW = false;
layout(constant_id = 4) const bool CAUSAL = false;
layout(constant_id = 5) const bool VEC4 = false;
layout(constant_id = 6) const bool BIAS_VEC4 = false;
layout(constant_id = 7) const uint SPLIT = 0;
layout(constant_id = 8) const uint ROWS = 1;
layout(constant_id = 9) const bool ONE_SUBGROUP = false;

#ifdef X_F16
#define XTYPE float16_t
#define XVEC4 f16vec4
#else
#define XTYPE float
#define XVEC4 vec4
#endif
#ifdef BIAS_F16
#define BTYPE float16_t
#define BVEC4 f16vec4
#else
#define BTYPE float
#define BVEC4 vec4
#endif

layout(std430, binding = 0) readonly buffer X { XTYPE x[]; };
layout(std430, binding = 1) writeonly buffer Y { XTYPE y[]; };
layout(std430, binding = 2) readonly buffer Bias { BTYPE bias[]; };
layout(std430, binding = 3) readonly buffer VL { int vl[]; };
layout(std430, binding = 4) buffer Partials { vec2 partials[]; };
layout(std430, binding = 0) readonly buffer X4 { XVEC4 x4[]; };
layout(std430, binding = 1) writeonly buffer Y4 { XVEC4 y4[]; };
layout(std430, binding = 2) readonly buffer Bias4 { BVEC4 bias4[]; };
layout(push_constant) uniform Params {
  uint lead0, lead1, lead2, n;
  uint x_off, x_s0, x_s1, x_s2, x_s3;
  uint y_off, y_s0, y_s1, y_s2, y_s3;
  uint b_off, b_s0, b_s1, b_s2, b_s3;
  uint v_off, v_s0, v_s1;
  uint r, rows_per_batch, gx;
  float scale;
  uint chunk;
} p;

#include "wg_reduce.glsl"

// A finite "minus infinity": exp(LOWEST - s) is 0 without ever forming inf - inf.
const float LOWEST = -3.402823466e38;

uint row_offset(uint row, uint s0, uint s1, uint s2) {
  uint i2 = row % p.lead2, t = row / p.lead2;
  return (t / p.lead1) * s0 + (t % p.lead1) * s1 + i2 * s2;
}

uint xb, yb, bb; // element index of the row's column 0 in x, y, bias

float score(uint j) {
  float s = float(x[xb + j * p.x_s3]) * p.scale;
  if (HAS_BIAS) s += float(bias[bb + j * p.b_s3]);
  return s;
}

// Scores of columns c..c+3 (c = 4q - xb): the whole vector q of x.
vec4 score4(uint q, uint c) {
  vec4 s = vec4(x4[q]) * p.scale;
  if (HAS_BIAS) {
    if (BIAS_VEC4)
      s += vec4(bias4[q - xb / 4 + bb / 4]); // same phase: (bb - xb) is a multiple of 4
    else
      s += vec4(float(bias[bb + c * p.b_s3]), float(bias[bb + (c + 1) * p.b_s3]),
                float(bias[bb + (c + 2) * p.b_s3]), float(bias[bb + (c + 3) * p.b_s3]));
  }
  return s;
}

// Online max/sum: the sum is rescaled only when the max grows.
void online(inout float m, inout float l, float s) {
  if (s > m) {
    l = l * exp(m - s) + 1.0;
    m = s;
  } else {
    l += exp(s - m);
  }
}

// Whole vectors qa..qe-1 of x lie inside columns [c0, c1); columns [c0, h) and [t, c1) are the
// partial vectors at the ends (all of [c0, c1) without VEC4: h = c1).
struct span {
  uint qa, qe, h, t;
};

span split_span(uint c0, uint c1) {
  span r;
  r.qa = (xb + c0 + 3) / 4;
  r.qe = max((xb + c1) / 4, r.qa);
  r.h = VEC4 ? min(4 * r.qa - xb, c1) : c1;
  r.t = VEC4 ? max(4 * r.qe - xb, r.h) : c1;
  return r;
}

// Online max/sum of the allowed columns (< cols) in [c0, c1), per invocation.
void row_stats(uint c0, uint c1, uint cols, inout float m, inout float l) {
  uint lid = gl_LocalInvocationID.x;
  span r = split_span(c0, c1);
  for (uint j = c0 + lid; j < min(r.h, cols); j += WG) online(m, l, score(j));
  if (!VEC4) return;
  for (uint j = r.t + lid; j < min(c1, cols); j += WG) online(m, l, score(j));
  for (uint q = r.qa + lid; q < r.qe && 4 * q - xb < cols; q += WG) {
    uint c = 4 * q - xb;
    bvec4 masked = greaterThanEqual(uvec4(c) + uvec4(0, 1, 2, 3), uvec4(cols));
    vec4 s = mix(score4(q, c), vec4(LOWEST), masked);
    float mn = max(m, max(max(s.x, s.y), max(s.z, s.w)));
    vec4 e = mix(exp(s - mn), vec4(0.0), masked);
    l = l * exp(m - mn) + ((e.x + e.y) + (e.z + e.w));
    m = mn;
  }
}

// Writes exp(score - mx) * inv for the allowed columns of [c0, c1), 0 for the others.
void row_write(uint c0, uint c1, uint cols, float mx, float inv) {
  uint lid = gl_LocalInvocationID.x;
  span r = split_span(c0, c1);
  for (uint j = c0 + lid; j < r.h; j += WG)
    y[yb + j * p.y_s3] = XTYPE(j < cols ? exp(score(j) - mx) * inv : 0.0);
  if (!VEC4) return;
  for (uint j = r.t + lid; j < c1; j += WG)
    y[yb + j] = XTYPE(j < cols ? exp(score(j) - mx) * inv : 0.0);
  for (uint q = r.qa + lid; q < r.qe; q += WG) {
    uint c = 4 * q - xb;
    vec4 v = vec4(0.0);
    if (c < cols)
      v = mix(exp(score4(q, c) - mx) * inv, vec4(0.0),
              greaterThanEqual(uvec4(c) + uvec4(0, 1, 2, 3), uvec4(cols)));
    y4[q - xb / 4 + yb / 4] = XVEC4(v); // same phase: (yb - xb) is a multiple of 4
  }
}

void softmax_row(uint row) {
  xb = p.x_off + row_offset(row, p.x_s0, p.x_s1, p.x_s2);
  yb = p.y_off + row_offset(row, p.y_s0, p.y_s1, p.y_s2);
  bb = HAS_BIAS ? p.b_off + row_offset(row, p.b_s0, p.b_s1, p.b_s2) : 0;

  // Allowed columns are [0, cols): the valid length and the causal diagonal both cut a prefix.
  uint i = row % p.r;
  int lim = int(p.n);
  if (HAS_VL)
    lim = min(lim, vl[p.v_off + (row / p.rows_per_batch) * p.v_s0 + (VL_PER_ROW ? i * p.v_s1 : 0)]);
  if (CAUSAL) lim = min(lim, int(i) + int(p.n) - int(p.r) + 1);
  uint cols = uint(max(lim, 0));

  uint chunks = gl_NumWorkGroups.z, c0 = gl_WorkGroupID.z * p.chunk;
  uint c1 = min(c0 + p.chunk, p.n);
  float mx, sum;
  if (SPLIT == 2) {
    // Exact merge of the row's chunk partials (every invocation reads all S: S is small).
    mx = LOWEST;
    for (uint s = 0; s < chunks; s++) mx = max(mx, partials[row * chunks + s].x);
    sum = 0.0;
    for (uint s = 0; s < chunks; s++) {
      vec2 ps = partials[row * chunks + s];
      sum += ps.y * exp(ps.x - mx);
    }
  } else {
    float m = LOWEST, l = 0.0;
    row_stats(c0, c1, cols, m, l);
    mx = wg_max(m);
    sum = wg_sum(l * exp(m - mx));
    if (SPLIT == 1) {
      if (gl_LocalInvocationID.x == 0) partials[row * chunks + gl_WorkGroupID.z] = vec2(mx, sum);
      return;
    }
  }
  row_write(c0, c1, cols, mx, sum > 0.0 ? 1.0 / sum : 0.0);
}

void main() {
  uint first = (gl_WorkGroupID.y * p.gx + gl_WorkGroupID.x) * ROWS;
  for (uint k = 0; k < ROWS; k++) {
    if (first + k >= p.lead0 * p.lead1 * p.lead2) return; // whole workgroup: barriers uniform
    softmax_row(first + k);
  }
}
