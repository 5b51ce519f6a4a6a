/* VKF_CHECK: compares every node of a device run with the CPU interpreter, each node fed the
 * device's own values of its inputs, so the first node beyond tolerance is the one at fault
 * (errors do not accumulate from earlier nodes). Used by `vkf classify` and the model tests. */
#ifndef VKF_HOST_CHECK_H
#define VKF_HOST_CHECK_H

#include <stdint.h>

#include "graph/ir/graph.h"
#include "host/runner.h"

/* Marks the output of every node as a graph output so that the memory planner gives each its own
 * buffer and its value survives the run (the arena would reuse the bytes). Call after building,
 * before the passes and vkf_runner_create. A debugging mode: more memory, and fusion passes leave
 * pinned intermediates unfused, so the check sees every node the builder emitted. */
vkf_status vkf_check_pin_all(vkf_graph *graph);

typedef struct vkf_check_options {
  /* |device - reference| <= atol + rtol·|reference| per element; 0 picks the defaults per output
   * dtype: f32 atol 1e-4 rtol 1e-3, f16 atol 2e-3 rtol 1e-2. */
  double atol, rtol;
} vkf_check_options;

typedef struct vkf_check_report {
  uint32_t nodes_checked;
  double worst_ratio;     /* max over elements of |d - r| / (atol + rtol·|r|): <= 1 passes */
  const char *worst_node; /* node with the largest ratio (the graph's string) */
  double worst_error;     /* its max |device - reference| */
} vkf_check_report;

/* After vkf_runner_run on a graph prepared by vkf_check_pin_all: replays every node in the
 * interpreter from the device's values of its inputs and compares its output with the device's.
 * Returns VKF_STATUS_MISMATCH naming the first node beyond tolerance (op, shape, dtype, max error,
 * the element and both values); OK when every node agrees. `out_report` may be NULL. */
vkf_status vkf_check_run(vkf_runner *runner, const vkf_graph *graph,
                         const vkf_check_options *options, vkf_check_report *out_report);

#endif
