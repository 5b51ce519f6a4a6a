/* Owns GEMM epilogue fusion: matmul followed by a bias add, an activation and a residual add
 * becomes one matmul node whose epilogue does all three (see vkf_pass_fuse_gemm). */
#include <stdlib.h>
#include <string.h>

#include "graph/ir/graph_internal.h"
#include "graph/passes/passes.h"

static int same_shape(const vkf_tensor *a, const vkf_tensor *b) {
  return a->rank == b->rank && a->dtype == b->dtype &&
         memcmp(a->shape, b->shape, a->rank * sizeof a->shape[0]) == 0;
}

/* Folds the consumer of matmul node `mi` into it when it is the next epilogue stage; returns the
 * index of the merged node (the consumer's slot) or -1. */
static int32_t absorb_next(vkf_graph *g, const uint32_t *uses, uint32_t mi) {
  vkf_node *m = &g->nodes[mi];
  int32_t ci = vkf_graph_sole_consumer(g, uses, m->output, mi);
  if (ci < 0) return -1;
  vkf_node *c = &g->nodes[ci];
  const vkf_tensor *y = &g->tensors[m->output.id];
  int has_bias = m->input_count > VKF_IN_MATMUL_BIAS && m->inputs[VKF_IN_MATMUL_BIAS].id;
  int has_res = m->input_count > VKF_IN_MATMUL_RESIDUAL && m->inputs[VKF_IN_MATMUL_RESIDUAL].id;
  int has_act = m->attrs.matmul.activation != VKF_ACT_NONE;
  /* The merged node reads the matmul's inputs at the consumer's slot. */
  for (uint32_t s = 0; s < m->input_count; s++)
    if (vkf_graph_in_place_between(g, m->inputs[s], mi, (uint32_t)ci)) return -1;
  vkf_node merged = *m;
  if (c->op == VKF_OP_ADD) {
    if (c->inputs[0].id == c->inputs[1].id) return -1;
    vkf_value other = c->inputs[c->inputs[0].id == m->output.id ? 1 : 0];
    const vkf_tensor *o = &g->tensors[other.id];
    const vkf_tensor *sum = &g->tensors[c->output.id];
    if (!same_shape(sum, y)) return -1; /* the add broadcasts y itself: not an epilogue */
    if (!has_bias && !has_act && !has_res && o->rank == 1 && o->dtype == y->dtype &&
        o->shape[0] == y->shape[y->rank - 1]) {
      merged.inputs[VKF_IN_MATMUL_BIAS] = other;
      if (merged.input_count < 3) merged.input_count = 3;
    } else if (!has_res && same_shape(o, y)) {
      merged.inputs[VKF_IN_MATMUL_RESIDUAL] = other;
      merged.input_count = 4;
    } else {
      return -1;
    }
  } else if (vkf_graph_activation_of(c->op) != VKF_ACT_NONE && !has_act && !has_res) {
    merged.attrs.matmul.activation = vkf_graph_activation_of(c->op);
  } else {
    return -1;
  }
  /* The merged matmul takes the consumer's slot (all its inputs are defined before it) and its
   * output tensor, so later readers are untouched. */
  merged.output = c->output;
  *c = merged;
  m->dead = 1;
  return ci;
}

vkf_status vkf_pass_fuse_gemm(vkf_graph *g, const vkf_pass_options *options,
                              uint32_t *out_rewrites) {
  (void)options;
  *out_rewrites = 0;
  for (uint32_t i = 0; i < g->node_count; i++) {
    if (g->nodes[i].dead || g->nodes[i].op != VKF_OP_MATMUL) continue;
    uint32_t *uses = vkf_graph_use_counts(g);
    if (!uses) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "fuse_gemm: out of memory");
    int32_t at = (int32_t)i;
    while ((at = absorb_next(g, uses, (uint32_t)at)) >= 0) (*out_rewrites)++;
    free(uses);
  }
  vkf_graph_compact(g);
  return VKF_OK;
}
