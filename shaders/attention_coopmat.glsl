// Cooperative-matrix body of attention.comp (ATTN_COOPMAT, f16 q/k/v): FlashAttention-2 in one
// pass over the keys. S = Q·Kᵀ and O += P·V are CM x CM matrix tiles on tensor cores with f32
// accumulators; four subgroups per workgroup, each owning CM query rows (CM_BR = 4 * CM rows a
// workgroup); K and V tiles of CM_BC keys are staged in shared memory once per tile for all four
// (16-byte global loads where the tensors are 8-element aligned, zero past the edges). Q stays in
// matrix registers and O in accumulators for the whole run.
// The softmax of each tile runs on every lane: a row's CM_BC scores are split over
// max(1, subgroup size / CM) lanes (interleaved columns), reduced by subgroup shuffles, so no lane
// idles; its running max m and partial sum l live in those lanes' registers. The scores sit at a
// pitch of CM_BC + 4 floats (rows start 4 banks apart) and rows 8 apart are read from columns
// rotated by the lanes per row: a 32-lane subgroup's softmax reads hit 32 distinct banks.
// Each tile the accumulators' rows are rescaled by exp2(m_old - m_new) in registers:
// VK_KHR_cooperative_matrix has no per-row scale, but its element access does, once the row of
// each element is known (a matrix loaded from a table of row indices; the element order is the
// same for every matrix of one type) and the row's factor is shuffled from its softmax lane. No
// round trip of O through shared memory (ggml's cm1 keeps O in per-lane registers instead and adds
// each tile's P·V through shared memory). The masks (scale, bias, ramp, window,
// causal, kv_len) are applied exactly as the other bodies do; rows no key may see give zeros.
// K/V tiles double-buffered where shared memory allows (CM_STAGES 2, the chooser's choice by the
// head dims): tile t + 1's loads (16-byte ones where aligned) are issued into registers before
// tile t is multiplied out of the first buffer and stored into the second after it, so the loads'
// latency sits behind the tile's work and there is one workgroup barrier a tile instead of two
// (as gemm_coopmat.glsl's two stages); with CM_STAGES 1 the tile is staged and then used (two
// barriers a tile). The K/V area is sized by
// the head dims (specialization constants), not the 128 bound: at CM 16 and head dim 128 two
// stages take the whole 48 KiB.
// Defines: CM (8 or 16). Specialization constants as attention.comp: 0 local size (4 subgroups),
// 1 BR (= CM_BR), 2 BC (= CM_BC), 3 D, 4 DV (multiples of CM, at most CM_DMAX); 7 CM_STAGES (1 or
// 2 K/V buffers).
#define CM_BR (4u * CM)
#define CM_BC 32u
#define CM_DMAX 128u
#define CM_SP (CM_BC + 4u)              // pitch of S (f32): 16-byte rows, 4 banks apart
#define CM_LDP (CM_BC + 8u)             // pitch of P (f16); 16-byte multiple as coopMatLoad wants
#define CM_RPL (CM / 8u)                // rows a lane owns at most (subgroups of 8 lanes, CM 16)

// 16-byte views of q, k, v for the aligned staging path.
layout(std430, binding = 0) readonly buffer QB16 { uvec4 q16[]; };
layout(std430, binding = 1) readonly buffer KB16 { uvec4 k16[]; };
layout(std430, binding = 2) readonly buffer VB16 { uvec4 v16[]; };

layout(constant_id = 7) const uint CM_STAGES = 1;
// Row pitches of the staged K and V (and Q) tiles in f16vec4s: 16 bytes of padding a row.
const uint CM_PK = D / 4u + 2u, CM_PV = DV / 4u + 2u;
const uint CM_KV_STAGE = CM_BC * (CM_PK + CM_PV);
const uint CM_KV_ALL = CM_STAGES * CM_KV_STAGE, CM_Q_ALL = CM_BR * CM_PK;

