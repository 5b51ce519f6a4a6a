// The register-blocked building blocks of the CPU-class attention bodies (attention_cpu.glsl for
// dense attention, sparse_attention.comp's CPU body): q rows broadcast across a subgroup, 16-key
// blocks of scores, the online softmax, p·v and the stores, all in named registers. The including
// main() declares r0, lane, bh, b, hh, hi, interior, has_bias, k_base, v_base, qb and the Params
// fields used below; VISIBLE(key, row) may be defined first to replace the band mask, ROW_END to
// bound the stored rows (default: the query count).
#ifndef ROW_END
#define ROW_END p.nq
#endif

#define REP64(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11) M(12) M(13) M(14) \
   M(15) M(16) M(17) M(18) M(19) M(20) M(21) M(22) M(23) M(24) M(25) M(26) M(27) M(28) M(29) \
   M(30) M(31) M(32) M(33) M(34) M(35) M(36) M(37) M(38) M(39) M(40) M(41) M(42) M(43) M(44) \
   M(45) M(46) M(47) M(48) M(49) M(50) M(51) M(52) M(53) M(54) M(55) M(56) M(57) M(58) M(59) \
   M(60) M(61) M(62) M(63)
#define REP64R(M, R) M(R, 0) M(R, 1) M(R, 2) M(R, 3) M(R, 4) M(R, 5) M(R, 6) M(R, 7) M(R, 8) \
   M(R, 9) M(R, 10) M(R, 11) M(R, 12) M(R, 13) M(R, 14) M(R, 15) M(R, 16) M(R, 17) M(R, 18) \
   M(R, 19) M(R, 20) M(R, 21) M(R, 22) M(R, 23) M(R, 24) M(R, 25) M(R, 26) M(R, 27) M(R, 28) \
   M(R, 29) M(R, 30) M(R, 31) M(R, 32) M(R, 33) M(R, 34) M(R, 35) M(R, 36) M(R, 37) M(R, 38) \
   M(R, 39) M(R, 40) M(R, 41) M(R, 42) M(R, 43) M(R, 44) M(R, 45) M(R, 46) M(R, 47) M(R, 48) \
   M(R, 49) M(R, 50) M(R, 51) M(R, 52) M(R, 53) M(R, 54) M(R, 55) M(R, 56) M(R, 57) M(R, 58) \
   M(R, 59) M(R, 60) M(R, 61) M(R, 62) M(R, 63)
#define REP8(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7)

const uint D4 = D / 4, DV32 = (DV + 31) / 32;
// CPU_DMAX (a define, 32, 64, 128 or 256; default 256) bounds D and DV at compile time: the
// blocks past it are not in the SPIR-V at all. Bounded by the specialization constants alone,
// they are (a D of 64 leaves 3/4 of the q·k blocks dead), and lavapipe translates and
// optimises that dead code on every pipeline creation before specialization folds it away.
#ifndef CPU_DMAX
#define CPU_DMAX 256
#endif
#if CPU_DMAX != 32 && CPU_DMAX != 64 && CPU_DMAX != 128 && CPU_DMAX != 256
#error "CPU_DMAX is 32, 64, 128 or 256"
#endif
// The literal test comes first and alone: glslc folds `if (false)`, but `false && x` with a
// specialization constant x stays an OpSpecConstantOp in the SPIR-V.
#define IF_D4(I) if ((I) < CPU_DMAX / 4) if ((I) < D4)
#define IF_DV32(J) if ((J) < CPU_DMAX / 32) if ((J) < DV32)
// Query rows per subgroup: fewer when decoding. CPU_ROWS fixes them at compile time (8, every
// encoder's): `(R) < ROWS` then folds, where a specialization constant leaves each row's guard
// and its branches in the SPIR-V for lavapipe to translate and optimise on every run.
#ifdef CPU_ROWS
const uint ROWS = CPU_ROWS;
#else
layout(constant_id = 6) const uint ROWS = 8;
#endif

#if TEXEL
#define LOADQ4(base, I) texelFetch(q_tex, int(((base) >> 2) + (I)))
#define LOADK4(base, I) texelFetch(k_tex, int(((base) >> 2) + (I)))
#define LOADV4(base) texelFetch(v_tex, int((base) >> 2))
#elif VEC4
#define LOADQ4(base, I) vec4(q_vec4[((base) >> 2) + (I)])
#define LOADK4(base, I) vec4(k_vec4[((base) >> 2) + (I)])
#define LOADV4(base) vec4(v_vec4[(base) >> 2])
#else
#define LOAD4(buf, base, I) vec4(float(buf[(base) + 4 * (I)]), float(buf[(base) + 4 * (I) + 1]), \
                                 float(buf[(base) + 4 * (I) + 2]), float(buf[(base) + 4 * (I) + 3]))
#define LOADQ4(base, I) LOAD4(q, base, I)
#define LOADK4(base, I) LOAD4(k, base, I)
#define LOADV4(base) LOAD4(v, base, 0u)
#endif

