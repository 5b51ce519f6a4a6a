// Register-tiled SIMT body of attention.comp (ATTN_TILED): the GPU body for prefill and encoders
// where cooperative matrices are missing (mobile and older GPUs) or the data is f32. 128
// invocations as a 16 x 8 grid own BR query rows against tiles of BC keys: invocation (tr, tc)
// holds the scores of rows tr + 16 i (TL_TR of them) against keys tc + 8 u (TL_KT) and the output
// of the same rows at dims tc + 8 c (TL_DT). S = Q·Kᵀ and O += P·V are register tiles fed from
// shared memory, so each staged K or V element feeds TL_TR rows and each staged Q or P element
// TL_KT keys or TL_DT dims (FlashAttention-2's scheme on SIMT cores, as ggml's scalar flash
// attention and register-blocked GEMMs do), where the LANES body reads two shared values per FMA.
// A row's tile max is reduced through shared memory across its 8 invocations; its sum stays per
// invocation until the end. Masks, bias, kv_len and the ramp exactly as the other bodies; no
// split-K (decode steps keep the LANES body). Shared row pitches are odd (D + 1, BC + 1) so the
// four rows a subgroup reads at once sit in different banks.
// Specialization constants as attention.comp: 0 local size (128), 1 BR (16, 32 or 64), 2 BC (16
// or 32), 3 D, 4 DV; the lowering keeps TL_TR * TL_DT <= 64 accumulators per invocation.
#define TL_T 128u
#define TL_TR (BR / 16u)
#define TL_KT (BC / 8u)
#define TL_DT ((DV + 7u) / 8u)
#define TL_QP (D + 1u)
#define TL_KP (D + 1u)
#define TL_PP (BC + 1u)

shared float tl_q[BR * TL_QP];  // [BR, D] pre-scaled into log2 units
shared float tl_k[BC * TL_KP];  // [BC, D]
shared float tl_v[BC * DV];     // [BC, DV]
shared float tl_p[BR * TL_PP];  // [BR, BC] probabilities of the current tile
shared float tl_red[BR * 8u];   // per row, one value from each of its 8 invocations

