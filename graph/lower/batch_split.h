/* Splitting a batch into runs that fit the device. Slicing (lower_slice.c) keeps one node's
 * bindings within maxStorageBufferRange, but some nodes cannot be sliced and the arena, the
 * workgroup grids and the buffers grow with the batch, so a batch too big for one plan runs as
 * several plans of fewer rows, each lowered for the same caps. Device-free: the split is chosen
 * by lowering probe graphs for the caps (vkf_lower_graph checks every limit), so `vkf dump` shows
 * the same split the runner uses (host/batch_run.h executes it). */
#ifndef VKF_GRAPH_LOWER_BATCH_SPLIT_H
#define VKF_GRAPH_LOWER_BATCH_SPLIT_H

#include <stdint.h>

#include "graph/base/caps.h"
#include "graph/ir/graph.h"

enum { VKF_BATCH_MAX_IO = 8 };

/* One run's graph and its batch-first inputs and outputs (dim 0 is the run's rows); a slot left
 * VKF_NO_VALUE is not bound or read. The order is the builder's and the same for every `rows`. */
typedef struct vkf_batch_graph {
  vkf_graph *graph; /* owned by whoever asked for the build: vkf_graph_destroy */
  uint32_t input_count, output_count;
  vkf_value inputs[VKF_BATCH_MAX_IO];
  vkf_value outputs[VKF_BATCH_MAX_IO];
} vkf_batch_graph;

/* Builds the graph of one run of `rows` batch rows with its passes run (what vkf_runner_create
 * takes); *out is zeroed first. `user` is the callback's own state. */
typedef vkf_status (*vkf_batch_build_fn)(void *user, int64_t rows, vkf_batch_graph *out);

typedef struct vkf_batch_split {
  int64_t batch;        /* rows asked for */
  int64_t rows_per_run; /* rows of every run but the last */
  int64_t run_count;
  int64_t last_rows; /* rows of the last run (rows_per_run when they divide evenly) */
  /* Why the whole batch is not one run: the first limit the plan of `failed_rows` rows exceeds
   * ("" when it fits). Batches above a few thousand rows are probed from below, so that is the
   * smallest probed row count that failed, not always the batch. */
  char reason[384];
  int64_t failed_rows;
} vkf_batch_split;

/* Chooses the fewest runs of at most equal size whose plans fit `caps`: the whole batch when it
 * lowers within every limit, else the largest row count that does (binary search over probe
 * builds), with the batch spread evenly over the runs. When even one row exceeds a limit, the
 * one-row plan's error (naming the node and the limit) is returned, prefixed with that fact.
 * Errors that are not limits (a bad shape, an unknown output) are returned as they are. */
vkf_status vkf_batch_split_choose(const vkf_device_caps *caps, int64_t batch,
                                  vkf_batch_build_fn build, void *user, vkf_batch_split *out);

/* Rows of run `index` (< run_count) and the first batch row it covers. */
int64_t vkf_batch_split_rows(const vkf_batch_split *split, int64_t index, int64_t *out_first);

/* One line: "batch N: 1 run" or "batch N: K runs of R rows (last L): <reason>". */
void vkf_batch_split_describe(const vkf_batch_split *split, char *out, size_t out_size);

#endif
