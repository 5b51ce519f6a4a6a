#version 450
// Strided copy with optional dtype conversion over a rank <= 4 index space:
//   dst[dst_off + sum_d i_d * dst_st[d]] = convert(src[src_off + sum_d i_d * src_st[d]]).
// COPY materialises views (permute/slice/reshape of a view), CAST converts dtypes, CONCAT is one
// dispatch per input into its slice of the output (graph/lower/lower_copy.c).
// Defines: RAW=32 or RAW=16: same dtype on both sides, copy the bits (32-bit words or 16-bit
//          halves), no conversion. Otherwise the source is f32 unless SRC_F16 or SRC_I32, and the
//          destination f32 unless DST_F16 or DST_I32 (f16 stored as uint16_t bits, rounded to
//          nearest even; float -> i32 truncates toward zero).
// Bindings: 0 src (read), 1 dst (write).
// Push constants: count, then (size, magic, shift) for dims 1..3 of the index space (dim 0 is
//                 implied by count; magic/shift from vkf_fastdiv_make, for vkf_fastdiv),
//                 src_off, src_st[4], dst_off, dst_st[4] (element offsets and strides).
// Specialization constants: 0 workgroup size (default 256), 1 rank of the index space (1..4).
#extension GL_GOOGLE_include_directive : require
#if defined(RAW) && RAW == 16 || !defined(RAW) && (defined(SRC_F16) || defined(DST_F16))
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint RANK = 4;

#if defined(RAW) && RAW == 16
#define SRC_T uint16_t
#define DST_T uint16_t
#elif defined(RAW)
#define SRC_T uint
#define DST_T uint
#else
#if defined(SRC_F16)
#define SRC_T uint16_t
#elif defined(SRC_I32)
#define SRC_T int
#else
#define SRC_T float
#endif
#if defined(DST_F16)
#define DST_T uint16_t
#elif defined(DST_I32)
#define DST_T int
#else
#define DST_T float
#endif
#endif

layout(std430, binding = 0) readonly buffer Src { SRC_T src[]; };
layout(std430, binding = 1) writeonly buffer Dst { DST_T dst[]; };
layout(push_constant) uniform Params {
  uint count;
  uint size1, magic1, shift1, size2, magic2, shift2, size3, magic3, shift3;
  uint src_off, src_st0, src_st1, src_st2, src_st3;
  uint dst_off, dst_st0, dst_st1, dst_st2, dst_st3;
} p;

#if !defined(RAW)
float load_value(uint i) {
#if defined(SRC_F16)
  return vkf_half_to_float(uint(src[i]));
#else
  return float(src[i]);
#endif
}

DST_T convert_value(float v) {
#if defined(DST_F16)
  return uint16_t(vkf_float_to_half(v));
#elif defined(DST_I32)
  return int(v);
#else
  return v;
#endif
}
#endif

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.count; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    // Row-major coordinates; RANK is a specialization constant, so unused dims fold away.
    uint rem = i, i1 = 0, i2 = 0, i3 = 0;
    // Multiply-high division (vkf_fastdiv): CPU devices scalarise a hardware divide per lane.
    if (RANK > 3) { uint q = vkf_fastdiv(rem, p.magic3, p.shift3); i3 = rem - q * p.size3; rem = q; }
    if (RANK > 2) { uint q = vkf_fastdiv(rem, p.magic2, p.shift2); i2 = rem - q * p.size2; rem = q; }
    if (RANK > 1) { uint q = vkf_fastdiv(rem, p.magic1, p.shift1); i1 = rem - q * p.size1; rem = q; }
    uint s = p.src_off + rem * p.src_st0 + i1 * p.src_st1 + i2 * p.src_st2 + i3 * p.src_st3;
    uint d = p.dst_off + rem * p.dst_st0 + i1 * p.dst_st1 + i2 * p.dst_st2 + i3 * p.dst_st3;
#if defined(RAW)
    dst[d] = src[s];
#elif defined(SRC_I32) && defined(DST_I32)
    dst[d] = src[s];
#else
    dst[d] = convert_value(load_value(s));
#endif
  }
}
