// Cooperative-matrix body for gemm.comp (GEMM_COOPMAT): tensor cores through
// VK_KHR_cooperative_matrix. f16 A and B, f32 accumulation, the epilogue of every other body.
// The workgroup is 4 subgroups in a 2 x 2 grid; each subgroup owns CM_TM x CM_TN accumulator
// tiles of CM x CM (CM: the device's f16*f16->f32 subgroup shape, 16 on NVIDIA, 8 on lavapipe),
// so the workgroup tile is CM_BM x CM_BN. Per k-step of CM_BK the workgroup stages A [CM_BM, CM_BK]
// and B (as [CM_BN, CM_BK], k contiguous) in shared memory, converting and zero-filling past the
// edges there, so any operand layout, odd size or batch stride goes through the same fragment
// loads. The accumulators leave through a per-subgroup CM x CM scratch, where each lane applies
// store_c (bias, activation, residual, bounds) to its elements: no output-sized shared buffer.
// The next k-step's tile is read from memory into registers while the current one is multiplied
// (register double buffering: one barrier pair per step, the loads' latency behind the MMAs).
// Defines: CM (8 or 16), CM_TM, CM_TN (tiles per subgroup along M and N). Specialization constants
// (gemm.comp): 0 WG = 4 * subgroup size; 6 the activation, 7 A contiguous along k with K % 4 == 0
// (vec4 loads), 8 B contiguous along k likewise, 9 B contiguous along n with N % 4 == 0.
// Workgroups: (ceil(N / CM_BN), ceil(M / CM_BM), batches).
#ifndef CM
#error "GEMM_COOPMAT needs CM, CM_TM, CM_TN"
#endif
#if !defined(A_F16) || !defined(B_F16)
#error "GEMM_COOPMAT multiplies f16 A and B"
#endif
#define CM_BM (2u * CM_TM * CM)
#define CM_BN (2u * CM_TN * CM)
#define CM_BK (2u * CM)
// Row pitch of the staged tiles in halves: 16 bytes of padding against bank conflicts; every
// fragment start stays 16-byte aligned as coopMatLoad wants.
#define CM_LD (CM_BK + 8u)
#define CM_A_QUADS (CM_BM * CM_BK / 4u)
#define CM_B_QUADS (CM_BN * CM_BK / 4u)
// The workgroup: 4 subgroups (WG = 4 * subgroup size: 128 invocations on NVIDIA, 32 on lavapipe).
#define CM_WG WG

shared float16_t cm_sh_a[CM_BM * CM_LD]; // [CM_BM rows][CM_BK k], row-major
shared float16_t cm_sh_b[CM_BN * CM_LD]; // [CM_BN cols][CM_BK k]: B column-major
shared float cm_sh_c[4u * CM * CM];       // one CM x CM scratch per subgroup

// A[row, k..k+3] as halves, zero past M and K.
f16vec4 cm_load_a(uint row, uint k) {
  f16vec4 v = f16vec4(0.0);
  if (row >= p.m) return v;
  if (CM_A_VEC4) {
    if (k < p.k) v = f16vec4(a_data4_[(a_base + row * p.a_rs + k) >> 2]);
  } else {
    [[unroll]] for (uint j = 0; j < 4u; j++)
      if (k + j < p.k) v[j] = a_data_[a_base + row * p.a_rs + (k + j) * p.a_ks];
  }
  return v;
}

// B[k..k+3, col] (along k) as halves, zero past N and K.
f16vec4 cm_load_b_k(uint k, uint col) {
  f16vec4 v = f16vec4(0.0);
  if (col >= p.n) return v;
  if (CM_B_VEC4_K) {
    if (k < p.k) v = f16vec4(b_data4_[(b_base + col * p.b_ns + k) >> 2]);
  } else {
    [[unroll]] for (uint j = 0; j < 4u; j++)
      if (k + j < p.k) v[j] = b_data_[b_base + (k + j) * p.b_ks + col * p.b_ns];
  }
  return v;
}

// B[k, col..col+3] (along n, for B stored [K, N]) as halves, zero past N and K.
f16vec4 cm_load_b_n(uint k, uint col) {
  f16vec4 v = f16vec4(0.0);
  if (k >= p.k) return v;
  if (col < p.n) v = f16vec4(b_data4_[(b_base + k * p.b_ks + col) >> 2]);
  return v;
}

// Per invocation, the quads of one step. The register arrays are sized for the smallest
// workgroup the kernels run in (4 subgroups of 8 lanes: lavapipe); a larger workgroup leaves the
// tail entries unused (guarded by the workgroup size, a specialization constant the driver folds).
#define CM_WG_MIN 32u
#define CM_A_PER (CM_A_QUADS / CM_WG_MIN)
#define CM_B_PER (CM_B_QUADS / CM_WG_MIN)
f16vec4 cm_reg_a[CM_A_PER];
f16vec4 cm_reg_b[CM_B_PER];

