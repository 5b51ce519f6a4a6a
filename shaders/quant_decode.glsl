// ggml's quantised blocks read in place: the weight buffer is bound as 32-bit words exactly as the
// file holds it (blocks of 18, 22, 34 or 210 bytes straddle words; every block and every field
// read here starts at an even byte), and each value is decoded as graph/base/quant.c's reference
// (ggml's dequantize_row_*) does: the same float products in the same order, `precise` so no
// fused multiply-add changes a last bit.
//
// Before including, define QWORD(i) as the i-th 32-bit word of the weights and QUANT_FMT as the
// format (vkf_quant_format: 0 Q8_0, 1 Q4_0, 2 Q4_1, 3 Q5_0, 4 Q5_1, 5 Q4_K, 6 Q5_K, 7 Q6_K).
// Provides QK (elements per block), QB (bytes per block) and, for the block starting at byte `b`:
//   q_dequant4(b, j)  elements j..j+3 (j % 4 == 0; the four share one scale in every format)
//   q_dequant1(b, j)  element j
// Bindings, push constants, specialization constants: none (functions only).
#ifndef VKF_QUANT_DECODE_GLSL
#define VKF_QUANT_DECODE_GLSL

#if QUANT_FMT == 0
#define QK 32u
#define QB 34u
#elif QUANT_FMT == 1
#define QK 32u
#define QB 18u
#elif QUANT_FMT == 2
#define QK 32u
#define QB 20u
#define QB_WORDS 1
#elif QUANT_FMT == 3
#define QK 32u
#define QB 22u
#elif QUANT_FMT == 4
#define QK 32u
#define QB 24u
#define QB_WORDS 1
#elif QUANT_FMT == 5
#define QK 256u
#define QB 144u
#define QB_WORDS 1
#elif QUANT_FMT == 6
#define QK 256u
#define QB 176u
#define QB_WORDS 1
#elif QUANT_FMT == 7
#define QK 256u
#define QB 210u
#define Q_GROUP16 1
#else
#error "QUANT_FMT must be 0..7"
#endif

uint q_u8(uint off) { return (QWORD(off >> 2) >> ((off & 3u) * 8u)) & 0xFFu; }
// 2 and 4 bytes at an even offset
uint q_u16(uint off) { return (QWORD(off >> 2) >> ((off & 2u) * 8u)) & 0xFFFFu; }
#ifdef QB_WORDS
// blocks of a multiple of 4 bytes (Q4_1, Q5_1, Q4_K, Q5_K): every row, block and field read is
// word-aligned, so one load
uint q_u32(uint off) { return QWORD(off >> 2); }
#else
// otherwise a funnel of two words, without a branch (off's alignment differs from lane to lane)
uint q_u32(uint off) {
  uint sh = (off & 2u) * 8u;
  return (QWORD(off >> 2) >> sh) | ((QWORD((off >> 2) + 1u) << 16) << (16u - sh));
}
#endif
float q_f16(uint off) { return unpackHalf2x16(q_u16(off)).x; }
// the four bytes of w, unsigned, and four nibbles (low ones, or high ones with shift 4)
uvec4 q_bytes(uint w) { return uvec4(w & 0xFFu, (w >> 8) & 0xFFu, (w >> 16) & 0xFFu, w >> 24); }
uvec4 q_nibbles(uint w, uint shift) { return (uvec4(w, w >> 8, w >> 16, w >> 24) >> shift) & 0xFu; }
// bits j..j+3 of h, each as 0 or 1
uvec4 q_bits4(uint h, uint j) { return (uvec4(h) >> uvec4(j, j + 1u, j + 2u, j + 3u)) & 1u; }

#if QUANT_FMT >= 5 && QUANT_FMT <= 6
// The 6-bit scale (x) and min (y) of sub-block `is` from the 12 packed bytes at `s`.
uvec2 q_scale_min_k4(uint s, uint is) {
  if (is < 4u) return uvec2(q_u8(s + is) & 63u, q_u8(s + is + 4u) & 63u);
  return uvec2((q_u8(s + is + 4u) & 0xFu) | ((q_u8(s + is - 4u) >> 6) << 4),
               (q_u8(s + is + 4u) >> 4) | ((q_u8(s + is) >> 6) << 4));
}
#endif

