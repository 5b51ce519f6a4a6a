// GEMM_QCPU body for gemm.comp: quantised B (B_QUANT, ggml blocks as [N, K]) on CPU-class devices
// (lavapipe), where a subgroup is one 8-wide SIMD vector. Each lane owns QCPU_COLS columns of B
// and the workgroup QCPU_ROWS rows of A; the loop walks K in chunks of 32 (one legacy block, or a
// 32-element slice of a K-quant super-block):
//  - A: lane L loads A[row, k0 + 4L .. +3] of each row (one vec4; a gather under A_TEXEL) and the
//    chunk's 32 values reach every lane by subgroupShuffle with a constant lane (one vpermd each),
//    shared by all the lane's columns;
//  - B: each column's integer parts (q_ints4) and the two group scales of the chunk (q_scale:
//    value = d * int + m, groups of 16 or 32 elements) are read from the words of its blocks,
//    through an R32UI texel view under B_TEXEL (a texel fetch is a vector gather with no control
//    flow, so the repeated reads of a block's scale and words fold into one);
//  - per group, sum(a * int) and the column-independent sum(a) give d * sum(a * int) +
//    m * sum(a): ggml's own factoring, one scale per 16 or 32 products instead of a dequantised
//    weight each.
// Rows past M and columns past N read the last row / column (never a per-lane predicated load)
// and are not stored. Named accumulators (macros, no arrays) keep everything in registers.
// Under A_RMSNORM (graph/passes/fuse_norm.c) A is the norm's input x, and since
// rmsnorm(x) . W = inv * ((x * gamma) . W), inv = 1 / sqrt(mean(x^2) + eps), each lane adds up
// the squares of the A values it loads anyway and multiplies them by gamma; after the loop the
// subgroup adds the squares and the accumulators take inv before the epilogue. No prologue pass
// over A (gemm.comp's, in which every workgroup rereads its rows first), so any rows fold.
// QCPU_ROWS is 1, 2, 4 or 8, QCPU_COLS 1 or 2.
// C_GLU=<act> (graph/passes/fuse_glu.c's epilogue; QCPU_COLS 2): B's 2N rows are gate then up,
// the lane's two columns are gate column j and up column j of its output column j, and it stores
// act(gate) * up.
// Workgroups: (ceil(M / QCPU_ROWS), ceil(N / (WG * QCPU_COLS)), batches): a column block's row
// blocks are consecutive workgroups, which share its weights in the cache.
#ifndef QCPU_ROWS
#define QCPU_ROWS 1
#endif
#ifndef QCPU_COLS
#define QCPU_COLS 1
#endif
#if defined(C_GLU) && QCPU_COLS != 2
#error "C_GLU takes gate and up as a lane's two columns (QCPU_COLS=2)"
#endif
#ifdef C_GLU
#define QCPU_LANE_COLS 1u
#else
#define QCPU_LANE_COLS QCPU_COLS
#endif
#if (QCPU_ROWS != 1 && QCPU_ROWS != 2 && QCPU_ROWS != 4 && QCPU_ROWS != 8) || \
    (QCPU_COLS != 1 && QCPU_COLS != 2)
#error "GEMM_QCPU supports QCPU_ROWS 1, 2, 4 or 8 and QCPU_COLS 1 or 2"
#endif
#if QCPU_ROWS > 1
#define IF_R2(X) X
#else
#define IF_R2(X)
#endif
#if QCPU_ROWS > 2
#define IF_R4(X) X
#else
#define IF_R4(X)
#endif
#if QCPU_ROWS > 4
#define IF_R8(X) X
#else
#define IF_R8(X)
#endif
#if QCPU_COLS > 1
#define IF_C2(X) X
#else
#define IF_C2(X)
#endif
#define FOR_R(M) M(0) IF_R2(M(1)) IF_R4(M(2) M(3)) IF_R8(M(4) M(5) M(6) M(7))
// the same with arguments after the row: M(R, X), M(R, X, Y), M(R, X, Y, Z)
#define FOR_R1(M, X)                                                                         \
  M(0, X) IF_R2(M(1, X)) IF_R4(M(2, X) M(3, X)) IF_R8(M(4, X) M(5, X) M(6, X) M(7, X))
