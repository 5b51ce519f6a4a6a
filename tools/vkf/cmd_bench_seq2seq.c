/* vkf bench seq2seq: an encoder-decoder translating a random source (greedy, R rows: 1 for greedy
 * search, the beam count for a beam-shaped step), timed end to end, with the GPU time split into
 * the encoder (with the cross-attention K/V it caches), the decoder's self-attention, its cross
 * attention, its GEMMs and the rest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/runner.h"
#include "models/generate/sampling.h"
#include "models/registry/model.h"
#include "tools/vkf/bench_util.h"
#include "tools/vkf/cli.h"
#include "tools/vkf/cli_args.h"
#include "tools/vkf/device_open.h"
#include "runtime/seq2seq_engine.h"

typedef struct bench_args {
  const char *model, *device;
  int64_t src_len, gen, rows;
  int fp16;
} bench_args;

static void usage(FILE *f) {
  fprintf(f,
          "usage: vkf bench seq2seq --model DIR [--src-len S] [--gen N] [--rows R] [--fp16]\n"
          "                         [--device N|NAME]\n"
          "  A source of S random ids (default 64) encoded once, then N decoder steps (default 64)\n"
          "  of R rows (default 1; 4 is the shape of a 4-beam step), argmax ids, no early stop.\n"
          "  Prints tokens/s, the encoder's time, and the GPU time by part.\n");
}

static int parse(int argc, char **argv, bench_args *a) {
  *a = (bench_args){.src_len = 64, .gen = 64, .rows = 1};
  for (int i = 0; i < argc; i++) {
    const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int64_t *num = !strcmp(o, "--src-len") ? &a->src_len
                   : !strcmp(o, "--gen")   ? &a->gen
                   : !strcmp(o, "--rows")  ? &a->rows
                                           : NULL;
    if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(o, "--fp16")) {
      a->fp16 = 1;
    } else if (v && (num || !strcmp(o, "--model") || !strcmp(o, "--device"))) {
      if (num) {
        char *end = NULL;
        long long x = strtoll(v, &end, 10);
        if (*end || x < 1 || x > 4096) {
          fprintf(stderr, "vkf bench seq2seq: %s %s (1..4096)\n", o, v);
          return 2;
        }
        *num = x;
      } else if (!strcmp(o, "--model")) {
        a->model = v;
      } else {
        a->device = v;
      }
      i++;
    } else {
      return vkf_cli_bad_arg("vkf bench seq2seq", usage, argc, argv, i);
    }
  }
  if (!a->model) {
    fprintf(stderr, "vkf bench seq2seq: --model DIR is required\n");
    return 2;
  }
  return -1;
}

/* Which part of the decoder step a dispatch belongs to. */
enum part { PART_SELF, PART_CROSS, PART_GEMM, PART_OTHER, PART_COUNT };
static const char *const k_parts[PART_COUNT] = {"self-attention (fused kernel)",
                                                "cross-attention (fused kernel)", "GEMMs",
                                                "other (norms, embeddings, cache writes, ...)"};

static int is_cross(const char *node) {
  return strstr(node, "encoder_attn") || strstr(node, "EncDecAttention") ||
         strstr(node, "attention2");
}

/* Adds the last run's per-dispatch GPU times of `r` into parts (or all into *total only). */
static void add_times(vkf_runner *r, const vkf_graph *g, double parts[PART_COUNT], double *total) {
  vkf_session *ses = vkf_runner_session(r);
  const vkf_plan *plan = vkf_runner_lowered(r)->plan;
  uint32_t nd = vkf_plan_dispatch_count(plan);
  double *ns = calloc(nd + 1, sizeof *ns);
  if (ns && !vkf_session_dispatch_times(ses, ns)) {
    for (uint32_t d = 0; d < nd; d++) {
      *total += ns[d];
      if (!parts) continue;
      const char *node = vkf_plan_dispatch_get(plan, d)->node;
      const char *op = vkf_bench_op_of(g, node);
      enum part p = !strcmp(op, "attention") ? (is_cross(node) ? PART_CROSS : PART_SELF)
                    : !strcmp(op, "matmul")  ? PART_GEMM
                                             : PART_OTHER;
      parts[p] += ns[d];
    }
  }
  free(ns);
}

