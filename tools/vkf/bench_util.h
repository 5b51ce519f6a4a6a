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

/* The monotonic wall clock in milliseconds (the benches that time whole runs from the host). */
double vkf_bench_now_ms(void);
/* Mean and sample standard deviation (0 for one value) of x[0..n). */
void vkf_bench_mean_sd(const double *x, int64_t n, double *mean, double *sd);

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

enum { VKF_BENCH_MAX_N = 8 };

/* What every `vkf bench attention --kind K` row takes: --n (repeated), --heads, --dim, --runs,
 * --warmup, --device, and --kind itself (how the caller got here). The caller sets the defaults
 * and the bounds n_max, heads_max and dim_max. */
typedef struct vkf_bench_kind_args {
  int64_t ns[VKF_BENCH_MAX_N];
  int n_count;
  int64_t heads, dim;
  int runs, warmup;
  const char *device;
  int64_t n_max, heads_max, dim_max;
} vkf_bench_kind_args;

/* argv[*i] if it is one of those: 1 (taken, *i moved past its value), 0 (not one of them), -1 (a
 * bad value, said on stderr). */
int vkf_bench_kind_arg(vkf_bench_kind_args *a, int argc, char **argv, int *i);
/* An integer option's value in [lo, hi]: 0, or -1 after saying on stderr
 * `vkf bench attention: bad OPT "VAL" (an integer in [lo, hi])`. */
int vkf_bench_int_arg(const char *opt, const char *val, int64_t lo, int64_t hi, int64_t *out);

#endif