#define FOR_R2(M, X, Y)                                                                      \
  M(0, X, Y) IF_R2(M(1, X, Y)) IF_R4(M(2, X, Y) M(3, X, Y))                                  \
  IF_R8(M(4, X, Y) M(5, X, Y) M(6, X, Y) M(7, X, Y))
#define FOR_R3(M, X, Y, Z)                                                                   \
  M(0, X, Y, Z) IF_R2(M(1, X, Y, Z)) IF_R4(M(2, X, Y, Z) M(3, X, Y, Z))                      \
  IF_R8(M(4, X, Y, Z) M(5, X, Y, Z) M(6, X, Y, Z) M(7, X, Y, Z))
#define FOR_C(M) M(0) IF_C2(M(1))
#define FOR_RC(M) FOR_R(M##_C0) IF_C2(FOR_R(M##_C1))
#ifdef C_GLU
#define QCPU_COL1 (min(n0, p.n - 1u) + p.n) // up's row of B
#else
#define QCPU_COL1 min(n0 + 1u, p.n - 1u)
#endif
// Where row R of B starts, in the body's units (ROW_UNITS a row): rows one after another, or under
// QCPU_X16 (Q8_0 K64 only; graph/lower/plan.h's vkf_plan_add_interleaved) 16 rows to a group
// with each 17-word pair of the 16 side by side: row R's pair j is at
// ((R / 16 * pairs + j) * 16 + R % 16) * 17, so from a row's start its pairs are 16 * 17 apart.
#ifdef QCPU_X16
#if !defined(QCPU_K64) || QUANT_FMT != 0
#error "QCPU_X16 interleaves Q8_0 rows read in two-block pairs (QCPU_K64)"
#endif
#define QCPU_ROW_START(R, ROW_UNITS) (((R) / 16u) * 16u * (ROW_UNITS) + ((R) % 16u) * 17u)
#define K64_PAIR_STRIDE (16u * 17u)
#else
#define QCPU_ROW_START(R, ROW_UNITS) ((R) * (ROW_UNITS))
#define K64_PAIR_STRIDE 17u
#endif
// Every body's start: this invocation's lane, first row m0 and first column n0, where each of its
// columns' rows of B starts (col0, col1: ROW_UNITS words, pairs or bytes a row; b_base is 0, the
// lowering binds B from its start; columns past N read the last) and the accumulators.
#define QCPU_BEGIN(ROW_UNITS)                                                                \
  set_batch_bases();                                                                         \
  uint lane = gl_SubgroupInvocationID;                                                       \
  uint m0 = gl_WorkGroupID.x * QCPU_ROWS;                                                    \
  uint n0 = ((gl_WorkGroupID.y * (WG / 8u) + gl_SubgroupID) * 8u + lane) * QCPU_LANE_COLS;   \
  uint col0 = QCPU_ROW_START(min(n0, p.n - 1u), ROW_UNITS);                                  \
  IF_C2(uint col1 = QCPU_ROW_START(QCPU_COL1, ROW_UNITS);)                                   \
  FOR_R(ACC_DECL)                                                                            \
  FOR_R(SS_DECL)
// Every body's end: the norm's scale (A_RMSNORM), then the epilogue and the stores
#define QCPU_END FOR_R(NORM_APPLY) FOR_RC(STORE)

