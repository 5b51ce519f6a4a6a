/* Owns RMSNorm prologue fusion: rmsnorm(x, gamma) read only as a matmul's A becomes that matmul
 * with matmul.a_rmsnorm set, x as A and gamma as its NORM_GAMMA input (see vkf_pass_fuse_norm).
 * A decode step's pre-attention and pre-MLP norms then cost no dispatch and no barrier of their
 * own: every GEMM workgroup recomputes the sums of squares of the few rows it reads. */
#include <stdlib.h>

#include "graph/ir/graph_internal.h"
#include "graph/passes/passes.h"

/* Rows at most (options->prologue_rows overrides it): each workgroup rereads all of A's rows for
 * their norms (shaders/gemm.comp, A_RMSNORM), which is cheap next to the weights only while rows
 * are few, as in a decode step. Every dim but the last counts: lowering runs a matmul's batches
 * of one weight matrix as rows (graph/lower/lower_matmul.c). */
enum { FOLD_MAX_ROWS = 8 };
/* Columns at most: each workgroup owns a few columns and recomputes the norms of all the rows, so
 * the re-reads grow with N; an LM head's (tens of thousands of columns) outweigh a dispatch of
 * its own. SmolLM2-135M Q4_1's head (49152 x 576 Q8_0, 6144 workgroups on lavapipe), one thread,
 * VKF_PROFILE=1, min over 9 decode steps, three alternated pairs: 18.9-22.1 ms with the norm in
 * its prologue, 11.1-13.7 ms plus 0.09 ms for the norm's own dispatch. QKV (960) and gate+up
 * (3072) keep theirs. */
enum { FOLD_MAX_COLS = 16384 };

static int foldable(const vkf_graph *g, const uint32_t *uses, uint32_t ni, int64_t max_rows,
                    int64_t quant_rows, int32_t *out_ci) {
  const vkf_node *r = &g->nodes[ni];
  if (r->dead || r->op != VKF_OP_RMSNORM) return 0;
  const vkf_tensor *y = &g->tensors[r->output.id];
  const vkf_tensor *x = &g->tensors[r->inputs[VKF_IN_NORM_X].id];
  vkf_value gv = r->input_count > VKF_IN_NORM_GAMMA ? r->inputs[VKF_IN_NORM_GAMMA] : (vkf_value){0};
  /* f32 with a gamma only: the kernel's prologue (shaders/gemm.comp, A_RMSNORM) normalises in
   * its fp32 A path and reads gamma as a float buffer; one variant, not one with and without. */
  if (x->dtype != VKF_F32 || y->dtype != VKF_F32 || y->rank < 2) return 0;
  if (!vkf_value_valid(gv) || g->tensors[gv.id].dtype != VKF_F32) return 0;
  int32_t ci = vkf_graph_sole_consumer(g, uses, r->output, ni);
  if (ci < 0) return 0;
  const vkf_node *c = &g->nodes[ci];
  if (c->op != VKF_OP_MATMUL || c->inputs[VKF_IN_MATMUL_A].id != r->output.id ||
      c->attrs.matmul.a_rmsnorm)
    return 0;
  /* quantised weights where the kernel sums the squares in its own loop: any rows */
  int quant = quant_rows > 0 && vkf_dtype_is_quant(g->tensors[c->inputs[VKF_IN_MATMUL_B].id].dtype);
  if (vkf_tensor_rows(y) > (quant ? quant_rows : max_rows)) return 0;
  const vkf_tensor *o = &g->tensors[c->output.id];
  if (o->shape[o->rank - 1] > FOLD_MAX_COLS) return 0;
  /* The matmul will read x and gamma at its own slot: refused when either is written in place
   * in between. */
  if (vkf_graph_in_place_between(g, r->inputs[VKF_IN_NORM_X], ni, (uint32_t)ci)) return 0;
  if (vkf_graph_in_place_between(g, gv, ni, (uint32_t)ci)) return 0;
  *out_ci = ci;
  return 1;
}

vkf_status vkf_pass_fuse_norm(vkf_graph *g, const vkf_pass_options *options,
                              uint32_t *out_rewrites) {
  int64_t max_rows =
      options && options->prologue_rows > 0 ? options->prologue_rows : FOLD_MAX_ROWS;
  *out_rewrites = 0;
  uint32_t *uses = vkf_graph_use_counts(g);
  if (!uses) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "fuse_norm: out of memory");
  /* Folding only retargets a matmul's A from y to x and kills the norm: the use counts of
   * tensors other than y stay right for later candidates (x gains a reader, which no check
   * here counts). */
  for (uint32_t i = 0; i < g->node_count; i++) {
    int32_t ci;
    if (!foldable(g, uses, i, max_rows, options ? options->quant_norm_rows : 0, &ci)) continue;
    vkf_node *r = &g->nodes[i], *c = &g->nodes[ci];
    c->inputs[VKF_IN_MATMUL_A] = r->inputs[VKF_IN_NORM_X];
    c->inputs[VKF_IN_MATMUL_NORM_GAMMA] = r->inputs[VKF_IN_NORM_GAMMA];
    for (uint32_t s = c->input_count; s < VKF_IN_MATMUL_NORM_GAMMA; s++)
      c->inputs[s] = (vkf_value){0};
    c->input_count = VKF_IN_MATMUL_NORM_GAMMA + 1;
    c->attrs.matmul.a_rmsnorm = 1;
    c->attrs.matmul.a_norm_eps = r->attrs.norm.eps;
    r->dead = 1;
    (*out_rewrites)++;
  }
  free(uses);
  vkf_graph_compact(g);
  return VKF_OK;
}
