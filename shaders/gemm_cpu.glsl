// GEMM_CPU body for gemm.comp: the variant for CPU-class devices (lavapipe). There a subgroup is
// one 8-wide SIMD vector, every buffer load is a loop over the lanes, and local arrays stay in
// memory with masked read-modify-write on each store, so this kernel
//  - loads each element of the subgroup's A rows and B columns once (one lane each, vec4 loads)
//    and shares A values through subgroupShuffle with a constant lane: gallivm emits one vpermd
//    for a 32-bit shuffle on AVX2, where subgroupBroadcast searches for the first active lane
//    (and past ~100 broadcasts per loop iteration made LLVM's code 30x slower);
//  - keeps the (8*CPU_RA) x (4*CPU_TN4) accumulator block per lane in named vec4 variables
//    (macros, no arrays), so they live in registers;
//  - uses no shared memory and no barrier, so workgroups never suspend;
//  - never predicates a load per lane: rows past M and columns past N load the last row or column
//    instead (a load under a lane-varying condition runs masked, ~25 % of the kernel's time) and
//    their results are simply not stored;
//  - runs CPU_KU steps of 4 along k per loop iteration: gallivm merges every loop-carried value
//    with the loop's exec mask once per iteration, which for spilled accumulators is a load, a
//    blend and a store each, so fewer iterations pay (the lowering picks CPU_KU dividing K / 4);
//  - loads the iteration's A and B values first and then runs row by row, all 4*CPU_KU k of one
//    row back to back: only that row's accumulators are live (in registers), the B values come
//    back from the stack as folded loads, and each spilled accumulator is loaded and stored once
//    per iteration instead of once per k.
// CPU_RA is 1..8 (8..64 rows per subgroup), CPU_TN4 1, 2 or 4 (4, 8 or 16 columns per lane). On
// lavapipe loads dominate (through storage buffers a masked scalar loop per lane and element;
// through texel views, A_TEXEL / B_TEXEL, one ~30-cycle gather per vec4), shuffles are cheap, so
// tall blocks (each B element reused by many rows) with few columns pay most, up to the point
// where spilled accumulators cost more than the loads they save.
#ifndef CPU_RA
#define CPU_RA 2
#endif
#ifndef CPU_TN4
#define CPU_TN4 2
#endif
#ifndef CPU_KU
#define CPU_KU 1
#endif
#if CPU_RA < 1 || CPU_RA > 8 || (CPU_TN4 != 1 && CPU_TN4 != 2 && CPU_TN4 != 4)
#error "GEMM_CPU supports CPU_RA of 1..8 and CPU_TN4 of 1, 2 or 4"
#endif
#if CPU_KU != 1 && CPU_KU != 2 && CPU_KU != 4
#error "GEMM_CPU supports CPU_KU of 1, 2 or 4"
#endif

/* Column groups 1..3 exist when CPU_TN4 says so; the constant `if`s fold away. */
#define ACC_DECL(I) vec4 I##_0 = vec4(0.0), I##_1 = vec4(0.0), I##_2 = vec4(0.0), I##_3 = vec4(0.0);

