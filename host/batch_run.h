/* Runs a batch as the runs a vkf_batch_split chose (graph/lower/batch_split.h): one runner per
 * distinct run size (at most two; the second binds the first's weights), each run's rows copied
 * from and to the caller's whole-batch host arrays, so the caller sees one batch whatever the
 * device's limits. The one batched path classify, embed and forward share. */
#ifndef VKF_HOST_BATCH_RUN_H
#define VKF_HOST_BATCH_RUN_H

#include "graph/lower/batch_split.h"
#include "host/runner.h"

typedef struct vkf_batch_run_options {
  /* Called after each run with its runner and graph (VKF_CHECK compares the run with the
   * interpreter here); rows [first_row, first_row + rows) of the batch. NULL: none. */
  vkf_status (*after_run)(void *user, vkf_runner *runner, const vkf_batch_graph *graph,
                          int64_t first_row, int64_t rows);
  void *user;
} vkf_batch_run_options;

/* A whole batch of one input or output slot on the host: batch-first, contiguous, in the
 * tensor's dtype; `size` bytes (checked against rows x the graph's bytes per row). */
typedef struct vkf_batch_input {
  const void *data; /* NULL only for slots the build leaves VKF_NO_VALUE */
  size_t size;
} vkf_batch_input;
typedef struct vkf_batch_output {
  void *data; /* NULL: not read */
  size_t size;
} vkf_batch_output;

/* Runs `split` (chosen for this device's caps) with graphs from `build`: inputs[i] / outputs[i]
 * are the whole batch of the graph's input / output slot i. */
vkf_status vkf_batch_run(vkf_device *device, const vkf_batch_split *split, vkf_batch_build_fn build,
                         void *user, const vkf_batch_input *inputs, const vkf_batch_output *outputs,
                         const vkf_batch_run_options *options);

#endif
