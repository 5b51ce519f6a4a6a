/* The pass pipeline: one visible ordered list of named graph rewrites (graph/passes/passes.c), each
 * skippable, verified and dumpable. Individual passes are also callable for tests and tools. */
#ifndef VKF_GRAPH_PASSES_H
#define VKF_GRAPH_PASSES_H

#include <stddef.h>
#include <stdint.h>

#include "graph/ir/graph.h"

enum { VKF_MAX_PASSES = 16 };

typedef struct vkf_pass_options {
  int no_verify;        /* 1: skip the verifier after each pass (it runs by default) */
  const char *skip;     /* comma list of skip keys ("attention,gemm,elementwise", "all");
                           NULL: VKF_NO_FUSE */
  const char *dump;     /* "passes": write the graph after each pass; NULL: VKF_DUMP */
  const char *dump_dir; /* where dumps go; NULL: VKF_DUMP_DIR, else "." */
  size_t alignment;     /* memory plan alignment in bytes; 0: 256 */
  int64_t prologue_rows; /* the most rows (every dim but the last) the RMSNorm and GLU prologue
                            folds take; 0: 8. CPU devices want 1 (vkf_pass_prologue_rows) */
  int64_t quant_norm_rows; /* the RMSNorm fold into a matmul with quantised weights: at most
                              this many rows (0: as into other matmuls). Where
                              the quantised CPU kernel runs those (vkf_gemm_qcpu_norm_any_rows)
                              the fold costs no reread, so engines set INT64_MAX there */
  int quant_glu_epilogue;  /* a matmul with quantised weights producing gate+up takes the GLU
                              after it into its epilogue (matmul.c_glu), at any rows, instead of
                              the next matmul's prologue taking it: where the quantised CPU
                              kernel runs those (vkf_gemm_qcpu_norm_any_rows), which computes
                              each gate and up column pair in one lane */
} vkf_pass_options;

/* prologue_rows for a device: 1 on CPU devices, else 0 (the default 8). On lavapipe each GEMM
 * workgroup is 8 lanes, so thousands of them recompute the prologue: SmolLM2-135M Q4_1's ragged
 * serve steps, min of 10, 4 rows 120-130 ms folded against 69-79 ms unfolded, 8 rows 242-273 ms
 * against 117-131 ms; at one row the two are even (51-55 ms) and folding saves 90 dispatches. */
int64_t vkf_pass_prologue_rows(int device_is_cpu);

/* A pass rewrites the graph in place and leaves it compacted (no dead nodes), in execution
 * order; `out_rewrites` counts what it changed (nodes removed or fused). */
typedef vkf_status (*vkf_pass_fn)(vkf_graph *graph, const vkf_pass_options *options,
                                  uint32_t *out_rewrites);

typedef struct vkf_pass {
  const char *name;     /* used in dumps: <dump_dir>/<NN>_<name>.{txt,dot,json} */
  const char *skip_key; /* name in VKF_NO_FUSE that skips it; NULL: cannot be skipped */
  vkf_pass_fn run;
} vkf_pass;

typedef struct vkf_pass_report_entry {
  const char *name;
  int skipped;
  uint32_t nodes_before, nodes_after, rewrites;
} vkf_pass_report_entry;

typedef struct vkf_pass_report {
  uint32_t count;
  vkf_pass_report_entry passes[VKF_MAX_PASSES];
  size_t peak_size;  /* memory plan: arena bytes */
  size_t naive_size; /* memory plan: sum of all intermediates' aligned sizes */
} vkf_pass_report;

/* The pipeline, in order: verify (shape/dtype re-inference + IR invariants), dce,
 * fuse_attention, fuse_gemm, fuse_norm, fuse_glu, fuse_elementwise, memory_plan. */
const vkf_pass *vkf_passes_list(uint32_t *out_count);

/* Runs every pass in order on a graph whose builder status is OK. After each pass: verify
 * (unless no_verify) and, with dump == "passes", write the three dumps. `out_report` may be NULL.
 * On success the graph carries a valid memory plan (graph/passes/memory_plan.h). */
vkf_status vkf_passes_run(vkf_graph *graph, const vkf_pass_options *options,
                          vkf_pass_report *out_report);

/* The passes themselves. */
vkf_status vkf_pass_verify(vkf_graph *graph, const vkf_pass_options *options,
                           uint32_t *out_rewrites);
/* Removes nodes whose output no graph output depends on; in-place writes (VKF_OPF_IN_PLACE) and
 * what they depend on are always kept. */
vkf_status vkf_pass_dce(vkf_graph *graph, const vkf_pass_options *options, uint32_t *out_rewrites);
/* matmul(q, kᵀ) -> [scale]* -> [add mask] -> softmax -> matmul(·, v) becomes one attention node
 * (scale folded; per-batch valid_lens -> kv_len; causal kept; additive masks -> bias). Also
 * accepts kᵀ written as a permute view of k. Patterns whose intermediates have other users, or
 * per-row valid lengths, stay unfused. */
vkf_status vkf_pass_fuse_attention(vkf_graph *graph, const vkf_pass_options *options,
                                   uint32_t *out_rewrites);
/* matmul -> add [N] bias -> activation -> add output-shaped residual: each step that follows is
 * folded into the matmul's epilogue (bias, activation, residual). */
vkf_status vkf_pass_fuse_gemm(vkf_graph *graph, const vkf_pass_options *options,
                              uint32_t *out_rewrites);
/* rmsnorm whose output is read only as the A of one matmul, over at most prologue_rows rows (a
 * decode step's; all dims but the last count, since lowering runs batches as rows), f32 with a
 * gamma: folded into that matmul's prologue (matmul.a_rmsnorm, gamma as NORM_GAMMA). */
vkf_status vkf_pass_fuse_norm(vkf_graph *graph, const vkf_pass_options *options,
                              uint32_t *out_rewrites);
/* act(gu[..., :F]) * gu[..., F:] (gate+up stacked) read only as the A of one matmul, over at most
 * prologue_rows rows (all dims but the last), f32: folded into that matmul's prologue (matmul.a_glu = act, A = gu). */
vkf_status vkf_pass_fuse_glu(vkf_graph *graph, const vkf_pass_options *options,
                             uint32_t *out_rewrites);
/* Trees of single-use elementwise nodes become one fused_elementwise node with a program
 * (vkf_ew_instr list) over at most VKF_MAX_NODE_INPUTS external inputs. */
vkf_status vkf_pass_fuse_elementwise(vkf_graph *graph, const vkf_pass_options *options,
                                     uint32_t *out_rewrites);
vkf_status vkf_pass_memory_plan(vkf_graph *graph, const vkf_pass_options *options,
                                uint32_t *out_rewrites);

#endif