static vkf_status bench(const bench_args *a, vkf_device *dev) {
  vkf_model *model = NULL;
  VKF_RETURN_IF_ERROR(vkf_model_open(a->model, &model));
  /* The seq2seq engine is what this measures: a model whose generate facet names another is out. */
  vkf_model_generate facet;
  vkf_status fs = vkf_model_generate_facet(model, &facet);
  if (fs || facet.engine != VKF_GEN_ENGINE_SEQ2SEQ) {
    vkf_status_free(fs);
    vkf_status s = vkf_status_make(VKF_STATUS_UNSUPPORTED, "%s: %s is not an encoder-decoder",
                                   a->model, vkf_model_architecture(model));
    vkf_model_close(model);
    return s;
  }
  vkf_encdec_model *em = facet.engine_model;
  const vkf_hf_config *c = vkf_encdec_config(em);
  int64_t rows = a->rows, s_len = a->src_len, v = c->vocab_size;
  vkf_s2s_engine_options eo = {.rows = rows,
                               .src_len = s_len,
                               .capacity = a->gen + 1,
                               .dtype = a->fp16 ? VKF_F16 : VKF_F32,
                               .cache_dtype = a->fp16 ? VKF_F16 : VKF_F32,
                               .profile = 1};
  vkf_s2s_engine *e = NULL;
  double t0 = vkf_bench_now_ms();
  vkf_status s = vkf_s2s_engine_create(dev, em, &eo, &e);
  double plans_ms = vkf_bench_now_ms() - t0;
  int32_t *ids = malloc((size_t)(rows * s_len) * sizeof *ids);
  int32_t *mask = malloc((size_t)(rows * s_len) * sizeof *mask);
  int32_t *tokens = malloc((size_t)rows * sizeof *tokens);
  int64_t *pos = malloc((size_t)rows * sizeof *pos);
  if (!s && (!ids || !mask || !tokens || !pos))
    s = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "bench inputs");
  uint32_t rng = 2463534242u;
  for (int64_t i = 0; !s && i < rows * s_len; i++) {
    rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5;
    ids[i] = (int32_t)(rng % (uint32_t)vkf_encdec_source_vocab(em));
    mask[i] = 1;
  }
  double parts[PART_COUNT] = {0}, enc_ns = 0, step_ns = 0, enc_ms = 0, dec_ms = 0;
  const float *logits = NULL;
  int64_t start = c->decoder_start_token_id >= 0 ? c->decoder_start_token_id : 0;
  /* Run 0 warms up (lavapipe compiles pipelines on first use); run 1 is measured. */
  for (int run = 0; run < 2 && !s; run++) {
    memset(parts, 0, sizeof parts);
    enc_ns = step_ns = 0;
    t0 = vkf_bench_now_ms();
    s = vkf_s2s_engine_encode(e, ids, mask);
    enc_ms = vkf_bench_now_ms() - t0;
    if (!s)
      add_times(vkf_s2s_engine_encode_runner(e), vkf_s2s_engine_encode_graph(e), NULL, &enc_ns);
    for (int64_t r = 0; r < rows; r++) tokens[r] = (int32_t)start, pos[r] = 0;
    t0 = vkf_bench_now_ms();
    for (int64_t step = 0; !s && step < a->gen; step++) {
      s = vkf_s2s_engine_step(e, tokens, pos, &logits);
      if (s) break;
      add_times(vkf_s2s_engine_step_runner(e), vkf_s2s_engine_step_graph(e), parts, &step_ns);
      for (int64_t r = 0; r < rows; r++)
        tokens[r] = (int32_t)vkf_sampling_argmax(logits + r * v, (size_t)v), pos[r]++;
    }
    dec_ms = vkf_bench_now_ms() - t0;
  }
  if (!s) {
    double total_ns = enc_ns + step_ns, gen_tokens = (double)(rows * a->gen);
    printf("%s (%s), source %lld tokens, %lld steps of %lld rows, %s; plans built in %.2f s\n\n",
           a->model, vkf_model_architecture(model), (long long)s_len, (long long)a->gen,
           (long long)rows, a->fp16 ? "f16" : "f32", plans_ms / 1e3);
    printf("| phase | wall ms | tokens/s |\n|---|---:|---:|\n");
    printf("| encoder + cross K/V (%lld rows) | %.1f | %.1f source tokens/s |\n",
           (long long)rows, enc_ms, (double)(rows * s_len) / (enc_ms / 1e3));
    printf("| decoder, %lld steps | %.1f | %.2f row-tokens/s |\n", (long long)a->gen, dec_ms,
           gen_tokens / (dec_ms / 1e3));
    printf("| end to end | %.1f | %.2f generated tokens/s |\n\n", enc_ms + dec_ms,
           gen_tokens / ((enc_ms + dec_ms) / 1e3));
    printf("GPU time, %.1f ms in all:\n\n| part | ms | share |\n|---|---:|---:|\n",
           total_ns / 1e6);
    printf("| encoder (with the cross K/V) | %.2f | %.1f%% |\n", enc_ns / 1e6,
           100.0 * enc_ns / total_ns);
    for (int p = 0; p < PART_COUNT; p++)
      printf("| decoder %s | %.2f | %.1f%% |\n", k_parts[p], parts[p] / 1e6,
             100.0 * parts[p] / total_ns);
  }
  vkf_s2s_engine_destroy(e);
  vkf_model_close(model);
  free(ids);
  free(mask);
  free(tokens);
  free(pos);
  return s;
}

int vkf_cli_bench_seq2seq(int argc, char **argv) {
  bench_args a;
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
