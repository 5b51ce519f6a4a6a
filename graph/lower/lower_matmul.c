/* Owns the lowering of VKF_OP_MATMUL to shaders/gemm.comp: the GEMM variant chooser, the
 * operand-layout analysis (strides, batch broadcast, vec4 eligibility) and the push-constant
 * layout documented at the top of gemm.comp. */
#include "graph/lower/lower_matmul.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* GPU-shaped tiles, largest first. Shared memory is (bm + bn) * bk floats. */
static const vkf_gemm_variant tiled_candidates[] = {
    {.kind = VKF_GEMM_TILED,
     .workgroup_size = 256,
     .bm = 128,
     .bn = 128,
     .bk = 16,
     .tm = 8,
     .tn = 8},
    {.kind = VKF_GEMM_TILED, .workgroup_size = 256, .bm = 64, .bn = 64, .bk = 16, .tm = 4, .tn = 4},
    {.kind = VKF_GEMM_TILED, .workgroup_size = 64, .bm = 32, .bn = 32, .bk = 16, .tm = 4, .tn = 4},
    {.kind = VKF_GEMM_TILED, .workgroup_size = 64, .bm = 16, .bn = 16, .bk = 8, .tm = 2, .tn = 2},
};
enum { TILED_CANDIDATES = sizeof tiled_candidates / sizeof tiled_candidates[0] };

/* The CPU variants as measured on lavapipe (Mesa 22.3, LLVM 15, 8-wide AVX2, 2-core EPYC) with
 * `vkf bench gemm --variant cpu:RAxTN4xWGxKU[:texel]` on the ViT-B shapes (197 x 768 x 768, 3072
 * and 197 x 3072 x 768, B as [K, N] and as [N, K]), all through texel views (what the chooser
 * picks there). With 4 steps of 4 along k per loop iteration, B as [K, N] runs best in 16x8
 * blocks (42-45 GFLOP/s) and B as [N, K] (every nn.Linear weight) in 40x4 blocks (44-47, and
 * 38-40 for 197 x 3072 x 768 where 16x8 gets 31-34: its 64 columns of 12 KiB each exceed L2);
 * 24x4, 24x8, 32x4, 32x8, 48x4, 8x8 and 16x16 were slower on one shape or another. What got the
 * kernel there, all about gallivm's exec mask and spills (gemm_cpu.glsl has the details):
 *  - 4 k-steps per loop iteration instead of 1 (loop-carried values are merged with the exec
 *    mask once per iteration): 24x4 [N,K] 18.8 -> 23.6 GFLOP/s; 8 steps were slower (21.6);
 *  - clamped instead of per-lane predicated loads (a predicated load runs masked): -> 31-33;
 *  - row by row over all k of an iteration, so a row's accumulators stay in registers: -> 40+.
 * Through storage buffers (a scalar loop per lane and element) the biggest blocks win instead
 * (64x8 8.8 GFLOP/s, 24x4 6.1). The 8x4 block is for small problems, where the big block leaves
 * cores idle; it keeps one step per iteration, as unrolling costs JIT time (paid once per
 * pipeline) and small problems are dominated by overheads. */
static const vkf_gemm_variant cpu_variant_kn = {
    .kind = VKF_GEMM_CPU, .workgroup_size = 8, .cpu_row_groups = 2, .cpu_col_vec4s = 2,
    .cpu_k_unroll = 4};
static const vkf_gemm_variant cpu_variant_nk = {
    .kind = VKF_GEMM_CPU, .workgroup_size = 8, .cpu_row_groups = 5, .cpu_col_vec4s = 1,
    .cpu_k_unroll = 4};
/* Decode steps (one row per sequence): a row group of 8 covers every row, so the widest column
 * block wins: 1 x 768 x 1536 with B as [N, K] runs 2.1 GFLOP/s in 8x16 blocks, 0.4-0.8 in 40x4 (39
 * of its 40 rows are clamped copies of row 0) and 1.8 in 8x8. */
static const vkf_gemm_variant cpu_variant_rows = {
    .kind = VKF_GEMM_CPU, .workgroup_size = 8, .cpu_row_groups = 1, .cpu_col_vec4s = 4,
    .cpu_k_unroll = 4};
static const vkf_gemm_variant cpu_variant_small = {
    .kind = VKF_GEMM_CPU, .workgroup_size = 8, .cpu_row_groups = 1, .cpu_col_vec4s = 1};

static uint32_t tiled_shared_size(const vkf_gemm_variant *v) {
  return (v->bm + v->bn) * v->bk * 4;
}

/* Shared memory of the cooperative-matrix body (gemm_coopmat.glsl): two stages of A [bm][bk + 8]
 * and of B ([bn][bk + 8] or [bk][bn + 8], the larger) in halves, and a tile x (tile + 4) f32
 * scratch per subgroup. */
static uint32_t coopmat_shared_size(const vkf_gemm_variant *v) {
  uint32_t t = v->coopmat_tile, subgroups = 2 * v->bm / (v->tm * t);
  uint32_t b =
      v->bn * (v->bk + 8) > v->bk * (v->bn + 8) ? v->bn * (v->bk + 8) : v->bk * (v->bn + 8);
  return 2 * 2 * (v->bm * (v->bk + 8) + b) + subgroups * t * (t + 4) * 4;
}

/* Lanes of 4 columns in a GEMV_KN workgroup (KN_LANES of gemm_gemv.glsl). */
enum { GEMV_KN_LANES = 16 };

/* Shared memory of the GEMV body: the partial sums (gemm_gemv.glsl's sh_part). */
static uint32_t gemv_shared_size(const vkf_gemm_variant *v) {
  if (v->gemv_kn) return v->workgroup_size / GEMV_KN_LANES * v->gemv_rows * GEMV_KN_LANES * 16;
  return v->workgroup_size * v->gemv_rows * v->gemv_cols * 4;
}

/* NULL when `caps` can run `v`, else why not (static text). */
static const char *variant_unfit(const vkf_device_caps *caps, const vkf_gemm_variant *v) {
  if (caps->max_workgroup_invocations && v->workgroup_size > caps->max_workgroup_invocations)
    return "workgroup larger than the device allows";
  if (caps->max_workgroup_size[0] && v->workgroup_size > caps->max_workgroup_size[0])
    return "workgroup wider than the device allows";
  if (v->kind == VKF_GEMM_TILED) {
    if (tiled_shared_size(v) > caps->max_shared_memory_size) return "tiles exceed shared memory";
    if (v->workgroup_size != (v->bm / v->tm) * (v->bn / v->tn) || v->bk % 4 || v->bn % 4)
      return "inconsistent tile sizes";
  }
  if (v->kind == VKF_GEMM_GEMV) {
    uint32_t wg = v->workgroup_size;
    if (wg < GEMV_KN_LANES || (wg & (wg - 1)) ||
        (v->gemv_rows != 1 && v->gemv_rows != 2 && v->gemv_rows != 4 && v->gemv_rows != 8) ||
        (!v->gemv_kn && (v->gemv_cols < 1 || v->gemv_cols > 4)) ||
        (v->gemv_kn && v->gemv_subgroup))
      return "inconsistent GEMV sizes";
    if (v->gemv_subgroup && !vkf_caps_subgroup_add(caps)) return "needs subgroup arithmetic";
    if (gemv_shared_size(v) > caps->max_shared_memory_size) return "partial sums exceed shared memory";
  }
  if (v->kind == VKF_GEMM_QCPU) {
    uint32_t need = VKF_SUBGROUP_BASIC | VKF_SUBGROUP_SHUFFLE;
    if (vkf_caps_subgroup_fixed(caps) != 8 || (caps->subgroup_ops & need) != need)
      return "needs 8-wide subgroups with shuffle";
    if (v->workgroup_size % 8 || (v->qcpu_rows != 1 && v->qcpu_rows != 2 && v->qcpu_rows != 4 &&
                                   v->qcpu_rows != 8) ||
        (v->qcpu_cols != 1 && v->qcpu_cols != 2))
      return "inconsistent quantised CPU block sizes";
  }
  if (v->kind == VKF_GEMM_COOPMAT) {
    if (!caps->coopmat_gemm_tile) return "no cooperative-matrix kernels on this device or build";
    if (v->coopmat_tile != caps->coopmat_gemm_tile)
      return "the device's cooperative-matrix tile is another size";
    uint32_t t = v->coopmat_tile, sgm = v->tm ? v->bm / (v->tm * t) : 0;
    /* the built rows (shaders/variants_coopmat.txt): 2x2 subgroups of 2x2 tiles (medium, and
     * split-K), of 4x4 (large), 4x2 subgroups of 4x4 (huge, one or two tiles of k a stage) */
    int medium = sgm == 2 && v->tm == 2 && v->tn == 2, large = sgm == 2 && v->tm == 4 && v->tn == 4,
        huge = sgm == 4 && v->tm == 4 && v->tn == 4;
    if (!(medium || large || huge) || v->bm != sgm * v->tm * t || v->bn != 2 * v->tn * t ||
        (v->bk != 2 * t && !(huge && v->bk == t)) || (v->coopmat_splits > 1 && !medium))
      return "cooperative-matrix tiles the build has no kernel for";
    if (!vkf_caps_subgroup_fixed(caps) || v->workgroup_size != 2 * sgm * caps->subgroup_size)
      return "the workgroup must be whole subgroups of a guaranteed size";
    if (caps->max_workgroup_subgroups && 2 * sgm > caps->max_workgroup_subgroups)
      return "more subgroups than a workgroup may have";
    if (coopmat_shared_size(v) > caps->max_shared_memory_size) return "tiles exceed shared memory";
  }
  if (v->kind == VKF_GEMM_CPU) {
    uint32_t need = VKF_SUBGROUP_BASIC | VKF_SUBGROUP_SHUFFLE;
    if (vkf_caps_subgroup_fixed(caps) != 8 || (caps->subgroup_ops & need) != need)
      return "needs 8-wide subgroups with shuffle";
    if (v->workgroup_size % 8 || !v->cpu_row_groups || v->cpu_row_groups > 8 ||
        (v->cpu_col_vec4s != 1 && v->cpu_col_vec4s != 2 && v->cpu_col_vec4s != 4) ||
        v->cpu_k_unroll > 4 || v->cpu_k_unroll == 3)
      return "inconsistent CPU block sizes";
  }
  return NULL;
}

