// Tiled body for gemm.comp (the GPU-shaped default): the workgroup stages a BM x BK tile of A and
// a BK x BN tile of B in shared memory per k-step (vec4 loads where the layout allows), and each
// of its (BM/TM) x (BN/TN) invocations accumulates a TM x TN register block from them.
// Shared: (BM + BN) * BK floats, which the chooser keeps under caps->max_shared_memory_size.
shared float sh_a[BK * BM]; /* [BK, BM]: k-major so one k gives TM consecutive rows */
shared float sh_b[BK * BN]; /* [BK, BN] */

void main() {
  set_batch_bases();
  uint tid = gl_LocalInvocationID.x;
  uint m0 = gl_WorkGroupID.y * BM, n0 = gl_WorkGroupID.x * BN;
  uint tr = (tid / (BN / TN)) * TM, tc = (tid % (BN / TN)) * TN; /* register block origin */
  float acc[TM * TN];
  [[unroll]] for (uint i = 0; i < TM * TN; i++) acc[i] = 0.0;

  for (uint k0 = 0; k0 < p.k; k0 += BK) {
    /* Stage A: BM rows x BK k-values, 4 k-values per load along A's rows. */
    for (uint i = tid; i < BM * (BK / 4u); i += WG) {
      uint r = i / (BK / 4u), kk = (i % (BK / 4u)) * 4u;
      vec4 v = (m0 + r < p.m && k0 + kk < p.k) ? load_a4(m0 + r, k0 + kk) : vec4(0.0);
      [[unroll]] for (uint j = 0; j < 4u; j++) sh_a[(kk + j) * BM + r] = v[j];
    }
    /* Stage B: BK x BN, 4 values per load along B's contiguous axis. */
#ifdef B_VEC4_K
    for (uint i = tid; i < BN * (BK / 4u); i += WG) {
      uint c = i / (BK / 4u), kk = (i % (BK / 4u)) * 4u;
      vec4 v = (n0 + c < p.n && k0 + kk < p.k) ? load_b_k4(k0 + kk, n0 + c) : vec4(0.0);
      [[unroll]] for (uint j = 0; j < 4u; j++) sh_b[(kk + j) * BN + c] = v[j];
    }
#else
    for (uint i = tid; i < BK * (BN / 4u); i += WG) {
      uint kk = i / (BN / 4u), c = (i % (BN / 4u)) * 4u;
      vec4 v = (k0 + kk < p.k && n0 + c < p.n) ? load_b_n4(k0 + kk, n0 + c) : vec4(0.0);
      [[unroll]] for (uint j = 0; j < 4u; j++) sh_b[kk * BN + c + j] = v[j];
    }
#endif
    barrier();
    for (uint kk = 0; kk < BK; kk++) {
      float a[TM], b[TN];
      [[unroll]] for (uint i = 0; i < TM; i++) a[i] = sh_a[kk * BM + tr + i];
      [[unroll]] for (uint j = 0; j < TN; j++) b[j] = sh_b[kk * BN + tc + j];
      [[unroll]] for (uint i = 0; i < TM; i++)
        [[unroll]] for (uint j = 0; j < TN; j++) acc[i * TN + j] = fma(a[i], b[j], acc[i * TN + j]);
    }
    barrier();
  }

  [[unroll]] for (uint i = 0; i < TM; i++) {
    uint row = m0 + tr + i;
    if (row < p.m)
      [[unroll]] for (uint j = 0; j < TN; j++)
        if (n0 + tc + j < p.n) store_c(row, n0 + tc + j, acc[i * TN + j]);
  }
}