void main() {
  const uint lid = gl_LocalInvocationID.x, tr = lid / 8u, tc = lid % 8u;
  const uint bh = gl_WorkGroupID.y, b = bh / p.h, hh = bh % p.h, kvh = hh / p.group;
  const uint r0 = gl_WorkGroupID.x * BR, r1 = min(r0 + BR, p.nq);
  k_base = p.k_off + kv_batch(b) * p.k_sb + kvh * p.k_sh;
  v_base = p.v_off + kv_batch(b) * p.v_sb + kvh * p.v_sh;
  const uint q_base = p.q_off + b * p.q_sb + hh * p.q_sh;
  const bool has_bias = (p.flags & 1u) != 0u;

  // Keys any row of this block may see: whole tiles outside are skipped, not predicated.
  int hi = int(p.nk);
  if ((p.flags & 2u) != 0u) hi = clamp(kv_len[p.kv_len_off + b], 0, hi);
#if RAMP
  const int at0 = hi - int(p.nq); // query row i sits at position i + at0
  int lo = max(max(0, int(r0) + p.lower_off), ramp_lo(hh, r0, at0));
#else
  int lo = max(0, int(r0) + p.lower_off);
#endif
  hi = min(hi, int(r1) - 1 + p.upper_off + 1);

  for (uint e = lid; e < BR * D; e += TL_T) {
    const uint rl = e / D, rr = r0 + rl;
    tl_q[rl * TL_QP + e % D] = rr < p.nq ? float(q[q_base + rr * p.q_sn + e % D]) * p.scale_log2 : 0.0;
  }

  float m[TL_TR], l[TL_TR], acc[TL_TR * TL_DT];
  [[unroll]] for (uint i = 0; i < TL_TR; i++) {
    m[i] = NEG;
    l[i] = 0.0;
  }
  [[unroll]] for (uint i = 0; i < TL_TR * TL_DT; i++) acc[i] = 0.0;

  for (t0 = lo; t0 < hi; t0 += int(BC)) {
    t1 = min(t0 + int(BC), hi);
    barrier(); // the previous tile's readers are done (and tl_q is written on the first pass)
    for (uint e = lid; e < BC * D; e += TL_T) {
      const uint j = e / D;
      const int key = t0 + int(j);
      tl_k[j * TL_KP + e % D] = key < t1 ? float(k[k_base + uint(key) * p.k_sn + e % D]) : 0.0;
    }
    for (uint e = lid; e < BC * DV; e += TL_T) {
      const int key = t0 + int(e / DV);
      tl_v[e] = key < t1 ? float(v[v_base + uint(key) * p.v_sn + e % DV]) : 0.0;
    }
    barrier();

    float s[TL_TR * TL_KT];
    [[unroll]] for (uint i = 0; i < TL_TR * TL_KT; i++) s[i] = 0.0;
    for (uint d = 0; d < D; d++) {
      float qv[TL_TR], kv[TL_KT];
      [[unroll]] for (uint i = 0; i < TL_TR; i++) qv[i] = tl_q[(tr + 16u * i) * TL_QP + d];
      [[unroll]] for (uint u = 0; u < TL_KT; u++) kv[u] = tl_k[(tc + 8u * u) * TL_KP + d];
      [[unroll]] for (uint i = 0; i < TL_TR; i++)
        [[unroll]] for (uint u = 0; u < TL_KT; u++) s[i * TL_KT + u] += qv[i] * kv[u];
    }

    // A full tile that every row of the block sees whole needs no predicate.
    const bool interior = t1 - t0 == int(BC) && t0 >= int(r1) - 1 + p.lower_off &&
                          t1 - 1 <= int(r0) + p.upper_off;
    uint ok[TL_TR];
    [[unroll]] for (uint i = 0; i < TL_TR; i++) {
      const uint row = r0 + tr + 16u * i;
      const int irow = int(row), lo_row = irow + p.lower_off, hi_row = irow + p.upper_off;
      float lmax = NEG;
      uint okb = 0u;
      [[unroll]] for (uint u = 0; u < TL_KT; u++) {
        const int j = t0 + int(tc + 8u * u);
        float a = s[i * TL_KT + u];
        if (has_bias && j < t1) a += bias_at(b, hh, min(row, p.nq - 1u), j) * LOG2E;
#if RAMP
        const bool kept = ramp_keep(a, irow + at0 - j);
#else
        const bool kept = true;
#endif
        s[i * TL_KT + u] = a;
        if (kept && (interior || (j < t1 && j >= lo_row && j <= hi_row))) {
          okb |= 1u << u;
          lmax = max(lmax, a);
        }
      }
      ok[i] = okb;
      tl_red[(tr + 16u * i) * 8u + tc] = lmax;
    }
    barrier();
    [[unroll]] for (uint i = 0; i < TL_TR; i++) {
      const uint rl = tr + 16u * i;
      float mn = m[i];
      [[unroll]] for (uint c = 0; c < 8u; c++) mn = max(mn, tl_red[rl * 8u + c]);
      const float alpha = exp2(m[i] - mn);
      m[i] = mn;
      float ps = 0.0;
      [[unroll]] for (uint u = 0; u < TL_KT; u++) {
        const float pu = (ok[i] & (1u << u)) != 0u ? exp2(s[i * TL_KT + u] - mn) : 0.0;
        ps += pu;
        tl_p[rl * TL_PP + tc + 8u * u] = pu;
      }
      l[i] = l[i] * alpha + ps;
      [[unroll]] for (uint c = 0; c < TL_DT; c++) acc[i * TL_DT + c] *= alpha;
    }
    barrier();
    // Keys past t1 have probability 0 and zero values: the whole tile runs unpredicated.
    for (uint jj = 0; jj < BC; jj++) {
      float pv[TL_TR], vv[TL_DT];
      [[unroll]] for (uint i = 0; i < TL_TR; i++) pv[i] = tl_p[(tr + 16u * i) * TL_PP + jj];
      [[unroll]] for (uint c = 0; c < TL_DT; c++) {
        const uint dd = tc + 8u * c;
        vv[c] = dd < DV ? tl_v[jj * DV + dd] : 0.0;
      }
      [[unroll]] for (uint i = 0; i < TL_TR; i++)
        [[unroll]] for (uint c = 0; c < TL_DT; c++) acc[i * TL_DT + c] += pv[i] * vv[c];
    }
  }

  // Each row's sum over its 8 invocations, then the normalised output.
  barrier();
  [[unroll]] for (uint i = 0; i < TL_TR; i++) tl_red[(tr + 16u * i) * 8u + tc] = l[i];
  barrier();
  [[unroll]] for (uint i = 0; i < TL_TR; i++) {
    const uint rl = tr + 16u * i, row = r0 + rl;
    if (row >= p.nq) continue;
    float lt = 0.0;
    [[unroll]] for (uint c = 0; c < 8u; c++) lt += tl_red[rl * 8u + c];
    const float inv = lt > 0.0 ? 1.0 / lt : 0.0; // fully masked rows give zeros
    const uint o_base = p.o_off + out_row(bh, row) * DV;
    [[unroll]] for (uint c = 0; c < TL_DT; c++) {
      const uint dd = tc + 8u * c;
      if (dd < DV) o[o_base + dd] = T_IO(acc[i * TL_DT + c] * inv);
    }
  }
}