// Per stage: K tile [CM_BC, D] then V tile [CM_BC, DV]; Q [CM_BR, D] over them before the first.
shared f16vec4 cm_kv[CM_KV_ALL > CM_Q_ALL ? CM_KV_ALL : CM_Q_ALL];
shared float cm_s[4u * CM * CM_SP];        // per subgroup: scores [CM, CM_BC]; scratch for O
shared float16_t cm_p[4u * CM * CM_LDP];   // per subgroup: probabilities [CM, CM_BC]

f16vec4 cm_lo(uvec4 u) { return f16vec4(unpackFloat2x16(u.x), unpackFloat2x16(u.y)); }
f16vec4 cm_hi(uvec4 u) { return f16vec4(unpackFloat2x16(u.z), unpackFloat2x16(u.w)); }

// Rows first .. first + nrows - 1 of one tensor (row stride sn; rows at or past lim read as
// zeros) into cm_kv at f16vec4 `at`, pitch ld4: 16-byte loads when the base and stride are
// 8-element aligned, else 2-byte ones. A macro: the buffers are distinct variables.
#define CM_STAGE(BUF, BUF16, base, sn, first, lim, nrows, W, at, ld4, vec)                         \
  if (vec) {                                                                                       \
    const uint w8 = W / 8u;                                                                        \
    for (uint e = lid; e < (nrows) * w8; e += wg) {                                                \
      const uint r = e / w8, c = e % w8;                                                           \
      const int row_ = int(first) + int(r);                                                        \
      const uvec4 u =                                                                              \
          row_ < int(lim) ? BUF16[((base) + uint(row_) * (sn)) / 8u + c] : uvec4(0);               \
      cm_kv[(at) + r * (ld4) + 2u * c] = cm_lo(u);                                                 \
      cm_kv[(at) + r * (ld4) + 2u * c + 1u] = cm_hi(u);                                            \
    }                                                                                              \
  } else {                                                                                         \
    const uint w4 = W / 4u;                                                                        \
    for (uint e = lid; e < (nrows) * w4; e += wg) {                                                \
      const uint r = e / w4, c = e % w4;                                                           \
      const int row_ = int(first) + int(r);                                                        \
      f16vec4 x = f16vec4(0.0);                                                                    \
      if (row_ < int(lim)) {                                                                       \
        const uint g = (base) + uint(row_) * (sn) + 4u * c;                                        \
        x = f16vec4(BUF[g], BUF[g + 1u], BUF[g + 2u], BUF[g + 3u]);                                \
      }                                                                                            \
      cm_kv[(at) + r * (ld4) + c] = x;                                                             \
    }                                                                                              \
  }

// The double-buffered body's next K/V tile in registers: its octets (8 halves, K's then V's)
// spread over the workgroup. Sized for the smallest workgroup (4 subgroups of 8 lanes: lavapipe)
// at the widest head dims; a larger workgroup or narrower heads leave the tail unused (bounds
// from specialization constants the driver folds).
#define CM_WG_MIN 32u
#define CM_KV_PER (CM_BC * 2u * (CM_DMAX / 8u) / CM_WG_MIN)
const uint CM_KO = CM_BC * (D / 8u), CM_VO = CM_BC * (DV / 8u);
uvec4 cm_kv_reg[CM_KV_PER];

// 8 halves of row ROW of K or V (BUF, its 16-byte view BUF16 where VEC) from element BASE + 8 * C
// of the row, stride SN, into u. The buffers are distinct variables, so one macro for both.
#define CM_KV_LOAD8(BUF, BUF16, BASE, SN, VEC, ROW, C)                                       \
  {                                                                                          \
    const uint g = BASE + uint(ROW) * SN + 8u * (C);                                          \
    if (VEC)                                                                                 \
      u = BUF16[g / 8u];                                                                     \
    else                                                                                     \
      u = uvec4(packFloat2x16(f16vec2(BUF[g], BUF[g + 1u])),                                 \
                packFloat2x16(f16vec2(BUF[g + 2u], BUF[g + 3u])),                            \
                packFloat2x16(f16vec2(BUF[g + 4u], BUF[g + 5u])),                            \
                packFloat2x16(f16vec2(BUF[g + 6u], BUF[g + 7u])));                           \
  }

