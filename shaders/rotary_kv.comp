#version 450
// A decode step's rotary and KV-cache writes in one pass (graph/lower/lower_rotary_kv.c): the
// nodes q_rot = rotary(q), k_rot = rotary(k), kv_write(k_cache, k_rot), kv_write(v_cache, v),
// where k_rot is read by nothing else, so it is never stored: it goes straight to the cache.
// Rotary as shaders/rotary.comp computes it (y = x * cos + rotate_half(x) * sin, products added
// unfused in fp32); the cache writes as shaders/kv_write.comp (row t of batch b at position
// start[b] + t, skipped outside [0, capacity); an f16 cache rounds to nearest even).
// A workgroup per row [b, h, t] of the stacked heads h < Hq (q), < Hq + Hkv (k), < Hq + 2 Hkv
// (v, copied) at a time (grid stride over the rows), an invocation per pair (j, j + D/2) of it.
// Every tensor is contiguous along D (the lowering checks); cos and sin share their strides, as
// do k and v, and the two caches.
// Defines: CACHE_F16: the caches are f16 (uint16_t bits).
// Bindings: 0 q, k and v (read; one range), 1 cos (read), 2 sin (read), 3 start (i32, read),
//           4 q_rot (write), 5 k cache (write), 6 v cache (write).
// Push constants (elements): rows (B * (Hq + 2 Hkv) * T), t_len, half (D / 2), hq, hkv,
//   cs_off, ss_off, cs_b, cs_t (cos / sin: offsets and strides along b and t),
//   q_off, q_b, q_h, q_t, y_off, y_b, y_h, y_t, k_off, v_off, kv_b, kv_h, kv_t,
//   kc_off, vc_off, c_b, c_h, c_pos (caches), start_off, capacity, ragged_b: 0, or (start
//   [2, R], ragged rows) R: row r's cache batch is start[start_off + R + r] instead of r;
//   rows_t: the cache writes' row r is t (their views swap b and t: R token rows of one
//   sequence [1, H, R, D], each written as its own row [R, H, 1, D]), else b.
// Specialization constants: 0 workgroup size (the lowering sizes it to D/2).
#extension GL_GOOGLE_include_directive : require
#ifdef CACHE_F16
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "common.glsl"

layout(local_size_x_id = 0) in;

#ifdef CACHE_F16
#define CACHE_T uint16_t
#define STORE_CACHE(buf, i, v) buf[i] = uint16_t(vkf_float_to_half(v))
#else
#define CACHE_T float
#define STORE_CACHE(buf, i, v) buf[i] = (v)
#endif

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer C { float c[]; };
layout(std430, binding = 2) readonly buffer S { float s[]; };
layout(std430, binding = 3) readonly buffer Start { int start[]; };
layout(std430, binding = 4) writeonly buffer Y { float y[]; };
layout(std430, binding = 5) writeonly buffer KC { CACHE_T kc[]; };
layout(std430, binding = 6) writeonly buffer VC { CACHE_T vc[]; };
layout(push_constant) uniform Params {
  uint rows, t_len, half_d, hq, hkv;
  uint cs_off, ss_off, cs_b, cs_t;
  uint q_off, q_b, q_h, q_t, y_off, y_b, y_h, y_t;
  uint k_off, v_off, kv_b, kv_h, kv_t;
  uint kc_off, vc_off, c_b, c_h, c_pos;
  uint start_off, capacity, ragged_b, rows_t;
} p;

void main() {
  // A workgroup per row [b, h, t] at a time, its invocations over the row's pairs: the row's
  // indices, its kind (q, k or v) and its cache position are the same for every invocation, so
  // their divisions are done once a row (CPU devices such as lavapipe scalarise a vector divide
  // per lane) and no branch diverges within a workgroup.
  uint heads = p.hq + 2u * p.hkv;
  for (uint r = gl_WorkGroupID.x; r < p.rows; r += gl_NumWorkGroups.x) {
    uint t = r % p.t_len, h = (r / p.t_len) % heads, b = r / (p.t_len * heads);
    uint wr = p.rows_t != 0u ? t : b, wt = p.rows_t != 0u ? b : t; // the cache writes' row, token
    if (h >= p.hq + p.hkv) { // v: copied into its cache
      uint src = p.v_off + b * p.kv_b + (h - p.hq - p.hkv) * p.kv_h + t * p.kv_t;
      int pos = start[p.start_off + wr] + int(wt);
      if (pos < 0 || pos >= int(p.capacity)) continue;
      uint cb = p.ragged_b != 0u ? uint(start[p.start_off + p.ragged_b + wr]) : wr;
      uint dst = p.vc_off + cb * p.c_b + (h - p.hq - p.hkv) * p.c_h + uint(pos) * p.c_pos;
      for (uint lo = gl_LocalInvocationID.x; lo < p.half_d; lo += gl_WorkGroupSize.x) {
        STORE_CACHE(vc, dst + lo, x[src + lo]);
        STORE_CACHE(vc, dst + lo + p.half_d, x[src + lo + p.half_d]);
      }
      continue;
    }
    bool is_q = h < p.hq;
    uint src = is_q ? p.q_off + b * p.q_b + h * p.q_h + t * p.q_t
                    : p.k_off + b * p.kv_b + (h - p.hq) * p.kv_h + t * p.kv_t;
    uint cb = p.cs_off + b * p.cs_b + t * p.cs_t, sb = p.ss_off + b * p.cs_b + t * p.cs_t;
    uint dst;
    if (is_q) {
      dst = p.y_off + b * p.y_b + h * p.y_h + t * p.y_t;
    } else {
      int pos = start[p.start_off + wr] + int(wt);
      if (pos < 0 || pos >= int(p.capacity)) continue;
      uint kb = p.ragged_b != 0u ? uint(start[p.start_off + p.ragged_b + wr]) : wr;
      dst = p.kc_off + kb * p.c_b + (h - p.hq) * p.c_h + uint(pos) * p.c_pos;
    }
    for (uint lo = gl_LocalInvocationID.x; lo < p.half_d; lo += gl_WorkGroupSize.x) {
      uint hi = lo + p.half_d;
      float x_lo = x[src + lo], x_hi = x[src + hi];
      float a_lo = x_lo * c[cb + lo], b_lo = -x_hi * s[sb + lo];
      float a_hi = x_hi * c[cb + hi], b_hi = x_lo * s[sb + hi];
      float y_lo = a_lo + b_lo, y_hi = a_hi + b_hi;
      if (is_q) {
        y[dst + lo] = y_lo;
        y[dst + hi] = y_hi;
      } else {
        STORE_CACHE(kc, dst + lo, y_lo);
        STORE_CACHE(kc, dst + hi, y_hi);
      }
    }
  }
}
