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
// QCPU_ROWS is 1, 2 or 4, QCPU_COLS 1 or 2.
// Workgroups: (ceil(N / (WG * QCPU_COLS)), ceil(M / QCPU_ROWS), batches).
#ifndef QCPU_ROWS
#define QCPU_ROWS 1
#endif
#ifndef QCPU_COLS
#define QCPU_COLS 1
#endif
#if (QCPU_ROWS != 1 && QCPU_ROWS != 2 && QCPU_ROWS != 4) || (QCPU_COLS != 1 && QCPU_COLS != 2)
#error "GEMM_QCPU supports QCPU_ROWS 1, 2 or 4 and QCPU_COLS 1 or 2"
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
#if QCPU_COLS > 1
#define IF_C2(X) X
#else
#define IF_C2(X)
#endif
#define FOR_R(M) M(0) IF_R2(M(1)) IF_R4(M(2) M(3))
#define FOR_C(M) M(0) IF_C2(M(1))
#define FOR_RC(M) FOR_R(M##_C0) IF_C2(FOR_R(M##_C1))

#define ACC_DECL(R) float acc##R##_0 = 0.0, acc##R##_1 = 0.0;
// this chunk's A quad of row R, its sum, and the sums over lanes 0..3 and 4..7 (the two halves)
#define LOAD_A(R)                                                                            \
  const vec4 a##R = load_a4(min(m0 + uint(R), p.m - 1u), k0 + 4u * lane);                      \
  const float s##R = a##R.x + a##R.y + a##R.z + a##R.w;                                      \
  const float slo##R = subgroupShuffle(s##R, 0u) + subgroupShuffle(s##R, 1u) +               \
                       subgroupShuffle(s##R, 2u) + subgroupShuffle(s##R, 3u);                \
  const float shi##R = subgroupShuffle(s##R, 4u) + subgroupShuffle(s##R, 5u) +               \
                       subgroupShuffle(s##R, 6u) + subgroupShuffle(s##R, 7u);                \
  float tlo##R##_0 = 0.0, thi##R##_0 = 0.0, tlo##R##_1 = 0.0, thi##R##_1 = 0.0;
// column C's block byte of this chunk and its two group scales
#ifdef Q_GROUP16
#define LOAD_COL(C)                                                                          \
  const uint b##C = cb##C + blk;                                                             \
  const vec2 sclo##C = q_scale(b##C, j0), schi##C = q_scale(b##C, j0 + 16u);
#elif defined(Q_PAIRED16) /* and the fifth bits of a 5-bit block, read once too */
#define LOAD_COL(C)                                                                          \
  const uint b##C = cb##C + blk;                                                             \
  const vec2 sclo##C = q_scale(b##C, j0), schi##C = sclo##C;                                 \
  const uint qh##C = q_high_bits(b##C);
#else /* one group of 32: its scale read once (texel fetches are what cost here) */
#define LOAD_COL(C)                                                                          \
  const uint b##C = cb##C + blk;                                                             \
  const vec2 sclo##C = q_scale(b##C, j0), schi##C = sclo##C;
#endif
// quad Q (elements k0 + 4Q .. +3) of row R from lane Q, then its products with each column
#define QUAD_ROW(R, Q, T)                                                                    \
  {                                                                                          \
    const vec4 aq = vec4(subgroupShuffle(a##R.x, Q), subgroupShuffle(a##R.y, Q),            \
                         subgroupShuffle(a##R.z, Q), subgroupShuffle(a##R.w, Q));            \
    T##R##_0 += dot(aq, qi0);                                                                \
    IF_C2(T##R##_1 += dot(aq, qi1);)                                                         \
  }
#define QUAD(Q, T)                                                                           \
  {                                                                                          \
    const vec4 qi0 = q_ints4(b0, j0 + 4u * Q);                                               \
    IF_C2(const vec4 qi1 = q_ints4(b1, j0 + 4u * Q);)                                        \
    QUAD_ROW(0, Q, T) IF_R2(QUAD_ROW(1, Q, T)) IF_R4(QUAD_ROW(2, Q, T) QUAD_ROW(3, Q, T))     \
  }
// Legacy 4- and 5-bit blocks (Q_PAIRED16): quads Q and Q + 4 from one read of their word
#define PAIR_ROW(R, Q)                                                                       \
  {                                                                                          \
    const vec4 al = vec4(subgroupShuffle(a##R.x, Q), subgroupShuffle(a##R.y, Q),            \
                         subgroupShuffle(a##R.z, Q), subgroupShuffle(a##R.w, Q));            \
    const vec4 ah = vec4(subgroupShuffle(a##R.x, Q + 4u), subgroupShuffle(a##R.y, Q + 4u),  \
                         subgroupShuffle(a##R.z, Q + 4u), subgroupShuffle(a##R.w, Q + 4u)); \
    tlo##R##_0 += dot(al, lo0);                                                              \
    thi##R##_0 += dot(ah, hi0);                                                              \
    IF_C2(tlo##R##_1 += dot(al, lo1); thi##R##_1 += dot(ah, hi1);)                           \
  }
#define PAIR(Q)                                                                              \
  {                                                                                          \
    vec4 lo0, hi0;                                                                           \
    q_ints4x2(b0, 4u * Q, qh0, lo0, hi0);                                                    \
    IF_C2(vec4 lo1; vec4 hi1; q_ints4x2(b1, 4u * Q, qh1, lo1, hi1);)                         \
    PAIR_ROW(0, Q) IF_R2(PAIR_ROW(1, Q)) IF_R4(PAIR_ROW(2, Q) PAIR_ROW(3, Q))                 \
  }
#define APPLY_C0(R)                                                                          \
  acc##R##_0 += sclo0.x * tlo##R##_0 + sclo0.y * slo##R + schi0.x * thi##R##_0 + schi0.y * shi##R;
#define APPLY_C1(R)                                                                          \
  acc##R##_1 += sclo1.x * tlo##R##_1 + sclo1.y * slo##R + schi1.x * thi##R##_1 + schi1.y * shi##R;
#define STORE_C0(R)                                                                          \
  if (m0 + uint(R) < p.m && n0 < p.n) store_c(m0 + uint(R), n0, acc##R##_0);
#define STORE_C1(R)                                                                          \
  if (m0 + uint(R) < p.m && n0 + 1u < p.n) store_c(m0 + uint(R), n0 + 1u, acc##R##_1);

void main() {
  set_batch_bases();
  uint lane = gl_SubgroupInvocationID;
  uint m0 = gl_WorkGroupID.y * QCPU_ROWS;
  uint n0 = ((gl_WorkGroupID.x * (WG / 8u) + gl_SubgroupID) * 8u + lane) * QCPU_COLS;
  // each row of B is K / QK blocks; b_base is 0 (the lowering binds B from its start)
  uint row_bytes = (p.k / QK) * QB;
  uint cb0 = min(n0, p.n - 1u) * row_bytes;
  IF_C2(uint cb1 = min(n0 + 1u, p.n - 1u) * row_bytes;)
  FOR_R(ACC_DECL)
  for (uint k0 = 0u; k0 < p.k; k0 += 32u) {
    uint blk = (k0 / QK) * QB, j0 = k0 % QK;
    FOR_R(LOAD_A)
    FOR_C(LOAD_COL)
#ifdef Q_PAIRED16
    PAIR(0u) PAIR(1u) PAIR(2u) PAIR(3u)
#else
    QUAD(0u, tlo) QUAD(1u, tlo) QUAD(2u, tlo) QUAD(3u, tlo)
    QUAD(4u, thi) QUAD(5u, thi) QUAD(6u, thi) QUAD(7u, thi)
#endif
    FOR_RC(APPLY)
  }
  FOR_RC(STORE)
}