int vkf_gemv_choose(const vkf_device_caps *caps, const vkf_gemm_shape *shape,
                    vkf_gemm_variant *out) {
  vkf_gemm_variant v = {.kind = VKF_GEMM_GEMV, .gemv_rows = 1};
  while (v.gemv_rows < shape->m && v.gemv_rows < 8) v.gemv_rows *= 2;
  /* 128 invocations on every desktop class: 4 warps on NVIDIA, 2 or 4 waves on AMD, 8 to 16
   * threads of SIMD 8-16 on Intel; enough loads in flight per workgroup to hide DRAM latency
   * while a 4096-wide row of f32 weights is 8 loads per invocation. The subgroup size only sets
   * how many partial sums the reduction combines, so it is no parameter here, and CI on lavapipe
   * (subgroups of 8) runs the very variant a GPU of the class gets. Smaller devices (the mobile
   * class: 128 invocations, 16 KiB) halve it until it fits. */
  v.workgroup_size = 128;
  if (shape->b_along_n) {
    /* B as [K, N] (GPT-2's Conv1D): 16 lanes of 4 columns read a row of B 256 bytes at a time,
     * the workgroup's 8 slices of K meet in shared memory. */
    v.gemv_kn = 1;
  } else {
    /* B as [N, K] (nn.Linear) or strided: every invocation reads 16 bytes of each of the
     * workgroup's columns per step, consecutive invocations consecutive bytes. Two columns per
     * workgroup share each load of A; four when the grid would pass the device's limit (LM heads
     * of 150k-token vocabularies). */
    v.gemv_cols = 2;
    uint32_t limit = caps->max_workgroup_count[0] ? caps->max_workgroup_count[0] : 65535;
    if (vkf_div_up(shape->n, v.gemv_cols) > limit) v.gemv_cols = 4;
    /* Devices with subgroup arithmetic (every desktop class) add partial sums with subgroupAdd;
     * the others (the mobile class) through a shared-memory tree. */
    v.gemv_subgroup = vkf_caps_subgroup_add(caps);
    /* Quantised B is read 16 weights an invocation and step (shaders/quant_piece.glsl), so a
     * row of K has K / 16 pieces: at SmolLM2's K = 576, 36 of 128 invocations would work and
     * the rest only join the reduction. Halve while the half still has at most two pieces
     * each, down to 32 invocations (ggml's decode workgroups are 32 to 64 wide). lavapipe
     * under the nvidia profile, 1 x 576 x 1536 Q4_1: 7.3 ms at 128, 3.6 at 64, 1.5 at 32. */
    if (shape->b_quant)
      while (v.workgroup_size > 32 && (uint64_t)v.workgroup_size >= shape->k / 16)
        v.workgroup_size /= 2;
  }
  while (v.workgroup_size > GEMV_KN_LANES && variant_unfit(caps, &v)) v.workgroup_size /= 2;
  if (variant_unfit(caps, &v)) return 0;
  uint64_t groups_x = v.gemv_kn ? vkf_div_up(shape->n, 4 * GEMV_KN_LANES)
                                : vkf_div_up(shape->n, v.gemv_cols);
  uint32_t limit = caps->max_workgroup_count[0] ? caps->max_workgroup_count[0] : 65535;
  if (groups_x > limit) return 0;
  *out = v;
  return 1;
}

/* The cooperative-matrix variant of `subgroups_m` x 2 subgroups of `tiles` x `tiles` matrix tiles
 * each, `k_tiles` tiles of k a stage. */
static vkf_gemm_variant coopmat_variant(const vkf_device_caps *caps, uint32_t subgroups_m,
                                        uint32_t tiles, uint32_t k_tiles) {
  uint32_t t = caps->coopmat_gemm_tile;
  vkf_gemm_variant v = {.kind = VKF_GEMM_COOPMAT,
                        .coopmat_tile = t,
                        .tm = tiles,
                        .tn = tiles,
                        .workgroup_size = 2 * subgroups_m * caps->subgroup_size};
  v.bm = subgroups_m * tiles * t;
  v.bn = 2 * tiles * t;
  v.bk = k_tiles * t;
  return v;
}

vkf_gemm_variant vkf_gemm_coopmat_variant(const vkf_device_caps *caps) {
  return coopmat_variant(caps, 2, 4, 2);
}

/* Workgroups of `v` over `shape`. */
static uint64_t gemm_groups(const vkf_gemm_variant *v, const vkf_gemm_shape *shape) {
  return vkf_div_up(shape->n, v->bn) * (uint64_t)vkf_div_up(shape->m, v->bm) *
         (shape->batches ? shape->batches : 1);
}

/* Workgroups that keep a large GPU busy: 132 SMs on an H100, one workgroup of 4 to 8 warps each
 * (the accumulators of a 64x64 subgroup tile leave room for little more). */
enum { COOPMAT_FULL_GRID = 128 };

vkf_gemm_variant vkf_gemm_coopmat_choose(const vkf_device_caps *caps, const vkf_gemm_shape *shape) {
  /* The largest workgroup tile whose grid still fills the device: 256x128 (at tile 16; 8 subgroups
   * of 64x64, from ~85 FLOPs per byte of L2 traffic), with two tiles of k a stage where shared
   * memory allows (70 KiB) and one where it does not (46 KiB: NVIDIA's 48 KiB), then 128x128 (4
   * of 64x64, 64 FLOPs a byte, 45 KiB). The 128x64 tile of before had 43. */
  const vkf_gemm_variant big[] = {coopmat_variant(caps, 4, 4, 2), coopmat_variant(caps, 4, 4, 1),
                                  coopmat_variant(caps, 2, 4, 2)};
  for (size_t i = 0; i < sizeof big / sizeof big[0]; i++)
    if (!variant_unfit(caps, &big[i]) && gemm_groups(&big[i], shape) >= COOPMAT_FULL_GRID)
      return big[i];
  /* Smaller grids (ViT's M ~ 200, prefill of a few dozen tokens) take the medium tile, 64x64 (as
   * ggml's mul_mm keeps large, medium and small pipelines for the same reason). Below 8 tiles of
   * rows (M < 128 at tile 16: short prompts) against N of a few thousand the medium grid is still
   * a few dozen workgroups (N = 2048: 32), so the workgroups along z split K until the grid fills
   * the device, each split at least 4 stages deep (its partial sums cost an f32 round trip of the
   * output per split). One batch only: z is the batches' axis otherwise. */
  vkf_gemm_variant v = coopmat_variant(caps, 2, 2, 2);
  if (!v.coopmat_tile) return v; /* no kernels: vkf_lower_matmul_variant says so */
  uint64_t groups = gemm_groups(&v, shape);
  if (shape->m < 8ull * v.coopmat_tile && shape->batches <= 1 && groups < COOPMAT_FULL_GRID) {
    uint64_t splits = vkf_div_up(COOPMAT_FULL_GRID, groups), steps = vkf_div_up(shape->k, v.bk);
    if (splits > steps / 4) splits = steps / 4;
    if (splits > 16) splits = 16;
    if (splits >= 2) v.coopmat_splits = (uint32_t)splits;
  }
  return v;
}

int vkf_gemm_qcpu_norm_any_rows(const vkf_device_caps *caps) {
  vkf_gemm_variant q = {.kind = VKF_GEMM_QCPU, .workgroup_size = 8, .qcpu_rows = 1, .qcpu_cols = 1};
  return caps->kind == VKF_DEVICE_KIND_CPU && !variant_unfit(caps, &q) &&
         vkf_caps_subgroup_add(caps);
}

