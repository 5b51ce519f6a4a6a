/* vkf bench model: end-to-end latency of a ViT/DeiT checkpoint on the device (wall clock of one
 * submitted run, mean ± sd over timed runs after warm-up) and a per-op breakdown from the
 * session's timestamps, aggregated by op kind (matmul, attention, layernorm, ...). Markdown or
 * --json. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "graph/passes/passes.h"
#include "host/runner.h"
#include "models/arch/vit.h"
#include "tools/vkf/bench_util.h"
#include "tools/vkf/cli_args.h"
#include "tools/vkf/cli.h"
#include "tools/vkf/device_open.h"

typedef struct bench_model_args {
  const char *model, *device;
  int64_t batch, image_size;
  int runs, warmup, json;
  vkf_dtype dtype;
} bench_model_args;

typedef struct op_row {
  const char *op;
  uint32_t dispatches;
  double ns; /* summed over the profiled runs */
} op_row;

/* Process CPU time (user + system), ms. On a CPU device (lavapipe) the kernels run on this
 * process's threads, so CPU time per run measures the work independently of other load on the
 * machine, where wall time does not. */
static double cpu_ms(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
         (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: vkf bench model --model DIR [--batch N] [--image-size S] [--runs N] "
          "[--warmup N] [--fp16] [--json] [--device N|NAME]\n"
          "  Latency (mean ± sd of the wall time of one run, after warm-up) and GPU time per\n"
          "  op kind from timestamps. --image-size must equal the checkpoint's image_size\n"
          "  (position embeddings are not interpolated). Defaults: batch 1, 2 warm-up, 10 runs.\n");
}

static int parse(int argc, char **argv, bench_model_args *a) {
  *a = (bench_model_args){.batch = 1, .runs = 10, .warmup = 2, .dtype = VKF_F32};
  for (int i = 0; i < argc; i++) {
    const char *s = argv[i];
    int v = i + 1 < argc;
    if (!strcmp(s, "--model") && v)
      a->model = argv[++i];
    else if (!strcmp(s, "--device") && v)
      a->device = argv[++i];
    else if (!strcmp(s, "--batch") && v && vkf_cli_parse_i64(argv[i + 1], 1, INT32_MAX, &a->batch))
      i++;
    else if (!strcmp(s, "--image-size") && v &&
             vkf_cli_parse_i64(argv[i + 1], 1, 1 << 16, &a->image_size))
      i++;
    else if (!strcmp(s, "--runs") && v)
      a->runs = atoi(argv[++i]);
    else if (!strcmp(s, "--warmup") && v)
      a->warmup = atoi(argv[++i]);
    else if (!strcmp(s, "--fp16"))
      a->dtype = VKF_F16;
    else if (!strcmp(s, "--json"))
      a->json = 1;
    else if (!strcmp(s, "--help") || !strcmp(s, "-h"))
      return usage(stdout), 0;
    else {
      return vkf_cli_bad_arg("vkf bench model", usage, argc, argv, i);
    }
  }
  if (!a->model || a->batch < 1 || a->runs < 1 || a->warmup < 0) {
    fprintf(stderr, "vkf bench model: --model DIR is required; batch and runs must be >= 1\n");
    return usage(stderr), 2;
  }
  return -1;
}
static int by_time(const void *a, const void *b) {
  double x = ((const op_row *)a)->ns, y = ((const op_row *)b)->ns;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* Times `a->runs` runs; *out_rows (malloc'd, per op kind) holds GPU time summed over them. */
static vkf_status measure(vkf_device *dev, vkf_vit_model *m, const bench_model_args *a,
                          double *out_mean, double *out_sd, double *out_gpu_ms, double *out_cpu_ms,
                          op_row **out_rows, uint32_t *out_row_count) {
  vkf_vit_graph vg;
  vkf_vit_build_options bo = {.batch = a->batch, .dtype = a->dtype};
  VKF_RETURN_IF_ERROR(vkf_vit_build(m, &bo, &vg));
  vkf_runner *r = NULL;
  vkf_runner_options ro = {.profile = 1};
  vkf_status st = vkf_passes_run(vg.graph, NULL, NULL);
  if (!st) st = vkf_runner_create(dev, vg.graph, &ro, &r);
  /* Pixels only once the runner exists: a batch past the device's limits fails there, before
   * gigabytes of host memory are filled for it. */
  size_t count =
      st ? 0 : (size_t)vkf_tensor_element_count(vkf_graph_tensor(vg.graph, vg.pixel_values));
  float *px = st ? NULL : malloc(count * sizeof *px);
  uint32_t s = 12345;
  for (size_t i = 0; px && i < count; i++) { /* deterministic pixels in [-1, 1) */
    s ^= s << 13, s ^= s >> 17, s ^= s << 5;
    px[i] = (float)(s >> 8) / 8388608.0f - 1.0f;
  }
  if (!st) st = px ? VKF_OK : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "pixels");
  if (!st) st = vkf_runner_set(r, vg.pixel_values, px, count * sizeof *px);
  for (int i = 0; i < a->warmup && !st; i++) st = vkf_runner_run(r);
  const vkf_plan *plan = st ? NULL : vkf_runner_lowered(r)->plan;
  uint32_t nd = plan ? vkf_plan_dispatch_count(plan) : 0;
  double *ns = calloc(nd + 1, sizeof *ns), *times = calloc((size_t)a->runs, sizeof *times);
  op_row *rows = calloc(nd + 1, sizeof *rows);
  uint32_t row_count = 0;
  double gpu = 0;
  if (!st && (!ns || !times || !rows)) st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "bench");
  double cpu0 = cpu_ms();
  for (int i = 0; i < a->runs && !st; i++) {
    double t0 = vkf_bench_now_ms();
    st = vkf_runner_run(r);
    times[i] = vkf_bench_now_ms() - t0;
    if (!st) st = vkf_session_dispatch_times(vkf_runner_session(r), ns);
    gpu += vkf_session_total_ns(vkf_runner_session(r)) / 1e6;
    for (uint32_t d = 0; d < nd && !st; d++) {
      const char *op = vkf_bench_op_of(vg.graph, vkf_plan_dispatch_get(plan, d)->node);
      uint32_t k = 0;
      while (k < row_count && strcmp(rows[k].op, op)) k++;
      if (k == row_count) rows[row_count++].op = op; /* static op-table string */
      rows[k].ns += ns[d];
      if (i == 0) rows[k].dispatches++;
    }
  }
  if (!st) {
    double mean = 0, var = 0;
    for (int i = 0; i < a->runs; i++) mean += times[i] / a->runs;
    for (int i = 0; i < a->runs; i++) var += (times[i] - mean) * (times[i] - mean);
    *out_mean = mean;
    *out_sd = a->runs > 1 ? sqrt(var / (a->runs - 1)) : 0;
    *out_gpu_ms = gpu / a->runs;
    *out_cpu_ms = (cpu_ms() - cpu0) / a->runs;
    qsort(rows, row_count, sizeof *rows, by_time);
    *out_rows = rows;
    *out_row_count = row_count;
    rows = NULL;
  }
  free(rows);
  free(ns);
  free(times);
  free(px);
  vkf_runner_destroy(r);
  vkf_graph_destroy(vg.graph);
  return st;
}

