/* vkf bench model for BERT-family checkpoints (cmd_bench_model.c hands them over by model_type):
 * sentence-embedding throughput in sentences per second for each batch size at a fixed sequence
 * length (default batch 1 and 32 at 128 tokens, no padding), wall time of one submitted run, mean
 * ± sd after warm-up, plus GPU time per op kind from timestamps. Markdown or --json. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "graph/passes/passes.h"
#include "host/runner.h"
#include "models/arch/bert.h"
#include "models/formats/hf_config.h"
#include "models/formats/task_defaults.h"
#include "tools/vkf/bench_util.h"
#include "tools/vkf/cli_args.h"
#include "tools/vkf/cli.h"
#include "tools/vkf/device_open.h"

enum { BENCH_BERT_MAX_BATCHES = 8, BENCH_BERT_MAX_OPS = 32 };

typedef struct bench_bert_args {
  const char *model, *device;
  int64_t batches[BENCH_BERT_MAX_BATCHES];
  int batch_count;
  int64_t seq_len;
  int runs, warmup, json;
  vkf_dtype dtype;
} bench_bert_args;

typedef struct op_time {
  const char *op; /* op-table string */
  uint32_t dispatches;
  double ms; /* per run */
} op_time;

typedef struct bench_bert_result {
  int64_t batch;
  double mean_ms, sd_ms, gpu_ms, sentences_per_s;
  double cpu_ms; /* process CPU time per run (see cpu_ms()) */
  op_time ops[BENCH_BERT_MAX_OPS];
  uint32_t op_count;
} bench_bert_result;

/* Process CPU time (user + system), ms. On a CPU device (lavapipe) the kernels run on this
 * process's threads, so CPU time per run measures the work independently of other load on the
 * machine, where wall time does not. */
