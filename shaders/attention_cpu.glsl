// main() of attention.comp for CPU-class devices (CPU_BCAST=1; lavapipe). There a subgroup is one
// 8-wide SIMD vector, every buffer or shared load is a loop over the lanes, local arrays live in
// memory, and a barrier suspends the workgroup. So:
//  - each lane owns one query row; q and the output accumulator are named vec4 registers (macros
//    with literal indices; the blocks past D/4 fold away after specialization), never arrays;
//  - keys go 8 at a time: lane L loads key L's vec4s once and subgroupBroadcast (a vector extract)
//    hands them to every row, so each K/V element is loaded once per subgroup;
//  - no shared memory and no barrier; each subgroup skips the key blocks its own rows cannot see.
// Needs D and DV multiples of 4 (at most 256) and a subgroup size of at least 8.

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
#define A_DECL(I) vec4 a##I = vec4(0.0);
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
#define PV(I)                                                                                   \
  if ((I) < DV4) {                                                                              \
    const vec4 vv = LOADV4(vb, I);                                                              \
    vec4 a = a##I * alpha;                                                                      \
    a = fma(vec4(p0), subgroupBroadcast(vv, 0u), a); a = fma(vec4(p1), subgroupBroadcast(vv, 1u), a); \
    a = fma(vec4(p2), subgroupBroadcast(vv, 2u), a); a = fma(vec4(p3), subgroupBroadcast(vv, 3u), a); \
    a = fma(vec4(p4), subgroupBroadcast(vv, 4u), a); a = fma(vec4(p5), subgroupBroadcast(vv, 5u), a); \
    a = fma(vec4(p6), subgroupBroadcast(vv, 6u), a); a = fma(vec4(p7), subgroupBroadcast(vv, 7u), a); \
    a##I = a;                                                                                   \
  }
#if SPLIT
#define STORE(I)                                                                                \
  if ((I) < DV4) {                                                                              \
    o[ob + 4u * (I)] = a##I.x; o[ob + 4u * (I) + 1u] = a##I.y;                                  \
    o[ob + 4u * (I) + 2u] = a##I.z; o[ob + 4u * (I) + 3u] = a##I.w;                             \
  }
#else
#define STORE(I)                                                                                \
  if ((I) < DV4) {                                                                              \
    const vec4 r = a##I * inv;                                                                  \
    o[ob + 4u * (I)] = T_IO(r.x); o[ob + 4u * (I) + 1u] = T_IO(r.y);                            \
    o[ob + 4u * (I) + 2u] = T_IO(r.z); o[ob + 4u * (I) + 3u] = T_IO(r.w);                       \
  }
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
  REP64(A_DECL)
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
    REP64(PV)
  }
  if (!row_ok) return;
#if SPLIT
  const uint prow = (bh * p.nq + row) * p.splits + gl_WorkGroupID.z;
  const uint ob = p.o_off + prow * DV;
  REP64(STORE)
  const uint ml = p.o_off + gl_NumWorkGroups.y * p.nq * p.splits * DV + prow * 2u;
  o[ml] = m;
  o[ml + 1u] = l;
#else
  const float inv = l > 0.0 ? 1.0 / l : 0.0; // fully masked rows give zeros
  const uint ob = p.o_off + (bh * p.nq + row) * DV;
  REP64(STORE)
#endif
}
