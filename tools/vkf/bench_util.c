/* Owns the warm-up / timed-run loop and its statistics for the bench subcommands, and the
 * plan-fill-time path of the graphs they build. */
#include "tools/vkf/bench_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph/lower/lower.h"
#include "graph/passes/memory_plan.h"

double vkf_bench_now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

void vkf_bench_mean_sd(const double *x, int64_t n, double *mean, double *sd) {
  double m = 0, v = 0;
  for (int64_t i = 0; i < n; i++) m += x[i] / (double)n;
  for (int64_t i = 0; i < n; i++) v += (x[i] - m) * (x[i] - m);
  *mean = m;
  *sd = n > 1 ? sqrt(v / (double)(n - 1)) : 0;
}

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

int vkf_bench_int_arg(const char *opt, const char *val, int64_t lo, int64_t hi, int64_t *out) {
  char *end;
  long long v = strtoll(val, &end, 10);
  if (end == val || *end || v < lo || v > hi) {
    fprintf(stderr, "vkf bench attention: bad %s \"%s\" (an integer in [%lld, %lld])\n", opt, val,
            (long long)lo, (long long)hi);
    return -1;
  }
  *out = v;
  return 0;
}

int vkf_bench_kind_arg(vkf_bench_kind_args *a, int argc, char **argv, int *i) {
  const char *arg = argv[*i], *val = *i + 1 < argc ? argv[*i + 1] : NULL;
  if (!val) return 0;
  if (!strcmp(arg, "--kind") || !strcmp(arg, "--device")) {
    if (!strcmp(arg, "--device")) a->device = val;
    ++*i;
    return 1;
  }
  static const char *const opts[] = {"--n", "--heads", "--dim", "--runs", "--warmup"};
  int k = 0;
  while (k < 5 && strcmp(arg, opts[k])) k++;
  if (k == 5) return 0;
  const int64_t lo[5] = {1, 1, 1, 1, 0}, hi[5] = {a->n_max, a->heads_max, a->dim_max, 1 << 12, 1 << 12};
  int64_t v;
  if (vkf_bench_int_arg(arg, val, lo[k], hi[k], &v)) return -1;
  ++*i;
  if (k == 0) {
    if (a->n_count == VKF_BENCH_MAX_N) {
      fprintf(stderr, "vkf bench attention: at most %d --n\n", VKF_BENCH_MAX_N);
      return -1;
    }
    a->ns[a->n_count++] = v;
  } else if (k == 1) {
    a->heads = v;
  } else if (k == 2) {
    a->dim = v;
  } else if (k == 3) {
    a->runs = (int)v;
  } else {
    a->warmup = (int)v;
  }
  return 1;
}
