// Sixteen weights of a ggml block at a time, for the quantised GEMV (gemm_gemv.glsl). Decode
// steps read every weight once, so the cost per weight is the whole kernel: here the scale (and
// min) of a run is decoded once for its 8 weights, an integer part is one bit-field extract and
// one conversion from words loaded 4 bytes at a time, and the offsets of the symmetric formats
// (q - 8, q - 16, q - 32) come for free: a field with its top bit flipped, read sign-extended, is
// the field minus half its range (one xor per word of 4 or 8 fields). quant_decode.glsl's
// q_dequant4 stays the reference-exact decoder (precise, ggml's products); these values are the
// same integers and scales with the products left to the kernel (d * sum(a * q) + m * sum(a)).
//
// Include after quant_decode.glsl (QWORD, QK, QB, QUANT_FMT, q_u8 / q_u16 / q_u32, q_f16).
// A block is QP_PARTS pieces; piece `part` of the block at byte b is two runs of 8 elements, at
// element offsets qp_elems(part) = (x, y) within the block, each run under one scale:
//   q_piece(b, part, x0, x1, y0, y1, sx, sy)
//     x0, x1: integer parts of elements x..x+3 and x+4..x+7; y0, y1: of y..y+7
//     sx, sy: (d, m) of the two runs, value = d * int + m (m is 0 unless QP_MIN)
// QP_ONE_SCALE: both runs are in one 32-element block (sx == sy); QP_MIN: m is not 0.
// Every word read lies inside the piece's block (no load past a buffer's last block).
#ifndef VKF_QUANT_PIECE_GLSL
#define VKF_QUANT_PIECE_GLSL

#define QP_PARTS (QK / 16u)
#if QUANT_FMT <= 4
#define QP_ONE_SCALE 1
#endif
#if QUANT_FMT == 2 || QUANT_FMT == 4 || QUANT_FMT == 5 || QUANT_FMT == 6
#define QP_MIN 1
#endif

// Words at an even byte offset `off` (a 2-aligned block may start mid-word): the low half of one
// word and the high half of the next, or the word itself; the last index is computed from the
// last byte so an aligned read never touches the word after it.
uint qp_funnel(uint lo, uint hi, uint sh) { return (lo >> sh) | ((hi << 16) << (16u - sh)); }
uvec2 qp_words2(uint off) {
#ifdef QB_WORDS
  uint i = off >> 2;
  return uvec2(QWORD(i), QWORD(i + 1u));
#else
  uint i = off >> 2, sh = (off & 2u) * 8u;
  uint w0 = QWORD(i), w1 = QWORD(i + 1u), w2 = QWORD((off + 6u) >> 2);
  return uvec2(qp_funnel(w0, w1, sh), qp_funnel(w1, w2, sh));
#endif
}

// Four 8-bit fields of w, each `bits` wide from bit `shift` of its byte: unsigned, or signed
// (sign-extended from its top bit).
vec4 qp_fields_u(uint w, int shift, int bits) {
  return vec4(int(bitfieldExtract(w, shift, bits)), int(bitfieldExtract(w, 8 + shift, bits)),
              int(bitfieldExtract(w, 16 + shift, bits)), int(bitfieldExtract(w, 24 + shift, bits)));
}
vec4 qp_fields_s(uint w, int shift, int bits) {
  int v = int(w);
  return vec4(bitfieldExtract(v, shift, bits), bitfieldExtract(v, 8 + shift, bits),
              bitfieldExtract(v, 16 + shift, bits), bitfieldExtract(v, 24 + shift, bits));
}
// Bits 0..3 of `b` to bit 4 of bytes 0..3: one multiply puts bit i at 8i + 4 (the four shifted
// copies of b do not overlap, so nothing carries), one mask keeps those.
uint qp_spread4(uint b) { return (b * 0x02040810u) & 0x10101010u; }

// (x, y) of piece `part`
uvec2 qp_elems(uint part) {
#if QUANT_FMT == 0
  return uvec2(16u * part, 16u * part + 8u);  // 16 consecutive int8s
#elif QUANT_FMT <= 4
  return uvec2(8u * part, 8u * part + 16u);   // 8 bytes: low nibbles x.., high nibbles x + 16..
#elif QUANT_FMT <= 6
  // 8 bytes of chunk c: low nibbles are sub-block 2c, high nibbles 2c + 1
  uint x = 64u * (part >> 2) + 8u * (part & 3u);
  return uvec2(x, x + 32u);
#else
  // 8 bytes of ql in half n, quarter g (0 or 1): low nibbles quarter g, high nibbles g + 2
  uint x = 128u * (part >> 3) + 32u * ((part >> 2) & 1u) + 8u * (part & 3u);
  return uvec2(x, x + 64u);
#endif
}