#define ACC_DECL(R) float acc##R##_0 = 0.0, acc##R##_1 = 0.0;
#ifdef A_RMSNORM
#ifndef A_RMSNORM_SUBGROUP
#error "GEMM_QCPU's RMSNorm adds the squares with subgroupAdd (A_RMSNORM_SUBGROUP)"
#endif
#define SS_DECL(R) float ss##R = 0.0;
// gamma[K .. K + 3] (K % 32 == 0 in this kernel: no tail)
#define QCPU_GAMMA(G, K)                                                                     \
  const uint G##i = p.g_off + (K);                                                           \
  const vec4 G = vec4(norm_g[G##i], norm_g[G##i + 1u], norm_g[G##i + 2u], norm_g[G##i + 3u]);
vec4 qcpu_norm_a4(inout float ss, uint row, uint k, vec4 g) {
  vec4 v = load_a4_raw(row, k);
  ss += dot(v, v);
  return v * g;
}
#define QCPU_A4(R, K, G) qcpu_norm_a4(ss##R, min(m0 + uint(R), p.m - 1u), K, G)
#define NORM_APPLY(R)                                                                        \
  {                                                                                          \
    const float inv = 1.0 / sqrt(subgroupAdd(ss##R) / float(p.k) + p.a_norm_eps);          \
    acc##R##_0 *= inv;                                                                       \
    acc##R##_1 *= inv;                                                                       \
  }
#else
#define SS_DECL(R)
#define QCPU_GAMMA(G, K)
#define QCPU_A4(R, K, G) load_a4(min(m0 + uint(R), p.m - 1u), K)
#define NORM_APPLY(R)
#endif
// this chunk's A quad of row R, its sum, and the sums over lanes 0..3 and 4..7 (the two halves)
#define LOAD_A(R)                                                                            \
  const vec4 a##R = QCPU_A4(R, k0 + 4u * lane, g4);                                          \
  const float s##R = a##R.x + a##R.y + a##R.z + a##R.w;                                      \
  const float slo##R = subgroupShuffle(s##R, 0u) + subgroupShuffle(s##R, 1u) +               \
                       subgroupShuffle(s##R, 2u) + subgroupShuffle(s##R, 3u);                \
  const float shi##R = subgroupShuffle(s##R, 4u) + subgroupShuffle(s##R, 5u) +               \
                       subgroupShuffle(s##R, 6u) + subgroupShuffle(s##R, 7u);                \
  float tlo##R##_0 = 0.0, thi##R##_0 = 0.0, tlo##R##_1 = 0.0, thi##R##_1 = 0.0;
// every row's quad of the chunk at k0 (and gamma's, once for all rows)
#define LOAD_AS QCPU_GAMMA(g4, k0 + 4u * lane) FOR_R(LOAD_A)
// column C's block byte of this chunk and its two group scales
#ifdef Q_GROUP16
#define LOAD_COL(C)                                                                          \
  const uint b##C = col##C + blk;                                                             \
  const vec2 sclo##C = q_scale(b##C, j0), schi##C = q_scale(b##C, j0 + 16u);
#elif defined(Q_PAIRED16) /* and the fifth bits of a 5-bit block, read once too */
#define LOAD_COL(C)                                                                          \
  const uint b##C = col##C + blk;                                                             \
  const vec2 sclo##C = q_scale(b##C, j0), schi##C = sclo##C;                                 \
  const uint qh##C = q_high_bits(b##C);
#else /* one group of 32: its scale read once (texel fetches are what cost here) */
#define LOAD_COL(C)                                                                          \
  const uint b##C = col##C + blk;                                                             \
  const vec2 sclo##C = q_scale(b##C, j0), schi##C = sclo##C;
#endif
// T += dot(A, Q) (fma() would be no better: lavapipe 22.3 emits a multiply and an add for it too,
// no vfmadd in its JIT code)
#define DOT4(T, A, Q) T += dot(A, Q)
// quad Q (elements k0 + 4Q .. +3) of row R from lane Q, then its products with each column
#define QUAD_ROW(R, Q, T)                                                                    \
  {                                                                                          \
    const vec4 aq = vec4(subgroupShuffle(a##R.x, Q), subgroupShuffle(a##R.y, Q),            \
                         subgroupShuffle(a##R.z, Q), subgroupShuffle(a##R.w, Q));            \
    DOT4(T##R##_0, aq, qi0);                                                                 \
    IF_C2(DOT4(T##R##_1, aq, qi1);)                                                          \
  }
#define QUAD(Q, T)                                                                           \
  {                                                                                          \
    const vec4 qi0 = q_ints4(b0, j0 + 4u * Q);                                               \
    IF_C2(const vec4 qi1 = q_ints4(b1, j0 + 4u * Q);)                                        \
    FOR_R2(QUAD_ROW, Q, T)                                                                   \
  }
// Legacy 4- and 5-bit blocks (Q_PAIRED16): quads Q and Q + 4 from one read of their word
#define PAIR_ROW(R, Q)                                                                       \
  {                                                                                          \
    const vec4 al = vec4(subgroupShuffle(a##R.x, Q), subgroupShuffle(a##R.y, Q),            \
                         subgroupShuffle(a##R.z, Q), subgroupShuffle(a##R.w, Q));            \
    const vec4 ah = vec4(subgroupShuffle(a##R.x, Q + 4u), subgroupShuffle(a##R.y, Q + 4u),  \
                         subgroupShuffle(a##R.z, Q + 4u), subgroupShuffle(a##R.w, Q + 4u)); \
    DOT4(tlo##R##_0, al, lo0);                                                               \
    DOT4(thi##R##_0, ah, hi0);                                                               \
    IF_C2(DOT4(tlo##R##_1, al, lo1); DOT4(thi##R##_1, ah, hi1);)                             \
  }
#define PAIR(Q)                                                                              \
  {                                                                                          \
    vec4 lo0, hi0;                                                                           \
    q_ints4x2(b0, 4u * Q, qh0, lo0, hi0);                                                    \
    IF_C2(vec4 lo1; vec4 hi1; q_ints4x2(b1, 4u * Q, qh1, lo1, hi1);)                         \
    FOR_R1(PAIR_ROW, Q)                                                                      \
  }
#define APPLY_C0(R)                                                                          \
  acc##R##_0 += sclo0.x * tlo##R##_0 + sclo0.y * slo##R + schi0.x * thi##R##_0 + schi0.y * shi##R;
#define APPLY_C1(R)                                                                          \
  acc##R##_1 += sclo1.x * tlo##R##_1 + sclo1.y * slo##R + schi1.x * thi##R##_1 + schi1.y * shi##R;
#ifdef C_GLU
#define STORE_C0(R)                                                                          \
  if (m0 + uint(R) < p.m && n0 < p.n)                                                        \
    store_c(m0 + uint(R), n0, vkf_activation(C_GLU, acc##R##_0) * acc##R##_1);
#define STORE_C1(R)
#else
#define STORE_C0(R)                                                                          \
  if (m0 + uint(R) < p.m && n0 < p.n) store_c(m0 + uint(R), n0, acc##R##_0);
#define STORE_C1(R)                                                                          \
  if (m0 + uint(R) < p.m && n0 + 1u < p.n) store_c(m0 + uint(R), n0 + 1u, acc##R##_1);
#endif

#if QUANT_FMT == 0 && defined(QCPU_K64)
// Q8_0 with K % 64 == 0 (the lowering's QCPU_K64): a block is 34 bytes, so q_u32's words straddle
// and each is a funnel of two texel fetches (calls on lavapipe, ~20 instructions and the spill of
// every live vector each); two blocks are 17 whole words, the row starts word-aligned, and every
// int8 sits at a constant word and byte: each word is fetched once, a value is one or two shifts.
// Block 0 of the pair: d in the low half of word 0, qs[i] in byte (2 + i) % 4 of word (2 + i) / 4;
// block 1: d in the high half of word 8, qs[i] in byte i % 4 of word 9 + i / 4.
#define SB(W, B) float(bitfieldExtract(int(W), 8 * (B), 8))
#define K64_LOAD_A(R) const vec4 a##R = QCPU_A4(R, k0 + 4u * lane, ga);
#define K64_LOAD_B(R) const vec4 b##R = QCPU_A4(R, k0 + 32u + 4u * lane, gb);
#define K64_ROW(R, Q, A, T)                                                                   \
  {                                                                                           \
    const vec4 aq = vec4(subgroupShuffle(A##R.x, Q), subgroupShuffle(A##R.y, Q),             \
                         subgroupShuffle(A##R.z, Q), subgroupShuffle(A##R.w, Q));             \
    DOT4(T##R##_0, aq, qi0);                                                                  \
    IF_C2(DOT4(T##R##_1, aq, qi1);)                                                           \
  }
#define K64_ROWS(Q, A, T) FOR_R3(K64_ROW, Q, A, T)
// block 0, quad Q: bytes 2, 3 of word Q and 0, 1 of word Q + 1
#define K64_Q0(Q)                                                                             \
  {                                                                                           \
    uint n0_ = QWORD(w0 + Q + 1u);                                                         \
    const vec4 qi0 = vec4(SB(p0, 2), SB(p0, 3), SB(n0_, 0), SB(n0_, 1));                      \
    p0 = n0_;                                                                                 \
    IF_C2(uint n1_ = QWORD(w1 + Q + 1u);                                                   \
          const vec4 qi1 = vec4(SB(p1, 2), SB(p1, 3), SB(n1_, 0), SB(n1_, 1)); p1 = n1_;)     \
    K64_ROWS(Q, a, tlo)                                                                    \
  }
// block 1, quad Q: word 9 + Q
#define K64_Q1(Q)                                                                             \
  {                                                                                           \
    uint v0_ = QWORD(w0 + 9u + Q);                                                         \
    const vec4 qi0 = vec4(SB(v0_, 0), SB(v0_, 1), SB(v0_, 2), SB(v0_, 3));                    \
    IF_C2(uint v1_ = QWORD(w1 + 9u + Q);                                                   \
          const vec4 qi1 = vec4(SB(v1_, 0), SB(v1_, 1), SB(v1_, 2), SB(v1_, 3));)             \
    K64_ROWS(Q, b, thi)                                                                    \
  }
#define K64_T(R) float tlo##R##_0 = 0.0, thi##R##_0 = 0.0, tlo##R##_1 = 0.0, thi##R##_1 = 0.0;
#define K64_APPLY_C0(R) acc##R##_0 += d0_0 * tlo##R##_0 + d1_0 * thi##R##_0;
#define K64_APPLY_C1(R) acc##R##_1 += d0_1 * tlo##R##_1 + d1_1 * thi##R##_1;

void main() {
  // each row of B is K / 64 pairs of 17 words
  QCPU_BEGIN((p.k / 64u) * 17u)
  for (uint k0 = 0u; k0 < p.k; k0 += 64u) {
    uint w0 = col0 + (k0 / 64u) * K64_PAIR_STRIDE;
    IF_C2(uint w1 = col1 + (k0 / 64u) * K64_PAIR_STRIDE;)
    QCPU_GAMMA(ga, k0 + 4u * lane)
    FOR_R(K64_LOAD_A)
    FOR_R(K64_T)
    uint p0 = QWORD(w0);
    float d0_0 = unpackHalf2x16(p0).x;
    IF_C2(uint p1 = QWORD(w1); float d0_1 = unpackHalf2x16(p1).x;)
    K64_Q0(0u) K64_Q0(1u) K64_Q0(2u) K64_Q0(3u) K64_Q0(4u) K64_Q0(5u) K64_Q0(6u) K64_Q0(7u)
    // p0 is word 8 now: block 1's d in its high half
    float d1_0 = unpackHalf2x16(p0).y;
    IF_C2(float d1_1 = unpackHalf2x16(p1).y;)
    // block 1's A quads after block 0's products (both blocks' at once are 16 live vectors a row)
    QCPU_GAMMA(gb, k0 + 32u + 4u * lane)
    FOR_R(K64_LOAD_B)
    K64_Q1(0u) K64_Q1(1u) K64_Q1(2u) K64_Q1(3u) K64_Q1(4u) K64_Q1(5u) K64_Q1(6u) K64_Q1(7u)
    FOR_RC(K64_APPLY)
  }
  QCPU_END
}
#elif defined(QCPU_W2) && QUANT_FMT == 5
// Q4_K through an RG32UI view (QCPU_W2): a 144-byte block is 18 word pairs: d|dmin and
// scales[0..3], scales[4..11], then qs[128] (pairs 2..17). A step is one 64-element chunk c of a
// block: the two scale pairs and the chunk's four qs pairs (bytes 32c..32c+31: their low nibbles
// are sub-block 2c, their high nibbles sub-block 2c + 1), six fetches for 64 weights of a column
// where the word loop below takes 16 for the nibbles alone; the eight words stay in registers for
// both halves.
// k4_scale: the scale and min of sub-block `is`, as q_scale takes them from the same bytes
// (ggml's get_scale_min_k4)
uint k4_byte(uvec3 s, uint i) {
  uint w = i < 4u ? s.x : i < 8u ? s.y : s.z;
  return (w >> (8u * (i & 3u))) & 0xFFu;
}
vec2 k4_scale(uvec2 p0, uvec2 p1, uint is) {
  uvec3 s = uvec3(p0.y, p1.x, p1.y);
  uvec2 sm = is < 4u ? uvec2(k4_byte(s, is) & 63u, k4_byte(s, is + 4u) & 63u)
                     : uvec2((k4_byte(s, is + 4u) & 0xFu) | ((k4_byte(s, is - 4u) >> 6) << 4),
                             (k4_byte(s, is + 4u) >> 4) | ((k4_byte(s, is) >> 6) << 4));
  vec2 dm = unpackHalf2x16(p0.x);
  precise float d1 = dm.x * float(int(sm.x)), m1 = dm.y * float(int(sm.y));
  return vec2(d1, -m1);
}
// quad Q of the sub-block from word W##C's low (SH 0) or high (SH 4) nibbles
#define K4_QUAD(Q, T, W0, W1, SH)                                                            \
  {                                                                                          \
    const vec4 qi0 = vec4(ivec4(q_nibbles(W0, SH)));                                         \
    IF_C2(const vec4 qi1 = vec4(ivec4(q_nibbles(W1, SH)));)                                  \
    FOR_R2(QUAD_ROW, Q, T)                                                                   \
  }
#define K4_FETCH(C)                                                                          \
  const uvec2 s0_##C = QWORD2(col##C + bb), s1_##C = QWORD2(col##C + bb + 1u),                 \
              g0_##C = QWORD2(col##C + qb), g1_##C = QWORD2(col##C + qb + 1u),                 \
              g2_##C = QWORD2(col##C + qb + 2u), g3_##C = QWORD2(col##C + qb + 3u);
// sub-block 2c + HI at k0: the quads from the chunk's eight words
#define K4_HALF(HI, SH)                                                                      \
  {                                                                                          \
    LOAD_AS                                                                                  \
    const vec2 sclo0 = k4_scale(s0_0, s1_0, 2u * c + HI);                                    \
    const vec2 schi0 = sclo0;                                                                \
    IF_C2(const vec2 sclo1 = k4_scale(s0_1, s1_1, 2u * c + HI); const vec2 schi1 = sclo1;)   \
    K4_QUAD(0u, tlo, g0_0.x, g0_1.x, SH) K4_QUAD(1u, tlo, g0_0.y, g0_1.y, SH)                \
    K4_QUAD(2u, tlo, g1_0.x, g1_1.x, SH) K4_QUAD(3u, tlo, g1_0.y, g1_1.y, SH)                \
    K4_QUAD(4u, thi, g2_0.x, g2_1.x, SH) K4_QUAD(5u, thi, g2_0.y, g2_1.y, SH)                \
    K4_QUAD(6u, thi, g3_0.x, g3_1.x, SH) K4_QUAD(7u, thi, g3_0.y, g3_1.y, SH)                \
    FOR_RC(APPLY)                                                                            \
  }
void main() {
  QCPU_BEGIN((p.k / 256u) * 18u)
  for (uint kk = 0u; kk < p.k; kk += 64u) {
    uint bb = (kk / 256u) * 18u, c = (kk / 64u) % 4u, qb = bb + 2u + 4u * c;
    FOR_C(K4_FETCH)
    {
      uint k0 = kk;
      K4_HALF(0u, 0u)
    }
    {
      uint k0 = kk + 32u;
      K4_HALF(1u, 4u)
    }
  }
  QCPU_END
}
#elif defined(QCPU_W2) && (QUANT_FMT == 2 || QUANT_FMT == 4)
// Q4_1 and Q5_1 through an RG32UI view (the lowering's QCPU_W2): each texel fetch brings two
// words, half the fetches of the loop below. Q4_1: two blocks (64 elements, 10 words: d|m, then
// qs[16]) a step, five pairs; Q5_1: one block (d|m, qh, qs[16]: 6 words) a step, three pairs.
// Rows start at a pair (K / 32 blocks of 20 bytes, K % 64 == 0; of 24 bytes).
#define W2_PAIR(Q, W0, W1)                                                                   \
  {                                                                                          \
    vec4 lo0, hi0;                                                                           \
    q_ints4x2_w(W0, 4u * Q, qh0, lo0, hi0);                                                  \
    IF_C2(vec4 lo1; vec4 hi1; q_ints4x2_w(W1, 4u * Q, qh1, lo1, hi1);)                       \
    FOR_R1(PAIR_ROW, Q)                                                                      \
  }
// the block at k0 of each column C: its d|m word DM##C, fifth bits QH##C, qs words A..D##C
#define W2_BLOCK(DM0, DM1, QH0, QH1, A0, A1, B0, B1, C0, C1, D0, D1)                         \
  {                                                                                          \
    LOAD_AS                                                                                  \
    const vec2 sclo0 = unpackHalf2x16(DM0);                                                  \
    const vec2 schi0 = sclo0;                                                                \
    const uint qh0 = QH0;                                                                    \
    IF_C2(const vec2 sclo1 = unpackHalf2x16(DM1); const vec2 schi1 = sclo1;                  \
          const uint qh1 = QH1;)                                                             \
    W2_PAIR(0u, A0, A1) W2_PAIR(1u, B0, B1) W2_PAIR(2u, C0, C1) W2_PAIR(3u, D0, D1)          \
    FOR_RC(APPLY)                                                                            \
  }
#if QUANT_FMT == 2
#define W2_STEP 64u
#define W2_PAIRS 5u
#else
#define W2_STEP 32u
#define W2_PAIRS 3u
#endif
#if QUANT_FMT == 2
#define IF_Q41(X) X
#else
#define IF_Q41(X)
#endif
#define W2_FETCH(C)                                                                          \
  const uvec2 f0_##C = QWORD2(col##C + u), f1_##C = QWORD2(col##C + u + 1u),                   \
              f2_##C = QWORD2(col##C + u + 2u);                                               \
  IF_Q41(const uvec2 f3_##C = QWORD2(col##C + u + 3u); const uvec2 f4_##C = QWORD2(col##C + u + 4u);)
void main() {
  QCPU_BEGIN((p.k / W2_STEP) * W2_PAIRS)
  for (uint kk = 0u; kk < p.k; kk += W2_STEP) {
    uint u = (kk / W2_STEP) * W2_PAIRS;
    FOR_C(W2_FETCH)
    {
      uint k0 = kk;
#if QUANT_FMT == 2
      W2_BLOCK(f0_0.x, f0_1.x, 0u, 0u, f0_0.y, f0_1.y, f1_0.x, f1_1.x, f1_0.y, f1_1.y, f2_0.x, f2_1.x)
#else
      W2_BLOCK(f0_0.x, f0_1.x, f0_0.y, f0_1.y, f1_0.x, f1_1.x, f1_0.y, f1_1.y, f2_0.x, f2_1.x, f2_0.y, f2_1.y)
#endif
    }
#if QUANT_FMT == 2
    {
      uint k0 = kk + 32u;
      W2_BLOCK(f2_0.y, f2_1.y, 0u, 0u, f3_0.x, f3_1.x, f3_0.y, f3_1.y, f4_0.x, f4_1.x, f4_0.y, f4_1.y)
    }
#endif
  }
  QCPU_END
}
#else
void main() {
  // each row of B is K / QK blocks
  QCPU_BEGIN((p.k / QK) * QB)
  for (uint k0 = 0u; k0 < p.k; k0 += 32u) {
    uint blk = (k0 / QK) * QB, j0 = k0 % QK;
    LOAD_AS
    FOR_C(LOAD_COL)
#ifdef Q_PAIRED16
    PAIR(0u) PAIR(1u) PAIR(2u) PAIR(3u)
#else
    QUAD(0u, tlo) QUAD(1u, tlo) QUAD(2u, tlo) QUAD(3u, tlo)
    QUAD(4u, thi) QUAD(5u, thi) QUAD(6u, thi) QUAD(7u, thi)
#endif
    FOR_RC(APPLY)
  }
  QCPU_END
}
#endif