vkf_pass_options vkf_gemm_pass_options(const vkf_device_caps *caps) {
  int qcpu = vkf_gemm_qcpu_norm_any_rows(caps);
  return (vkf_pass_options){
      .prologue_rows = vkf_pass_prologue_rows(caps->kind == VKF_DEVICE_KIND_CPU),
      .quant_norm_rows = qcpu ? INT64_MAX : 0,
      .quant_glu_epilogue = qcpu};
}

int vkf_gemm_b_x16_fits(const vkf_lower_ctx *ctx, const vkf_plan_tensor *b, uint64_t rows,
                        uint64_t k) {
  if (b->dtype != VKF_Q8_0 || k % 64 || rows % 16 || b->offset || !vkf_plan_tensor_present(b))
    return 0;
  const vkf_plan_buffer *pb = vkf_plan_buffer_get(ctx->plan, b->buffer);
  return pb->kind == VKF_PLAN_BUFFER_WEIGHT && !pb->interleave.rows &&
         rows * (k / 32 * 34) <= pb->size;
}

vkf_gemm_variant vkf_gemm_choose(const vkf_device_caps *caps, const vkf_gemm_shape *shape) {
  /* Rule 1: CPU devices (lavapipe) run the barrier-free subgroup-shuffle kernel: there every
   * buffer or shared-memory load costs a scalar loop over the SIMD lanes, so what pays is loading
   * each element once and reusing it from registers; barriers suspend the workgroup's coroutine.
   * Needs 8-wide subgroups with shuffle, which profiles like "mobile" take away. */
  const vkf_gemm_variant *big = shape->b_along_k ? &cpu_variant_nk : &cpu_variant_kn;
  /* Rule 0: quantised weights on CPU devices: the kernel that reads each block's words once per
   * column and scales each group of products once. Each lane takes two columns, which share the
   * shuffled A values (each A value's eight lane shuffles serve both); rows go 1, 2, 4 or 8 to a
   * workgroup, each block decoded once for them. Two columns and eight rows are what pay past a
   * decode step's row: LP_NUM_THREADS=1 vkf bench gemm --variant qcpu:RxCx8, 16 x 576 x 3072,
   * alternated: Q4_1 4.2 ms at 4 rows and one column (the rule before), 2.7-3.0 at 4 and two,
   * 2.4-2.5 at 8 and two; Q4_0 4.9 / 3.0-3.5 / 2.7; 16 x 1536 x 768 Q4_K 2.4-3.2 / 1.7-1.8 /
   * 1.5-1.7, Q6_K 4.7-5.0 / 4.4 / 2.7, Q5_1 2.7 / 2.0-2.1 / 1.5-1.7; 5 to 8 rows likewise
   * (5 x 576 x 3072 Q4_1: 2.0 / 1.4-1.6 / 1.2-1.3). Q8_0 keeps one column a lane up to 4 rows:
   * its 34-byte blocks are 17 words a pair (gemm_qcpu.glsl's QCPU_K64), twice as many live values
   * across each texel fetch (a call that spills them on lavapipe), and two columns ran slower than
   * one: 1 x 576 x 49152 (the SmolLM2 head), LP_NUM_THREADS=1, min of 4 alternated rounds: 13.7
   * ms at two columns, 8.7 at one (17.8 and 11.9 before QCPU_K64), and with 240 MB of weights
   * (1 x 576 x 393216, past what stays cached: what a decode step's head sees) 98 ms at one, 166
   * before; every other format is 9-20% faster at two (1 x 576 x 24576 Q4_0, Q5_0, Q5_1;
   * 1 x 1536 x 8192 Q4_K, Q6_K); 2 x 576 x 49152: 13.2-13.8 ms at one, 17.8-20.1 at two. From 5
   * rows Q8_0 takes eight rows and two columns too (16 x 576 x 3072: 3.8-4.2 ms at 4 x 1, 3.2-3.7
   * at 8 x 2; the 16-row head ties, 75-79 against 75). Two columns where one would pass the
   * grid's limit.
   * Q8_0 weights whose rows go 16 to a group (b_x16: QCPU_X16) take two columns at every row
   * count: a lane's 16 rows of a step are then one contiguous stream, and the 16-row head ran
   * ~35% faster. */
  if (caps->kind == VKF_DEVICE_KIND_CPU && shape->b_quant) {
    uint32_t rows = shape->m <= 1 ? 1 : shape->m <= 2 ? 2 : shape->m <= 4 ? 4 : 8;
    vkf_gemm_variant q = {
        .kind = VKF_GEMM_QCPU,
        .workgroup_size = 8,
        .qcpu_rows = rows,
        .qcpu_cols = shape->m <= 4 && shape->b_dtype == VKF_Q8_0 && !shape->b_x16 ? 1 : 2};
    uint32_t limit = caps->max_workgroup_count[1] ? caps->max_workgroup_count[1] : 65535;
    if (q.qcpu_cols == 1 && vkf_div_up(shape->n, 8) > limit) q.qcpu_cols = 2; /* the grid's y */
    q.texel = caps->texel_rgba32f || caps->texel_r32ui;
    if (!variant_unfit(caps, &q)) return q;
  }
  if (caps->kind == VKF_DEVICE_KIND_CPU && !variant_unfit(caps, big)) {
    /* Rule 1b: the big block (by B's layout) only when it still makes 8 workgroups (a few per
     * core). */
    uint64_t groups =
        vkf_div_up(shape->m, 8 * big->cpu_row_groups) *
        (uint64_t)vkf_div_up(shape->n, big->workgroup_size * 4 * big->cpu_col_vec4s) *
        (shape->batches ? shape->batches : 1);
    vkf_gemm_variant v = groups >= 8 ? *big : cpu_variant_small;
    /* Rule 1a: at most 8 rows (decoding) and enough columns for 4 workgroups of 128: the row
     * block. */
    if (shape->m <= 8 && shape->n >= 512 && !variant_unfit(caps, &cpu_variant_rows))
      v = cpu_variant_rows;
    /* Rule 1c: operands through texel views where the device has them (a vector gather per vec4
     * instead of a scalar loop over the lanes); lowering falls back per operand. */
    v.texel = caps->texel_rgba32f || caps->texel_rgba16f || caps->texel_rgba16ui;
    return v;
  }
  /* Rule 2: GPU-class devices with at most 8 rows of A (decode steps, beams, small batches): a
   * bandwidth problem, so the GEMV body, which reads each weight element once, coalesced, and
   * uses it for every row from registers. */
  if (shape->m <= 8) {
    vkf_gemm_variant v;
    if (vkf_gemv_choose(caps, shape, &v)) return v;
  }
  /* Rule 2c: tensor cores for f16 operands where the device has cooperative matrices (and this
   * build their kernels; VKF_COOPMAT=0 turns them off). f32 models keep the exact f32 kernels:
   * `--fp16` is what sends them here. */
  if (shape->coopmat_ok && caps->coopmat_gemm_tile) {
    vkf_gemm_variant v = vkf_gemm_coopmat_choose(caps, shape);
    if (!variant_unfit(caps, &v)) return v;
  }
  uint32_t first = 0;
  /* Rule 3: 128x128 tiles with 8x8 register blocks only on discrete GPUs: phones and integrated
   * parts have fewer registers per invocation, and 64 accumulators would spill there. */
  if (caps->kind != VKF_DEVICE_KIND_DISCRETE_GPU) first = 1;
  /* Rule 4: the largest tile that fits the workgroup and shared-memory limits (the mobile profile,
   * 16 KiB and 128 invocations, lands on 32x32). */
  while (first + 1 < TILED_CANDIDATES && variant_unfit(caps, &tiled_candidates[first])) first++;
  /* Rule 5: step down while the grid is too small to occupy the device (M = 9..16, small heads):
   * 32 workgroups is a few per compute unit on the GPUs we target. */
  for (;;) {
    uint64_t groups = gemm_groups(&tiled_candidates[first], shape);
    if (groups >= 32 || first + 1 >= TILED_CANDIDATES ||
        variant_unfit(caps, &tiled_candidates[first + 1]))
      break;
    first++;
  }
  return tiled_candidates[first];
}

