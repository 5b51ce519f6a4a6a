/* Owns dead-node elimination: keeps only nodes that some graph output depends on, and in-place
 * writes (VKF_OPF_IN_PLACE: the write itself is the point) with what they depend on. */
#include <stdlib.h>

#include "graph/ir/graph_internal.h"
#include "graph/passes/passes.h"

vkf_status vkf_pass_dce(vkf_graph *g, const vkf_pass_options *options, uint32_t *out_rewrites) {
  (void)options;
  *out_rewrites = 0;
  unsigned char *live = calloc(g->tensor_count, 1);
  if (!live) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "dce: out of host memory");
  for (uint32_t i = 0; i < g->output_count; i++) live[g->outputs[i].id] = 1;
  /* Reverse order: a node is live when its output is; then its inputs are. */
  for (uint32_t i = g->node_count; i-- > 0;) {
    vkf_node *n = &g->nodes[i];
    if (n->dead) continue;
    if (vkf_op_flags(n->op) & VKF_OPF_IN_PLACE) live[n->output.id] = 1;
    if (!live[n->output.id]) {
      n->dead = 1;
      (*out_rewrites)++;
      continue;
    }
    for (uint32_t s = 0; s < n->input_count; s++)
      if (n->inputs[s].id) live[n->inputs[s].id] = 1;
  }
  free(live);
  vkf_graph_compact(g);
  return VKF_OK;
}
