/* The memory_plan pass: tensor lifetimes over the node order -> offsets in one device arena. The
 * result types live in the IR (graph/ir/placement.h) because the graph carries the plan. */
#ifndef VKF_GRAPH_MEMORY_PLAN_H
#define VKF_GRAPH_MEMORY_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "graph/base/status.h"
#include "graph/ir/placement.h"

typedef struct vkf_memory_plan_options {
  size_t alignment; /* 0: 256 (the largest minStorageBufferOffsetAlignment in the wild) */
} vkf_memory_plan_options;

/* Lifetimes -> offsets: greedy by size, each tensor at the lowest offset free for its whole
 * lifetime. Guarantees: no two tensors whose lifetimes overlap share bytes, and
 * peak_size <= naive_size. Replaces any previous plan on the graph. */
vkf_status vkf_memory_plan_build(vkf_graph *graph, const vkf_memory_plan_options *options);

#endif