// (Integers convert to float through int: an AVX2 CPU device has no unsigned conversion, and
// lavapipe's would be ~5 instructions a value.)
// Every format is value = d_eff * int + m_eff, with the integer part exact in a float and one
// (d_eff, m_eff) per group of 16 or 32 elements, computed with ggml's float products:
//   q_ints4(b, j)  the integer parts of elements j..j+3 (j % 4 == 0)
//   q_scale(b, j)  (d_eff, m_eff) of element j's group; groups are 32 elements (16 in Q6_K,
//                  which defines Q_GROUP16) and aligned, so j and j + 16 name both groups of a
//                  32-element chunk
// The kernels of quantised matmuls sum a . int per group and apply the scale once.
vec4 q_ints4(uint b, uint j) {
#if QUANT_FMT == 0
  // block_q8_0 {half d; i8 qs[32]}
  int w = int(q_u32(b + 2u + j));
  return vec4(bitfieldExtract(w, 0, 8), bitfieldExtract(w, 8, 8), bitfieldExtract(w, 16, 8),
              bitfieldExtract(w, 24, 8));
#elif QUANT_FMT == 1
  // block_q4_0 {half d; u8 qs[16]}: low nibbles are elements 0..15, high nibbles 16..31
  return vec4(ivec4(q_nibbles(q_u32(b + 2u + (j & 15u)), j >= 16u ? 4u : 0u)) - 8);
#elif QUANT_FMT == 2
  // block_q4_1 {half d, m; u8 qs[16]}
  return vec4(ivec4(q_nibbles(q_u32(b + 4u + (j & 15u)), j >= 16u ? 4u : 0u)));
#elif QUANT_FMT == 3
  // block_q5_0 {half d; u8 qh[4]; u8 qs[16]}: bit e of qh is element e's fifth bit
  uvec4 q = q_nibbles(q_u32(b + 6u + (j & 15u)), j >= 16u ? 4u : 0u) | (q_bits4(q_u32(b + 2u), j) << 4);
  return vec4(ivec4(q) - 16);
#elif QUANT_FMT == 4
  // block_q5_1 {half d, m; u8 qh[4]; u8 qs[16]}
  return vec4(ivec4(q_nibbles(q_u32(b + 8u + (j & 15u)), j >= 16u ? 4u : 0u) |
                    (q_bits4(q_u32(b + 4u), j) << 4)));
#elif QUANT_FMT == 5
  // block_q4_K {half d, dmin; u8 scales[12]; u8 qs[128]}: chunk c of 64 elements is sub-blocks
  // 2c (low nibbles of qs[32c .. 32c + 31]) and 2c + 1 (high nibbles)
  uint c = j >> 6, hi = (j >> 5) & 1u;
  return vec4(ivec4(q_nibbles(q_u32(b + 16u + 32u * c + (j & 31u)), 4u * hi)));
#elif QUANT_FMT == 6
  // block_q5_K {half d, dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]}: as Q4_K, with bit 2c + hi
  // of qh[l] the fifth bit
  uint c = j >> 6, hi = (j >> 5) & 1u, l = j & 31u;
  return vec4(ivec4(q_nibbles(q_u32(b + 48u + 32u * c + l), 4u * hi) +
                    (((q_bytes(q_u32(b + 16u + l)) >> (2u * c + hi)) & 1u) << 4)));
#else
  // block_q6_K {u8 ql[128]; u8 qh[64]; i8 scales[16]; half d}: half n of 128 elements, quarter g
  // of 32: the low (g 0, 1) or high (g 2, 3) nibbles of ql[64n + 32(g & 1) + l] and bits 2g,
  // 2g + 1 of qh[32n + l], minus 32
  uint n = j >> 7, g = (j >> 5) & 3u, l = j & 31u;
  uvec4 ql = q_nibbles(q_u32(b + 64u * n + 32u * (g & 1u) + l), 4u * (g >> 1));
  uvec4 qh = (q_bytes(q_u32(b + 128u + 32u * n + l)) >> (2u * g)) & 3u;
  return vec4(ivec4(ql | (qh << 4)) - 32);
#endif
}

