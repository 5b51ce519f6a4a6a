// GEMV body for gemm.comp (GEMM_GEMV): few rows of A (decode steps, beams, small batches) against a
// weight matrix on GPU-class devices. Decoding is a bandwidth problem: each weight element is read
// once per step and used by every row of A, which sit in registers, and the loads are coalesced
// along the weight's contiguous axis. The workgroup's ROWS x (its columns) partial sums are reduced
// once at the end and go through gemm.comp's epilogue (bias, activation, residual, store).
//
// Defines (besides gemm.comp's):
//   GEMV_ROWS=<r>   rows of A per workgroup, 1..8 (the chooser rounds M up to 1, 2, 4 or 8; rows
//                   past M are skipped at run time; workgroups along y cover M > ROWS)
//   GEMV_KN         B is contiguous along n ([K, N], GPT-2's Conv1D): lanes own 4 columns each
//                   and the workgroup's slices of K are summed through shared memory. Otherwise
//                   ([N, K], nn.Linear's weight, or any other layout) each of the workgroup's
//                   GEMV_COLS columns is read along k by all its invocations, 4 k-values per load
//   GEMV_COLS=<c>   ([N, K] only) columns per workgroup, 1..4
//   GEMV_K8         ([N, K] only; gemm.comp's define) each invocation reads 8 k-values of a
//                   16-bit weight row per 16-byte load instead of 4 per 8 bytes
//   B_QUANT         ([N, K]; gemm.comp's define) ggml blocks, 16 weights per invocation and step,
//                   each run of 8 scaled once (quant_piece.glsl)
//   GEMV_SUBGROUP   ([N, K] only) partial sums meet with subgroupAdd, then across subgroups in
//                   shared memory; otherwise a shared-memory tree (devices without subgroup
//                   arithmetic). Correct for any subgroup size
// Workgroups: [N, K]: (ceil(N / GEMV_COLS), ceil(M / ROWS), batches);
//             GEMV_KN: (ceil(N / (4 * KN_LANES)), ceil(M / ROWS), batches).
#ifndef GEMV_ROWS
#define GEMV_ROWS 1
#endif
#define ROWS GEMV_ROWS

#ifdef GEMV_KN
// 16 lanes of 4 columns: 64 columns per workgroup, each lane's vec4 of B one 16-byte load, the
// lanes of a row of B contiguous; WG / 16 slices of K.
#define KN_LANES 16u
shared vec4 sh_part[(WG / KN_LANES) * ROWS * KN_LANES];

void main() {
  set_batch_bases();
  uint tid = gl_LocalInvocationID.x, lane = tid % KN_LANES, slice = tid / KN_LANES;
  uint slices = WG / KN_LANES;
  uint col = (gl_WorkGroupID.x * KN_LANES + lane) * 4u, row0 = gl_WorkGroupID.y * ROWS;
  vec4 acc[ROWS];
  [[unroll]] for (uint r = 0; r < ROWS; r++) acc[r] = vec4(0.0);
  if (col < p.n) {
    for (uint k = slice; k < p.k; k += slices) {
      vec4 b = load_b_n4(k, col);
      [[unroll]] for (uint r = 0; r < ROWS; r++)
        if (row0 + r < p.m) acc[r] = fma(vec4(load_a(row0 + r, k)), b, acc[r]);
    }
  }
  [[unroll]] for (uint r = 0; r < ROWS; r++) sh_part[(slice * ROWS + r) * KN_LANES + lane] = acc[r];
  barrier();
  // Each (row, lane) is summed over the slices and stored by one invocation (a workgroup of
  // fewer than ROWS * KN_LANES invocations takes several turns).
  for (uint o = tid; o < ROWS * KN_LANES; o += WG) {
    uint r = o / KN_LANES, l = o % KN_LANES, c = (gl_WorkGroupID.x * KN_LANES + l) * 4u;
    vec4 s = vec4(0.0);
    for (uint i = 0; i < slices; i++) s += sh_part[(i * ROWS + r) * KN_LANES + l];
    if (row0 + r < p.m)
      [[unroll]] for (uint j = 0; j < 4u; j++)
        if (c + j < p.n) store_c(row0 + r, c + j, s[j]);
  }
}

#else  // [N, K]

#ifndef GEMV_COLS
#define GEMV_COLS 1
#endif
#define OUTS (ROWS * GEMV_COLS)
// Partial sums: one row per subgroup (GEMV_SUBGROUP) or per invocation (the tree).
shared float sh_part[WG * OUTS];