char *vkf_gemm_variant_name(const vkf_gemm_variant *v, char *buf, size_t buf_size) {
  switch (v->kind) {
    case VKF_GEMM_TILED:
      snprintf(buf, buf_size, "tiled %ux%ux%u t%ux%u", v->bm, v->bn, v->bk, v->tm, v->tn);
      break;
    case VKF_GEMM_CPU:
      snprintf(buf, buf_size, "cpu %ux%u wg%u%s%s", 8 * v->cpu_row_groups, 4 * v->cpu_col_vec4s,
               v->workgroup_size, v->cpu_k_unroll == 4 ? " ku4" : v->cpu_k_unroll == 2 ? " ku2" : "",
               v->texel ? " texel" : "");
      break;
    case VKF_GEMM_QCPU:
      snprintf(buf, buf_size, "qcpu r%u c%u wg%u%s", v->qcpu_rows, v->qcpu_cols, v->workgroup_size,
               v->texel ? " texel" : "");
      break;
    case VKF_GEMM_COOPMAT:
      if (v->coopmat_splits > 1)
        snprintf(buf, buf_size, "coopmat %ux%ux%u m%u wg%u split%u", v->bm, v->bn, v->bk,
                 v->coopmat_tile, v->workgroup_size, v->coopmat_splits);
      else
        snprintf(buf, buf_size, "coopmat %ux%ux%u m%u wg%u", v->bm, v->bn, v->bk, v->coopmat_tile,
                 v->workgroup_size);
      break;
    case VKF_GEMM_GEMV:
      if (v->gemv_kn)
        snprintf(buf, buf_size, "gemv kn r%u wg%u", v->gemv_rows, v->workgroup_size);
      else
        snprintf(buf, buf_size, "gemv nk r%u c%u wg%u%s", v->gemv_rows, v->gemv_cols,
                 v->workgroup_size, v->gemv_subgroup ? " sg" : "");
      break;
    default:
      snprintf(buf, buf_size, "naive wg%u", v->workgroup_size);
      break;
  }
  return buf;
}

/* One operand as the kernel addresses it: element offset, strides along the two matrix axes, and
 * the two batch strides (0 where the operand broadcasts). Elements, not bytes. */
typedef struct gemm_operand {
  uint64_t off, s_row, s_col, bs0, bs1;
} gemm_operand;

/* Batch strides of `t` against the output's batch dims (right-aligned, numpy broadcasting). */
static void batch_strides(const vkf_plan_tensor *t, const vkf_plan_tensor *out, gemm_operand *op) {
  uint32_t ob = out->rank - 2, tb = t->rank - 2;
  uint64_t s[2] = {0, 0};
  for (uint32_t i = 0; i < ob; i++) {
    int64_t j = (int64_t)i - (int64_t)(ob - tb);
    if (j >= 0 && t->shape[j] != 1) s[i + 2 - ob] = (uint64_t)t->strides[j];
  }
  op->bs0 = s[0];
  op->bs1 = s[1];
}

/* Largest element index the kernel forms for `op` over rows x cols; UINT64_MAX past uint32. */
static uint64_t operand_last(const gemm_operand *op, uint64_t rows, uint64_t cols,
                             const vkf_plan_tensor *out) {
  uint64_t last = op->off;
  if (rows) last += (rows - 1) * op->s_row;
  if (cols) last += (cols - 1) * op->s_col;
  uint32_t ob = out->rank - 2;
  if (ob >= 1) last += (uint64_t)(out->shape[out->rank - 3] - 1) * op->bs1;
  if (ob >= 2) last += (uint64_t)(out->shape[0] - 1) * op->bs0;
  return last;
}

static int dtype_float(vkf_dtype t) {
  return t == VKF_F32 || t == VKF_F16;
}

/* vec4 loads along an operand's contiguous axis: unit stride there, the length and every row
 * start (offset, other stride, batch strides) multiples of 4 elements. */
static int vec_ok(const gemm_operand *op, uint64_t unit_stride, uint64_t other_stride,
                  uint64_t len, uint64_t w) {
  return unit_stride == 1 && len % w == 0 && op->off % w == 0 && other_stride % w == 0 &&
         op->bs0 % w == 0 && op->bs1 % w == 0;
}

static int vec4_ok(const gemm_operand *op, uint64_t unit_stride, uint64_t other_stride,
                   uint64_t len) {
  return vec_ok(op, unit_stride, other_stride, len, 4);
}

/* The operands the cooperative-matrix kernel takes: f16 A, output, bias and residual, and f16 B
 * or GGUF blocks (dequantised into its f16 tiles), each with the epilogue of the built rows
 * (shaders/variants_coopmat.txt): bias and residual absent or f16. */
static int coopmat_operands_ok(vkf_dtype a, vkf_dtype b, vkf_dtype c, vkf_dtype bias,
                               vkf_dtype res) {
  return a == VKF_F16 && (b == VKF_F16 || vkf_dtype_is_quant(b)) && c == VKF_F16 &&
         bias == VKF_F16 && res == VKF_F16;
}

/* The epilogue's defines: C's dtype, bias and residual (NULL: absent) and theirs. */
static void epilogue_defines(vkf_plan_dispatch *d, const vkf_plan_tensor *c,
                             const vkf_plan_tensor *bias, const vkf_plan_tensor *res) {
  if (c->dtype == VKF_F16) vkf_plan_dispatch_define(d, "C_F16");
  if (bias) vkf_plan_dispatch_define(d, "BIAS");
  if (bias && bias->dtype == VKF_F16) vkf_plan_dispatch_define(d, "BIAS_F16");
  if (res) vkf_plan_dispatch_define(d, "RESIDUAL");
  if (res && res->dtype == VKF_F16) vkf_plan_dispatch_define(d, "RES_F16");
}

/* Element offset `vkf_lower_bind` will return, known before binding. */
static uint64_t bound_offset(const vkf_lower_ctx *ctx, const vkf_plan_tensor *t) {
  return (t->offset % ctx->alignment) / vkf_dtype_size(t->dtype);
}

/* The activation is a define (see gemm.comp), so each one is its own variant. A new
 * vkf_activation needs its row here and its code in shaders/gemm_epilogue.glsl. */
_Static_assert(VKF_ACT_COUNT == 5, "add the new activation to act_define and gemm_epilogue.glsl");
static const char *const act_define[VKF_ACT_COUNT] = {NULL, "ACT=1", "ACT=2", "ACT=3", "ACT=4"};

/* Split-K (variant->coopmat_splits > 1, one batch): `d`, the cooperative-matrix dispatch with A
 * and B bound, stores its splits' f32 partial sums into a scratch [splits, Mp, Np] (M and N
 * padded to whole workgroup tiles, so that it stores whole matrix tiles); a GEMM_SPLITK_REDUCE
 * dispatch of gemm.comp adds them and applies the epilogue into C. `ops`: A, B, C, residual. */
static vkf_status lower_split(const vkf_lower_ctx *ctx, const vkf_lower_node *node,
                              const vkf_gemm_variant *v, vkf_plan_dispatch *d, uint64_t m,
                              uint64_t n, uint64_t k, const gemm_operand *ops, int c_vec4) {
  const vkf_plan_tensor *b = &node->inputs[VKF_IN_MATMUL_B], *c = &node->output;
  const vkf_plan_tensor *bias = &node->inputs[VKF_IN_MATMUL_BIAS];
  const vkf_plan_tensor *res = &node->inputs[VKF_IN_MATMUL_RESIDUAL];
  int has_bias = node->input_count > VKF_IN_MATMUL_BIAS && vkf_plan_tensor_present(bias);
  int has_res = node->input_count > VKF_IN_MATMUL_RESIDUAL && vkf_plan_tensor_present(res);
  uint64_t mp = vkf_div_up(m, v->bm) * v->bm, np = vkf_div_up(n, v->bn) * v->bn;
  uint64_t plane = mp * np, size = plane * v->coopmat_splits * 4;
  if (plane * v->coopmat_splits > UINT32_MAX || size > ctx->caps->max_storage_buffer_range)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "matmul \"%s\": split-K partials of %llu bytes",
                           node->name, (unsigned long long)size);
  char name[160];
  snprintf(name, sizeof name, "%s.split_partials", node->name);
  uint32_t scratch = vkf_plan_add_buffer(ctx->plan, VKF_PLAN_BUFFER_SCRATCH, name, size);
  vkf_plan_dispatch_bind(d, scratch, 0, size, VKF_ACCESS_WRITE);
  const gemm_operand *oa = &ops[0], *ob = &ops[1], *oc = &ops[2], *orr = &ops[3];
  /* split s at c_base = s * plane: the kernel's batch index is the split (one batch, so A's and
   * B's batch strides are 0) */
  uint64_t push[] = {m,       n,         k,         1, oa->off, oa->s_row, oa->s_col, 0, 0,
                     ob->off, ob->s_row, ob->s_col, 0, 0,       0,         np,        1, plane,
                     0,       0,         0,         0, 0,       0,         0,         0};
  for (size_t i = 0; i < sizeof push / sizeof push[0]; i++)
    vkf_plan_dispatch_push_u32(d, (uint32_t)push[i]);
  d->groups[0] = (uint32_t)vkf_div_up(n, v->bn);
  d->groups[1] = (uint32_t)vkf_div_up(m, v->bm);
  d->groups[2] = v->coopmat_splits;
  VKF_RETURN_IF_ERROR(vkf_plan_add_dispatch(ctx->plan, d));

  /* 64 invocations of 4 columns (C_VEC4) or one */
  vkf_plan_dispatch r = {.node = node->name, .shader = "gemm.comp", .spec = {64}, .spec_count = 1};
  vkf_plan_dispatch_define(&r, "GEMM_SPLITK_REDUCE");
  if (b->dtype == VKF_F16) vkf_plan_dispatch_define(&r, "B_F16");
  epilogue_defines(&r, c, has_bias ? bias : NULL, has_res ? res : NULL);
  if (c_vec4) vkf_plan_dispatch_define(&r, "C_VEC4");
  const char *act = act_define[node->attrs->matmul.activation];
  if (act) vkf_plan_dispatch_define(&r, act);
  vkf_plan_dispatch_bind(&r, scratch, 0, size, VKF_ACCESS_READ);
  vkf_lower_bind(ctx, &r, b, VKF_ACCESS_READ); /* unread: keeps the bindings' numbers */
  vkf_lower_bind(ctx, &r, c, VKF_ACCESS_WRITE);
  uint64_t bias_off = 0, bias_s = 0;
  if (has_bias) {
    bias_off = vkf_lower_bind(ctx, &r, bias, VKF_ACCESS_READ);
    bias_s = (uint64_t)bias->strides[0];
  }
  if (has_res) vkf_lower_bind(ctx, &r, res, VKF_ACCESS_READ);
  uint64_t rpush[] = {m,         n,          v->coopmat_splits,
                      1,         0,          np,
                      plane,     0,          0,
                      0,         0,          0,
                      0,         0,          oc->off,
                      oc->s_row, oc->s_col,  oc->bs0,
                      oc->bs1,   bias_off,   bias_s,
                      orr->off,  orr->s_row, orr->s_col,
                      orr->bs0,  orr->bs1};
  for (size_t i = 0; i < sizeof rpush / sizeof rpush[0]; i++)
    vkf_plan_dispatch_push_u32(&r, (uint32_t)rpush[i]);
  r.groups[0] = (uint32_t)vkf_div_up(n, 64u * (c_vec4 ? 4u : 1u));
  r.groups[1] = (uint32_t)m;
  r.groups[2] = 1;
  return vkf_plan_add_dispatch(ctx->plan, &r);
}

