// main() of attention.comp for CPU-class devices (CPU_BCAST=1; lavapipe). There a subgroup is one
// 8-wide SIMD vector, every buffer or shared load is a loop over the lanes, local arrays live in
// memory, and a barrier suspends the workgroup. So:
//  - a subgroup owns 8 query rows and walks the keys 8 at a time; all state is named vec4
//    registers (macros with literal indices; blocks past D/4 or DV/32 fold away after
//    specialization), never arrays;
//  - q·k: lane R holds row R's q; lane U loads key U's vec4s once and subgroupBroadcast (a vector
//    extract) hands them to every row;
//  - p·v: lane L accumulates output dims 4L..4L+3 (+32J) of all 8 rows, so each V vec4 is loaded
//    once and only the 64 probabilities are broadcast;
//  - no shared memory and no barrier; each subgroup skips the key blocks its own rows cannot see.
// Needs D and DV multiples of 4 (at most 256) and a subgroup size of exactly 8.

#define REP64(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11) M(12) M(13) M(14) \
   M(15) M(16) M(17) M(18) M(19) M(20) M(21) M(22) M(23) M(24) M(25) M(26) M(27) M(28) M(29) \
   M(30) M(31) M(32) M(33) M(34) M(35) M(36) M(37) M(38) M(39) M(40) M(41) M(42) M(43) M(44) \
   M(45) M(46) M(47) M(48) M(49) M(50) M(51) M(52) M(53) M(54) M(55) M(56) M(57) M(58) M(59) \
   M(60) M(61) M(62) M(63)

const uint D4 = D / 4, DV4 = DV / 4;

// vec4 I of the row / key starting at element `base` (VEC4: base is a multiple of 4).
#if VEC4
#define LOADQ4(base, I) vec4(q_vec4[((base) >> 2) + (I)])
#define LOADK4(base, I) vec4(k_vec4[((base) >> 2) + (I)])
#define LOADV4(base, I) vec4(v_vec4[((base) >> 2) + (I)])
#else
#define LOAD4(buf, base, I) vec4(float(buf[(base) + 4 * (I)]), float(buf[(base) + 4 * (I) + 1]), \
                                 float(buf[(base) + 4 * (I) + 2]), float(buf[(base) + 4 * (I) + 3]))
#define LOADQ4(base, I) LOAD4(q, base, I)
#define LOADK4(base, I) LOAD4(k, base, I)
#define LOADV4(base, I) LOAD4(v, base, I)
#endif