// Keys first .. lim - 1 (at most CM_BC; zeros past lim) into the registers.
void cm_kv_fetch(int first, int lim, bool k_vec, bool v_vec) {
  [[unroll]] for (uint t = 0; t < CM_KV_PER; t++) {
    const uint i = gl_LocalInvocationIndex + t * gl_WorkGroupSize.x;
    if (i >= CM_KO + CM_VO) continue;
    const bool is_k = i < CM_KO;
    const uint j = is_k ? i : i - CM_KO, w8 = is_k ? D / 8u : DV / 8u;
    const int row = first + int(j / w8);
    uvec4 u = uvec4(0);
    if (row < lim) {
      if (is_k)
        CM_KV_LOAD8(k, k16, k_base, p.k_sn, k_vec, row, j % w8)
      else
        CM_KV_LOAD8(v, v16, v_base, p.v_sn, v_vec, row, j % w8)
    }
    cm_kv_reg[t] = u;
  }
}

// The registers into the stage at f16vec4 `at` (K at pitch CM_PK, then V at CM_PV).
void cm_kv_store(uint at) {
  [[unroll]] for (uint t = 0; t < CM_KV_PER; t++) {
    const uint i = gl_LocalInvocationIndex + t * gl_WorkGroupSize.x;
    if (i >= CM_KO + CM_VO) continue;
    const bool is_k = i < CM_KO;
    const uint j = is_k ? i : i - CM_KO, w8 = is_k ? D / 8u : DV / 8u;
    const uint dst = is_k ? at + (j / w8) * CM_PK + 2u * (j % w8)
                          : at + CM_BC * CM_PK + (j / w8) * CM_PV + 2u * (j % w8);
    cm_kv[dst] = cm_lo(cm_kv_reg[t]);
    cm_kv[dst + 1u] = cm_hi(cm_kv_reg[t]);
  }
}

