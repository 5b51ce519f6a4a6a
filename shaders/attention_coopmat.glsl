// Cooperative-matrix body of attention.comp (ATTN_COOPMAT, f16 q/k/v): S = Q·Kᵀ and O += P·V as
// CM x CM matrix tiles on tensor cores, f32 accumulators. Four subgroups per workgroup, each owning
// CM query rows (CM_BR = 4 * CM rows a workgroup); K and V tiles of CM_BC keys are staged in shared
// memory (f16, zero past the edges) for all four. Q stays in matrix registers for the whole run.
// Two passes over the keys (both skip the blocks every row's masks remove): the first finds each
// row's max m and sum l of exp2(score - m), the second writes P = exp2(score - m) / l (f16) and
// accumulates O = P·V. So the accumulators never need a per-row rescale, which
// VK_KHR_cooperative_matrix cannot do in registers; the cost is Q·Kᵀ twice. The scores go through a
// per-subgroup f32 scratch where one lane per row applies the scale, bias, ramp, window, causal
// and kv_len masks exactly as the other bodies do (subgroups narrower than CM: several rows a lane). Rows no key may see give zeros.
// Defines: CM (8 or 16). Specialization constants as attention.comp: 0 local size (4 subgroups),
// 1 BR (= CM_BR), 2 BC (= CM_BC), 3 D, 4 DV (multiples of CM, at most CM_DMAX).
#define CM_BR (4u * CM)
#define CM_BC 32u
#define CM_DMAX 128u
#define CM_LDMAX (CM_DMAX + 8u)  // widest row pitch of the staged tiles, in halves
#define CM_LDP (CM_BC + 8u)      // pitch of P; 16 bytes of padding keep fragment starts aligned

// K tile [CM_BC, D] then V tile [CM_BC, DV] (pitches D + 8, DV + 8); Q [CM_BR, D] before the first.
shared float16_t cm_kv[2u * CM_BC * CM_LDMAX];
shared float cm_s[4u * CM * CM_BC];          // per subgroup: scores [CM, CM_BC], then outputs
shared float16_t cm_p[4u * CM * CM_LDP];     // per subgroup: probabilities [CM, CM_BC]
shared float cm_m[4u * CM], cm_l[4u * CM];   // per row: running max and sum (log2 units)

