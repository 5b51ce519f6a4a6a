/* Owns the warm-up / timed-run loop and its statistics for the bench subcommands, and the
 * plan-fill-time path of the graphs they build. */
#include "tools/vkf/bench_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph/lower/lower.h"
#include "graph/passes/memory_plan.h"

vkf_status vkf_bench_session_time(vkf_session *s, int warmup, int runs, vkf_bench_stats *out) {
  out->mean_ms = out->sd_ms = 0;
  if (runs < 1) return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "--runs must be at least 1");
  double sum = 0, sum2 = 0;
  for (int i = 0; i < warmup + runs; i++) {
    VKF_RETURN_IF_ERROR(vkf_session_run(s));
    double ms = vkf_session_total_ns(s) / 1e6;
    if (i >= warmup) sum += ms, sum2 += ms * ms;
  }
  double mean = sum / runs;
  double var = runs > 1 ? (sum2 - runs * mean * mean) / (runs - 1) : 0;
  out->mean_ms = mean;
  out->sd_ms = var > 0 ? sqrt(var) : 0;
  return VKF_OK;
}

vkf_status vkf_bench_plan_time(vkf_device *device, const vkf_plan *plan, int warmup, int runs,
                               vkf_bench_stats *out) {
  vkf_session *s = NULL;
  vkf_session_options opts = {.profile = 1};
  VKF_RETURN_IF_ERROR(vkf_session_create(device, plan, &opts, &s));
  vkf_status st = vkf_bench_session_time(s, warmup, runs, out);
  vkf_session_destroy(s);
  return st;
}

const char *vkf_bench_op_of(const vkf_graph *g, const char *node) {
  for (uint32_t i = 0; node && i < vkf_graph_node_count(g); i++)
    if (!strcmp(vkf_graph_node(g, i)->name, node)) return vkf_op_name(vkf_graph_node(g, i)->op);
  return "?";
}

vkf_status vkf_bench_graph_time(vkf_device *device, vkf_graph *g, const vkf_value *in, int count,
                                int warmup, int runs, vkf_bench_stats *out) {
  vkf_lowered low = {0};
  vkf_session *ses = NULL;
  vkf_status st = vkf_graph_status(g);
  if (!st) st = vkf_memory_plan_build(g, NULL);
  if (!st) st = vkf_lower_graph(g, vkf_device_caps_get(device), NULL, &low);
  vkf_session_options opts = {.profile = 1};
  if (!st) st = vkf_session_create(device, low.plan, &opts, &ses);
  uint32_t seed = 0x9e3779b9u;
  for (int i = 0; i < count && !st; i++) {
    size_t elems = (size_t)vkf_tensor_element_count(vkf_graph_tensor(g, in[i]));
    float *x = malloc(elems * sizeof *x + 4);
    if (!x) {
      st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
      break;
    }
    for (size_t j = 0; j < elems; j++) {
      seed ^= seed << 13, seed ^= seed >> 17, seed ^= seed << 5;
      x[j] = (float)(seed >> 8) / 8388608.0f - 1.0f;
    }
    st = vkf_session_write(ses, low.tensors[in[i].id].buffer, 0, x, elems * sizeof *x);
    free(x);
  }
  if (!st) st = vkf_bench_session_time(ses, warmup, runs, out);
  vkf_session_destroy(ses);
  if (low.plan) vkf_lowered_free(&low);
  return st;
}