// q of this lane's row, then row R's vec4 I broadcast to every lane (qs<R>_<I>).
#define Q_DECL(I) vec4 q##I = vec4(0.0);
#define Q_LOAD(I) IF_D4(I) q##I = LOADQ4(qb, I) * p.scale_log2;
#define QS_DECL(R, I) vec4 qs##R##_##I = vec4(0.0);
#define QS_SET(R, I) IF_D4(I) if ((R) < ROWS) qs##R##_##I = subgroupBroadcast(q##I, uint(R));
#define QS_DECL_R(R) REP64R(QS_DECL, R)
#define QS_SET_R(R) REP64R(QS_SET, R)
// Score of row R against this lane's key, summed over vec4 I.
#define QSV(R, I) qs##R##_##I
#define QK_R(R, I)                                                                              \
  if ((R) < ROWS) {                                                                             \
    const vec4 q_ = QSV(R, I);                                                                  \
    sr##R += dot(q_, kv);                                                                       \
    sh##R += dot(q_, kvh);                                                                      \
  }
#define QK(I)                                                                                   \
  IF_D4(I) {                                                                                    \
    const vec4 kv = LOADK4(kb, I), kvh = LOADK4(kbh, I);                                        \
    QK_R(0, I) QK_R(1, I) QK_R(2, I) QK_R(3, I) QK_R(4, I) QK_R(5, I) QK_R(6, I) QK_R(7, I)     \
  }

// Accumulator of row R, dims 4L + 32J .. +3 of this lane L.
#define A_DECL(R) vec4 a##R##_0 = vec4(0.0), a##R##_1 = vec4(0.0), a##R##_2 = vec4(0.0),           \
  a##R##_3 = vec4(0.0), a##R##_4 = vec4(0.0), a##R##_5 = vec4(0.0), a##R##_6 = vec4(0.0),         \
  a##R##_7 = vec4(0.0);
