// main() of attention.comp for CPU-class devices (CPU_BCAST=1; lavapipe). There a subgroup is one
// 8-wide SIMD vector, every storage-buffer or shared load is a loop over the lanes (a texel fetch,
// TEXEL=1, is one gather), local arrays live in memory, and a barrier suspends the workgroup. So a
// subgroup owns 8 query rows and walks the keys 16 at a time (ROWS < 8 rows for decoding), with
// all state in named registers (macros with literal indices; the blocks past D/4 or DV/32 fold
// away after specialization), never arrays, and no shared memory or barrier:
//  - q·k: lane U owns keys U and 8 + U of the block and loads their vec4s once; the 8 q rows are
//    broadcast to every lane once, before the key loop, and each broadcast value feeds both keys;
//  - softmax per row: one subgroupMax per row and block of 16 keys (gallivm also merges every
//    loop-carried value with the exec mask once per iteration, so bigger blocks pay twice); the
//    row sums stay per lane until the end; keys past the end are clamped loads, masked to zero;
//  - p·v: lane L accumulates output dims 4L..4L+3 (+32J) of all 8 rows, so each V vec4 is loaded
//    once and only the block's probabilities are shuffled across lanes; V rows are loaded first
//    and each row then takes all 16 keys in pairs of output vec4s, so its live accumulators fit
//    the registers (spilled ones cost a load and a store per update).
// Needs D and DV multiples of 4 and at most 128 (past that LLVM's compile time explodes), a
// subgroup size of exactly 8, subgroup ballot (broadcast), shuffle and arithmetic.

#include "attention_cpu_macros.glsl"

void main() {
  const uint lane = gl_SubgroupInvocationID;
  const uint bh = gl_WorkGroupID.y, b = bh / p.h, hh = bh % p.h, kvh = hh / p.group;
  // This subgroup's rows [r0, r1).
  const uint r0 = gl_WorkGroupID.x * BR + gl_SubgroupID * ROWS;
  const uint r1 = min(r0 + ROWS, p.nq);
  const bool has_bias = (p.flags & 1u) != 0u;
  k_base = p.k_off + kv_batch(b) * p.k_sb + kvh * p.k_sh;
  v_base = p.v_off + kv_batch(b) * p.v_sb + kvh * p.v_sh;

  // Keys any row of this subgroup may see: whole blocks outside are never visited.
  int hi = int(p.nk);
  if ((p.flags & 2u) != 0u) hi = clamp(kv_len[p.kv_len_off + b], 0, hi);
  int lo = 0;
#if RAMP
  const int at0 = hi - int(p.nq); // query row i sits at position i + at0
  lo = ramp_lo(hh, r0, at0);
#endif
  if (r0 < p.nq) {
    hi = min(hi, int(r1) - 1 + p.upper_off + 1);
    lo = max(lo, max(0, int(r0) + p.lower_off));
  } else {
    hi = 0;
  }
#if SPLIT
  lo = max(lo, int(gl_WorkGroupID.z * p.chunk));
  hi = min(hi, int((gl_WorkGroupID.z + 1u) * p.chunk));
#endif

  // Lane R loads row R of q; then every row is broadcast to every lane, once.
  const uint qb = p.q_off + b * p.q_sb + hh * p.q_sh + min(r0 + min(lane, ROWS - 1u), p.nq - 1u) * p.q_sn;
  REP64(Q_DECL)
  REP64(Q_LOAD)
  REP8(QS_DECL_R)
  REP8(QS_SET_R)
  REP8(A_DECL)
  REP8(ROW_DECL)
  for (int c0 = lo; c0 < hi; c0 += 16) {
    // Lane U owns keys c0 + U and c0 + 8 + U (loads clamped: keys past hi are masked anyway).
    const int key_i = c0 + int(lane), key_h = key_i + 8;
    const uint kb = k_base + uint(min(key_i, hi - 1)) * p.k_sn;
    const uint kbh = k_base + uint(min(key_h, hi - 1)) * p.k_sn;
    float sr0 = 0.0, sr1 = 0.0, sr2 = 0.0, sr3 = 0.0, sr4 = 0.0, sr5 = 0.0, sr6 = 0.0, sr7 = 0.0;
    float sh0 = 0.0, sh1 = 0.0, sh2 = 0.0, sh3 = 0.0, sh4 = 0.0, sh5 = 0.0, sh6 = 0.0, sh7 = 0.0;
    REP64(QK)
    // A full block that every row of the subgroup sees whole needs no predicate.
    const bool interior = c0 + 16 <= hi && c0 >= int(r1) - 1 + p.lower_off &&
                          c0 + 15 <= int(r0) + p.upper_off;
    REP8(SOFT)
    PV_LOADV(0) PV_LOADV(1) PV_LOADV(2) PV_LOADV(3) PV_LOADV(4) PV_LOADV(5) PV_LOADV(6)
    PV_LOADV(7) PV_LOADV(8) PV_LOADV(9) PV_LOADV(10) PV_LOADV(11) PV_LOADV(12) PV_LOADV(13)
    PV_LOADV(14) PV_LOADV(15)
    REP8(PV_ROW)
  }
  // Every lane stores its dims of all 8 rows (subgroup-uniform control flow until here).
  REP8(STORE_R)
}