vkf_status vkf_lower_matmul_variant(const vkf_lower_ctx *ctx, const vkf_lower_node *node,
                                    const vkf_gemm_variant *variant) {
  const vkf_plan_tensor *a = &node->inputs[VKF_IN_MATMUL_A], *b = &node->inputs[VKF_IN_MATMUL_B];
  const vkf_plan_tensor *bias = &node->inputs[VKF_IN_MATMUL_BIAS];
  const vkf_plan_tensor *res = &node->inputs[VKF_IN_MATMUL_RESIDUAL];
  const vkf_plan_tensor *c = &node->output;
  int has_bias = node->input_count > VKF_IN_MATMUL_BIAS && vkf_plan_tensor_present(bias);
  int has_res = node->input_count > VKF_IN_MATMUL_RESIDUAL && vkf_plan_tensor_present(res);
  int tb = node->attrs->matmul.transpose_b;
  char sa[64], sb[64], vname[64];
  vkf_shape_format(a->rank, a->shape, sa, sizeof sa);
  vkf_shape_format(b->rank, b->shape, sb, sizeof sb);
  VKF_ASSERT(node->op == VKF_OP_MATMUL);
  /* The RMSNorm prologue (graph/passes/fuse_norm.c; shaders/gemm.comp A_RMSNORM): fp32 A, a
   * contiguous fp32 gamma, rows few enough for each workgroup to reread them all, or any rows in
   * the quantised CPU kernel, which sums the squares in its own loop with subgroupAdd. */
  int a_norm = node->attrs->matmul.a_rmsnorm;
  const vkf_plan_tensor *gamma = &node->inputs[VKF_IN_MATMUL_NORM_GAMMA];
  int qcpu_norm = variant->kind == VKF_GEMM_QCPU && vkf_caps_subgroup_add(ctx->caps);
  if (a_norm &&
      (node->input_count <= VKF_IN_MATMUL_NORM_GAMMA || !vkf_plan_tensor_present(gamma) ||
       gamma->dtype != VKF_F32 || gamma->rank != 1 || gamma->strides[0] != 1 ||
       a->dtype != VKF_F32 || a->rank < 2 || (variant->kind == VKF_GEMM_QCPU && !qcpu_norm) ||
       (a->shape[a->rank - 2] > 8 && !qcpu_norm) || variant->kind == VKF_GEMM_COOPMAT))
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "matmul \"%s\": %s x %s: the RMSNorm prologue needs an f32 A of at "
                           "most 8 rows (any in the quantised CPU kernel, with subgroup "
                           "arithmetic), a contiguous f32 gamma and no cooperative matrices",
                           node->name, sa, sb);

  int b_quant = vkf_dtype_is_quant(b->dtype);
  if (!dtype_float(a->dtype) || !(dtype_float(b->dtype) || b->dtype == VKF_BF16 || b_quant) ||
      !dtype_float(c->dtype) || (has_bias && !dtype_float(bias->dtype)) ||
      (has_res && !dtype_float(res->dtype)))
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "matmul \"%s\": %s %s x %s %s: only f32/f16 operands (and bf16 or "
                           "quantised B)",
                           node->name,
                           vkf_dtype_name(a->dtype), sa, vkf_dtype_name(b->dtype), sb);
  int any_f16 = a->dtype == VKF_F16 || b->dtype == VKF_F16 || c->dtype == VKF_F16 ||
                (has_bias && bias->dtype == VKF_F16) || (has_res && res->dtype == VKF_F16);
  if (any_f16 && !ctx->caps->storage_16bit)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "matmul \"%s\": %s x %s: f16 operands need 16-bit storage, which "
                           "device \"%s\" lacks",
                           node->name, sa, sb, ctx->caps->name);
  if (a->rank < 2 || b->rank < 2 || c->rank < 2 || c->rank > 4)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "matmul \"%s\": %s x %s: rank 2 to 4 only",
                           node->name, sa, sb);
  /* The GLU epilogue (graph/passes/fuse_glu.c; gemm_qcpu.glsl C_GLU): B's rows are gate then up,
   * a lane takes gate column j and up column j, so only the quantised CPU kernel, at two columns
   * a lane. */
  uint32_t c_glu = (uint32_t)node->attrs->matmul.c_glu;
  vkf_gemm_variant glu_variant;
  if (c_glu && (c_glu >= VKF_ACT_COUNT || variant->kind != VKF_GEMM_QCPU || has_bias || has_res ||
                node->attrs->matmul.activation != VKF_ACT_NONE))
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "matmul \"%s\": %s x %s: the GLU epilogue needs the quantised CPU "
                           "kernel, and no bias, residual or activation",
                           node->name, sa, sb);
  if (c_glu && variant->qcpu_cols != 2) {
    glu_variant = *variant;
    glu_variant.qcpu_cols = 2;
    variant = &glu_variant;
  }
  const char *unfit = variant_unfit(ctx->caps, variant);
  if (unfit)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "matmul \"%s\": %s x %s: variant %s: %s",
                           node->name, sa, sb, vkf_gemm_variant_name(variant, vname, sizeof vname),
                           unfit);

  uint64_t m = (uint64_t)c->shape[c->rank - 2], n = (uint64_t)c->shape[c->rank - 1];
  uint64_t k = (uint64_t)a->shape[a->rank - 1];
  /* The GLU prologue (graph/passes/fuse_glu.c; shaders/gemm.comp A_GLU): A holds gate then up,
   * K each. */
  uint32_t a_glu = (uint32_t)node->attrs->matmul.a_glu;
  if (a_glu) k /= 2;
  if (a_glu && (a_glu >= VKF_ACT_COUNT || a->dtype != VKF_F32 || a_norm ||
                variant->kind == VKF_GEMM_COOPMAT || m > 8))
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "matmul \"%s\": %s x %s: the GLU prologue needs an f32 A of at most "
                           "8 rows, no RMSNorm prologue and no cooperative matrices",
                           node->name, sa, sb);
  uint64_t batch1 = c->rank >= 3 ? (uint64_t)c->shape[c->rank - 3] : 1;
  uint64_t batches = batch1 * (c->rank == 4 ? (uint64_t)c->shape[0] : 1);
  if (m == 0 || n == 0 || batches == 0) return VKF_OK;
  for (uint32_t i = 0; i < VKF_MAX_DIMS; i++)
    if ((i < a->rank && a->strides[i] < 0) || (i < b->rank && b->strides[i] < 0) ||
        (i < c->rank && c->strides[i] < 0) || (has_res && i < res->rank && res->strides[i] < 0))
      return vkf_status_make(VKF_STATUS_UNSUPPORTED, "matmul \"%s\": %s x %s: negative strides",
                             node->name, sa, sb);

  /* [..., M, K] x [..., K, N] (or [..., N, K] transposed) -> [..., M, N] */
  gemm_operand oa = {.off = bound_offset(ctx, a),
                     .s_row = (uint64_t)a->strides[a->rank - 2],
                     .s_col = (uint64_t)a->strides[a->rank - 1]};
  gemm_operand ob = {.off = bound_offset(ctx, b)};
  ob.s_row = (uint64_t)b->strides[b->rank - (tb ? 1 : 2)]; /* along k */
  ob.s_col = (uint64_t)b->strides[b->rank - (tb ? 2 : 1)]; /* along n */
  gemm_operand oc = {.off = bound_offset(ctx, c),
                     .s_row = (uint64_t)c->strides[c->rank - 2],
                     .s_col = (uint64_t)c->strides[c->rank - 1]};
  gemm_operand orr = {0};
  batch_strides(a, c, &oa);
  batch_strides(b, c, &ob);
  batch_strides(c, c, &oc);
  if (has_res) {
    orr = (gemm_operand){.off = bound_offset(ctx, res),
                         .s_row = (uint64_t)res->strides[res->rank - 2],
                         .s_col = (uint64_t)res->strides[res->rank - 1]};
    batch_strides(res, c, &orr);
  }
  if (operand_last(&oa, m, a_glu ? 2 * k : k, c) > UINT32_MAX ||
      operand_last(&ob, k, c_glu ? 2 * n : n, c) > UINT32_MAX ||
      operand_last(&oc, m, n, c) > UINT32_MAX ||
      (has_res && operand_last(&orr, m, n, c) > UINT32_MAX))
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "matmul \"%s\": %s x %s: element indices exceed 32 bits", node->name, sa,
                           sb);

  /* Quantised B is read in ggml's blocks: [N, K] rows of whole blocks from the binding's start,
   * one matrix for every batch. */
  if (b_quant && (ob.s_row != 1 || ob.s_col != k || ob.off != 0 || ob.bs0 || ob.bs1 ||
                  k % vkf_dtype_block(b->dtype)))
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "matmul \"%s\": %s x %s: %s B must be one contiguous [N, K] matrix of "
                           "whole blocks",
                           node->name, sa, sb, vkf_dtype_name(b->dtype));

  vkf_plan_dispatch d = {.node = node->name, .shader = "gemm.comp"};
  vkf_plan_tensor b_x16; /* B's interleaved copy (QCPU_X16) */
  /* split-K: this dispatch stores f32 partial sums, gemm_splitk.glsl's adds them (the epilogue) */
  int split = variant->kind == VKF_GEMM_COOPMAT && variant->coopmat_splits > 1;
  if (split && batches > 1)
    return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "matmul \"%s\": %s x %s: split-K takes one batch", node->name, sa, sb);
  char def_cpu_ra[24], def_cpu_tn[24], def_cpu_ku[24];
  if (variant->kind == VKF_GEMM_CPU) {
    vkf_plan_dispatch_define(&d, "GEMM_CPU");
    d.subgroup_size = 8;
    snprintf(def_cpu_ra, sizeof def_cpu_ra, "CPU_RA=%u", variant->cpu_row_groups);
    snprintf(def_cpu_tn, sizeof def_cpu_tn, "CPU_TN4=%u", variant->cpu_col_vec4s);
    vkf_plan_dispatch_define(&d, def_cpu_ra);
    vkf_plan_dispatch_define(&d, def_cpu_tn);
    /* The unrolled loop has no tail, so only an unroll whose 4*u steps divide K. */
    uint32_t ku = variant->cpu_k_unroll ? variant->cpu_k_unroll : 1;
    while (ku > 1 && k % (4u * ku)) ku /= 2;
    if (ku > 1) {
      snprintf(def_cpu_ku, sizeof def_cpu_ku, "CPU_KU=%u", ku);
      vkf_plan_dispatch_define(&d, def_cpu_ku);
    }
  } else if (variant->kind == VKF_GEMM_QCPU) {
    if (!b_quant)
      return vkf_status_make(VKF_STATUS_UNSUPPORTED, "matmul \"%s\": %s x %s: the quantised CPU "
                             "kernel needs quantised B", node->name, sa, sb);
    static const char *const rows_define[9] = {NULL, "QCPU_ROWS=1", "QCPU_ROWS=2", NULL,
                                               "QCPU_ROWS=4", NULL, NULL, NULL, "QCPU_ROWS=8"};
    vkf_plan_dispatch_define(&d, "GEMM_QCPU");
    d.subgroup_size = 8;
    vkf_plan_dispatch_define(&d, rows_define[variant->qcpu_rows]);
    vkf_plan_dispatch_define(&d, variant->qcpu_cols == 2 ? "QCPU_COLS=2" : "QCPU_COLS=1");
    /* Q8_0 two blocks (17 whole words) an iteration where K allows: each word fetched once
     * (gemm_qcpu.glsl) */
    if (b->dtype == VKF_Q8_0 && k % 64 == 0) vkf_plan_dispatch_define(&d, "QCPU_K64");
    /* and at two columns a lane, from a copy of the weights with their rows 16 to a group (each
     * two-block pair of 16 rows side by side): what the lane's 16 rows read at a step is one
     * contiguous stream */
    if (variant->qcpu_cols == 2 && vkf_gemm_b_x16_fits(ctx, b, c_glu ? 2 * n : n, k)) {
      b_x16 = *b;
      b_x16.buffer =
          vkf_plan_add_interleaved(ctx->plan, b->buffer, c_glu ? 2 * n : n, k / 32 * 34, 16, 68);
      b = &b_x16;
      vkf_plan_dispatch_define(&d, "QCPU_X16");
    }
  } else if (variant->kind == VKF_GEMM_COOPMAT) {
    if (!coopmat_operands_ok(a->dtype, b->dtype, c->dtype, has_bias ? bias->dtype : VKF_F16,
                             has_res ? res->dtype : VKF_F16))
      return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                             "matmul \"%s\": %s %s x %s %s: the cooperative-matrix kernel takes "
                             "f16 operands, bias, residual and output, B f16 or quantised",
                             node->name, vkf_dtype_name(a->dtype), sa, vkf_dtype_name(b->dtype),
                             sb);
    /* variant_unfit admitted only the built rows: 2 or 4 subgroups along M, 2 or 4 tiles a
     * subgroup each way, 1 or 2 tiles of k a stage */
    uint32_t t = variant->coopmat_tile, sgm = variant->bm / (variant->tm * t);
    vkf_plan_dispatch_define(&d, "GEMM_COOPMAT");
    d.subgroup_size = variant->workgroup_size / (2 * sgm);
    vkf_plan_dispatch_define(&d, t == 16 ? "CM=16" : "CM=8");
    vkf_plan_dispatch_define(&d, sgm == 4 ? "CM_SGM=4" : "CM_SGM=2");
    vkf_plan_dispatch_define(&d, variant->tm == 4 ? "CM_TM=4" : "CM_TM=2");
    vkf_plan_dispatch_define(&d, variant->tn == 4 ? "CM_TN=4" : "CM_TN=2");
    vkf_plan_dispatch_define(&d, variant->bk == t ? "CM_KS=1" : "CM_KS=2");
    if (split) vkf_plan_dispatch_define(&d, "CM_SPLITK");
  } else if (variant->kind == VKF_GEMM_NAIVE) {
    vkf_plan_dispatch_define(&d, "GEMM_NAIVE");
  } else if (variant->kind == VKF_GEMM_GEMV) {
    static const char *const rows_define[9] = {NULL, "GEMV_ROWS=1", "GEMV_ROWS=2", NULL,
                                               "GEMV_ROWS=4", NULL, NULL, NULL, "GEMV_ROWS=8"};
    static const char *const cols_define[5] = {NULL, "GEMV_COLS=1", "GEMV_COLS=2", "GEMV_COLS=3",
                                               "GEMV_COLS=4"};
    vkf_plan_dispatch_define(&d, "GEMM_GEMV");
    vkf_plan_dispatch_define(&d, rows_define[variant->gemv_rows]);
    if (variant->gemv_kn) {
      vkf_plan_dispatch_define(&d, "GEMV_KN");
    } else {
      vkf_plan_dispatch_define(&d, cols_define[variant->gemv_cols]);
      if (variant->gemv_subgroup) vkf_plan_dispatch_define(&d, "GEMV_SUBGROUP");
    }
  }
  if (a->dtype == VKF_F16) vkf_plan_dispatch_define(&d, "A_F16");
  if (b->dtype == VKF_F16) vkf_plan_dispatch_define(&d, "B_F16");
  if (b->dtype == VKF_BF16) vkf_plan_dispatch_define(&d, "B_BF16"); /* 32-bit words: no 16-bit
                                                                        storage needed */
  static const char *const quant_define[VKF_DTYPE_COUNT - VKF_Q8_0] = {
      "B_QUANT=0", "B_QUANT=1", "B_QUANT=2", "B_QUANT=3",
      "B_QUANT=4", "B_QUANT=5", "B_QUANT=6", "B_QUANT=7"};
  if (b_quant) vkf_plan_dispatch_define(&d, quant_define[b->dtype - VKF_Q8_0]);
  if (!split) epilogue_defines(&d, c, has_bias ? bias : NULL, has_res ? res : NULL);
  if (a_norm) vkf_plan_dispatch_define(&d, "A_RMSNORM");
  static const char *const glu_define[VKF_ACT_COUNT] = {NULL, "A_GLU=1", "A_GLU=2", "A_GLU=3",
                                                        "A_GLU=4"};
  if (a_glu) vkf_plan_dispatch_define(&d, glu_define[a_glu]);
  static const char *const c_glu_define[VKF_ACT_COUNT] = {NULL, "C_GLU=1", "C_GLU=2", "C_GLU=3",
                                                          "C_GLU=4"};
  if (c_glu) vkf_plan_dispatch_define(&d, c_glu_define[c_glu]);
  /* The subgroup shares each row's sum of squares where it can add (every desktop class and
   * lavapipe); the mobile class sums per invocation. */
  if (a_norm && vkf_caps_subgroup_add(ctx->caps))
    vkf_plan_dispatch_define(&d, "A_RMSNORM_SUBGROUP");
  /* vec4 loads only pay in the blocked kernels; the naive baseline stays scalar. The
   * cooperative-matrix kernel takes them as specialization constants (fewer build-time rows). */
  int a_vec4 = 0, b_vec4 = 0;
  int coopmat = variant->kind == VKF_GEMM_COOPMAT;
  /* epilogue vec4s: output, residual and bias all vec4-addressable along n */
  int c_vec4 = vec4_ok(&oc, oc.s_col, oc.s_row, n) &&
               (!has_res || vec4_ok(&orr, orr.s_col, orr.s_row, n)) &&
               (!has_bias || (bias->strides[0] == 1 && bound_offset(ctx, bias) % 4 == 0));
  uint32_t cm_spec[4] = {0, 0, 0, 0}; /* A 16-byte loads, B as [K, N] rows, B 16-byte, C vec4 */
  if (b_quant) vkf_plan_dispatch_define(&d, "B_VEC4_K"); /* 4 values of one block a load */
  if (coopmat) {
    /* B is staged in its memory order: as [K, N] rows where it is contiguous along n */
    int b_rows = ob.s_row != 1 && ob.s_col == 1;
    cm_spec[0] = (uint32_t)vec_ok(&oa, oa.s_col, oa.s_row, k, 8);
    cm_spec[1] = (uint32_t)b_rows;
    cm_spec[2] = (uint32_t)(b_rows ? vec_ok(&ob, ob.s_col, ob.s_row, n, 8)
                                   : vec_ok(&ob, ob.s_row, ob.s_col, k, 8));
    cm_spec[3] = (uint32_t)c_vec4;
  } else if (variant->kind != VKF_GEMM_NAIVE) {
    if ((a_vec4 = vec4_ok(&oa, oa.s_col, oa.s_row, k))) vkf_plan_dispatch_define(&d, "A_VEC4");
    if (b_quant)
      b_vec4 = 0; /* no texel view and no 16-byte loads of blocks */
    else if ((b_vec4 = vec4_ok(&ob, ob.s_col, ob.s_row, n)))
      vkf_plan_dispatch_define(&d, "B_VEC4_N");
    else if ((b_vec4 = vec4_ok(&ob, ob.s_row, ob.s_col, k)))
      vkf_plan_dispatch_define(&d, "B_VEC4_K");
  }
  /* 16-byte weight loads in the [N, K] GEMV: 8 f16 / bf16 values per load where B's rows are
   * 8-aligned (f32 rows already load 16 bytes a vec4). */
  if (variant->kind == VKF_GEMM_GEMV && !variant->gemv_kn && vkf_dtype_size(b->dtype) == 2 &&
      a_vec4 && vec_ok(&ob, ob.s_row, ob.s_col, k, 8))
    vkf_plan_dispatch_define(&d, "GEMV_K8");
  /* vec4 epilogue (CPU kernel): output, residual and bias all vec4-addressable along n */
  if (variant->kind == VKF_GEMM_CPU && c_vec4) vkf_plan_dispatch_define(&d, "C_VEC4");
  vkf_lower_bind(ctx, &d, a, VKF_ACCESS_READ);
  vkf_lower_bind(ctx, &d, b, VKF_ACCESS_READ);
  if ((variant->kind == VKF_GEMM_CPU || variant->kind == VKF_GEMM_QCPU) && variant->texel) {
    if (a_vec4 && (d.bindings[0].texel = vkf_lower_texel_format(ctx, a->dtype, &d.bindings[0])))
      vkf_plan_dispatch_define(&d, "A_TEXEL");
    /* blocks through an R32UI view of their words (only the quantised CPU kernel reads those) */
    if ((b_vec4 || (b_quant && variant->kind == VKF_GEMM_QCPU)) &&
        (d.bindings[1].texel = vkf_lower_texel_format(ctx, b->dtype, &d.bindings[1])))
      vkf_plan_dispatch_define(&d, "B_TEXEL");
    /* Q4_1 (two blocks: 10 words), Q5_1 (a block: 6 words) and Q4_K (a block: 36 words) as word
     * pairs, through an RG32UI view: half the texel fetches or fewer, each a call on lavapipe that
     * spills the live vectors (gemm_qcpu.glsl's QCPU_W2). Rows start at a pair: their blocks are a
     * multiple of 8 bytes. */
    if (variant->kind == VKF_GEMM_QCPU && d.bindings[1].texel == VKF_TEXEL_R32UI &&
        ((b->dtype == VKF_Q4_1 && k % 64 == 0) || b->dtype == VKF_Q5_1 || b->dtype == VKF_Q4_K) &&
        vkf_lower_texel_fits(ctx, VKF_TEXEL_RG32UI, &d.bindings[1])) {
      d.bindings[1].texel = VKF_TEXEL_RG32UI;
      vkf_plan_dispatch_define(&d, "QCPU_W2");
    }
  }

  /* the activation: a define (act_define), a specialization constant in the coopmat kernel */
  uint32_t act = (uint32_t)node->attrs->matmul.activation;
  if (act >= VKF_ACT_COUNT) /* refused by shape inference already: never lower to "none" */
    return vkf_status_make(VKF_STATUS_UNSUPPORTED, "matmul \"%s\": activation %u has no kernel",
                           node->name, act);
  if (act_define[act] && !coopmat) vkf_plan_dispatch_define(&d, act_define[act]);
  const vkf_gemm_variant *v = variant;
  uint32_t spec[6] = {v->workgroup_size,
                      v->bm ? v->bm : 32,
                      v->bn ? v->bn : 32,
                      v->bk ? v->bk : 16,
                      v->tm ? v->tm : 4,
                      v->tn ? v->tn : 4};
  memcpy(d.spec, spec, sizeof spec);
  d.spec_count = 6;
  if (coopmat) {
    d.spec[6] = act;
    memcpy(&d.spec[7], cm_spec, sizeof cm_spec);
    d.spec_count = 11;
  }
  if (split) {
    const gemm_operand ops[4] = {oa, ob, oc, orr};
    return lower_split(ctx, node, variant, &d, m, n, k, ops, c_vec4);
  }

  vkf_lower_bind(ctx, &d, c, VKF_ACCESS_WRITE);
  uint64_t bias_off = 0, bias_s = 0;
  if (has_bias) {
    bias_off = vkf_lower_bind(ctx, &d, bias, VKF_ACCESS_READ);
    bias_s = (uint64_t)bias->strides[0];
  }
  if (has_res) vkf_lower_bind(ctx, &d, res, VKF_ACCESS_READ);
  uint32_t g_off = a_norm ? vkf_lower_bind(ctx, &d, gamma, VKF_ACCESS_READ) : 0;

  uint64_t push[] = {m,       n,         k,         batch1,   oa.off,   oa.s_row, oa.s_col,
                     oa.bs0,  oa.bs1,    ob.off,    ob.s_row, ob.s_col, ob.bs0,   ob.bs1,
                     oc.off,  oc.s_row,  oc.s_col,  oc.bs0,   oc.bs1,   bias_off, bias_s,
                     orr.off, orr.s_row, orr.s_col, orr.bs0,  orr.bs1};
  for (size_t i = 0; i < sizeof push / sizeof push[0]; i++)
    vkf_plan_dispatch_push_u32(&d, (uint32_t)push[i]);
  if (a_norm) {
    vkf_plan_dispatch_push_u32(&d, g_off);
    vkf_plan_dispatch_push_f32(&d, node->attrs->matmul.a_norm_eps);
  }
  if (a_glu) vkf_plan_dispatch_push_u32(&d, (uint32_t)(k * oa.s_col)); /* up's offset from gate */

  uint64_t groups[3] = {0, 0, batches};
  if (v->kind == VKF_GEMM_TILED || v->kind == VKF_GEMM_COOPMAT) {
    groups[0] = vkf_div_up(n, v->bn);
    groups[1] = vkf_div_up(m, v->bm);
  } else if (v->kind == VKF_GEMM_CPU) {
    groups[0] = vkf_div_up(m, 8 * (uint64_t)v->cpu_row_groups);
    groups[1] = vkf_div_up(n, (uint64_t)v->workgroup_size * 4 * v->cpu_col_vec4s);
  } else if (v->kind == VKF_GEMM_QCPU) {
    /* row blocks along x: lavapipe hands out workgroups in x order, so a column block's row
     * blocks run back to back and its weights are reread from the core's cache (the 16-row
     * SmolLM2 head, 16 x 576 x 49152 Q8_0, 30 MB: 32.4-32.8 ms with columns along x, 28.8-29.0) */
    groups[0] = vkf_div_up(m, v->qcpu_rows);
    groups[1] = vkf_div_up(n, (uint64_t)v->workgroup_size * (c_glu ? 1 : v->qcpu_cols));
  } else if (v->kind == VKF_GEMM_GEMV) {
    groups[0] = v->gemv_kn ? vkf_div_up(n, 4 * GEMV_KN_LANES) : vkf_div_up(n, v->gemv_cols);
    groups[1] = vkf_div_up(m, v->gemv_rows);
  } else {
    groups[0] = vkf_div_up(n, v->workgroup_size);
    groups[1] = m;
  }
  for (int i = 0; i < 3; i++) {
    uint32_t limit = ctx->caps->max_workgroup_count[i] ? ctx->caps->max_workgroup_count[i] : 65535;
    if (groups[i] > limit)
      return vkf_status_make(VKF_STATUS_UNSUPPORTED,
                             "matmul \"%s\": %s x %s: %" PRIu64
                             " workgroups along axis %d exceed "
                             "the device limit %u",
                             node->name, sa, sb, groups[i], i, limit);
    d.groups[i] = (uint32_t)groups[i];
  }
  return vkf_plan_add_dispatch(ctx->plan, &d);
}

