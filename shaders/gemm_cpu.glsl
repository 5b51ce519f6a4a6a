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
//    blend and a store each, so fewer iterations pay (the lowering picks CPU_KU dividing K / 4).
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
#define ACC_FMA(I, S)                                                                        \
  I##_0 = fma(vec4(S), b_0, I##_0);                                                          \
  if (CPU_TN4 > 1) I##_1 = fma(vec4(S), b_1, I##_1);                                         \
  if (CPU_TN4 > 2) { I##_2 = fma(vec4(S), b_2, I##_2); I##_3 = fma(vec4(S), b_3, I##_3); }
/* Row I of the block gets A value X of lane L. */
#define ROW(I, X, L) { float s_ = subgroupShuffle(X, L); ACC_FMA(I, s_) }
#define ROWS8(B, X) ROW(B##0, X, 0u) ROW(B##1, X, 1u) ROW(B##2, X, 2u) ROW(B##3, X, 3u) \
                    ROW(B##4, X, 4u) ROW(B##5, X, 5u) ROW(B##6, X, 6u) ROW(B##7, X, 7u)

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

#if defined(B_VEC4_K)
/* B is contiguous along k: t<j> = B[k..k+3, n0 + j], transposed in registers by LOAD_B. */
#define LOAD_T(T, J) T = load_b_k4(k, min(n0 + J, p.n - 1u));
#define LOAD_B(KK)                                                                           \
  b_0 = vec4(t0[KK], t1[KK], t2[KK], t3[KK]);                                                \
  if (CPU_TN4 > 1) b_1 = vec4(t4[KK], t5[KK], t6[KK], t7[KK]);                               \
  if (CPU_TN4 > 2) {                                                                         \
    b_2 = vec4(t8[KK], t9[KK], t10[KK], t11[KK]);                                            \
    b_3 = vec4(t12[KK], t13[KK], t14[KK], t15[KK]);                                          \
  }
#else
/* [K, N] rows are N apart, so the next block's rows are loaded one block ahead (q<kk>_<j>) and
 * the cache misses overlap the current block's FMAs instead of stalling them. */
#define ROW_B(K_, C_) load_b_n4(min(K_, p.k - 1u), min(C_, (p.n - 1u) & ~3u))
#define PRELOAD_GROUP(KB, J, C)                                                              \
  q0_##J = ROW_B(KB, n0 + C); q1_##J = ROW_B(KB + 1u, n0 + C);                                \
  q2_##J = ROW_B(KB + 2u, n0 + C); q3_##J = ROW_B(KB + 3u, n0 + C);
#define PRELOAD_B(KB)                                                                        \
  PRELOAD_GROUP(KB, 0, 0u)                                                                   \
  if (CPU_TN4 > 1) { PRELOAD_GROUP(KB, 1, 4u) }                                              \
  if (CPU_TN4 > 2) { PRELOAD_GROUP(KB, 2, 8u) PRELOAD_GROUP(KB, 3, 12u) }
#define LOAD_B(KK) b_0 = r##KK##_0; b_1 = r##KK##_1; b_2 = r##KK##_2; b_3 = r##KK##_3;
#define KEEP_GROUP(J) vec4 r0_##J = q0_##J, r1_##J = q1_##J, r2_##J = q2_##J, r3_##J = q3_##J;
#define DECL_GROUP(J) vec4 q0_##J = vec4(0.0), q1_##J = vec4(0.0), q2_##J = vec4(0.0), \
                           q3_##J = vec4(0.0);
#endif
/* Row group G (rows 8G..8G+7 of the block) accumulates in cG0..cG7 from aG = A[m0 + 8G + lane]. */
#define ACC_GROUP(G)                                                                         \
  ACC_DECL(c##G##0) ACC_DECL(c##G##1) ACC_DECL(c##G##2) ACC_DECL(c##G##3) ACC_DECL(c##G##4)  \
  ACC_DECL(c##G##5) ACC_DECL(c##G##6) ACC_DECL(c##G##7)
#define LOAD_A(G)                                                                            \
  vec4 a##G = vec4(0.0);                                                                     \
  if (CPU_RA > G) a##G = load_a4(min(m0 + G * 8u + lane, p.m - 1u), k);
#define ROW_GROUP(G, KK) if (CPU_RA > G) { ROWS8(c##G, a##G[KK]) }
#define STORE_GROUP(G)                                                                       \
  if (CPU_RA > G) {                                                                          \
    STORE(c##G##0, G * 8u) STORE(c##G##1, G * 8u + 1u) STORE(c##G##2, G * 8u + 2u)           \
    STORE(c##G##3, G * 8u + 3u) STORE(c##G##4, G * 8u + 4u) STORE(c##G##5, G * 8u + 5u)      \
    STORE(c##G##6, G * 8u + 6u) STORE(c##G##7, G * 8u + 7u)                                  \
  }
#define STEP(KK)                                                                             \
  LOAD_B(KK)                                                                                 \
  ROW_GROUP(0, KK) ROW_GROUP(1, KK) ROW_GROUP(2, KK) ROW_GROUP(3, KK)                        \
  ROW_GROUP(4, KK) ROW_GROUP(5, KK) ROW_GROUP(6, KK) ROW_GROUP(7, KK)

/* One step of 4 along k: A and B loads, then 4 rank-1 updates of the block. */
#if defined(B_VEC4_K)
#define K_BLOCK(K_)                                                                          \
  {                                                                                          \
    uint k = K_;                                                                             \
    /* aG = A[m0 + 8G + lane, k..k+3] */                                                     \
    LOAD_A(0) LOAD_A(1) LOAD_A(2) LOAD_A(3) LOAD_A(4) LOAD_A(5) LOAD_A(6) LOAD_A(7)          \
    vec4 b_0, b_1 = vec4(0.0), b_2 = vec4(0.0), b_3 = vec4(0.0);                             \
    vec4 t0, t1, t2, t3, t4 = vec4(0.0), t5 = vec4(0.0), t6 = vec4(0.0), t7 = vec4(0.0);     \
    vec4 t8 = vec4(0.0), t9 = vec4(0.0), t10 = vec4(0.0), t11 = vec4(0.0);                   \
    vec4 t12 = vec4(0.0), t13 = vec4(0.0), t14 = vec4(0.0), t15 = vec4(0.0);                 \
    LOAD_T(t0, 0u) LOAD_T(t1, 1u) LOAD_T(t2, 2u) LOAD_T(t3, 3u)                              \
    if (CPU_TN4 > 1) { LOAD_T(t4, 4u) LOAD_T(t5, 5u) LOAD_T(t6, 6u) LOAD_T(t7, 7u) }         \
    if (CPU_TN4 > 2) {                                                                       \
      LOAD_T(t8, 8u) LOAD_T(t9, 9u) LOAD_T(t10, 10u) LOAD_T(t11, 11u)                        \
      LOAD_T(t12, 12u) LOAD_T(t13, 13u) LOAD_T(t14, 14u) LOAD_T(t15, 15u)                    \
    }                                                                                        \
    STEP(0) STEP(1) STEP(2) STEP(3)                                                          \
  }
#else
#define K_BLOCK(K_)                                                                          \
  {                                                                                          \
    uint k = K_;                                                                             \
    LOAD_A(0) LOAD_A(1) LOAD_A(2) LOAD_A(3) LOAD_A(4) LOAD_A(5) LOAD_A(6) LOAD_A(7)          \
    vec4 b_0, b_1 = vec4(0.0), b_2 = vec4(0.0), b_3 = vec4(0.0);                             \
    KEEP_GROUP(0) KEEP_GROUP(1) KEEP_GROUP(2) KEEP_GROUP(3)                                  \
    PRELOAD_B(k + 4u)                                                                        \
    STEP(0) STEP(1) STEP(2) STEP(3)                                                          \
  }
#endif

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
#if !defined(B_VEC4_K)
  DECL_GROUP(0) DECL_GROUP(1) DECL_GROUP(2) DECL_GROUP(3)
  PRELOAD_B(0u)
#endif
  for (uint kb = 0; kb < p.k; kb += 4u * CPU_KU) {
    K_BLOCK(kb)
    if (CPU_KU > 1) { K_BLOCK(kb + 4u) }
    if (CPU_KU > 2) { K_BLOCK(kb + 8u) K_BLOCK(kb + 12u) }
  }
  const vec4 bias4_0 = BIAS4(0u), bias4_1 = BIAS4(1u), bias4_2 = BIAS4(2u), bias4_3 = BIAS4(3u);
  STORE_GROUP(0) STORE_GROUP(1) STORE_GROUP(2) STORE_GROUP(3) STORE_GROUP(4) STORE_GROUP(5)
  STORE_GROUP(6) STORE_GROUP(7)
}