#if QUANT_FMT == 5 || QUANT_FMT == 6
// 6-bit scales and mins of sub-blocks 2c and 2c + 1 (bytes 0, 1 of the results) from the 12
// packed bytes at s: ggml's get_scale_min_k4 for both at once. c < 2: the low 6 bits of bytes
// 2c.. (scales) and 2c + 4.. (mins); c >= 2: a nibble of bytes 2c + 4.. and the top 2 bits of
// bytes 2c - 4.. (scales) and 2c.. (mins).
void qp_scale_min_k4(uint s, uint c, out uint sc, out uint mn) {
  uint h = (c & 1u) * 16u;
  uint s0 = q_u32(s) >> h, s1 = q_u32(s + 4u) >> h, s2 = q_u32(s + 8u) >> h;
  uint lo_sc = s0 & 0x3F3Fu, lo_mn = s1 & 0x3F3Fu;
  uint hi_sc = (s2 & 0x0F0Fu) | ((s0 >> 2) & 0x3030u);
  uint hi_mn = ((s2 >> 4) & 0x0F0Fu) | ((s1 >> 2) & 0x3030u);
  sc = c < 2u ? lo_sc : hi_sc;
  mn = c < 2u ? lo_mn : hi_mn;
}
#endif

void q_piece(uint b, uint part, out vec4 x0, out vec4 x1, out vec4 y0, out vec4 y1, out vec2 sx,
             out vec2 sy) {
#if QUANT_FMT == 0
  // block_q8_0 {half d; i8 qs[32]}
  uvec2 w = qp_words2(b + 2u + 16u * part), v = qp_words2(b + 10u + 16u * part);
  x0 = qp_fields_s(w.x, 0, 8), x1 = qp_fields_s(w.y, 0, 8);
  y0 = qp_fields_s(v.x, 0, 8), y1 = qp_fields_s(v.y, 0, 8);
  sx = sy = vec2(q_f16(b), 0.0);
#elif QUANT_FMT == 1 || QUANT_FMT == 2
  // block_q4_0 {half d; u8 qs[16]}: q - 8 is the nibble with its top bit flipped, signed;
  // block_q4_1 {half d, m; u8 qs[16]}: the nibble
#if QUANT_FMT == 1
  uvec2 w = qp_words2(b + 2u + 8u * part) ^ 0x88888888u;
  x0 = qp_fields_s(w.x, 0, 4), x1 = qp_fields_s(w.y, 0, 4);
  y0 = qp_fields_s(w.x, 4, 4), y1 = qp_fields_s(w.y, 4, 4);
  sx = sy = vec2(q_f16(b), 0.0);
#else
  uvec2 w = qp_words2(b + 4u + 8u * part);
  x0 = qp_fields_u(w.x, 0, 4), x1 = qp_fields_u(w.y, 0, 4);
  y0 = qp_fields_u(w.x, 4, 4), y1 = qp_fields_u(w.y, 4, 4);
  sx = sy = unpackHalf2x16(q_u32(b));
#endif
#elif QUANT_FMT == 3 || QUANT_FMT == 4
  // block_q5_0 {half d; u8 qh[4]; u8 qs[16]} (q - 16: the 5-bit field's top bit flipped, signed),
  // block_q5_1 {half d, m; u8 qh[4]; u8 qs[16]}: bit e of qh is element e's fifth bit, moved to
  // bit 4 of the byte holding its nibble
#if QUANT_FMT == 3
  uint qh = q_u32(b + 2u);
  uvec2 w = qp_words2(b + 6u + 8u * part);
#else
  uint qh = q_u32(b + 4u);
  uvec2 w = qp_words2(b + 8u + 8u * part);
#endif
  uint x = 8u * part;
  uvec4 q = uvec4(w.x & 0x0F0F0F0Fu, w.y & 0x0F0F0F0Fu, (w.x >> 4) & 0x0F0F0F0Fu,
                  (w.y >> 4) & 0x0F0F0F0Fu) |
            uvec4(qp_spread4(bitfieldExtract(qh, int(x), 4)),
                  qp_spread4(bitfieldExtract(qh, int(x + 4u), 4)),
                  qp_spread4(bitfieldExtract(qh, int(x + 16u), 4)),
                  qp_spread4(bitfieldExtract(qh, int(x + 20u), 4)));
#if QUANT_FMT == 3
  q ^= 0x10101010u;
  x0 = qp_fields_s(q.x, 0, 5), x1 = qp_fields_s(q.y, 0, 5);
  y0 = qp_fields_s(q.z, 0, 5), y1 = qp_fields_s(q.w, 0, 5);
  sx = sy = vec2(q_f16(b), 0.0);
#else
  x0 = qp_fields_u(q.x, 0, 5), x1 = qp_fields_u(q.y, 0, 5);
  y0 = qp_fields_u(q.z, 0, 5), y1 = qp_fields_u(q.w, 0, 5);
  sx = sy = unpackHalf2x16(q_u32(b));
#endif
#elif QUANT_FMT == 5 || QUANT_FMT == 6
  // block_q4_K {half d, dmin; u8 scales[12]; u8 qs[128]}, block_q5_K {half d, dmin; u8
  // scales[12]; u8 qh[32]; u8 qs[128]}: run x is sub-block 2c, y is 2c + 1, each d * sc * q -
  // dmin * m; Q5_K's fifth bits are bits 2c and 2c + 1 of qh[l]
  uint c = part >> 2, l = 8u * (part & 3u);
  uint sc, mn;
  qp_scale_min_k4(b + 4u, c, sc, mn);
  vec2 dm = unpackHalf2x16(q_u32(b));
  sx = vec2(dm.x * float(int(sc & 0xFFu)), -(dm.y * float(int(mn & 0xFFu))));
  sy = vec2(dm.x * float(int(sc >> 8 & 0xFFu)), -(dm.y * float(int(mn >> 8 & 0xFFu))));
#if QUANT_FMT == 5
  uvec2 w = qp_words2(b + 16u + 32u * c + l);
  x0 = qp_fields_u(w.x, 0, 4), x1 = qp_fields_u(w.y, 0, 4);
  y0 = qp_fields_u(w.x, 4, 4), y1 = qp_fields_u(w.y, 4, 4);
#else
  uvec2 w = qp_words2(b + 48u + 32u * c + l), h = qp_words2(b + 16u + l) >> (2u * c);
  uvec2 lo = (w & 0x0F0F0F0Fu) | ((h << 4) & 0x10101010u);
  uvec2 hi = ((w >> 4) & 0x0F0F0F0Fu) | ((h << 3) & 0x10101010u);
  x0 = qp_fields_u(lo.x, 0, 5), x1 = qp_fields_u(lo.y, 0, 5);
  y0 = qp_fields_u(hi.x, 0, 5), y1 = qp_fields_u(hi.y, 0, 5);
#endif
#else
  // block_q6_K {u8 ql[128]; u8 qh[64]; i8 scales[16]; half d}: run x is quarter g of half n
  // (low nibbles of ql[64n + 32g + l], bits 2g, 2g + 1 of qh[32n + l]), y is quarter g + 2 (high
  // nibbles, bits 2g + 4, 2g + 5), scales[8n + l / 16 + 2g] and 4 on; q - 32 is the 6-bit field
  // with its top bit flipped, signed
  uint n = part >> 3, g = (part >> 2) & 1u, l = 8u * (part & 3u);
  uvec2 w = qp_words2(b + 64u * n + 32u * g + l), h = qp_words2(b + 128u + 32u * n + l) >> (2u * g);
  uvec2 lo = ((w & 0x0F0F0F0Fu) | ((h << 4) & 0x30303030u)) ^ 0x20202020u;
  uvec2 hi = (((w >> 4) & 0x0F0F0F0Fu) | (h & 0x30303030u)) ^ 0x20202020u;
  x0 = qp_fields_s(lo.x, 0, 6), x1 = qp_fields_s(lo.y, 0, 6);
  y0 = qp_fields_s(hi.x, 0, 6), y1 = qp_fields_s(hi.y, 0, 6);
  uint s = b + 192u + 8u * n + l / 16u + 2u * g;
  float d = q_f16(b + 208u);
  sx = vec2(d * float(bitfieldExtract(int(q_u8(s)), 0, 8)), 0.0);
  sy = vec2(d * float(bitfieldExtract(int(q_u8(s + 4u)), 0, 8)), 0.0);
#endif
}

#endif
