// GEMM_NAIVE body for gemm.comp: one output element per invocation, operands read straight from
// memory with no reuse. It is the bench's baseline (`vkf bench gemm` ratio), never chosen for models.
void main() {
  set_batch_bases();
  uint col = gl_GlobalInvocationID.x, row = gl_WorkGroupID.y;
  if (col >= p.n || row >= p.m) return;
  float acc = 0.0;
  for (uint k = 0; k < p.k; k++) acc = fma(load_a(row, k), load_b(k, col), acc);
  store_c(row, col, acc);
}
