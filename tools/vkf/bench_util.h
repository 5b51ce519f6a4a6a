/* Timing shared by the vkf bench subcommands: GPU time of a plan from the session's timestamps,
 * mean and sample standard deviation over timed runs after warm-up. */
#ifndef VKF_TOOLS_BENCH_UTIL_H
#define VKF_TOOLS_BENCH_UTIL_H

#include "graph/ir/graph.h"
#include "graph/lower/plan.h"
#include "host/device.h"
#include "host/session.h"

typedef struct vkf_bench_stats {
  double mean_ms, sd_ms;
} vkf_bench_stats;

/* Runs a profiling session warmup + runs times (runs >= 1). */
vkf_status vkf_bench_session_time(vkf_session *session, int warmup, int runs,
                                  vkf_bench_stats *out_stats);
/* Creates a profiling session for `plan` and times it with whatever its buffers hold (as
 * allocated), for kernels whose run time does not depend on the data. */
vkf_status vkf_bench_plan_time(vkf_device *device, const vkf_plan *plan, int warmup, int runs,
                               vkf_bench_stats *out_stats);

/* Plans `graph` (outputs marked) for `device`, fills its f32 inputs `inputs[0..count)` with
 * uniform values in [-1, 1) from a fixed xorshift stream and times it as vkf_bench_session_time
 * does. The graph stays the caller's. */
vkf_status vkf_bench_graph_time(vkf_device *device, vkf_graph *graph, const vkf_value *inputs,
                                int count, int warmup, int runs, vkf_bench_stats *out_stats);

/* The op name ("matmul", "attention", ...) of the graph node a dispatch came from, for per-op-kind
 * tables; "?" when no node has that name. */
const char *vkf_bench_op_of(const vkf_graph *graph, const char *node);

#endif