#ifdef C_VEC4
void store_vec(uint row, uint col, vec4 v, vec4 bias4) {
  if (row < p.m && col < p.n) store_c4(row, col, v, bias4);
}
#else
void store_vec(uint row, uint col, vec4 v, vec4 bias4) {
  if (row < p.m)
    [[unroll]] for (uint j = 0; j < 4u; j++)
      if (col + j < p.n) store_c(row, col + j, v[j]);
}
#endif
#define STORE(I, R)                                                                          \
  store_vec(m0 + R, n0, I##_0, bias4_0);                                                     \
  if (CPU_TN4 > 1) store_vec(m0 + R, n0 + 4u, I##_1, bias4_1);                               \
  if (CPU_TN4 > 2) {                                                                         \
    store_vec(m0 + R, n0 + 8u, I##_2, bias4_2);                                              \
    store_vec(m0 + R, n0 + 12u, I##_3, bias4_3);                                             \
  }
/* bias[n0 + 4J .. +3] with C_VEC4 and BIAS (clamped like the loads), once before the stores */
#if defined(C_VEC4) && defined(BIAS)
#define BIAS4(J) (CPU_TN4 > J ? vec4(bias_data4[(p.bias_off + min(n0 + 4u * J, p.n - 4u)) >> 2]) \
                              : vec4(0.0))
#else
#define BIAS4(J) vec4(0.0)
#endif

/* The loads of step U (k = kb + 4U .. +3) of an iteration, clamped to the last row / column:
 *   aG_U = A[m0 + 8G + lane, k..k+3] (row group G; row 8G + L reaches every lane by shuffle);
 *   b<J>_U_<KK> = B[k + KK, n0 + 4J .. +3], this lane's columns of column group J. */
#define LOAD_A(G, U)                                                                         \
  vec4 a##G##_##U = vec4(0.0);                                                               \
  if (CPU_RA > G) a##G##_##U = load_a4(min(m0 + G * 8u + lane, p.m - 1u), kb + 4u * U);
#if defined(B_VEC4_K)
/* B is contiguous along k: one vec4 per column (t<C>_U = B[k..k+3, n0 + C]), transposed in
 * registers (free in SoA form). */
#define COL_K(C, U) const vec4 t##C##_##U = load_b_k4(kb + 4u * U, min(n0 + C, p.n - 1u));
#define B_GROUP(J, C0, C1, C2, C3, U)                                                        \
  const vec4 b##J##_##U##_0 = vec4(t##C0##_##U.x, t##C1##_##U.x, t##C2##_##U.x, t##C3##_##U.x); \
  const vec4 b##J##_##U##_1 = vec4(t##C0##_##U.y, t##C1##_##U.y, t##C2##_##U.y, t##C3##_##U.y); \
  const vec4 b##J##_##U##_2 = vec4(t##C0##_##U.z, t##C1##_##U.z, t##C2##_##U.z, t##C3##_##U.z); \
  const vec4 b##J##_##U##_3 = vec4(t##C0##_##U.w, t##C1##_##U.w, t##C2##_##U.w, t##C3##_##U.w);
#define LOAD_B_GROUP(J, C0, C1, C2, C3, U)                                                   \
  COL_K(C0, U) COL_K(C1, U) COL_K(C2, U) COL_K(C3, U) B_GROUP(J, C0, C1, C2, C3, U)
#else
/* [K, N]: a vec4 along n per k, clamped to the last row and column; rows past K (the scalar
 * path's last step when K % 4 != 0) are selected away after the load, not predicated, and never
 * multiplied by zero (an Inf in B's last row would make NaN). */
#define ROW_B(K_, C_)                                                                        \
  mix(vec4(0.0), load_b_n4(min(K_, p.k - 1u), min(C_, (p.n - 1u) & ~3u)), bvec4((K_) < p.k))
#define LOAD_B_GROUP(J, C0, C1, C2, C3, U)                                                   \
  const vec4 b##J##_##U##_0 = ROW_B(kb + 4u * U, n0 + 4u * J);                               \
  const vec4 b##J##_##U##_1 = ROW_B(kb + 4u * U + 1u, n0 + 4u * J);                          \
  const vec4 b##J##_##U##_2 = ROW_B(kb + 4u * U + 2u, n0 + 4u * J);                          \
  const vec4 b##J##_##U##_3 = ROW_B(kb + 4u * U + 3u, n0 + 4u * J);
#endif
/* Code that exists only for column groups 1 (IF_TN8) and 2, 3 (IF_TN16), or for unrolled steps
 * 1 (IF_KU2) and 2, 3 (IF_KU4): names that do not exist cannot appear even in dead code. */
#if CPU_TN4 > 1
#define IF_TN8(X) X
#else
#define IF_TN8(X)
#endif
#if CPU_TN4 > 2
#define IF_TN16(X) X
#else
#define IF_TN16(X)
#endif
#if CPU_KU > 1
#define IF_KU2(X) X
#else
#define IF_KU2(X)
#endif
#if CPU_KU > 2
#define IF_KU4(X) X
#else
#define IF_KU4(X)
#endif
#define LOAD_B(U)                                                                            \
  LOAD_B_GROUP(0, 0, 1, 2, 3, U)                                                             \
  IF_TN8(LOAD_B_GROUP(1, 4, 5, 6, 7, U))                                                     \
  IF_TN16(LOAD_B_GROUP(2, 8, 9, 10, 11, U) LOAD_B_GROUP(3, 12, 13, 14, 15, U))
#define LOAD_STEP(U)                                                                         \
  LOAD_A(0, U) LOAD_A(1, U) LOAD_A(2, U) LOAD_A(3, U)                                        \
  LOAD_A(4, U) LOAD_A(5, U) LOAD_A(6, U) LOAD_A(7, U)                                        \
  LOAD_B(U)

/* Row 8G + L of the block over step U: 4 k, each A value shuffled from lane L. */
#define FMA_K(I, G, L, U, KK)                                                                \
  {                                                                                          \
    const vec4 s_ = vec4(subgroupShuffle(a##G##_##U[KK], L));                                \
    I##_0 = fma(s_, b0_##U##_##KK, I##_0);                                                   \
    IF_TN8(I##_1 = fma(s_, b1_##U##_##KK, I##_1);)                                           \
    IF_TN16(I##_2 = fma(s_, b2_##U##_##KK, I##_2); I##_3 = fma(s_, b3_##U##_##KK, I##_3);)   \
  }
#define FMA_STEP(I, G, L, U)                                                                 \
  FMA_K(I, G, L, U, 0) FMA_K(I, G, L, U, 1) FMA_K(I, G, L, U, 2) FMA_K(I, G, L, U, 3)
#define FMA_ROW(G, L, LU)                                                                    \
  FMA_STEP(c##G##L, G, LU, 0) IF_KU2(FMA_STEP(c##G##L, G, LU, 1))                            \
  IF_KU4(FMA_STEP(c##G##L, G, LU, 2) FMA_STEP(c##G##L, G, LU, 3))
#define FMA_GROUP(G)                                                                         \
  if (CPU_RA > G) {                                                                          \
    FMA_ROW(G, 0, 0u) FMA_ROW(G, 1, 1u) FMA_ROW(G, 2, 2u) FMA_ROW(G, 3, 3u)                  \
    FMA_ROW(G, 4, 4u) FMA_ROW(G, 5, 5u) FMA_ROW(G, 6, 6u) FMA_ROW(G, 7, 7u)                  \
  }
/* Row group G (rows 8G..8G+7 of the block) accumulates in cG0..cG7. */
#define ACC_GROUP(G)                                                                         \
  ACC_DECL(c##G##0) ACC_DECL(c##G##1) ACC_DECL(c##G##2) ACC_DECL(c##G##3) ACC_DECL(c##G##4)  \
  ACC_DECL(c##G##5) ACC_DECL(c##G##6) ACC_DECL(c##G##7)
#define STORE_GROUP(G)                                                                       \
  if (CPU_RA > G) {                                                                          \
    STORE(c##G##0, G * 8u) STORE(c##G##1, G * 8u + 1u) STORE(c##G##2, G * 8u + 2u)           \
    STORE(c##G##3, G * 8u + 3u) STORE(c##G##4, G * 8u + 4u) STORE(c##G##5, G * 8u + 5u)      \
    STORE(c##G##6, G * 8u + 6u) STORE(c##G##7, G * 8u + 7u)                                  \
  }

void main() {
  set_batch_bases();
  uint lane = gl_SubgroupInvocationID;
  /* Workgroup x walks row blocks and y column panels: consecutive workgroups (lavapipe runs x
   * fastest) share one K x (WG * 4 * CPU_TN4) panel of B, which then stays in the core's L2. */
  uint m0 = gl_WorkGroupID.x * (8u * CPU_RA);
  /* this lane's first column: the subgroups of a workgroup split the panel's columns */
  uint n0 = ((gl_WorkGroupID.y * (WG / 8u) + gl_SubgroupID) * 8u + lane) * (4u * CPU_TN4);
  /* (all declared; the groups past CPU_RA are never used and fold away) */
  ACC_GROUP(0) ACC_GROUP(1) ACC_GROUP(2) ACC_GROUP(3) ACC_GROUP(4) ACC_GROUP(5) ACC_GROUP(6)
  ACC_GROUP(7)
  for (uint kb = 0; kb < p.k; kb += 4u * CPU_KU) {
    LOAD_STEP(0) IF_KU2(LOAD_STEP(1)) IF_KU4(LOAD_STEP(2) LOAD_STEP(3))
    FMA_GROUP(0) FMA_GROUP(1) FMA_GROUP(2) FMA_GROUP(3) FMA_GROUP(4) FMA_GROUP(5) FMA_GROUP(6)
    FMA_GROUP(7)
  }
  const vec4 bias4_0 = BIAS4(0u), bias4_1 = BIAS4(1u), bias4_2 = BIAS4(2u), bias4_3 = BIAS4(3u);
  STORE_GROUP(0) STORE_GROUP(1) STORE_GROUP(2) STORE_GROUP(3) STORE_GROUP(4) STORE_GROUP(5)
  STORE_GROUP(6) STORE_GROUP(7)
}