#define ROW_DECL(R) float m##R = NEG, lv##R = 0.0, pp##R = 0.0, ph##R = 0.0;
// Key `key` is visible to row `row`: inside the block's bounds and the mask's band.
#ifndef VISIBLE
#define VISIBLE(key, row) ((key) < hi && (key) >= (row) + p.lower_off && (key) <= (row) + p.upper_off)
#endif
// The adaptive span's soft mask (attention.comp's RAMP): every key, interior blocks included.
#if RAMP
#define RAMP_KEEP(R)                                                                            \
  ok = ramp_keep(sr##R, row_r + at0 - key_i) && ok;                                             \
  okh = ramp_keep(sh##R, row_r + at0 - key_h) && okh;
#else
#define RAMP_KEEP(R)
#endif
// Online softmax of row R over this block of 16 keys (this lane's key_i and key_h): mask
// (boundary blocks only), bias, block max, rescale.
#define SOFT(R)                                                                                 \
  if ((R) < ROWS) {                                                                             \
    const int row_r = int(r0) + (R);                                                            \
    bool ok = interior || VISIBLE(key_i, row_r), okh = interior || VISIBLE(key_h, row_r);       \
    if (has_bias && key_i < hi)                                                                 \
      sr##R += bias_at(b, hh, min(uint(row_r), p.nq - 1u), key_i) * LOG2E;                      \
    if (has_bias && key_h < hi)                                                                 \
      sh##R += bias_at(b, hh, min(uint(row_r), p.nq - 1u), key_h) * LOG2E;                      \
    RAMP_KEEP(R)                                                                                \
    const float cm = max(m##R, subgroupMax(max(ok ? sr##R : NEG, okh ? sh##R : NEG)));          \
    const float al = exp2(m##R - cm);                                                           \
    m##R = cm;                                                                                  \
    pp##R = ok ? exp2(sr##R - cm) : 0.0;                                                        \
    ph##R = okh ? exp2(sh##R - cm) : 0.0;                                                       \
    lv##R = lv##R * al + (pp##R + ph##R);                                                       \
    a##R##_0 *= al; a##R##_1 *= al; a##R##_2 *= al; a##R##_3 *= al;                             \
    a##R##_4 *= al; a##R##_5 *= al; a##R##_6 *= al; a##R##_7 *= al;                             \
  }
// V[key, 4L + 32J .. +3] for this lane (zero past DV).
#define LOADV_J(vb, J)                                                                          \
  ((J) >= CPU_DMAX / 32                                               ? vec4(0.0)               \
   : (J) < DV32 && (DV % 32u == 0u || 4u * lane + 32u * (J) < DV) ? LOADV4((vb) + 32u * (J))  \
                                                                      : vec4(0.0))
// V rows of the block: vv<U>_<J> = V[c0 + U, 4L + 32J .. +3] for this lane, V[c0 + 8 + U] for
// the second half (keys past hi clamped: their probabilities are zero).
#define PV_LOADV(U)                                                                             \
  const uint vb##U = v_base + uint(min(c0 + U, hi - 1)) * p.v_sn + 4u * lane;                   \
  const vec4 vv##U##_0 = LOADV_J(vb##U, 0u), vv##U##_1 = LOADV_J(vb##U, 1u),                    \
             vv##U##_2 = LOADV_J(vb##U, 2u), vv##U##_3 = LOADV_J(vb##U, 3u),                    \
             vv##U##_4 = LOADV_J(vb##U, 4u), vv##U##_5 = LOADV_J(vb##U, 5u),                    \
             vv##U##_6 = LOADV_J(vb##U, 6u), vv##U##_7 = LOADV_J(vb##U, 7u);
// Row R's accumulators take key U of a half: p[R, key] from lane U (P = pp or ph) times the V
// row. The block's keys are the inner loop, so each accumulator stays in registers for 16 keys
// and only the V values (loaded once per block) come back from the stack.
#define FMA_RU(R, P, U, VU, J0, J1)                                                             \
  {                                                                                             \
    const vec4 pr = vec4(subgroupShuffle(P##R, uint(U)));                                       \
    a##R##_##J0 = fma(pr, vv##VU##_##J0, a##R##_##J0);                                          \
    a##R##_##J1 = fma(pr, vv##VU##_##J1, a##R##_##J1);                                          \
  }
#define PV_RJ(R, J0, J1)                                                                        \
  IF_DV32(J0) {                                                                                 \
    FMA_RU(R, pp, 0, 0, J0, J1) FMA_RU(R, pp, 1, 1, J0, J1) FMA_RU(R, pp, 2, 2, J0, J1)         \
    FMA_RU(R, pp, 3, 3, J0, J1) FMA_RU(R, pp, 4, 4, J0, J1) FMA_RU(R, pp, 5, 5, J0, J1)         \
    FMA_RU(R, pp, 6, 6, J0, J1) FMA_RU(R, pp, 7, 7, J0, J1)                                     \
    FMA_RU(R, ph, 0, 8, J0, J1) FMA_RU(R, ph, 1, 9, J0, J1) FMA_RU(R, ph, 2, 10, J0, J1)        \
    FMA_RU(R, ph, 3, 11, J0, J1) FMA_RU(R, ph, 4, 12, J0, J1) FMA_RU(R, ph, 5, 13, J0, J1)      \
    FMA_RU(R, ph, 6, 14, J0, J1) FMA_RU(R, ph, 7, 15, J0, J1)                                   \
  }
// Dims in pairs of vec4s (8 registers of accumulators at a time, whatever DV).
#define PV_ROW(R)                                                                               \
  if ((R) < ROWS) {                                                                             \
    PV_RJ(R, 0, 1) PV_RJ(R, 2, 3) PV_RJ(R, 4, 5) PV_RJ(R, 6, 7)                                 \
  }

#if SPLIT
#define OUT_SCALE(lr) 1.0
#define T_OUT float
#define OUT_BASE(row) (p.o_off + ((bh * p.nq + (row)) * p.splits + gl_WorkGroupID.z) * DV)
#else
#define OUT_SCALE(lr) ((lr) > 0.0 ? 1.0 / (lr) : 0.0) // fully masked rows give zeros
#define T_OUT T_IO
#define OUT_BASE(row) (p.o_off + out_row(bh, row) * DV)
#endif
// Row R's dims 4L + 32J .. +3 of this lane, scaled by `sc` (zero past DV).
#define STORE_J(R, J, ob, sc)                                                                   \
  IF_DV32(uint(J)) if (4u * lane + 32u * uint(J) < DV) {                                       \
    const vec4 r = a##R##_##J * (sc);                                                           \
    const uint e = (ob) + 4u * lane + 32u * uint(J);                                            \
    o[e] = T_OUT(r.x); o[e + 1u] = T_OUT(r.y); o[e + 2u] = T_OUT(r.z); o[e + 3u] = T_OUT(r.w);  \
  }
#if SPLIT
#define STORE_ML(R, lr)                                                                         \
  if (lane == 0u) {                                                                             \
    const uint ml = p.o_off + gl_NumWorkGroups.y * p.nq * p.splits * DV +                       \
                    ((bh * p.nq + r0 + uint(R)) * p.splits + gl_WorkGroupID.z) * 2u;            \
    o[ml] = m##R;                                                                               \
    o[ml + 1u] = lr;                                                                            \
  }
#else
#define STORE_ML(R, lr)
#endif
#define STORE_R(R)                                                                              \
  if ((R) < ROWS) {                                                                             \
    const float lr = subgroupAdd(lv##R);                                                        \
    if (r0 + uint(R) < ROW_END) {                                                               \
      const uint ob = OUT_BASE(r0 + uint(R));                                                   \
      const float sc = OUT_SCALE(lr);                                                           \
      STORE_J(R, 0, ob, sc) STORE_J(R, 1, ob, sc) STORE_J(R, 2, ob, sc)                         \
      STORE_J(R, 3, ob, sc) STORE_J(R, 4, ob, sc) STORE_J(R, 5, ob, sc)                         \
      STORE_J(R, 6, ob, sc) STORE_J(R, 7, ob, sc)                                               \
      STORE_ML(R, lr)                                                                           \
    }                                                                                           \
  }