#if QUANT_FMT >= 1 && QUANT_FMT <= 4
// The legacy 4- and 5-bit blocks keep elements j and j + 16 in one byte (low and high nibble):
// q_ints4x2 decodes both quads from one read of the word, their fifth bits from `qh`, the block's
// q_high_bits (read once a block). A texel fetch costs far more than the bit work on CPU devices.
#define Q_PAIRED16 1
#if QUANT_FMT == 1
#define Q_QS 2u
#define Q_OFFSET 8
#elif QUANT_FMT == 2
#define Q_QS 4u
#define Q_OFFSET 0
#elif QUANT_FMT == 3
#define Q_QS 6u
#define Q_OFFSET 16
#else
#define Q_QS 8u
#define Q_OFFSET 0
#endif
uint q_high_bits(uint b) {
#if QUANT_FMT == 3
  return q_u32(b + 2u);
#elif QUANT_FMT == 4
  return q_u32(b + 4u);
#else
  return 0u;
#endif
}
// elements j..j+3 (lo) and j+16..j+19 (hi) of a block whose qs word j / 4 is w, j < 16
void q_ints4x2_w(uint w, uint j, uint qh, out vec4 lo, out vec4 hi) {
  uvec4 l = q_nibbles(w, 0u), h = q_nibbles(w, 4u);
#if QUANT_FMT >= 3
  l |= q_bits4(qh, j) << 4;
  h |= q_bits4(qh, j + 16u) << 4;
#endif
  lo = vec4(ivec4(l) - Q_OFFSET);
  hi = vec4(ivec4(h) - Q_OFFSET);
}
// the same of the block at b: the same values as q_ints4
void q_ints4x2(uint b, uint j, uint qh, out vec4 lo, out vec4 hi) {
  q_ints4x2_w(q_u32(b + Q_QS + j), j, qh, lo, hi);
}
#endif

vec2 q_scale(uint b, uint j) {
#if QUANT_FMT == 0 || QUANT_FMT == 1 || QUANT_FMT == 3
  return vec2(q_f16(b), 0.0);
#elif QUANT_FMT == 2 || QUANT_FMT == 4
  return unpackHalf2x16(q_u32(b)); /* d and m: one word */
#elif QUANT_FMT == 5 || QUANT_FMT == 6
  // the 6-bit scale and min of sub-block 2c + hi: d1 = d * sc, and -m1 = -(dmin * m)
  uvec2 sm = q_scale_min_k4(b + 4u, 2u * (j >> 6) + ((j >> 5) & 1u));
  vec2 dm = unpackHalf2x16(q_u32(b)); /* d and dmin: one word */
  precise float d1 = dm.x * float(int(sm.x)), m1 = dm.y * float(int(sm.y));
  return vec2(d1, -m1);
#else
  // d * scales[8n + l / 16 + 2g]
  uint n = j >> 7, g = (j >> 5) & 3u, l = j & 31u;
  float sc = float(bitfieldExtract(int(q_u8(b + 192u + 8u * n + l / 16u + 2u * g)), 0, 8));
  precise float d = q_f16(b + 208u) * sc;
  return vec2(d, 0.0);
#endif
}

// Values exactly as ggml's dequantize_row_*: each is its one float product (q - 8) * d,
// x * d + m, d1 * q - m1 or (d * sc) * q, and adding a zero m_eff changes no value.
vec4 q_dequant4(uint b, uint j) {
  vec2 s = q_scale(b, j);
  precise vec4 v = s.x * q_ints4(b, j) + s.y;
  return v;
}

float q_dequant1(uint b, uint j) { return q_dequant4(b, j & ~3u)[j & 3u]; }

#endif
