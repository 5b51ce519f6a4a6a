// Cooperative-matrix body for gemm.comp (GEMM_COOPMAT): tensor cores through
// VK_KHR_cooperative_matrix. f16 A, f16 or quantised B, f32 accumulation, the epilogue of every
// other body.
// The workgroup is CM_SGM x 2 subgroups; each owns CM_TM x CM_TN accumulator tiles of CM x CM
// (CM: the device's f16*f16->f32 subgroup shape, 16 on NVIDIA, 8 on lavapipe), so the workgroup
// tile is CM_BM x CM_BN: at CM 16 64x64 a subgroup in 128x128 (2x2) or 256x128 (4x2) tiles, 32x32
// in the 64x64 medium tile. Per k-step of CM_BK the workgroup stages A [CM_BM, CM_BK] and B in
// shared memory, converting and zero-filling past the edges there, so any operand layout, odd
// size or batch stride goes through the same fragment loads. B keeps its memory order: [N, K]
// weights staged as [CM_BN][CM_BK] (column-major fragments), [K, N] ones as [CM_BK][CM_BN]
// (row-major fragments), so every staging store is a vector of 4 halves, never a transpose.
// Global reads are 16 bytes (8 halves) where the chooser proved the operand 8-aligned.
// Two shared stages: step s multiplies stage s & 1 while its invocations hold step s + 1's tile in
// registers (loaded before the MMAs, stored into the other stage after them), so there is one
// workgroup barrier per step and the loads' latency sits behind the MMAs.
// The accumulators leave through a per-subgroup CM x CM scratch, where each lane applies the
// epilogue (bias, activation, residual, bounds) to 4 adjacent columns at once: vec4 loads of bias
// and residual and one 8-byte store of C where the chooser proved them contiguous and aligned
// (CM_C_VEC4), element by element otherwise. No output-sized shared buffer.
// B_QUANT: B is GGUF blocks ([N, K] rows of whole blocks), dequantised on load into the f16 tile
// (quant_decode.glsl), so quantised prefill runs on tensor cores too.
// CM_SPLITK: the workgroups along z split K instead of batches; each stores its raw f32
// accumulators (coopMatStore, no epilogue) into C, a [splits, Mp, Np] scratch padded to whole
// tiles, which gemm_splitk.glsl sums and finishes.
// Defines: CM (8 or 16), CM_SGM (subgroups along M: 2 or 4), CM_TM, CM_TN (tiles per subgroup
// along M and N), CM_KS (CM-steps per stage: 1 or 2). Specialization constants (gemm.comp): 0 WG
// = 2 * CM_SGM * subgroup size; 6 the activation, 7 A contiguous along k with K % 8 == 0 and
// 8-aligned rows (16-byte loads), 8 B staged as [K, N] (contiguous along n), 9 B 8-aligned along
// its contiguous axis likewise, 10 the vec4 epilogue.
// Workgroups: (ceil(N / CM_BN), ceil(M / CM_BM), batches or splits).
#ifndef CM_KS
#error "GEMM_COOPMAT needs CM, CM_SGM, CM_TM, CM_TN, CM_KS"
#endif
#if !defined(A_F16) || !(defined(B_F16) || defined(B_QUANT))
#error "GEMM_COOPMAT multiplies f16 A by f16 or quantised B"
#endif
#define CM_SG (2u * CM_SGM)
#define CM_BM (CM_SGM * CM_TM * CM)
#define CM_BN (2u * CM_TN * CM)
#define CM_BK (CM_KS * CM)
// Row pitches of the staged tiles in f16vec4s: 16 bytes of padding, so that rows start 16 bytes
// apart in the banks (8 rows of a fragment load hit distinct banks) and every fragment start
// stays 16-byte aligned as coopMatLoad wants.
#define CM_LDK ((CM_BK + 8u) / 4u) // A [BM][BK], B [BN][BK]
#define CM_LDN ((CM_BN + 8u) / 4u) // B [BK][BN]
#define CM_A_OCT (CM_BM * CM_BK / 8u)
#define CM_B_OCT (CM_BN * CM_BK / 8u)
#define CM_A_STAGE (CM_BM * CM_LDK)
#define CM_B_STAGE max(CM_BN * CM_LDK, CM_BK * CM_LDN)
#define CM_SP (CM + 4u) // scratch pitch (floats): 16-byte rows, 4 banks apart

