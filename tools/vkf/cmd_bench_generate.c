/* vkf bench generate: prefill and decode speed of a decoder-only checkpoint on the device (random
 * prompt ids, greedy), the GPU time of a decode step per op kind, and the device memory against
 * weights + cache. Markdown or --json. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/bandwidth.h"
#include "host/runner.h"
#include "models/generate/sampling.h"
#include "models/registry/model.h"
#include "tools/vkf/bench_generate_ragged.h"
#include "tools/vkf/bench_util.h"
#include "tools/vkf/cli.h"
#include "tools/vkf/cli_args.h"
#include "tools/vkf/device_open.h"
#include "tools/vkf/quantize_note.h"
#include "runtime/generate_engine.h"

typedef struct bench_gen_args {
  const char *model, *device, *quantize;
  int64_t prompt_len, gen, batch, runs, warmup;
  int fp16, cache_fp16, json, profile, ragged;
} bench_gen_args;

typedef struct op_time {
  const char *op;
  double ns;
  uint32_t dispatches;
} op_time;

static void usage(FILE *f) {
  fprintf(f,
          "usage: vkf bench generate --model DIR [--prompt-len P] [--gen N] [--batch B] [--runs R]\n"
          "                          [--warmup W] [--fp16] [--cache-fp16] [--quantize FORMAT]\n"
          "                          [--profile] [--ragged] [--json] [--device N|NAME]\n"
          "  After W untimed runs (default 1: the first one pays for first-use costs such as\n"
          "  kernel builds), R times (default 3): a prompt of P random ids (default 128) per row through the\n"
          "  prefill plan, then N - 1 decode steps (default N = 32), greedy. Prints prefill and\n"
          "  decode tokens/s (mean ± sd over the runs), the bytes a step reads (weights + the\n"
          "  cache up to its context), what share of the device's copy bandwidth (measured first,\n"
          "  in the same process) that is, the step's anatomy (dispatches and barriers, submits,\n"
          "  host waits, bytes written and read back a step) and device memory. --profile: also\n"
          "  the GPU time of a decode step per op kind, from timestamp queries around each\n"
          "  dispatch (which cost time of their own). --quantize: as vkf generate's (linear\n"
          "  weights quantised at load: q8_0, q4_0, q4_1, q5_0, q5_1, q4_k). --ragged: vkf\n"
          "  serve's steps instead: B sequences as B token rows of one ragged plan (each row its\n"
          "  own cache row and position), the prompts B rows a run, then the N - 1 steps; the\n"
          "  step's time, tokens/s and dispatches (--profile does not apply).\n");
}

static int parse(int argc, char **argv, bench_gen_args *a) {
  *a = (bench_gen_args){.prompt_len = 128, .gen = 32, .batch = 1, .runs = 3, .warmup = 1};
  for (int i = 0; i < argc; i++) {
    const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int64_t *num = !strcmp(o, "--prompt-len") ? &a->prompt_len
                   : !strcmp(o, "--gen")      ? &a->gen
                   : !strcmp(o, "--batch")    ? &a->batch
                   : !strcmp(o, "--runs")     ? &a->runs
                   : !strcmp(o, "--warmup")   ? &a->warmup
                                              : NULL;
    if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(o, "--fp16")) {
      a->fp16 = 1;
    } else if (!strcmp(o, "--cache-fp16")) {
      a->cache_fp16 = 1;
    } else if (!strcmp(o, "--profile")) {
      a->profile = 1;
    } else if (!strcmp(o, "--ragged")) {
      a->ragged = 1;
    } else if (!strcmp(o, "--json")) {
      a->json = 1;
    } else if (v && !strcmp(o, "--quantize") && vkf_cli_quantize_ok(v)) {
      a->quantize = argv[++i];
    } else if (v && !strcmp(o, "--model")) {
      a->model = argv[++i];
    } else if (v && !strcmp(o, "--device")) {
      a->device = argv[++i];
    } else if (v && num) {
      char *end = NULL;
      long long x = strtoll(v, &end, 10);
      if (*end || x < (num == &a->warmup ? 0 : 1) || x > (1 << 20)) {
        fprintf(stderr, "vkf bench generate: %s %s: expected an integer in [%d, %d]\n", o, v,
                num == &a->warmup ? 0 : 1, 1 << 20);
        return 2;
      }
      *num = x, i++;
    } else {
      return vkf_cli_bad_arg("vkf bench generate", usage, argc, argv, i);
    }
  }
  if (!a->model) {
    fprintf(stderr, "vkf bench generate: --model DIR is required\n");
    return 2;
  }
  if (a->ragged && a->profile) {
    fprintf(stderr, "vkf bench generate: --profile times the decode plan's dispatches; --ragged "
                    "steps run other plans (leave one out)\n");
    return 2;
  }
  return -1;
}

static vkf_status bench(const bench_gen_args *a, vkf_device *dev) {
  /* The yardstick first: a step that reads its weights once cannot beat bytes / copy bandwidth. */
  double copy_gbps = 0;
  VKF_RETURN_IF_ERROR(vkf_device_copy_bandwidth(dev, 256ull << 20, 3, &copy_gbps));
  vkf_model *model = NULL;
  VKF_RETURN_IF_ERROR(vkf_model_open(a->model, &model));
  vkf_status qs = a->quantize ? vkf_model_quantize(model, a->quantize) : VKF_OK;
  /* The decoder-only engine is what this measures: a model whose generate facet names another is
   * out. */
  vkf_model_generate facet;
  vkf_status fs = qs ? VKF_OK : vkf_model_generate_facet(model, &facet);
  if (qs || fs || facet.engine != VKF_GEN_ENGINE_DECODER) {
    vkf_status_free(fs);
    vkf_status s = qs ? qs
                      : vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: %s is not a decoder-only model",
                                        a->model, vkf_model_architecture(model));
    vkf_model_close(model);
    return s;
  }
  vkf_decoder_model *dm = facet.engine_model;
  if (a->ragged) {
    vkf_bench_ragged_args ra = {.model = a->model,
                                .rows = a->batch,
                                .prompt_len = a->prompt_len,
                                .gen = a->gen,
                                .runs = a->runs,
                                .warmup = a->warmup,
                                .dtype = a->fp16 ? VKF_F16 : VKF_F32,
                                .cache_dtype = a->fp16 || a->cache_fp16 ? VKF_F16 : VKF_F32,
                                .json = a->json};
    vkf_status rs = vkf_bench_generate_ragged(dev, dm, &ra);
    vkf_model_close(model);
    return rs;
  }
  const vkf_hf_config *c = vkf_decoder_config(dm);
  int64_t b = a->batch, p = a->prompt_len, v = c->vocab_size;
  vkf_gen_engine_options eo = {.batch = b,
                               .prompt_len = p,
                               .capacity = p + a->gen,
                               .dtype = a->fp16 ? VKF_F16 : VKF_F32,
                               .cache_dtype = a->fp16 || a->cache_fp16 ? VKF_F16 : VKF_F32,
                               .profile = a->profile,
                               .next_ids = 1};
  vkf_gen_engine *e = NULL;
  vkf_status s = vkf_gen_engine_create(dev, dm, &eo, &e);
  int32_t *ids = malloc((size_t)(b * p) * sizeof *ids), tokens[64];
  int64_t lens[64], pos[64];
  double *prefill = calloc((size_t)a->runs, sizeof *prefill);
  double *decode = calloc((size_t)a->runs, sizeof *decode);
  op_time ops[32] = {{0}};
  uint32_t op_count = 0;
  double step_gpu_ns = 0;
  vkf_device_stats st0 = {0}, st1 = {0}; /* around the last run's decode steps */
  const vkf_graph *dg = e ? vkf_gen_engine_decode_graph(e) : NULL;
  if (!s && (b > 64 || !ids || !prefill || !decode))
    s = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "batch %lld (at most 64)", (long long)b);
  uint32_t rng = 2463534242u;
  for (int64_t i = 0; !s && i < b * p; i++) {
    rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5;
    ids[i] = (int32_t)(rng % (uint32_t)v);
  }
  /* Untimed runs first: a prefill and two decode steps reach every kernel once. */
  for (int64_t w = 0; !s && w < a->warmup; w++) {
    const float *logits = NULL;
    for (int64_t i = 0; i < b; i++) lens[i] = p, tokens[i] = 0, pos[i] = p;
    s = vkf_gen_engine_prefill(e, ids, lens, &logits);
    for (int step = 0; !s && step < 2 && p + step < eo.capacity; step++) {
      /* the same step twice (it rewrites the same cache rows): the ids taken on the device must
       * be the host's argmax of the logits */
      int32_t next[64];
      s = vkf_gen_engine_step(e, tokens, pos, &logits);
      if (!s) s = vkf_gen_engine_step_ids(e, b, tokens, pos, next);
      for (int64_t i = 0; !s && i < b; i++)
        if (next[i] != (int32_t)vkf_sampling_argmax(logits + i * v, (size_t)v))
          s = vkf_status_make(VKF_STATUS_INTERNAL,
                              "row %lld: the device's greedy id %d is not the logits' argmax %lld",
                              (long long)i, next[i],
                              (long long)vkf_sampling_argmax(logits + i * v, (size_t)v));
      for (int64_t i = 0; i < b; i++) pos[i]++;
    }
  }
  for (int64_t r = 0; !s && r < a->runs; r++) {
    const float *logits = NULL;
    for (int64_t i = 0; i < b; i++) lens[i] = p;
    double t0 = vkf_bench_now_ms();
    s = vkf_gen_engine_prefill(e, ids, lens, &logits);
    prefill[r] = vkf_bench_now_ms() - t0;
    for (int64_t i = 0; !s && i < b; i++)
      tokens[i] = (int32_t)vkf_sampling_argmax(logits + i * v, (size_t)v), pos[i] = p;
    t0 = vkf_bench_now_ms();
    st0 = vkf_device_stats_get(dev);
    for (int64_t step = 1; !s && step < a->gen; step++) {
      /* greedy on the device: the step reads back one id a row */
      s = vkf_gen_engine_step_ids(e, b, tokens, pos, tokens);
      for (int64_t i = 0; !s && i < b; i++) pos[i]++;
      if (s || r != a->runs - 1 || step != a->gen - 1 || !a->profile) continue;
      /* The last step of the last run: its per-dispatch GPU times by op kind. */
      vkf_session *ses = vkf_runner_session(vkf_gen_engine_decode_runner(e));
      const vkf_plan *plan = vkf_runner_lowered(vkf_gen_engine_decode_runner(e))->plan;
      uint32_t nd = vkf_plan_dispatch_count(plan);
      double *ns = calloc(nd + 1, sizeof *ns);
      if (ns && !vkf_session_dispatch_times(ses, ns)) {
        step_gpu_ns = vkf_session_total_ns(ses);
        for (uint32_t d = 0; d < nd; d++) {
          const char *op = vkf_bench_op_of(dg, vkf_plan_dispatch_get(plan, d)->node);
          uint32_t k = 0;
          while (k < op_count && strcmp(ops[k].op, op)) k++;
          if (k == op_count && op_count < 32) ops[op_count++].op = op;
          if (k < op_count) ops[k].ns += ns[d], ops[k].dispatches++;
        }
      }
      free(ns);
    }
    decode[r] = a->gen > 1 ? (vkf_bench_now_ms() - t0) / (double)(a->gen - 1) : 0;
    st1 = vkf_device_stats_get(dev);
  }
  if (!s) {
    double pm, psd, dm_, dsd;
    vkf_bench_mean_sd(prefill, a->runs, &pm, &psd);
    vkf_bench_mean_sd(decode, a->runs, &dm_, &dsd);
    vkf_gen_engine_memory mem = vkf_gen_engine_memory_of(e);
    /* What a step must read at least: every weight once (the decode plan binds the prefill
     * plan's), and the cache rows up to the context. */
    double weights = 0;
    const vkf_lowered *low = vkf_runner_lowered(vkf_gen_engine_decode_runner(e));
    for (uint32_t i = 0; i < vkf_plan_buffer_count(low->plan); i++)
      if (vkf_plan_buffer_get(low->plan, i)->kind == VKF_PLAN_BUFFER_WEIGHT)
        weights += (double)vkf_plan_buffer_get(low->plan, i)->size;
    /* a weight with a regrouped copy (vkf_plan_add_interleaved) is read through the copy: a
     * tied embedding's gather takes a few rows of the source, nothing else reads it */
    for (uint32_t i = 0; i < vkf_plan_buffer_count(low->plan); i++) {
      const vkf_plan_buffer *pb = vkf_plan_buffer_get(low->plan, i);
      if (pb->interleave.rows)
        weights -= (double)vkf_plan_buffer_get(low->plan, pb->interleave.source)->size;
    }
    double cap = (double)eo.capacity;
    double cache_read = (double)mem.cache * ((double)p + (double)a->gen / 2.0) / cap;
    double step_bytes = weights + cache_read;
    double plan_total = (double)mem.prefill_plan + (double)mem.decode_plan;
    double step_gbps = dm_ > 0 ? step_bytes / (dm_ * 1e6) : 0;
    double bound_ms = copy_gbps > 0 ? step_bytes / (copy_gbps * 1e6) : 0;
    uint32_t dispatches = vkf_plan_dispatch_count(low->plan);
    uint32_t barriers = vkf_plan_barrier_count(low->plan);
    /* The step's anatomy, per step over the last run's decode steps. */
    double steps = a->gen > 1 ? (double)(a->gen - 1) : 1, layers = (double)c->num_hidden_layers;
    double submits = (double)(st1.submits - st0.submits) / steps;
    double waits = (double)(st1.host_waits - st0.host_waits) / steps;
    double written = (double)(st1.bytes_written - st0.bytes_written) / steps;
    double read_back = (double)(st1.bytes_read_back - st0.bytes_read_back) / steps;
    char made[128];
    vkf_cli_quantized_text(model, made, sizeof made);
    if (a->json) {
      /* what --quantize made (q4_k's q5_0 fallback), beside what was asked */
      printf("{\"quantized\": ");
      vkf_cli_quantized_json(model);
      printf(", ");
      printf("\"model\": \"%s\", \"quantize\": \"%s\", \"architecture\": \"%s\", \"batch\": %lld, "
             "\"prompt_len\": %lld, "
             "\"gen\": %lld, \"prefill_tokens_per_s\": %.2f, \"prefill_sd\": %.2f, "
             "\"decode_tokens_per_s\": %.3f, \"decode_sd\": %.3f, \"decode_step_ms\": %.3f, "
             "\"step_bytes\": %.0f, \"weights_bytes\": %.0f, \"cache_bytes\": %llu, "
             "\"device_bytes\": %.0f, \"copy_gb_per_s\": %.3f, \"step_gb_per_s\": %.3f, "
             "\"copy_fraction\": %.4f, \"bound_step_ms\": %.4f, \"step_dispatches\": %u, "
             "\"step_barriers\": %u, \"layers\": %.0f, \"step_submits\": %.2f, "
             "\"step_host_waits\": %.2f, \"step_cache_bytes\": %.0f, "
             "\"step_bytes_written\": %.0f, \"step_bytes_read_back\": %.0f, "
             "\"step_gpu_ms\": %.4f}\n",
             a->model, a->quantize ? a->quantize : "none", vkf_model_architecture(model),
             (long long)b, (long long)p, (long long)a->gen, (double)(b * p) / (pm / 1e3),
             (double)(b * p) * psd / (pm * pm / 1e3), dm_ > 0 ? (double)b / (dm_ / 1e3) : 0,
             dm_ > 0 ? (double)b * dsd / (dm_ * dm_ / 1e3) : 0, dm_, step_bytes, weights,
             (unsigned long long)mem.cache, plan_total + (double)mem.cache, copy_gbps, step_gbps,
             copy_gbps > 0 ? step_gbps / copy_gbps : 0, bound_ms, dispatches, barriers, layers,
             submits, waits, cache_read, written, read_back, step_gpu_ns / 1e6);
    } else {
      printf("%s (%s), batch %lld, prompt %lld tokens, %lld generated, %s weights%s%s%s%s%s, "
             "%s cache, %lld runs\n\n",
             a->model, vkf_model_architecture(model), (long long)b, (long long)p,
             (long long)a->gen, a->fp16 ? "f16" : "f32", a->quantize ? ", linear ones " : "",
             a->quantize ? a->quantize : "", a->quantize ? " (made: " : "",
             a->quantize ? (*made ? made : "none") : "", a->quantize ? ")" : "",
             a->fp16 || a->cache_fp16 ? "f16" : "f32", (long long)a->runs);
      printf("| phase | tokens/s (mean ± sd) | ms |\n|---|---:|---:|\n");
      printf("| prefill | %.1f ± %.1f | %.1f |\n", (double)(b * p) / (pm / 1e3),
             (double)(b * p) * psd / (pm * pm / 1e3), pm);
      printf("| decode step | %.2f ± %.2f | %.2f |\n\n", dm_ > 0 ? (double)b / (dm_ / 1e3) : 0,
             dm_ > 0 ? (double)b * dsd / (dm_ * dm_ / 1e3) : 0, dm_);
      printf("a decode step reads at least %.1f MiB (weights %.1f, cache %.1f at mean context "
             "%.0f): %.2f GB/s at the measured step time, %.1f%% of the copy bandwidth (%.1f GB/s, "
             "same process), whose bound is %.3f ms a step\n",
             step_bytes / 1048576.0, weights / 1048576.0, cache_read / 1048576.0,
             (double)p + (double)a->gen / 2.0, step_gbps,
             copy_gbps > 0 ? 100.0 * step_gbps / copy_gbps : 0, copy_gbps, bound_ms);
      printf("a decode step is %u dispatches and %u barriers (%.1f and %.1f a layer), %.2f "
             "submits and %.2f host waits; it writes %.0f bytes of inputs and reads back %.0f "
             "bytes\n",
             dispatches, barriers, dispatches / layers, barriers / layers, submits, waits, written,
             read_back);
      printf("device memory: %.1f MiB = weights %.1f + cache %.1f + plans' own buffers %.1f\n\n",
             (plan_total + (double)mem.cache) / 1048576.0, weights / 1048576.0,
             (double)mem.cache / 1048576.0, (plan_total - weights) / 1048576.0);
      if (a->profile)
        printf("decode step GPU time per op kind (last step, %.2f ms):\n\n| op | dispatches | ms |"
               " share |\n|---|---:|---:|---:|\n",
               step_gpu_ns / 1e6);
      for (uint32_t k = 0; k < op_count; k++)
        printf("| %s | %u | %.3f | %.1f%% |\n", ops[k].op, ops[k].dispatches, ops[k].ns / 1e6,
               step_gpu_ns > 0 ? 100.0 * ops[k].ns / step_gpu_ns : 0.0);
    }
  }
  vkf_gen_engine_destroy(e);
  vkf_model_close(model);
  free(ids);
  free(prefill);
  free(decode);
  return s;
}

int vkf_cli_bench_generate(int argc, char **argv) {
  bench_gen_args a;
  int rc = parse(argc, argv, &a);
  if (rc >= 0) return rc;
  vkf_cli_device dev = {0};
  vkf_status s = vkf_cli_device_open(a.device, &dev);
  if (!s) s = bench(&a, dev.device);
  int validation = vkf_cli_device_close(&dev);
  if (!s && validation)
    s = vkf_status_make(VKF_STATUS_INTERNAL, "the validation layer reported messages");
  return s ? vkf_cli_fail(s) : 0;
}