/* The row stride of t's batch dims and M read as one axis of rows (size-1 dims skipped), or 0
 * when they are not one evenly strided run (a transposed or broadcast view). */
static int64_t folded_row_stride(const vkf_plan_tensor *t) {
  int64_t stride = 0, span = 0; /* the run so far: its row stride, and its rows times that */
  for (int32_t i = (int32_t)t->rank - 2; i >= 0; i--) {
    if (t->shape[i] == 1) continue;
    if (!stride) stride = t->strides[i];
    else if (t->strides[i] != span) return 0;
    span = t->shape[i] * t->strides[i];
  }
  return stride;
}

/* Batches of one weight matrix as rows of one GEMM: [..., M, K] x [K, N] (B with no batch of its
 * own) is [batches * M, K] x [K, N] when A, C and the residual lay their batches out as further
 * rows. The weights are then read once for all the rows instead of once a batch (a batched decode
 * step or beam search is B GEMVs otherwise, each streaming the whole matrix). Returns 0 and
 * leaves *out alone where the batches stay a grid axis. */
static int fold_batches(const vkf_lower_ctx *ctx, const vkf_lower_node *node, uint64_t batches,
                        vkf_lower_node *out) {
  const vkf_plan_tensor *a = &node->inputs[VKF_IN_MATMUL_A], *b = &node->inputs[VKF_IN_MATMUL_B];
  const vkf_plan_tensor *c = &node->output, *res = &node->inputs[VKF_IN_MATMUL_RESIDUAL];
  int has_res = node->input_count > VKF_IN_MATMUL_RESIDUAL && vkf_plan_tensor_present(res);
  if (batches <= 1 || a->rank != c->rank || (has_res && res->rank != c->rank)) return 0;
  for (uint32_t i = 0; i + 2 < b->rank; i++)
    if (b->shape[i] != 1) return 0; /* B has batches of its own */
  for (uint32_t i = 0; i + 2 < c->rank; i++)
    if (a->shape[i] != c->shape[i] || (has_res && res->shape[i] != c->shape[i])) return 0;
  uint64_t rows = batches * (uint64_t)c->shape[c->rank - 2];
  /* the prologues reread every row in each workgroup, so they keep their row bound (fuse_norm.c,
   * fuse_glu.c); a grid axis of one row a workgroup must still fit */
  uint32_t limit = ctx->caps->max_workgroup_count[1] ? ctx->caps->max_workgroup_count[1] : 65535;
  if (((node->attrs->matmul.a_rmsnorm || node->attrs->matmul.a_glu) && rows > 8) || rows > limit)
    return 0;
  int64_t sa = folded_row_stride(a), sc = folded_row_stride(c);
  int64_t sr = has_res ? folded_row_stride(res) : 1;
  if (sa <= 0 || sc <= 0 || sr <= 0) return 0;
  *out = *node;
  vkf_plan_tensor *ta[3] = {&out->inputs[VKF_IN_MATMUL_A], &out->output,
                            has_res ? &out->inputs[VKF_IN_MATMUL_RESIDUAL] : NULL};
  int64_t st[3] = {sa, sc, sr};
  for (int j = 0; j < 3; j++) {
    vkf_plan_tensor *t = ta[j];
    if (!t) continue;
    int64_t cols = t->shape[t->rank - 1], col_stride = t->strides[t->rank - 1];
    t->rank = 2;
    t->shape[0] = (int64_t)rows, t->strides[0] = st[j];
    t->shape[1] = cols, t->strides[1] = col_stride;
  }
  /* B keeps its two matrix dims */
  vkf_plan_tensor *tb = &out->inputs[VKF_IN_MATMUL_B];
  if (tb->rank > 2) {
    uint32_t d = tb->rank - 2;
    for (uint32_t i = 0; i < 2; i++)
      tb->shape[i] = tb->shape[i + d], tb->strides[i] = tb->strides[i + d];
    tb->rank = 2;
  }
  return 1;
}