shared f16vec4 cm_sh_a[2u * CM_A_STAGE];
shared f16vec4 cm_sh_b[2u * CM_B_STAGE];
shared vec4 cm_sh_c[CM_SG * CM * CM_SP / 4u]; // one CM x CM scratch per subgroup, in vec4s

// 16-byte views of A and B (8 halves a load).
layout(std430, set = 0, binding = 0) readonly buffer BufA16 { uvec4 a16_[]; };
#ifndef B_QUANT
layout(std430, set = 0, binding = 1) readonly buffer BufB16 { uvec4 b16_[]; };
#endif
#ifdef CM_SPLITK
#if defined(C_F16) || defined(BIAS) || defined(RESIDUAL)
#error "CM_SPLITK stores raw f32 partial sums"
#endif
#else
layout(std430, set = 0, binding = 2) writeonly buffer BufC4 { C_T4 c_data4_[]; };
#endif

uvec4 cm_pack(f16vec4 lo, f16vec4 hi) {
  return uvec4(packFloat2x16(lo.xy), packFloat2x16(lo.zw), packFloat2x16(hi.xy),
               packFloat2x16(hi.zw));
}

// A[row, k..k+7] as 8 halves, zero past M and K.
uvec4 cm_load_a(uint row, uint k) {
  if (row >= p.m || k >= p.k) return uvec4(0);
  if (CM_A_VEC8) return a16_[(a_base + row * p.a_rs + k) >> 3];
  f16vec4 v[2] = {f16vec4(0.0), f16vec4(0.0)};
  [[unroll]] for (uint j = 0; j < 8u; j++)
    if (k + j < p.k) v[j >> 2][j & 3u] = a_data_[a_base + row * p.a_rs + (k + j) * p.a_ks];
  return cm_pack(v[0], v[1]);
}

// B[k..k+7, col] (staged along k: [N, K] weights) as 8 halves, zero past N and K.
uvec4 cm_load_b_k(uint k, uint col) {
  if (col >= p.n || k >= p.k) return uvec4(0);
#ifdef B_QUANT
  // GGUF blocks, dequantised into the f16 tile: rows of whole blocks of 32 or 256 (the lowering
  // checks), so the 8 values from k (a multiple of 8) lie in one block: two vec4 decodes.
  uint q = (b_base + col * p.b_ns + k) >> 2;
  return cm_pack(f16vec4(b_data4(q)), f16vec4(b_data4(q + 1u)));
#else
  if (CM_B_VEC8) return b16_[(b_base + col * p.b_ns + k) >> 3];
  f16vec4 v[2] = {f16vec4(0.0), f16vec4(0.0)};
  [[unroll]] for (uint j = 0; j < 8u; j++)
    if (k + j < p.k) v[j >> 2][j & 3u] = b_data_[b_base + (k + j) * p.b_ks + col * p.b_ns];
  return cm_pack(v[0], v[1]);
#endif
}

// B[k, col..col+7] (staged along n: [K, N] weights) as 8 halves, zero past N and K. Quantised
// weights are [N, K] rows (never staged this way).
uvec4 cm_load_b_n(uint k, uint col) {
  if (k >= p.k || col >= p.n) return uvec4(0);
#ifdef B_QUANT
  return uvec4(0);
#else
  if (CM_B_VEC8) return b16_[(b_base + k * p.b_ks + col) >> 3];
  f16vec4 v[2] = {f16vec4(0.0), f16vec4(0.0)};
  [[unroll]] for (uint j = 0; j < 8u; j++)
    if (col + j < p.n) v[j >> 2][j & 3u] = b_data_[b_base + k * p.b_ks + (col + j) * p.b_ns];
  return cm_pack(v[0], v[1]);
#endif
}

// Per invocation, the octets (8 halves) of one step. The register arrays are sized for the
// smallest workgroup the kernels run in (subgroups of 8 lanes: lavapipe); a larger workgroup
// leaves the tail entries unused (guarded by the workgroup size, a specialization constant the
// driver folds).
#define CM_WG_MIN (8u * CM_SG)
#define CM_A_PER ((CM_A_OCT + CM_WG_MIN - 1u) / CM_WG_MIN)
#define CM_B_PER ((CM_B_OCT + CM_WG_MIN - 1u) / CM_WG_MIN)
uvec4 cm_reg_a[CM_A_PER];
uvec4 cm_reg_b[CM_B_PER];

