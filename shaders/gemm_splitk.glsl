// Split-K reduction for gemm.comp (GEMM_SPLITK_REDUCE): the second pass of a cooperative-matrix
// GEMM whose workgroups split K (gemm_coopmat.glsl's CM_SPLITK, chosen where the tiles alone make
// too few workgroups for the device: M below 128 against a few thousand columns). A is the f32
// partial sums, [splits, Mp, Np] (Mp, Np: M and N padded to whole tiles): split s of output
// (row, col) at a_off + s * a_ks + row * a_rs + col. Each invocation adds its outputs' splits in
// order and applies the epilogue of every other body (bias, activation, residual, C's dtype):
// four adjacent columns at once with vec4 loads and one store under C_VEC4, else one column.
// B is bound (binding 1, unread) so the bindings keep the kernel's numbering. p.k is the split
// count. Workgroups: (ceil(N / (WG * W)), M, 1) with W = 4 under C_VEC4, else 1.
#ifdef C_VEC4
#define SK_W 4u
#else
#define SK_W 1u
#endif

void main() {
  set_batch_bases();
  uint row = gl_WorkGroupID.y, col = (gl_WorkGroupID.x * WG + gl_LocalInvocationID.x) * SK_W;
  if (col >= p.n) return;
  uint at = a_base + row * p.a_rs + col;
#ifdef C_VEC4
  vec4 acc = vec4(0.0);
  for (uint s = 0; s < p.k; s++) acc += a_data4((at + s * p.a_ks) >> 2);
  vec4 b4 = vec4(0.0);
#ifdef BIAS
  b4 = vec4(bias_data4[(p.bias_off + col) >> 2]);
#endif
  store_c4(row, col, acc, b4);
#else
  float acc = 0.0;
  for (uint s = 0; s < p.k; s++) acc += a_data(at + s * p.a_ks);
  store_c(row, col, acc);
#endif
}