static double cpu_ms(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
         (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

int vkf_cli_bench_is_bert(int argc, char **argv) {
  const char *model = NULL;
  for (int i = 0; i + 1 < argc; i++)
    if (!strcmp(argv[i], "--model")) model = argv[i + 1];
  if (!model) return 1; /* the default model is the installed all-MiniLM-L6-v2 */
  char path[4096];
  snprintf(path, sizeof path, "%s/config.json", model);
  vkf_hf_config c;
  vkf_status st = vkf_hf_config_load(path, &c);
  int bert = !st && !strcmp(c.model_type, "bert");
  vkf_status_free(st);
  vkf_hf_config_release(&c);
  return bert;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: vkf bench model [--model DIR] [--batch N]... [--seq-len N] [--runs N] "
          "[--warmup N] [--fp16] [--json] [--device N|NAME]\n"
          "  BERT checkpoints (default: the installed all-MiniLM-L6-v2): sentences per second\n"
          "  for each --batch (default 1 and 32) at --seq-len tokens (default 128, every token\n"
          "  real), from the wall time of one run (mean ± sd after warm-up), and GPU time per\n"
          "  op kind. Defaults: 1 warm-up, 5 runs.\n");
}

static int parse(int argc, char **argv, bench_bert_args *a) {
  *a = (bench_bert_args){.seq_len = 128, .runs = 5, .warmup = 1, .dtype = VKF_F32};
  for (int i = 0; i < argc; i++) {
    const char *s = argv[i];
    int v = i + 1 < argc;
    if (!strcmp(s, "--model") && v)
      a->model = argv[++i];
    else if (!strcmp(s, "--device") && v)
      a->device = argv[++i];
    else if (!strcmp(s, "--batch") && v && a->batch_count < BENCH_BERT_MAX_BATCHES)
      a->batches[a->batch_count++] = atoll(argv[++i]);
    else if (!strcmp(s, "--seq-len") && v)
      a->seq_len = atoll(argv[++i]);
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
  if (a->batch_count == 0) {
    a->batches[0] = 1, a->batches[1] = 32;
    a->batch_count = 2;
  }
  int ok = a->seq_len >= 2 && a->runs >= 1 && a->warmup >= 0;
  for (int i = 0; i < a->batch_count; i++) ok = ok && a->batches[i] >= 1;
  if (!ok) {
    fprintf(stderr, "vkf bench model: batch and runs must be >= 1, seq-len >= 2\n");
    return usage(stderr), 2;
  }
  return -1;
}

/* Deterministic full-length inputs: [CLS] ids... [SEP], ids drawn from the ordinary vocabulary
 * (past the first 1000 entries, which hold BERT's special and unused tokens), mask all ones. */
static void fill_inputs(int64_t batch, int64_t n, int64_t vocab, int32_t *ids, int32_t *mask) {
  uint32_t s = 12345;
  for (int64_t i = 0; i < batch * n; i++) {
    s ^= s << 13, s ^= s >> 17, s ^= s << 5;
    int64_t j = i % n;
    ids[i] = j == 0 ? 101 : j == n - 1 ? 102 : (int32_t)(1000 + s % (uint32_t)(vocab - 1000));
    mask[i] = 1;
  }
}

static vkf_status measure(vkf_device *dev, vkf_bert_model *m, const bench_bert_args *a,
                          int64_t batch, bench_bert_result *out) {
  *out = (bench_bert_result){.batch = batch};
  vkf_bert_graph bg;
  vkf_bert_build_options bo = {.batch = batch, .seq_len = a->seq_len, .dtype = a->dtype};
  VKF_RETURN_IF_ERROR(vkf_bert_build(m, &bo, &bg));
  size_t in_size = (size_t)(batch * a->seq_len) * sizeof(int32_t);
  int32_t *ids = malloc(in_size), *mask = malloc(in_size);
  double *times = calloc((size_t)a->runs, sizeof *times);
  vkf_runner *r = NULL;
  vkf_runner_options ro = {.profile = 1};
  vkf_status st =
      ids && mask && times ? VKF_OK : vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "bench");
  if (!st) {
    fill_inputs(batch, a->seq_len, vkf_bert_config(m)->vocab_size, ids, mask);
    st = vkf_passes_run(bg.graph, NULL, NULL); /* as vkf embed runs it */
    if (!st) st = vkf_runner_create(dev, bg.graph, &ro, &r);
  }
  if (!st) st = vkf_runner_set(r, bg.input_ids, ids, in_size);
  if (!st) st = vkf_runner_set(r, bg.attention_mask, mask, in_size);
  for (int i = 0; i < a->warmup && !st; i++) st = vkf_runner_run(r);
  const vkf_plan *plan = st ? NULL : vkf_runner_lowered(r)->plan;
  uint32_t nd = plan ? vkf_plan_dispatch_count(plan) : 0;
  double *ns = calloc(nd + 1, sizeof *ns);
  if (!st && !ns) st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "bench");
  for (int i = 0; i < a->runs && !st; i++) {
    double t0 = vkf_bench_now_ms(), c0 = cpu_ms();
    st = vkf_runner_run(r);
    times[i] = vkf_bench_now_ms() - t0;
    out->cpu_ms += (cpu_ms() - c0) / a->runs;
    if (!st) st = vkf_session_dispatch_times(vkf_runner_session(r), ns);
    out->gpu_ms += vkf_session_total_ns(vkf_runner_session(r)) / 1e6 / a->runs;
    for (uint32_t d = 0; d < nd && !st; d++) {
      const char *op = vkf_bench_op_of(bg.graph, vkf_plan_dispatch_get(plan, d)->node);
      uint32_t k = 0;
      while (k < out->op_count && strcmp(out->ops[k].op, op)) k++;
      if (k == out->op_count && k < BENCH_BERT_MAX_OPS) out->ops[out->op_count++].op = op;
      if (k == BENCH_BERT_MAX_OPS) continue;
      out->ops[k].ms += ns[d] / 1e6 / a->runs;
      if (i == 0) out->ops[k].dispatches++;
    }
  }
  if (!st) {
    double var = 0;
    for (int i = 0; i < a->runs; i++) out->mean_ms += times[i] / a->runs;
    for (int i = 0; i < a->runs; i++) var += (times[i] - out->mean_ms) * (times[i] - out->mean_ms);
    out->sd_ms = a->runs > 1 ? sqrt(var / (a->runs - 1)) : 0;
    out->sentences_per_s = out->mean_ms > 0 ? 1e3 * (double)batch / out->mean_ms : 0;
    for (uint32_t i = 1; i < out->op_count; i++) /* by time, largest first */
      for (uint32_t j = i; j > 0 && out->ops[j].ms > out->ops[j - 1].ms; j--) {
        op_time tmp = out->ops[j];
        out->ops[j] = out->ops[j - 1];
        out->ops[j - 1] = tmp;
      }
  }
  free(ns);
  free(times);
  free(ids);
  free(mask);
  vkf_runner_destroy(r);
  vkf_graph_destroy(bg.graph);
  return st;
}