void main() {
  set_batch_bases();
  uint tid = gl_LocalInvocationID.x;
  uint col0 = gl_WorkGroupID.x * GEMV_COLS, row0 = gl_WorkGroupID.y * ROWS;
  float acc[OUTS];
  [[unroll]] for (uint i = 0; i < OUTS; i++) acc[i] = 0.0;
#if defined(B_QUANT)
  // ggml blocks (quant_piece.glsl): invocation t reads pieces t, t + WG, ... of 16 weights (K is
  // whole blocks, so whole pieces), each two runs of 8 under one decoded scale: per run and row,
  // sum(a * q) scaled once, plus m * sum(a) where the format has a min. Consecutive invocations
  // read consecutive 8 bytes of a block (two words; the K formats' scales come from the same
  // 12 bytes for a block's 16 pieces, so from cache).
  uint row_bytes = (p.k / QK) * QB, pieces = p.k / 16u;
  for (uint pc = tid; pc < pieces; pc += WG) {
    uint blk = pc / QP_PARTS, part = pc % QP_PARTS;
    uvec2 e = qp_elems(part) + blk * QK;
    vec4 ax0[ROWS], ax1[ROWS], ay0[ROWS], ay1[ROWS];
    [[unroll]] for (uint r = 0; r < ROWS; r++) {
      bool in_m = row0 + r < p.m;
      ax0[r] = in_m ? load_a4(row0 + r, e.x) : vec4(0.0);
      ax1[r] = in_m ? load_a4(row0 + r, e.x + 4u) : vec4(0.0);
      ay0[r] = in_m ? load_a4(row0 + r, e.y) : vec4(0.0);
      ay1[r] = in_m ? load_a4(row0 + r, e.y + 4u) : vec4(0.0);
    }
#ifdef QP_MIN
    // sum(a) of each run (of the piece under QP_ONE_SCALE), shared by the workgroup's columns
    float sum_x[ROWS], sum_y[ROWS];
    [[unroll]] for (uint r = 0; r < ROWS; r++) {
#ifdef QP_ONE_SCALE
      sum_x[r] = dot((ax0[r] + ax1[r]) + (ay0[r] + ay1[r]), vec4(1.0));
#else
      sum_x[r] = dot(ax0[r] + ax1[r], vec4(1.0));
      sum_y[r] = dot(ay0[r] + ay1[r], vec4(1.0));
#endif
    }
#endif
    [[unroll]] for (uint c = 0; c < GEMV_COLS; c++) {
      if (col0 + c >= p.n) break;
      vec4 x0, x1, y0, y1;
      vec2 sx, sy;
      q_piece((col0 + c) * row_bytes + blk * QB, part, x0, x1, y0, y1, sx, sy);
      [[unroll]] for (uint r = 0; r < ROWS; r++) {
        float tx = dot(ax0[r], x0) + dot(ax1[r], x1), ty = dot(ay0[r], y0) + dot(ay1[r], y1);
#ifdef QP_ONE_SCALE
        float t = sx.x * (tx + ty);
#else
        float t = sx.x * tx + sy.x * ty;
#endif
#ifdef QP_MIN
#ifdef QP_ONE_SCALE
        t += sx.y * sum_x[r];
#else
        t += sx.y * sum_x[r] + sy.y * sum_y[r];
#endif
#endif
        acc[r * GEMV_COLS + c] += t;
      }
    }
  }
#elif defined(GEMV_K8)
  // Invocation t reads k = 8t, 8t + 8*WG, ...: 16 bytes of f16 / bf16 per weight row and load,
  // consecutive invocations consecutive 16 bytes (K % 8 == 0: no tail).
  for (uint k = tid * 8u; k < p.k; k += WG * 8u) {
    vec4 a[ROWS], a_hi[ROWS];
    [[unroll]] for (uint r = 0; r < ROWS; r++) {
      a[r] = row0 + r < p.m ? load_a4(row0 + r, k) : vec4(0.0);
      a_hi[r] = row0 + r < p.m ? load_a4(row0 + r, k + 4u) : vec4(0.0);
    }
    [[unroll]] for (uint c = 0; c < GEMV_COLS; c++) {
      if (col0 + c >= p.n) break;
      vec4 b, b_hi;
      load_b_k8(k, col0 + c, b, b_hi);
      [[unroll]] for (uint r = 0; r < ROWS; r++)
        acc[r * GEMV_COLS + c] += dot(a[r], b) + dot(a_hi[r], b_hi);
    }
  }
#else
  // Invocation t reads k = 4t, 4t + 4*WG, ...: consecutive invocations read consecutive 16 bytes
  // of each weight row. load_b_k4 / load_a4 are zero past K, so K needs no multiple of 4.
  for (uint k = tid * 4u; k < p.k; k += WG * 4u) {
    vec4 a[ROWS];
    [[unroll]] for (uint r = 0; r < ROWS; r++)
      a[r] = row0 + r < p.m ? load_a4(row0 + r, k) : vec4(0.0);
    [[unroll]] for (uint c = 0; c < GEMV_COLS; c++) {
      if (col0 + c >= p.n) break;
      vec4 b = load_b_k4(k, col0 + c);
      [[unroll]] for (uint r = 0; r < ROWS; r++) acc[r * GEMV_COLS + c] += dot(a[r], b);
    }
  }
#endif
#ifdef GEMV_SUBGROUP
  [[unroll]] for (uint i = 0; i < OUTS; i++) acc[i] = subgroupAdd(acc[i]);
  if (subgroupElect())
    [[unroll]] for (uint i = 0; i < OUTS; i++) sh_part[gl_SubgroupID * OUTS + i] = acc[i];
  barrier();
  uint parts = gl_NumSubgroups;
#else
  [[unroll]] for (uint i = 0; i < OUTS; i++) sh_part[tid * OUTS + i] = acc[i];
  barrier();
  // Halve until one row is left (WG is a power of two).
  for (uint s = WG / 2u; s > 0u; s >>= 1) {
    if (tid < s)
      [[unroll]] for (uint i = 0; i < OUTS; i++) sh_part[tid * OUTS + i] += sh_part[(tid + s) * OUTS + i];
    barrier();
  }
  uint parts = 1u;
#endif
  for (uint o = tid; o < OUTS; o += WG) {
    uint r = o / GEMV_COLS, c = o % GEMV_COLS;
    float s = 0.0;
    for (uint i = 0; i < parts; i++) s += sh_part[i * OUTS + o];
    if (row0 + r < p.m && col0 + c < p.n) store_c(row0 + r, col0 + c, s);
  }
}
#endif
