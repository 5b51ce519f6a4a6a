/* The memory plan: where every intermediate tensor lives in one device arena. Computed by the
 * memory_plan pass (graph/memory_plan.c) from tensor lifetimes over the node order. */
#ifndef VKF_GRAPH_MEMORY_PLAN_H
#define VKF_GRAPH_MEMORY_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "graph/status.h"

typedef struct vkf_graph vkf_graph;

/* Placement of one tensor id. Inputs, constants and outputs are pinned (own buffers, in_arena 0).
 * A view has in_arena equal to its base's and offset = base offset + view offset * element size;
 * its `size` is the base's size (the bytes a binding must cover). */
typedef struct vkf_tensor_placement {
  int in_arena;
  size_t offset;                  /* bytes from the arena start */
  size_t size;                    /* bytes, aligned up to the plan's alignment */
  uint32_t first_node, last_node; /* lifetime in node indices, inclusive (bases only) */
} vkf_tensor_placement;

typedef struct vkf_memory_plan {
  int valid;             /* 0 until vkf_memory_plan_build ran on the current node order */
  size_t alignment;      /* bytes, power of two */
  size_t peak_size;      /* arena bytes needed */
  size_t naive_size;     /* sum of every intermediate's aligned size (no reuse) */
  uint32_t tensor_bound; /* entries in `placements`, indexed by tensor id */
  vkf_tensor_placement *placements; /* heap, owned by the graph */
} vkf_memory_plan;

typedef struct vkf_memory_plan_options {
  size_t alignment; /* 0: 256 (the largest minStorageBufferOffsetAlignment in the wild) */
} vkf_memory_plan_options;

/* Lifetimes -> offsets: greedy by size, each tensor at the lowest offset free for its whole
 * lifetime. Guarantees: no two tensors whose lifetimes overlap share bytes, and
 * peak_size <= naive_size. Replaces any previous plan on the graph. */
vkf_status vkf_memory_plan_build(vkf_graph *graph, const vkf_memory_plan_options *options);
/* The graph's current plan (valid == 0 when none or the graph changed since). */
const vkf_memory_plan *vkf_graph_memory_plan(const vkf_graph *graph);

#endif