void main() {
  const uint lid = gl_LocalInvocationIndex, sgs = gl_SubgroupSize, wg = 4u * sgs;
  const uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  const uint bh = gl_WorkGroupID.y, b = bh / p.h, hh = bh % p.h, kvh = hh / p.group;
  const uint r0 = gl_WorkGroupID.x * CM_BR, r1 = min(r0 + CM_BR, p.nq);
  const uint srow0 = r0 + sg * CM;
  const uint pk = CM_PK, pv = CM_PV;
  k_base = p.k_off + kv_batch(b) * p.k_sb + kvh * p.k_sh;
  v_base = p.v_off + kv_batch(b) * p.v_sb + kvh * p.v_sh;
  const uint q_base = p.q_off + b * p.q_sb + hh * p.q_sh;
  const bool has_bias = (p.flags & 1u) != 0u;
  // Rows start on 16 bytes when every offset and stride is a multiple of 8 halves (D and DV are).
  const bool q_vec = ((p.q_off | p.q_sb | p.q_sh | p.q_sn) & 7u) == 0u;
  const bool k_vec = ((p.k_off | p.k_sb | p.k_sh | p.k_sn) & 7u) == 0u;
  const bool v_vec = ((p.v_off | p.v_sb | p.v_sh | p.v_sn) & 7u) == 0u;

  // Keys any row of this block may see (as the other bodies).
  int hi = int(p.nk);
  if ((p.flags & 2u) != 0u) hi = clamp(kv_len[p.kv_len_off + b], 0, hi);
#if RAMP
  const int at0 = hi - int(p.nq);
  int lo = max(max(0, int(r0) + p.lower_off), ramp_lo(hh, r0, at0));
#else
  int lo = max(0, int(r0) + p.lower_off);
#endif
  hi = min(hi, int(r1) - 1 + p.upper_off + 1);
  // Every subgroup runs every tile the workgroup visits, rows or not: skipping a subgroup's matrix
  // work (a subgroup-uniform branch around coopmat ops and subgroup barriers) gives wrong results
  // on lavapipe 26, where the workgroup's subgroups run in step.

  // Q into matrix registers, through the K/V staging area.
  CM_STAGE(q, q16, q_base, p.q_sn, r0, p.nq, CM_BR, D, 0u, pk, q_vec)
  barrier();
  coopmat<float16_t, gl_ScopeSubgroup, CM, CM, gl_MatrixUseA> qf[CM_DMAX / CM];
  [[unroll]] for (uint i = 0; i < CM_DMAX / CM; i++)
    if (i * CM < D)
      coopMatLoad(qf[i], cm_kv, sg * CM * pk + i * (CM / 4u), pk,
                  gl_CooperativeMatrixLayoutRowMajor);

  // Softmax lanes: tpr lanes per row (lane = row * tpr + slice), each with the tile's columns
  // slice, slice + tpr, ...; subgroups narrower than CM own CM / size rows a lane.
  const uint tpr = max(1u, sgs / CM), rstep = sgs / tpr, slice = lane % tpr;
  float m[CM_RPL], l[CM_RPL];
  [[unroll]] for (uint ri = 0; ri < CM_RPL; ri++) {
    m[ri] = NEG;
    l[ri] = 0.0;
  }
  coopmat<float, gl_ScopeSubgroup, CM, CM, gl_MatrixUseAccumulator> acc[CM_DMAX / CM];
  [[unroll]] for (uint i = 0; i < CM_DMAX / CM; i++)
    acc[i] = coopmat<float, gl_ScopeSubgroup, CM, CM, gl_MatrixUseAccumulator>(0.0);
  const uint s_at = sg * CM * CM_SP, p_at = sg * CM * CM_LDP;
  const float NEG_INF = uintBitsToFloat(0xff800000u); // a masked score: exp2 gives exactly 0
  // Which row each of this lane's accumulator elements is in (the element order is the
  // implementation's, the same for every accumulator of this type): loaded from a table of rows.
  for (uint e = lane; e < CM * CM; e += sgs) cm_s[s_at + e] = float(e / CM);
  subgroupMemoryBarrierShared();
  subgroupBarrier();
  coopmat<float, gl_ScopeSubgroup, CM, CM, gl_MatrixUseAccumulator> rowof;
  coopMatLoad(rowof, cm_s, s_at, CM, gl_CooperativeMatrixLayoutRowMajor);
  subgroupBarrier();

  // Two stages: the first tile into stage 0 once Q's fragments are out of the area.
  uint st = 0u;
  if (CM_STAGES == 2u) {
    barrier(); // Q's fragments are loaded
    if (lo < hi) {
      cm_kv_fetch(lo, min(lo + int(CM_BC), hi), k_vec, v_vec);
      cm_kv_store(0u);
    }
    barrier();
  }
  for (t0 = lo; t0 < hi; t0 += int(CM_BC)) {
    t1 = min(t0 + int(CM_BC), hi);
    const uint k_at = st * CM_KV_STAGE, v_at = k_at + CM_BC * pk;
    const int n0 = t0 + int(CM_BC); // the next tile's first key
    if (CM_STAGES == 2u) {
      // The next tile's loads, in flight during this tile's work (this tile's stage was filled
      // before the barrier that ended the previous one).
      if (n0 < hi) cm_kv_fetch(n0, min(n0 + int(CM_BC), hi), k_vec, v_vec);
    } else {
      barrier(); // Q's fragments are loaded / the previous tile's readers are done
      CM_STAGE(k, k16, k_base, p.k_sn, t0, t1, CM_BC, D, k_at, pk, k_vec)
      CM_STAGE(v, v16, v_base, p.v_sn, t0, t1, CM_BC, DV, v_at, pv, v_vec)
      barrier();
    }
    // S = Q·Kᵀ for this subgroup's rows: Kᵀ is the staged K read column-major.
    [[unroll]] for (uint kb = 0; kb < CM_BC / CM; kb++) {
      coopmat<float, gl_ScopeSubgroup, CM, CM, gl_MatrixUseAccumulator> s =
          coopmat<float, gl_ScopeSubgroup, CM, CM, gl_MatrixUseAccumulator>(0.0);
      [[unroll]] for (uint i = 0; i < CM_DMAX / CM; i++)
        if (i * CM < D) {
          coopmat<float16_t, gl_ScopeSubgroup, CM, CM, gl_MatrixUseB> kf;
          coopMatLoad(kf, cm_kv, k_at + kb * CM * pk + i * (CM / 4u), pk,
                      gl_CooperativeMatrixLayoutColumnMajor);
          s = coopMatMulAdd(qf[i], kf, s);
        }
      coopMatStore(s, cm_s, s_at + kb * CM, CM_SP, gl_CooperativeMatrixLayoutRowMajor);
    }
    subgroupMemoryBarrierShared();
    subgroupBarrier();

    // A full tile that every row of the subgroup sees whole needs no mask.
    const bool interior = t1 - t0 == int(CM_BC) && srow0 + CM <= p.nq &&
                          t0 >= int(srow0 + CM - 1u) + p.lower_off &&
                          t1 - 1 <= int(srow0) + p.upper_off;
    float alpha[CM_RPL];
    [[unroll]] for (uint ri = 0; ri < CM_RPL; ri++) alpha[ri] = 1.0;
    [[unroll]] for (uint ri = 0; ri < CM_RPL; ri++) {
      const uint rl = lane / tpr + ri * rstep;
      if (rl < CM) { // uniform: rstep * ri < CM for every lane or none
        const uint row = srow0 + rl;
        const int irow = int(row);
        const int lo_row = irow + p.lower_off, hi_row = irow + p.upper_off;
        const uint srow = s_at + rl * CM_SP;
        // Rows 8 apart start on the same bank (pitch 36): their lanes start tpr columns apart.
        const uint rot = tpr * (rl / 8u);
        // Scores into log2 units, masked ones to -inf, and the row's max over the tile.
        float tmax = NEG_INF;
        for (uint u = 0; u < CM_BC; u += tpr) {
          const uint jj = (slice + u + rot) & (CM_BC - 1u);
          const int j = t0 + int(jj);
          float sc = cm_s[srow + jj] * p.scale_log2;
          bool keep = interior || (row < p.nq && j < t1 && j >= lo_row && j <= hi_row);
          if (keep && has_bias) sc += bias_at(b, hh, row, j) * LOG2E;
#if RAMP
          if (keep) keep = ramp_keep(sc, irow + at0 - j);
#endif
          sc = keep ? sc : NEG_INF;
          cm_s[srow + jj] = sc;
          tmax = max(tmax, sc);
        }
        for (uint off = 1u; off < tpr; off <<= 1u) tmax = max(tmax, subgroupShuffleXor(tmax, off));
        // The running max moves to the tile's; O's row and l shrink by alpha (0 before any key:
        // O's row is still zero).
        const float mn = max(m[ri], tmax);
        alpha[ri] = exp2(m[ri] - mn);
        m[ri] = mn;
        float psum = 0.0;
        for (uint u = 0; u < CM_BC; u += tpr) {
          const uint jj = (slice + u + rot) & (CM_BC - 1u);
          const float pr = exp2(cm_s[srow + jj] - m[ri]);
          psum += pr;
          cm_p[p_at + rl * CM_LDP + jj] = float16_t(pr);
        }
        l[ri] = l[ri] * alpha[ri] + psum; // this lane's part; the row's total is summed at the end
      }
    }
    // O's rows times their alpha, in registers: element k of this lane's part of any
    // accumulator sits in row rowof[k]; that row's alpha comes from its first softmax lane.
    for (int k = 0; k < rowof.length(); k++) {
      const uint r = uint(rowof[k]);
      float a = subgroupShuffle(alpha[0], (r % rstep) * tpr);
#if CM > 8
      const float a1 = subgroupShuffle(alpha[CM_RPL - 1u], (r % rstep) * tpr);
      if (r >= rstep) a = a1; // subgroups narrower than CM: the lane's second row
#endif
      [[unroll]] for (uint i = 0; i < CM_DMAX / CM; i++)
        if (i * CM < DV) acc[i][k] *= a;
    }
    subgroupMemoryBarrierShared();
    subgroupBarrier();
    // O += P·V.
    [[unroll]] for (uint kb = 0; kb < CM_BC / CM; kb++) {
      coopmat<float16_t, gl_ScopeSubgroup, CM, CM, gl_MatrixUseA> pf;
      coopMatLoad(pf, cm_p, p_at + kb * CM, CM_LDP, gl_CooperativeMatrixLayoutRowMajor);
      [[unroll]] for (uint i = 0; i < CM_DMAX / CM; i++)
        if (i * CM < DV) {
          coopmat<float16_t, gl_ScopeSubgroup, CM, CM, gl_MatrixUseB> vf;
          coopMatLoad(vf, cm_kv, v_at + kb * CM * pv + i * (CM / 4u), pv,
                      gl_CooperativeMatrixLayoutRowMajor);
          acc[i] = coopMatMulAdd(pf, vf, acc[i]);
        }
    }
    subgroupBarrier(); // the scratch is read before the next tile overwrites it
    if (CM_STAGES == 2u) {
      // The next tile into the other stage, last read in the previous tile (before the barrier
      // that ended it).
      if (n0 < hi) cm_kv_store((st ^ 1u) * CM_KV_STAGE);
      barrier(); // this stage's readers are done, the next one is staged
      st ^= 1u;
    }
  }

  // Each row's sum over its lanes, then O's rows times 1 / l (0 for rows no key may see) in
  // registers, as the rescale above: the factor of row r comes from its first softmax lane.
  float inv[CM_RPL];
  [[unroll]] for (uint ri = 0; ri < CM_RPL; ri++) {
    inv[ri] = 0.0;
    const uint rl = lane / tpr + ri * rstep;
    if (rl < CM) { // uniform, as above
      float lt = l[ri];
      for (uint off = 1u; off < tpr; off <<= 1u) lt += subgroupShuffleXor(lt, off);
      inv[ri] = lt > 0.0 ? 1.0 / lt : 0.0;
    }
  }
  for (int k = 0; k < rowof.length(); k++) {
    const uint r = uint(rowof[k]);
    float a = subgroupShuffle(inv[0], (r % rstep) * tpr);
#if CM > 8
    const float a1 = subgroupShuffle(inv[CM_RPL - 1u], (r % rstep) * tpr);
    if (r >= rstep) a = a1;
#endif
    [[unroll]] for (uint i = 0; i < CM_DMAX / CM; i++)
      if (i * CM < DV) acc[i][k] *= a;
  }
  // O leaves through the scratch, CM x CM at a time, rows past Nq dropped.
  [[unroll]] for (uint i = 0; i < CM_DMAX / CM; i++)
    if (i * CM < DV) {
      coopMatStore(acc[i], cm_s, s_at, CM, gl_CooperativeMatrixLayoutRowMajor);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      for (uint e = lane; e < CM * CM; e += sgs) {
        const uint orow = srow0 + e / CM;
        if (orow < p.nq)
          o[p.o_off + out_row(bh, orow) * DV + i * CM + e % CM] =
              T_IO(cm_s[s_at + e]);
      }
      subgroupBarrier();
    }
}
