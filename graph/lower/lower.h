/* Lowering: a planned graph -> a plan (plan.h). The walker (lower.c) maps every tensor to a byte
 * range of a plan buffer (one arena for intermediates, one buffer per input, weight and output) and
 * calls one lowering function per op (lower_node.h), through the slicer (lower_slice.h); each op's
 * function runs its variant chooser on the device caps and appends its dispatches, binding through
 * bind.h. No Vulkan here. */
#ifndef VKF_GRAPH_LOWER_H
#define VKF_GRAPH_LOWER_H

#include <stdint.h>

#include "graph/base/caps.h"
#include "graph/ir/graph.h"
#include "graph/lower/bind.h"
#include "graph/lower/plan.h"
#include "graph/lower/plan_limits.h"

typedef struct vkf_lower_options {
  uint32_t alignment; /* 0: caps->min_storage_buffer_offset_alignment, at least 16 */
} vkf_lower_options;

/* Result of lowering a graph: the plan and, per tensor id, where it lives (inputs, constants and
 * outputs each have their own buffer; the caller uploads / downloads through those indices). */
typedef struct vkf_lowered {
  vkf_plan *plan;
  uint32_t tensor_bound;
  vkf_plan_tensor *tensors; /* indexed by tensor id; heap */
} vkf_lowered;

/* The graph must carry a valid memory plan (vkf_memory_plan_build). A plan that would exceed a
 * device limit even after slicing (vkf_plan_check_limits) is an OUT_OF_MEMORY status naming the
 * node or buffer and the limit. */
vkf_status vkf_lower_graph(const vkf_graph *graph, const vkf_device_caps *caps,
                           const vkf_lower_options *options, vkf_lowered *out_lowered);
void vkf_lowered_free(vkf_lowered *lowered);

#endif