static void print_results(const bench_bert_args *a, const char *dir, const vkf_hf_config *c,
                          const bench_bert_result *res, int count, const char *device_name) {
  const char *dt = a->dtype == VKF_F16 ? "fp16" : "fp32";
  if (a->json) {
    printf(
        "{\"model\": \"%s\", \"model_type\": \"bert\", \"device\": \"%s\", \"hidden_size\": "
        "%lld, \"layers\": %lld, \"seq_len\": %lld, \"dtype\": \"%s\", \"runs\": %d, "
        "\"results\": [",
        dir, device_name, (long long)c->hidden_size, (long long)c->num_hidden_layers,
        (long long)a->seq_len, dt, a->runs);
    for (int i = 0; i < count; i++) {
      const bench_bert_result *r = &res[i];
      printf(
          "%s{\"batch\": %lld, \"latency_ms_mean\": %.3f, \"latency_ms_sd\": %.3f, \"gpu_ms\": "
          "%.3f, \"process_cpu_ms\": %.3f, \"sentences_per_s\": %.3f, \"ops\": [",
          i ? ", " : "", (long long)r->batch, r->mean_ms, r->sd_ms, r->gpu_ms, r->cpu_ms,
          r->sentences_per_s);
      for (uint32_t k = 0; k < r->op_count; k++)
        printf("%s{\"op\": \"%s\", \"dispatches\": %u, \"ms\": %.3f}", k ? ", " : "", r->ops[k].op,
               r->ops[k].dispatches, r->ops[k].ms);
      printf("]}");
    }
    printf("]}\n");
    return;
  }
  printf(
      "%s (bert, hidden %lld, %lld layers, %lld heads) on %s, %lld tokens, %s, %d runs after "
      "%d warm-up\n\n",
      dir, (long long)c->hidden_size, (long long)c->num_hidden_layers,
      (long long)c->num_attention_heads, device_name, (long long)a->seq_len, dt, a->runs,
      a->warmup);
  printf(
      "| batch | latency ms (mean ± sd) | GPU ms | process CPU ms | sentences/s |\n"
      "|---:|---:|---:|---:|---:|\n");
  for (int i = 0; i < count; i++)
    printf("| %lld | %.1f ± %.1f | %.1f | %.1f | %.2f |\n", (long long)res[i].batch, res[i].mean_ms,
           res[i].sd_ms, res[i].gpu_ms, res[i].cpu_ms, res[i].sentences_per_s);
  for (int i = 0; i < count; i++) {
    const bench_bert_result *r = &res[i];
    double total = 0;
    for (uint32_t k = 0; k < r->op_count; k++) total += r->ops[k].ms;
    printf(
        "\nbatch %lld, GPU time per op kind:\n\n| op | dispatches | ms per run | share |\n"
        "|---|---:|---:|---:|\n",
        (long long)r->batch);
    for (uint32_t k = 0; k < r->op_count; k++)
      printf("| %s | %u | %.2f | %.1f%% |\n", r->ops[k].op, r->ops[k].dispatches, r->ops[k].ms,
             total > 0 ? 100.0 * r->ops[k].ms / total : 0.0);
  }
}

int vkf_cli_bench_bert(int argc, char **argv) {
  bench_bert_args a;
  int rc = parse(argc, argv, &a);
  if (rc >= 0) return rc;
  char *found = NULL;
  vkf_bert_model *m = NULL;
  vkf_cli_device dev = {0};
  bench_bert_result res[BENCH_BERT_MAX_BATCHES];
  vkf_status st = a.model ? VKF_OK : vkf_task_default_model("embed", &found);
  const char *dir = a.model ? a.model : found;
  if (!st) st = vkf_bert_load(dir, &m);
  if (!st && a.seq_len > vkf_bert_config(m)->max_position_embeddings)
    st = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                         "--seq-len %lld exceeds the model's %lld "
                         "positions",
                         (long long)a.seq_len,
                         (long long)vkf_bert_config(m)->max_position_embeddings);
  if (!st) st = vkf_cli_device_open(a.device, &dev);
  for (int i = 0; i < a.batch_count && !st; i++)
    st = measure(dev.device, m, &a, a.batches[i], &res[i]);
  if (!st)
    print_results(&a, dir, vkf_bert_config(m), res, a.batch_count,
                  vkf_device_caps_get(dev.device)->name);
  int validation = vkf_cli_device_close(&dev);
  vkf_bert_destroy(m);
  free(found);
  if (st) return vkf_cli_fail(st);
  return validation;
}
