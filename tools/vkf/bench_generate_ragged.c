/* vkf bench generate --ragged: the step `vkf serve` runs (runtime/serve_slots), timed alone. B
 * sequences decode together as B token rows of one ragged plan (vkf_gen_engine_ragged: each row
 * names its cache row and position), on an engine with only the ragged plans, as serve's slots
 * create it. Prompts go in first, B rows a run; then N - 1 steps of B rows, greedy on the host
 * from each row's logits, as serve samples. */
#include "tools/vkf/bench_generate_ragged.h"

#include <stdio.h>
#include <stdlib.h>

#include "graph/lower/lower.h"
#include "host/runner.h"
#include "models/generate/sampling.h"
#include "runtime/generate_engine.h"
#include "tools/vkf/bench_util.h"

/* The prompts of every sequence, b rows a run, each sequence's last token's logits sampled. */
static vkf_status prompts(vkf_gen_engine *e, int64_t b, int64_t p, int64_t vocab,
                          const int32_t *ids, int32_t *next) {
  int32_t rid[64];
  int64_t seq[64], pos[64], last[64];
  int64_t total = b * p, done = 0;
  while (done < total) {
    int64_t n = total - done < b ? total - done : b, lc = 0;
    for (int64_t r = 0; r < n; r++) {
      int64_t i = done + r; /* sequence i / p, token i % p */
      rid[r] = ids[i], seq[r] = i / p, pos[r] = i % p;
      if (i % p == p - 1) last[lc++] = r;
    }
    const float *logits = NULL;
    VKF_RETURN_IF_ERROR(vkf_gen_engine_ragged(e, n, rid, seq, pos, lc, last, &logits));
    for (int64_t l = 0; l < lc; l++)
      next[seq[last[l]]] = (int32_t)vkf_sampling_argmax(logits + l * vocab, (size_t)vocab);
    done += n;
  }
  return VKF_OK;
}

vkf_status vkf_bench_generate_ragged(vkf_device *dev, vkf_decoder_model *model,
                                     const vkf_bench_ragged_args *a) {
  const vkf_hf_config *c = vkf_decoder_config(model);
  int64_t b = a->rows, p = a->prompt_len, v = c->vocab_size;
  if (b < 1 || b > 64 || a->gen < 2)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                           "--ragged: --batch %lld (1 to 64 rows) and --gen %lld (at least 2: "
                           "the steps after the prompts' token)",
                           (long long)b, (long long)a->gen);
  vkf_gen_engine_options eo = {.batch = b,
                               .prompt_len = 1,
                               .capacity = p + a->gen + 1, /* the last position: padding rows */
                               .dtype = a->dtype,
                               .cache_dtype = a->cache_dtype,
                               .chunk = b,
                               .incremental = 1,
                               .ragged_rows = b,
                               .ragged_only = 1};
  vkf_gen_engine *e = NULL;
  VKF_RETURN_IF_ERROR(vkf_gen_engine_create(dev, model, &eo, &e));
  vkf_status s = vkf_gen_engine_ragged_rows(e) == b
                     ? VKF_OK
                     : vkf_status_make(VKF_STATUS_UNSUPPORTED,
                                       "--ragged: %s takes no ragged rows (a sliding window or "
                                       "another attention the ragged plans do not run)",
                                       a->model);
  int32_t *ids = malloc((size_t)(b * p) * sizeof *ids), tok[64];
  int64_t seq[64], pos[64], all[64];
  double *prefill = calloc((size_t)a->runs, sizeof *prefill);
  double *decode = calloc((size_t)a->runs, sizeof *decode);
  if (!s && (!ids || !prefill || !decode))
    s = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "--ragged");
  uint32_t rng = 2463534242u;
  for (int64_t i = 0; !s && i < b * p; i++) {
    rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5;
    ids[i] = (int32_t)(rng % (uint32_t)v);
  }
  for (int64_t r = 0; r < b; r++) seq[r] = r, all[r] = r;
  for (int64_t run = -a->warmup; !s && run < a->runs; run++) {
    double t0 = vkf_bench_now_ms();
    s = prompts(e, b, p, v, ids, tok);
    double t1 = vkf_bench_now_ms();
    for (int64_t step = 1; !s && step < a->gen; step++) {
      const float *logits = NULL;
      for (int64_t r = 0; r < b; r++) pos[r] = p + step - 1;
      s = vkf_gen_engine_ragged(e, b, tok, seq, pos, b, all, &logits);
      for (int64_t r = 0; !s && r < b; r++)
        tok[r] = (int32_t)vkf_sampling_argmax(logits + r * v, (size_t)v);
    }
    if (run >= 0) prefill[run] = t1 - t0, decode[run] = (vkf_bench_now_ms() - t1) / (double)(a->gen - 1);
  }
  /* the plan a decode step runs: b rows, b logit rows (the last ragged plan) */
  const vkf_plan *plan =
      s ? NULL
        : vkf_runner_lowered(vkf_gen_engine_ragged_runner(e, vkf_gen_engine_ragged_plans(e) - 1))
              ->plan;
  if (!s) {
    double pm, dm, psd, dsd;
    vkf_bench_mean_sd(prefill, a->runs, &pm, &psd);
    vkf_bench_mean_sd(decode, a->runs, &dm, &dsd);
    uint32_t nd = vkf_plan_dispatch_count(plan), nbar = 0;
    for (uint32_t d = 0; d < nd; d++) nbar += vkf_plan_dispatch_get(plan, d)->barrier_before != 0;
    double tokens = (double)(b * p);
    if (a->json)
      printf("{\"model\": \"%s\", \"ragged_rows\": %lld, \"prompt_len\": %lld, \"gen\": %lld, "
             "\"prefill_tokens_per_s\": %.2f, \"decode_tokens_per_s\": %.3f, "
             "\"decode_step_ms\": %.3f, \"decode_step_sd_ms\": %.3f, \"step_dispatches\": %u, "
             "\"step_barriers\": %u}\n",
             a->model, (long long)b, (long long)p, (long long)a->gen, tokens / (pm / 1e3),
             (double)b / (dm / 1e3), dm, dsd, nd, nbar);
    else
      printf("%s, ragged steps (vkf serve's) of %lld rows, prompt %lld tokens, %lld generated, "
             "%lld runs\n\n| phase | tokens/s | ms |\n|---|---:|---:|\n"
             "| prompts (%lld rows a run) | %.1f | %.1f ± %.1f |\n"
             "| decode step | %.2f | %.2f ± %.2f |\n\n"
             "a step is %u dispatches and %u barriers\n",
             a->model, (long long)b, (long long)p, (long long)a->gen, (long long)a->runs,
             (long long)b, tokens / (pm / 1e3), pm, psd, (double)b / (dm / 1e3), dm, dsd, nd,
             nbar);
  }
  vkf_gen_engine_destroy(e);
  free(ids);
  free(prefill);
  free(decode);
  return s;
}
