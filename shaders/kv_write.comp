#version 450
// In-place KV-cache write (KV_WRITE, graph/lower/lower_kv_write.c): one invocation per element of
// rows [B, H, T, D] (of this dispatch's slice of batches and heads):
//   pos = start[start_off + b0 + b] + t;
//   if 0 <= pos < capacity: cache[cache_off + b*c_st0 + h*c_st1 + pos*c_st2 + d*c_st3] =
//                           convert(rows[rows_off + b*r_st0 + h*r_st1 + t*r_st2 + d*r_st3]).
// Rows landing outside [0, capacity) are skipped, so no access leaves the cache.
// Defines: CACHE_F16: the cache is f16 (uint16_t bits; values rounded to nearest even, as CAST
//          does), else f32. ROWS_F16: the rows are f16, else f32.
// Bindings: 0 rows (read), 1 start (i32, read), 2 cache (write).
// Push constants: count (elements of rows in this dispatch), then (size, magic, shift) for dims
//                 1..3 of rows [b, h, t, d] (dim 0 implied by count; magic/shift from
//                 vkf_fastdiv_make), rows_off, r_st[4], cache_off, c_st[4] (element offsets and
//                 strides), start_off, b0 (first batch of this dispatch), capacity (C), ragged_b:
//                 0, or (start [2, B], ragged rows; one dispatch, b0 0) B: row b goes to cache
//                 batch start[start_off + B + b] instead of b.
// Specialization constants: 0 workgroup size (default 256).
#extension GL_GOOGLE_include_directive : require
#if defined(CACHE_F16) || defined(ROWS_F16)
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "common.glsl"

layout(local_size_x_id = 0) in;

#if defined(ROWS_F16)
#define ROWS_T uint16_t
#else
#define ROWS_T float
#endif
#if defined(CACHE_F16)
#define CACHE_T uint16_t
#else
#define CACHE_T float
#endif

layout(std430, binding = 0) readonly buffer Rows { ROWS_T rows[]; };
layout(std430, binding = 1) readonly buffer Start { int start[]; };
layout(std430, binding = 2) writeonly buffer Cache { CACHE_T cache[]; };
layout(push_constant) uniform Params {
  uint count;
  uint size1, magic1, shift1, size2, magic2, shift2, size3, magic3, shift3;
  uint rows_off, r_st0, r_st1, r_st2, r_st3;
  uint cache_off, c_st0, c_st1, c_st2, c_st3;
  uint start_off, b0, capacity, ragged_b;
} p;

void main() {
  for (uint i = gl_GlobalInvocationID.x; i < p.count; i += gl_NumWorkGroups.x * gl_WorkGroupSize.x) {
    uint rem = i;
    uint q = vkf_fastdiv(rem, p.magic3, p.shift3); uint d = rem - q * p.size3; rem = q;
    q = vkf_fastdiv(rem, p.magic2, p.shift2); uint t = rem - q * p.size2; rem = q;
    q = vkf_fastdiv(rem, p.magic1, p.shift1); uint h = rem - q * p.size1; uint b = q;
    int pos = start[p.start_off + p.b0 + b] + int(t);
    if (pos < 0 || pos >= int(p.capacity)) continue;
    uint src = p.rows_off + b * p.r_st0 + h * p.r_st1 + t * p.r_st2 + d * p.r_st3;
#if defined(ROWS_F16)
    float v = vkf_half_to_float(uint(rows[src]));
#else
    float v = rows[src];
#endif
    uint cb = p.ragged_b != 0u ? uint(start[p.start_off + p.ragged_b + b]) : b;
    uint dst = p.cache_off + cb * p.c_st0 + h * p.c_st1 + uint(pos) * p.c_st2 + d * p.c_st3;
#if defined(CACHE_F16)
    cache[dst] = uint16_t(vkf_float_to_half(v));
#else
    cache[dst] = v;
#endif
  }
}
