/* Private to graph/ (the IR and the layers above it): the graph struct and the prototypes of the
 * shape functions that graph/ir/ops.def names. Other folders use graph/ir/graph.h only. */
#ifndef VKF_GRAPH_GRAPH_INTERNAL_H
#define VKF_GRAPH_GRAPH_INTERNAL_H

#include "graph/ir/graph.h"
#include "graph/ir/placement.h"

struct vkf_graph {
  vkf_arena *arena;
  const char *name;
  vkf_tensor *tensors; /* [tensor_cap], index 0 unused */
  uint32_t tensor_count, tensor_cap;
  vkf_node *nodes;
  uint32_t node_count, node_cap;
  vkf_value *outputs;
  uint32_t output_count, output_cap;
  vkf_status error;     /* sticky builder error */
  vkf_memory_plan plan; /* filled by the memory_plan pass; plan.valid says whether */
};

typedef vkf_status (*vkf_shape_fn)(const vkf_graph *g, const vkf_node *n, vkf_tensor *out);

/* The reference column of ops.def is the interpreter's (graph/interp/interp_internal.h). */
#define VKF_OP(id, name, min_in, max_in, flags, shape_fn, ref_fn) \
  vkf_status shape_fn(const vkf_graph *g, const vkf_node *n, vkf_tensor *out);
#include "graph/ir/ops.def"
#undef VKF_OP

vkf_shape_fn vkf_op_shape_fn(vkf_op op);

/* Appends a tensor (arena-named) and returns its id; VKF_NO_VALUE on OOM (sticky error set). */
vkf_value vkf_graph_new_tensor(vkf_graph *g, const char *name, vkf_dtype dtype, uint32_t rank,
                               const int64_t *shape, vkf_tensor_role role);

#endif