void cm_fetch(uint m0, uint n0, uint k0) {
  uint tid = gl_LocalInvocationIndex;
  [[unroll]] for (uint t = 0; t < CM_A_PER; t++) {
    uint i = tid + t * WG;
    if (i < CM_A_OCT) {
      uint r = i / (CM_BK / 8u), kk = (i % (CM_BK / 8u)) * 8u;
      cm_reg_a[t] = cm_load_a(m0 + r, k0 + kk);
    }
  }
  [[unroll]] for (uint t = 0; t < CM_B_PER; t++) {
    uint i = tid + t * WG;
    if (i < CM_B_OCT) {
      if (CM_B_ROWS) {
        uint kk = i / (CM_BN / 8u), c = (i % (CM_BN / 8u)) * 8u;
        cm_reg_b[t] = cm_load_b_n(k0 + kk, n0 + c);
      } else {
        uint c = i / (CM_BK / 8u), kk = (i % (CM_BK / 8u)) * 8u;
        cm_reg_b[t] = cm_load_b_k(k0 + kk, n0 + c);
      }
    }
  }
}

// The registers into stage `s`: two 8-byte stores an octet.
void cm_stage(uint s) {
  uint tid = gl_LocalInvocationIndex, sa = s * CM_A_STAGE, sb = s * CM_B_STAGE;
  [[unroll]] for (uint t = 0; t < CM_A_PER; t++) {
    uint i = tid + t * WG;
    if (i < CM_A_OCT) {
      uint r = i / (CM_BK / 8u), q = (i % (CM_BK / 8u)) * 2u;
      uvec4 u = cm_reg_a[t];
      cm_sh_a[sa + r * CM_LDK + q] = f16vec4(unpackFloat2x16(u.x), unpackFloat2x16(u.y));
      cm_sh_a[sa + r * CM_LDK + q + 1u] = f16vec4(unpackFloat2x16(u.z), unpackFloat2x16(u.w));
    }
  }
  [[unroll]] for (uint t = 0; t < CM_B_PER; t++) {
    uint i = tid + t * WG;
    if (i < CM_B_OCT) {
      uint at;
      if (CM_B_ROWS)
        at = (i / (CM_BN / 8u)) * CM_LDN + (i % (CM_BN / 8u)) * 2u;
      else
        at = (i / (CM_BK / 8u)) * CM_LDK + (i % (CM_BK / 8u)) * 2u;
      uvec4 u = cm_reg_b[t];
      cm_sh_b[sb + at] = f16vec4(unpackFloat2x16(u.x), unpackFloat2x16(u.y));
      cm_sh_b[sb + at + 1u] = f16vec4(unpackFloat2x16(u.z), unpackFloat2x16(u.w));
    }
  }
}

#ifndef CM_SPLITK
// The epilogue of 4 adjacent outputs row, col..col+3 (all in bounds) from the scratch.
void cm_store4(uint row, uint col, vec4 v) {
  if (CM_C_VEC4) {
#ifdef BIAS
    v += vec4(bias_data4[(p.bias_off + col) >> 2]);
#endif
    v = vkf_activation4(ACT, v);
#ifdef RESIDUAL
    v += vec4(res_data4[(r_base + row * p.r_rs + col) >> 2]);
#endif
    c_data4_[(c_base + row * p.c_rs + col) >> 2] = C_T4(v);
  } else {
    [[unroll]] for (uint j = 0; j < 4u; j++)
      if (col + j < p.n) store_c(row, col + j, v[j]);
  }
}
#endif