#define Q_DECL(I) vec4 q##I = vec4(0.0);
#define Q_LOAD(I) if ((I) < D4) q##I = LOADQ4(qb, I) * p.scale_log2;
// s_u += q · k_u for the 8 keys of the block; k_u is lane u's load.
#define QK(I)                                                                                   \
  if ((I) < D4) {                                                                               \
    const vec4 kv = LOADK4(kb, I);                                                              \
    s0 += dot(q##I, subgroupBroadcast(kv, 0u)); s1 += dot(q##I, subgroupBroadcast(kv, 1u));     \
    s2 += dot(q##I, subgroupBroadcast(kv, 2u)); s3 += dot(q##I, subgroupBroadcast(kv, 3u));     \
    s4 += dot(q##I, subgroupBroadcast(kv, 4u)); s5 += dot(q##I, subgroupBroadcast(kv, 5u));     \
    s6 += dot(q##I, subgroupBroadcast(kv, 6u)); s7 += dot(q##I, subgroupBroadcast(kv, 7u));     \
  }
#define REP8(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7)
const uint DV32 = (DV + 31) / 32;
// Accumulator of row R, dims 4L + 32J .. +3 of this lane L.
#define A_DECL(R) vec4 a##R##_0 = vec4(0.0), a##R##_1 = vec4(0.0), a##R##_2 = vec4(0.0),           \
  a##R##_3 = vec4(0.0), a##R##_4 = vec4(0.0), a##R##_5 = vec4(0.0), a##R##_6 = vec4(0.0),         \
  a##R##_7 = vec4(0.0);
#define RESCALE(R)                                                                              \
  {                                                                                             \
    const float ar = subgroupBroadcast(alpha, uint(R));                                            \
    a##R##_0 *= ar; a##R##_1 *= ar; a##R##_2 *= ar; a##R##_3 *= ar;                             \
    a##R##_4 *= ar; a##R##_5 *= ar; a##R##_6 *= ar; a##R##_7 *= ar;                             \
  }
// V[key, 4L + 32J .. +3] for this lane (zero past DV).
#if VEC4
#define LOADV_J(vb, J) ((J) < DV32 && (DV % 32u == 0u || 4u * lane + 32u * (J) < DV) ? vec4(v_vec4[((vb) + 32u * (J)) >> 2]) : vec4(0.0))
#else
#define LOADV_J(vb, J) ((J) < DV32 && (DV % 32u == 0u || 4u * lane + 32u * (J) < DV) ? LOAD4(v, (vb) + 32u * (J), 0u) : vec4(0.0))
#endif
#define FMA_R(R, U)                                                                             \
  {                                                                                             \
    const vec4 pr = vec4(subgroupBroadcast(p##U, uint(R)));                                        \
    a##R##_0 = fma(pr, vv0, a##R##_0); a##R##_1 = fma(pr, vv1, a##R##_1);                       \
    a##R##_2 = fma(pr, vv2, a##R##_2); a##R##_3 = fma(pr, vv3, a##R##_3);                       \
    a##R##_4 = fma(pr, vv4, a##R##_4); a##R##_5 = fma(pr, vv5, a##R##_5);                       \
    a##R##_6 = fma(pr, vv6, a##R##_6); a##R##_7 = fma(pr, vv7, a##R##_7);                       \
  }
#define PV_KEY(U)                                                                               \
  {                                                                                             \
    const uint vb = v_base + uint(min(c0 + U, hi - 1)) * p.v_sn + 4u * lane;                    \
    const vec4 vv0 = LOADV_J(vb, 0u), vv1 = LOADV_J(vb, 1u), vv2 = LOADV_J(vb, 2u),             \
               vv3 = LOADV_J(vb, 3u), vv4 = LOADV_J(vb, 4u), vv5 = LOADV_J(vb, 5u),             \
               vv6 = LOADV_J(vb, 6u), vv7 = LOADV_J(vb, 7u);                                    \
    FMA_R(0, U) FMA_R(1, U) FMA_R(2, U) FMA_R(3, U) FMA_R(4, U) FMA_R(5, U) FMA_R(6, U)         \
    FMA_R(7, U)                                                                                 \
  }
// Row R's dims 4L + 32J .. +3 of this lane, scaled by `sc` (zero past DV).
#define STORE_J(R, J, ob, sc)                                                                   \
  if (uint(J) < DV32 && 4u * lane + 32u * uint(J) < DV) {                                               \
    const vec4 r = a##R##_##J * (sc);                                                           \
    const uint e = (ob) + 4u * lane + 32u * uint(J);                                                \
    o[e] = T_OUT(r.x); o[e + 1u] = T_OUT(r.y); o[e + 2u] = T_OUT(r.z); o[e + 3u] = T_OUT(r.w);  \
  }
#define STORE_R(R)                                                                              \
  {                                                                                             \
    const float lr = subgroupBroadcast(l, uint(R));                                                \
    if (r0 + uint(R) < p.nq) {                                                                     \
      const uint ob = OUT_BASE(r0 + uint(R));                                                      \
      const float sc = OUT_SCALE(lr);                          \
      STORE_J(R, 0, ob, sc) STORE_J(R, 1, ob, sc) STORE_J(R, 2, ob, sc)                      \
      STORE_J(R, 3, ob, sc) STORE_J(R, 4, ob, sc) STORE_J(R, 5, ob, sc)                      \
      STORE_J(R, 6, ob, sc) STORE_J(R, 7, ob, sc)                                             \
    }                                                                                           \
  }
#if SPLIT
#define OUT_SCALE(lr) 1.0
#define T_OUT float
#define OUT_BASE(row) (p.o_off + ((bh * p.nq + (row)) * p.splits + gl_WorkGroupID.z) * DV)
#else
#define OUT_SCALE(lr) ((lr) > 0.0 ? 1.0 / (lr) : 0.0) // fully masked rows give zeros
#define T_OUT T_IO
#define OUT_BASE(row) (p.o_off + (bh * p.nq + (row)) * DV)
#endif
// Score u of the block: masked (boundary blocks only), plus the bias.
#define SCORE(u)                                                                                \
  {                                                                                             \
    const int j = c0 + (u);                                                                     \
    if (has_bias && j < hi) s##u += bias_at(b, hh, brow, j) * LOG2E;                            \
    ok##u = interior || (j < hi && j >= lo_row && j <= hi_row);                                 \
    if (ok##u) cmax = max(cmax, s##u);                                                          \
  }
#define PROB(u) p##u = ok##u ? exp2(s##u - m) : 0.0; psum += p##u;

void main() {
  const uint sg = gl_SubgroupSize, lane = gl_SubgroupInvocationID;
  const uint bh = gl_WorkGroupID.y, b = bh / p.h, hh = bh % p.h, kvh = hh / p.group;
  // This subgroup's rows [r0, r1); its lane's row.
  const uint r0 = gl_WorkGroupID.x * BR + gl_SubgroupID * sg;
  const uint r1 = min(r0 + sg, p.nq);
  const uint row = r0 + lane;
  const bool row_ok = row < p.nq;
  const uint brow = min(row, p.nq - 1u);
  const int irow = int(row), lo_row = irow + p.lower_off, hi_row = irow + p.upper_off;
  const bool has_bias = (p.flags & 1u) != 0u;
  k_base = p.k_off + b * p.k_sb + kvh * p.k_sh;
  v_base = p.v_off + b * p.v_sb + kvh * p.v_sh;

  // Keys any row of this subgroup may see: whole blocks outside are never visited.
  int hi = int(p.nk);
  if ((p.flags & 2u) != 0u) hi = clamp(kv_len[p.kv_len_off + b], 0, hi);
  int lo = 0;
  if (r0 < p.nq) {
    hi = min(hi, int(r1) - 1 + p.upper_off + 1);
    lo = max(0, int(r0) + p.lower_off);
  } else {
    hi = 0;
  }
#if SPLIT
  lo = max(lo, int(gl_WorkGroupID.z * p.chunk));
  hi = min(hi, int((gl_WorkGroupID.z + 1u) * p.chunk));
#endif

  const uint qb = p.q_off + b * p.q_sb + hh * p.q_sh + brow * p.q_sn;
  REP64(Q_DECL)
  REP8(A_DECL)
  REP64(Q_LOAD)
  float m = NEG, l = 0.0;
  for (int c0 = lo; c0 < hi; c0 += 8) {
    // Lane u loads key c0 + u (clamped: keys past hi are masked anyway).
    const uint key = uint(min(c0 + int(lane), hi - 1));
    const uint kb = k_base + key * p.k_sn, vb = v_base + key * p.v_sn;
    float s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, s4 = 0.0, s5 = 0.0, s6 = 0.0, s7 = 0.0;
    REP64(QK)
    // A full block that every row of the subgroup sees whole needs no predicate.
    const bool interior = c0 + 8 <= hi && c0 >= int(r1) - 1 + p.lower_off &&
                          c0 + 7 <= int(r0) + p.upper_off;
    bool ok0, ok1, ok2, ok3, ok4, ok5, ok6, ok7;
    float cmax = m;
    SCORE(0) SCORE(1) SCORE(2) SCORE(3) SCORE(4) SCORE(5) SCORE(6) SCORE(7)
    const float alpha = exp2(m - cmax);
    m = cmax;
    float p0, p1, p2, p3, p4, p5, p6, p7, psum = 0.0;
    PROB(0) PROB(1) PROB(2) PROB(3) PROB(4) PROB(5) PROB(6) PROB(7)
    l = l * alpha + psum;
    REP8(RESCALE)
    PV_KEY(0) PV_KEY(1) PV_KEY(2) PV_KEY(3) PV_KEY(4) PV_KEY(5) PV_KEY(6) PV_KEY(7)
  }
  // Every lane stores its dims of all 8 rows (subgroup-uniform control flow until here).
  REP8(STORE_R)
#if SPLIT
  if (row_ok) {
    const uint ml = p.o_off + gl_NumWorkGroups.y * p.nq * p.splits * DV +
                    ((bh * p.nq + row) * p.splits + gl_WorkGroupID.z) * 2u;
    o[ml] = m;
    o[ml + 1u] = l;
  }
#endif
}