int vkf_cli_bench_model(int argc, char **argv) {
  /* BERT checkpoints (and no --model: the installed all-MiniLM-L6-v2) are measured in
   * sentences per second by bench_bert.c. */
  if (vkf_cli_bench_is_bert(argc, argv)) return vkf_cli_bench_bert(argc, argv);
  bench_model_args a;
  int rc = parse(argc, argv, &a);
  if (rc >= 0) return rc;
  vkf_vit_model *m = NULL;
  vkf_cli_device dev = {0};
  op_row *rows = NULL;
  uint32_t row_count = 0;
  double mean = 0, sd = 0, gpu = 0, cpu = 0;
  vkf_status st = vkf_vit_load(a.model, &m);
  if (!st && a.image_size && a.image_size != vkf_vit_image_size(m))
    st = vkf_status_make(VKF_STATUS_UNSUPPORTED,
                         "%s: --image-size %lld but the checkpoint takes "
                         "%lld (position embeddings are not interpolated)",
                         a.model, (long long)a.image_size, (long long)vkf_vit_image_size(m));
  if (!st) st = vkf_cli_device_open(a.device, &dev);
  if (!st) st = measure(dev.device, m, &a, &mean, &sd, &gpu, &cpu, &rows, &row_count);
  if (!st) {
    const vkf_hf_config *c = vkf_vit_config(m);
    const char *dt = a.dtype == VKF_F16 ? "fp16" : "fp32";
    double total = 0;
    for (uint32_t i = 0; i < row_count; i++) total += rows[i].ns / a.runs;
    if (a.json) {
      printf(
          "{\"model\": \"%s\", \"architecture\": \"%s\", \"image_size\": %lld, \"patch_size\": "
          "%lld, \"batch\": %lld, \"dtype\": \"%s\", \"runs\": %d, \"latency_ms_mean\": %.3f, "
          "\"latency_ms_sd\": %.3f, \"gpu_ms\": %.3f, \"process_cpu_ms\": %.3f, \"ops\": [",
          a.model, vkf_vit_architecture(m), (long long)c->image_size, (long long)c->patch_size,
          (long long)a.batch, dt, a.runs, mean, sd, gpu, cpu);
      for (uint32_t i = 0; i < row_count; i++)
        printf("%s{\"op\": \"%s\", \"dispatches\": %u, \"ms\": %.3f}", i ? ", " : "", rows[i].op,
               rows[i].dispatches, rows[i].ns / a.runs / 1e6);
      printf("]}\n");
    } else {
      printf("%s (%s, hidden %lld, %lld layers, patch %lld, image %lld), batch %lld, %s\n\n",
             a.model, vkf_vit_architecture(m), (long long)c->hidden_size,
             (long long)c->num_hidden_layers, (long long)c->patch_size, (long long)c->image_size,
             (long long)a.batch, dt);
      printf(
          "latency: %.1f ± %.1f ms (wall, %d runs after %d warm-up); GPU time %.1f ms; "
          "process CPU time %.1f ms per run\n\n",
          mean, sd, a.runs, a.warmup, gpu, cpu);
      printf("| op | dispatches | ms per run | share |\n|---|---:|---:|---:|\n");
      for (uint32_t i = 0; i < row_count; i++)
        printf("| %s | %u | %.2f | %.1f%% |\n", rows[i].op, rows[i].dispatches,
               rows[i].ns / a.runs / 1e6, total > 0 ? 100.0 * rows[i].ns / a.runs / total : 0.0);
    }
  }
  free(rows);
  int validation = vkf_cli_device_close(&dev);
  vkf_vit_destroy(m);
  if (st) return vkf_cli_fail(st);
  return validation;
}