void main() {
  set_batch_bases();
  uint m0 = gl_WorkGroupID.y * CM_BM, n0 = gl_WorkGroupID.x * CM_BN;
  uint sg = gl_SubgroupID, sm = (sg >> 1) * CM_TM * CM, sn = (sg & 1u) * CM_TN * CM;
  uint k_begin = 0, k_end = p.k;
#ifdef CM_SPLITK
  // This split's steps: an equal share of K's CM_BK-steps (the last may hold fewer or none).
  uint steps = (p.k + CM_BK - 1u) / CM_BK;
  uint per = (steps + gl_NumWorkGroups.z - 1u) / gl_NumWorkGroups.z;
  k_begin = min(p.k, gl_WorkGroupID.z * per * CM_BK);
  k_end = min(p.k, k_begin + per * CM_BK);
#endif
  coopmat<float, gl_ScopeSubgroup, CM, CM, gl_MatrixUseAccumulator> acc[CM_TM * CM_TN];
  [[unroll]] for (uint i = 0; i < CM_TM * CM_TN; i++)
    acc[i] = coopmat<float, gl_ScopeSubgroup, CM, CM, gl_MatrixUseAccumulator>(0.0);

  if (k_begin < k_end) {
    cm_fetch(m0, n0, k_begin);
    cm_stage(0u);
  }
  barrier();
  uint s = 0;
  for (uint k0 = k_begin; k0 < k_end; k0 += CM_BK) {
    bool more = k0 + CM_BK < k_end;
    if (more) cm_fetch(m0, n0, k0 + CM_BK); // in flight during the MMAs below
    uint sa = s * CM_A_STAGE, sb = s * CM_B_STAGE;
    [[unroll]] for (uint kk = 0; kk < CM_BK; kk += CM) {
      coopmat<float16_t, gl_ScopeSubgroup, CM, CM, gl_MatrixUseA> fa[CM_TM];
      [[unroll]] for (uint i = 0; i < CM_TM; i++)
        coopMatLoad(fa[i], cm_sh_a, sa + (sm + i * CM) * CM_LDK + kk / 4u, CM_LDK,
                    gl_CooperativeMatrixLayoutRowMajor);
      [[unroll]] for (uint j = 0; j < CM_TN; j++) {
        coopmat<float16_t, gl_ScopeSubgroup, CM, CM, gl_MatrixUseB> fb;
        if (CM_B_ROWS)
          coopMatLoad(fb, cm_sh_b, sb + kk * CM_LDN + (sn + j * CM) / 4u, CM_LDN,
                      gl_CooperativeMatrixLayoutRowMajor);
        else
          coopMatLoad(fb, cm_sh_b, sb + (sn + j * CM) * CM_LDK + kk / 4u, CM_LDK,
                      gl_CooperativeMatrixLayoutColumnMajor);
        [[unroll]] for (uint i = 0; i < CM_TM; i++)
          acc[i * CM_TN + j] = coopMatMulAdd(fa[i], fb, acc[i * CM_TN + j]);
      }
    }
    // The other stage was last read in the previous step, before the barrier that ended it.
    if (more) cm_stage(s ^ 1u);
    barrier(); // this stage's readers are done; the next one's stores are visible
    s ^= 1u;
  }

#ifdef CM_SPLITK
  // Raw partial sums into the padded scratch: whole tiles, no bounds, no epilogue.
  [[unroll]] for (uint i = 0; i < CM_TM; i++)
    [[unroll]] for (uint j = 0; j < CM_TN; j++)
      coopMatStore(acc[i * CM_TN + j], c_data,
                   c_base + (m0 + sm + i * CM) * p.c_rs + n0 + sn + j * CM, p.c_rs,
                   gl_CooperativeMatrixLayoutRowMajor);
#else
  uint scratch = sg * CM * CM_SP / 4u;
  [[unroll]] for (uint i = 0; i < CM_TM; i++) {
    [[unroll]] for (uint j = 0; j < CM_TN; j++) {
      coopMatStore(acc[i * CM_TN + j], cm_sh_c, scratch, CM_SP / 4u,
                   gl_CooperativeMatrixLayoutRowMajor);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      uint r0 = m0 + sm + i * CM, c0 = n0 + sn + j * CM;
      for (uint e = gl_SubgroupInvocationID; e < CM * CM / 4u; e += gl_SubgroupSize) {
        uint r = e / (CM / 4u), c = (e % (CM / 4u)) * 4u;
        if (r0 + r < p.m && c0 + c < p.n)
          cm_store4(r0 + r, c0 + c, cm_sh_c[scratch + (r * CM_SP + c) / 4u]);
      }
      subgroupBarrier(); // every lane has read the scratch before the next tile overwrites it
    }
  }
#endif
}