void cm_fetch(uint m0, uint n0, uint k0) {
  uint tid = gl_LocalInvocationIndex, wg = CM_WG;
  [[unroll]] for (uint t = 0; t < CM_A_PER; t++) {
    uint i = tid + t * wg;
    if (i < CM_A_QUADS) {
      uint r = i / (CM_BK / 4u), kk = (i % (CM_BK / 4u)) * 4u;
      cm_reg_a[t] = cm_load_a(m0 + r, k0 + kk);
    }
  }
  [[unroll]] for (uint t = 0; t < CM_B_PER; t++) {
    uint i = tid + t * wg;
    if (i < CM_B_QUADS) {
      if (CM_B_VEC4_N) {
        uint kk = i / (CM_BN / 4u), c = (i % (CM_BN / 4u)) * 4u;
        cm_reg_b[t] = cm_load_b_n(k0 + kk, n0 + c);
      } else {
        uint c = i / (CM_BK / 4u), kk = (i % (CM_BK / 4u)) * 4u;
        cm_reg_b[t] = cm_load_b_k(k0 + kk, n0 + c);
      }
    }
  }
}

void cm_stage() {
  uint tid = gl_LocalInvocationIndex, wg = CM_WG;
  [[unroll]] for (uint t = 0; t < CM_A_PER; t++) {
    uint i = tid + t * wg;
    if (i < CM_A_QUADS) {
      uint r = i / (CM_BK / 4u), kk = (i % (CM_BK / 4u)) * 4u;
      [[unroll]] for (uint j = 0; j < 4u; j++) cm_sh_a[r * CM_LD + kk + j] = cm_reg_a[t][j];
    }
  }
  [[unroll]] for (uint t = 0; t < CM_B_PER; t++) {
    uint i = tid + t * wg;
    if (i < CM_B_QUADS) {
      if (CM_B_VEC4_N) {
        uint kk = i / (CM_BN / 4u), c = (i % (CM_BN / 4u)) * 4u;
        [[unroll]] for (uint j = 0; j < 4u; j++) cm_sh_b[(c + j) * CM_LD + kk] = cm_reg_b[t][j];
      } else {
        uint c = i / (CM_BK / 4u), kk = (i % (CM_BK / 4u)) * 4u;
        [[unroll]] for (uint j = 0; j < 4u; j++) cm_sh_b[c * CM_LD + kk + j] = cm_reg_b[t][j];
      }
    }
  }
}

void main() {
  set_batch_bases();
  uint m0 = gl_WorkGroupID.y * CM_BM, n0 = gl_WorkGroupID.x * CM_BN;
  uint sg = gl_SubgroupID, sm = (sg >> 1) * CM_TM * CM, sn = (sg & 1u) * CM_TN * CM;
  coopmat<float, gl_ScopeSubgroup, CM, CM, gl_MatrixUseAccumulator> acc[CM_TM * CM_TN];
  [[unroll]] for (uint i = 0; i < CM_TM * CM_TN; i++)
    acc[i] = coopmat<float, gl_ScopeSubgroup, CM, CM, gl_MatrixUseAccumulator>(0.0);

  cm_fetch(m0, n0, 0u);
  for (uint k0 = 0; k0 < p.k; k0 += CM_BK) {
    barrier(); // the previous step's fragment loads are done with the tiles
    cm_stage();
    barrier();
    if (k0 + CM_BK < p.k) cm_fetch(m0, n0, k0 + CM_BK);
    [[unroll]] for (uint kk = 0; kk < CM_BK; kk += CM) {
      coopmat<float16_t, gl_ScopeSubgroup, CM, CM, gl_MatrixUseA> fa[CM_TM];
      [[unroll]] for (uint i = 0; i < CM_TM; i++)
        coopMatLoad(fa[i], cm_sh_a, (sm + i * CM) * CM_LD + kk, CM_LD,
                    gl_CooperativeMatrixLayoutRowMajor);
      [[unroll]] for (uint j = 0; j < CM_TN; j++) {
        coopmat<float16_t, gl_ScopeSubgroup, CM, CM, gl_MatrixUseB> fb;
        coopMatLoad(fb, cm_sh_b, (sn + j * CM) * CM_LD + kk, CM_LD,
                    gl_CooperativeMatrixLayoutColumnMajor);
        [[unroll]] for (uint i = 0; i < CM_TM; i++)
          acc[i * CM_TN + j] = coopMatMulAdd(fa[i], fb, acc[i * CM_TN + j]);
      }
    }
  }

  uint scratch = sg * CM * CM;
  [[unroll]] for (uint i = 0; i < CM_TM; i++) {
    [[unroll]] for (uint j = 0; j < CM_TN; j++) {
      coopMatStore(acc[i * CM_TN + j], cm_sh_c, scratch, CM, gl_CooperativeMatrixLayoutRowMajor);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      uint r0 = m0 + sm + i * CM, c0 = n0 + sn + j * CM;
      for (uint e = gl_SubgroupInvocationID; e < CM * CM; e += gl_SubgroupSize) {
        uint row = r0 + e / CM, col = c0 + e % CM;
        if (row < p.m && col < p.n) store_c(row, col, cm_sh_c[scratch + e]);
      }
      subgroupBarrier(); // every lane has read the scratch before the next tile overwrites it
    }
  }
}
