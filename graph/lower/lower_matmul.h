/* The GEMM variant chooser and a lowering entry that takes a given variant, for the tests that
 * exercise every variant on one device and for `vkf bench gemm` (which times the naive kernel
 * beside the chosen one). Models go through vkf_lower_matmul (graph/lower/lower.h), which chooses. */
#ifndef VKF_GRAPH_LOWER_MATMUL_H
#define VKF_GRAPH_LOWER_MATMUL_H

#include <stdint.h>

#include "graph/lower/lower_node.h"
#include "graph/passes/passes.h"

typedef enum vkf_gemm_kind {
  VKF_GEMM_TILED = 0, /* shared-memory tiles + register blocks (GPU-shaped) */
  VKF_GEMM_CPU,       /* subgroup-broadcast register blocks, no shared memory (CPU devices) */
  VKF_GEMM_NAIVE,     /* one output per invocation (bench baseline only) */
  VKF_GEMM_GEMV,      /* at most a few rows of A: weights read once, coalesced (GPU decode) */
  VKF_GEMM_QCPU,      /* quantised B on CPU devices: lanes own columns, scaled per group */
  VKF_GEMM_COOPMAT,   /* f16 A and B on cooperative matrices (tensor cores), f32 accumulators */
} vkf_gemm_kind;

typedef struct vkf_gemm_variant {
  vkf_gemm_kind kind;
  uint32_t workgroup_size;     /* invocations */
  uint32_t bm, bn, bk, tm, tn; /* TILED: workgroup tile and per-invocation block */
  uint32_t cpu_row_groups;     /* CPU: rows per subgroup / 8 */
  uint32_t cpu_col_vec4s;      /* CPU: columns per lane / 4 */
  uint32_t cpu_k_unroll;       /* CPU: steps of 4 along k per loop iteration, 1, 2 or 4 (0 = 1);
                                * lowered as the largest of 4, 2, 1 up to it that divides K / 4 */
  int texel;                   /* CPU: read A and B through uniform texel views where the operand
                                * allows it (vec4-addressable, aligned, within the view limit) */
  uint32_t gemv_rows;          /* GEMV: rows of A per workgroup, 1, 2, 4 or 8 */
  uint32_t gemv_cols;          /* GEMV over B as [N, K]: columns per workgroup, 1..4 */
  int gemv_kn;                 /* GEMV: the body for B contiguous along n ([K, N]) */
  int gemv_subgroup;           /* GEMV over [N, K]: reduce with subgroupAdd */
  uint32_t qcpu_rows;          /* QCPU: rows of A per workgroup, 1, 2, 4 or 8 */
  uint32_t qcpu_cols;          /* QCPU: columns of B per lane, 1 or 2 */
  uint32_t coopmat_tile;       /* COOPMAT: the matrix tile, 8 or 16; tm x tn such tiles a
                                * subgroup, 2 subgroups along N and bm / (tm * tile) along M
                                * (workgroup_size = that many subgroups), bk = 1 or 2 tiles */
  uint32_t coopmat_splits;     /* COOPMAT: workgroups along z splitting K (0 or 1: none), their
                                * f32 partial sums added by a second dispatch */
} vkf_gemm_variant;

/* The problem as the chooser sees it (sizes of one matmul; batches = product of batch dims). */
typedef struct vkf_gemm_shape {
  uint64_t m, n, k, batches;
  int b_along_k; /* B is stored contiguous along k ([N, K]: nn.Linear weights, transpose_b) */
  int b_along_n; /* B is stored contiguous along n ([K, N]: GPT-2's Conv1D weights) */
  int b_quant;   /* B is ggml blocks (always [N, K]) */
  vkf_dtype b_dtype; /* B's element type where known (the CPU quantised kernel's columns a lane) */
  int b_x16;      /* B is Q8_0 weights the quantised CPU kernel can read interleaved (QCPU_X16) */
  int coopmat_ok; /* A, the output, bias and residual are f16, B f16 or quantised: what the
                     cooperative-matrix kernels take */
} vkf_gemm_shape;

/* Whether the quantised CPU kernel reads B (`rows` rows of Q8_0 blocks, K % 64 == 0) from a copy
 * with its rows interleaved 16 at a time (gemm_qcpu.glsl's QCPU_X16; vkf_gemm_shape's b_x16) at
 * two columns a lane: B must be a whole weight buffer, which the runner regroups once, from its
 * start. */
int vkf_gemm_b_x16_fits(const vkf_lower_ctx *ctx, const vkf_plan_tensor *b, uint64_t rows,
                        uint64_t k);

/* The one GEMM chooser: picks the kernel shape and tile sizes from the device caps. */
vkf_gemm_variant vkf_gemm_choose(const vkf_device_caps *caps, const vkf_gemm_shape *shape);

/* Whether `caps` runs matmuls with quantised weights in the quantised CPU kernel with subgroup
 * arithmetic, which takes a folded RMSNorm at any rows (vkf_pass_options'
 * quant_norm_rows). */
int vkf_gemm_qcpu_norm_any_rows(const vkf_device_caps *caps);

/* The pass options whose folds pay with the GEMM kernels `caps` gets: the prologue bound
 * (vkf_pass_prologue_rows), and on devices of vkf_gemm_qcpu_norm_any_rows the norm at any rows
 * and the GLU epilogue for quantised weights. What the engines pass to vkf_passes_run. */
vkf_pass_options vkf_gemm_pass_options(const vkf_device_caps *caps);

/* The large cooperative-matrix variant of `caps` (its tile, 8 x 8 tiles a workgroup; check it with
 * vkf_lower_matmul_variant, which refuses it where caps->coopmat_gemm_tile is 0). */
vkf_gemm_variant vkf_gemm_coopmat_variant(const vkf_device_caps *caps);
/* The cooperative-matrix variant the chooser takes for `shape` (workgroup tile by grid size and
 * shared memory, split-K for short M): what vkf_gemm_choose returns where it picks the kernel. */
vkf_gemm_variant vkf_gemm_coopmat_choose(const vkf_device_caps *caps, const vkf_gemm_shape *shape);

/* The GEMV variant for `shape` on `caps` (rows of A rounded up to 1, 2, 4 or 8; the body by B's
 * layout; the workgroup halved until it fits): 1 and *out set, or 0 when none fits the device. */
int vkf_gemv_choose(const vkf_device_caps *caps, const vkf_gemm_shape *shape,
                    vkf_gemm_variant *out);

/* Short stable name, e.g. "cpu r2x1 wg64" or "tiled 64x64x16 t4x4"; returns buf. */
char *vkf_gemm_variant_name(const vkf_gemm_variant *v, char *buf, size_t buf_size);

/* vkf_lower_matmul with the variant given instead of chosen. A variant the device cannot run
 * (workgroup or shared memory over its limits, missing subgroup ops) gives UNSUPPORTED. */
vkf_status vkf_lower_matmul_variant(const vkf_lower_ctx *ctx, const vkf_lower_node *node,
                                    const vkf_gemm_variant *variant);

#endif
