/* Where every tensor of a graph lives in the one device arena of intermediates: the data the
 * memory_plan pass (graph/passes/memory_plan.c) writes into the graph and the lowering reads. */
#ifndef VKF_GRAPH_IR_PLACEMENT_H
#define VKF_GRAPH_IR_PLACEMENT_H

#include <stddef.h>
#include <stdint.h>

typedef struct vkf_graph vkf_graph;

/* Placement of one tensor id. Inputs, constants and outputs are pinned (own buffers, in_arena 0).
 * A view (or an in-place op's output) has in_arena equal to its base's and offset = base offset +
 * view offset * element size; its `size` is the base's size (the bytes a binding must cover). */
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

/* The graph's current plan (valid == 0 when none or the graph changed since). */
const vkf_memory_plan *vkf_graph_memory_plan(const vkf_graph *graph);

#endif