/* The variant the chooser gives `node` on these caps. */
static vkf_gemm_variant choose_for(const vkf_lower_ctx *ctx, const vkf_lower_node *node) {
  const vkf_plan_tensor *c = &node->output;
  vkf_gemm_shape shape = {
      .m = (uint64_t)c->shape[c->rank - 2],
      .n = (uint64_t)c->shape[c->rank - 1],
      .k = (uint64_t)node->inputs[VKF_IN_MATMUL_A].shape[node->inputs[VKF_IN_MATMUL_A].rank - 1],
      .batches = 1};
  if (node->attrs->matmul.a_glu != VKF_ACT_NONE) shape.k /= 2; /* A is gate then up */
  const vkf_plan_tensor *b = &node->inputs[VKF_IN_MATMUL_B];
  shape.b_along_k = node->attrs->matmul.transpose_b && b->strides[b->rank - 1] == 1;
  shape.b_along_n = !node->attrs->matmul.transpose_b && b->strides[b->rank - 1] == 1;
  shape.b_quant = vkf_dtype_is_quant(b->dtype);
  shape.b_dtype = b->dtype;
  shape.b_x16 =
      vkf_gemm_b_x16_fits(ctx, b, node->attrs->matmul.c_glu ? 2 * shape.n : shape.n, shape.k);
  const vkf_plan_tensor *bias = &node->inputs[VKF_IN_MATMUL_BIAS];
  const vkf_plan_tensor *res = &node->inputs[VKF_IN_MATMUL_RESIDUAL];
  int has_bias = node->input_count > VKF_IN_MATMUL_BIAS && vkf_plan_tensor_present(bias);
  int has_res = node->input_count > VKF_IN_MATMUL_RESIDUAL && vkf_plan_tensor_present(res);
  shape.coopmat_ok =
      coopmat_operands_ok(node->inputs[VKF_IN_MATMUL_A].dtype, b->dtype, c->dtype,
                          has_bias ? bias->dtype : VKF_F16, has_res ? res->dtype : VKF_F16);
  for (uint32_t i = 0; i + 2 < c->rank; i++) shape.batches *= (uint64_t)c->shape[i];
  return vkf_gemm_choose(ctx->caps, &shape);
}

vkf_status vkf_lower_matmul(const vkf_lower_ctx *ctx, const vkf_lower_node *node) {
  uint64_t batches = 1;
  for (uint32_t i = 0; i + 2 < node->output.rank; i++) batches *= (uint64_t)node->output.shape[i];
  vkf_lower_node folded;
  if (fold_batches(ctx, node, batches, &folded)) {
    /* folded where a kernel fits the rows (a device with narrow workgroups may have a GEMV for
     * the batches' few rows and no tile for all of them) */
    vkf_gemm_variant v = choose_for(ctx, &folded);
    if (!variant_unfit(ctx->caps, &v)) return vkf_lower_matmul_variant(ctx, &folded, &v);
  }
  vkf_gemm_variant v = choose_for(ctx, node);
  return vkf_lower_matmul_variant(ctx, node, &v);
}