void main() {
  const uint lid = gl_LocalInvocationIndex, wg = 4u * gl_SubgroupSize;
  const uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
  const uint bh = gl_WorkGroupID.y, b = bh / p.h, hh = bh % p.h, kvh = hh / p.group;
  const uint r0 = gl_WorkGroupID.x * CM_BR, r1 = min(r0 + CM_BR, p.nq);
  const uint srow0 = r0 + sg * CM;
  const uint pk = D + 8u, pv = DV + 8u, v_at = CM_BC * CM_LDMAX;
  k_base = p.k_off + b * p.k_sb + kvh * p.k_sh;
  v_base = p.v_off + b * p.v_sb + kvh * p.v_sh;
  const uint q_base = p.q_off + b * p.q_sb + hh * p.q_sh;
  const bool has_bias = (p.flags & 1u) != 0u;

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

  // Q into matrix registers, through the K/V staging area.
  for (uint e = lid; e < CM_BR * D; e += wg) {
    const uint rr = r0 + e / D;
    cm_kv[(e / D) * pk + e % D] = rr < p.nq ? q[q_base + rr * p.q_sn + e % D] : float16_t(0.0);
  }
  barrier();
  coopmat<float16_t, gl_ScopeSubgroup, CM, CM, gl_MatrixUseA> qf[CM_DMAX / CM];
  [[unroll]] for (uint i = 0; i < CM_DMAX / CM; i++)
    if (i * CM < D)
      coopMatLoad(qf[i], cm_kv, sg * CM * pk + i * CM, pk, gl_CooperativeMatrixLayoutRowMajor);

  // Lanes own rows lane, lane + subgroup size, ... of the subgroup's CM (one each on GPUs, where
  // the subgroup is at least CM wide); their softmax state lives in shared memory.
  for (uint rl = lane; rl < CM; rl += gl_SubgroupSize) {
    cm_m[sg * CM + rl] = NEG;
    cm_l[sg * CM + rl] = 0.0;
  }
  coopmat<float, gl_ScopeSubgroup, CM, CM, gl_MatrixUseAccumulator> acc[CM_DMAX / CM];
  [[unroll]] for (uint i = 0; i < CM_DMAX / CM; i++)
    acc[i] = coopmat<float, gl_ScopeSubgroup, CM, CM, gl_MatrixUseAccumulator>(0.0);
  const uint s_at = sg * CM * CM_BC, p_at = sg * CM * CM_LDP;

  for (uint pass = 0; pass < 2u; pass++) {
    for (t0 = lo; t0 < hi; t0 += int(CM_BC)) {
      t1 = min(t0 + int(CM_BC), hi);
      barrier(); // Q's fragments are loaded / the previous tile's readers are done
      for (uint e = lid; e < CM_BC * D; e += wg) {
        const int key = t0 + int(e / D);
        cm_kv[(e / D) * pk + e % D] =
            key < t1 ? k[k_base + uint(key) * p.k_sn + e % D] : float16_t(0.0);
      }
      if (pass == 1u)
        for (uint e = lid; e < CM_BC * DV; e += wg) {
          const int key = t0 + int(e / DV);
          cm_kv[v_at + (e / DV) * pv + e % DV] =
              key < t1 ? v[v_base + uint(key) * p.v_sn + e % DV] : float16_t(0.0);
        }
      barrier();
      // S = Q·Kᵀ for this subgroup's rows: Kᵀ is the staged K read column-major.
      [[unroll]] for (uint kb = 0; kb < CM_BC / CM; kb++) {
        coopmat<float, gl_ScopeSubgroup, CM, CM, gl_MatrixUseAccumulator> s =
            coopmat<float, gl_ScopeSubgroup, CM, CM, gl_MatrixUseAccumulator>(0.0);
        [[unroll]] for (uint i = 0; i < CM_DMAX / CM; i++)
          if (i * CM < D) {
            coopmat<float16_t, gl_ScopeSubgroup, CM, CM, gl_MatrixUseB> kf;
            coopMatLoad(kf, cm_kv, kb * CM * pk + i * CM, pk, gl_CooperativeMatrixLayoutColumnMajor);
            s = coopMatMulAdd(qf[i], kf, s);
          }
        coopMatStore(s, cm_s, s_at + kb * CM, CM_BC, gl_CooperativeMatrixLayoutRowMajor);
      }
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      for (uint rl = lane; rl < CM; rl += gl_SubgroupSize) {
        const uint row = srow0 + rl;
        const bool row_ok = row < p.nq;
        const int irow = int(row);
        const int lo_row = irow + p.lower_off, hi_row = irow + p.upper_off;
        float m = cm_m[sg * CM + rl], l = cm_l[sg * CM + rl];
        for (uint jj = 0; jj < CM_BC; jj++) {
          const int j = t0 + int(jj);
          float sc = cm_s[s_at + rl * CM_BC + jj] * p.scale_log2;
          bool keep = row_ok && j < t1 && j >= lo_row && j <= hi_row;
          if (keep && has_bias) sc += bias_at(b, hh, row, j) * LOG2E;
#if RAMP
          if (keep) keep = ramp_keep(sc, irow + at0 - j);
#endif
          if (pass == 0u) {
            if (keep) {
              if (sc > m) {
                l = l * exp2(m - sc) + 1.0;
                m = sc;
              } else {
                l += exp2(sc - m);
              }
            }
          } else {
            cm_p[p_at + rl * CM_LDP + jj] =
                float16_t(keep && l > 0.0 ? exp2(sc - m) / l : 0.0);
          }
        }
        cm_m[sg * CM + rl] = m;
        cm_l[sg * CM + rl] = l;
      }
      if (pass == 1u) {
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        [[unroll]] for (uint kb = 0; kb < CM_BC / CM; kb++) {
          coopmat<float16_t, gl_ScopeSubgroup, CM, CM, gl_MatrixUseA> pf;
          coopMatLoad(pf, cm_p, p_at + kb * CM, CM_LDP, gl_CooperativeMatrixLayoutRowMajor);
          [[unroll]] for (uint i = 0; i < CM_DMAX / CM; i++)
            if (i * CM < DV) {
              coopmat<float16_t, gl_ScopeSubgroup, CM, CM, gl_MatrixUseB> vf;
              coopMatLoad(vf, cm_kv, v_at + kb * CM * pv + i * CM, pv,
                          gl_CooperativeMatrixLayoutRowMajor);
              acc[i] = coopMatMulAdd(pf, vf, acc[i]);
            }
        }
      }
      subgroupBarrier(); // the scratch is read before the next tile overwrites it
    }
  }

  // O leaves through the scratch, CM x CM at a time, rows past Nq dropped.
  [[unroll]] for (uint i = 0; i < CM_DMAX / CM; i++)
    if (i * CM < DV) {
      coopMatStore(acc[i], cm_s, s_at, CM, gl_CooperativeMatrixLayoutRowMajor);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      for (uint e = lane; e < CM * CM; e += gl_SubgroupSize) {
        const uint orow = srow0 + e / CM;
        if (orow < p.nq) o[p.o_off + out_row(bh, orow) * DV + i * CM + e % CM] = T_IO(cm_s[s_at + e]);
      }
      subgroupBarrier();
    }
}
