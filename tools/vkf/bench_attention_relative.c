/* vkf bench attention --kind relative: Transformer-XL's relative attention (the model's own
 * vkf_txl_relative_attention: the position term as a [Q, K + 1] matmul per head, shifted, added
 * to the fused attention as its bias, the causal mask inside that bias) beside the dense causal
 * fused attention over the same [memory; segment] keys, at long segments. The table gives GPU ms
 * (mean ± sd) per segment length N and memory length M and the ratio to dense. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ir/builder.h"
#include "models/arch/transfo_xl.h"
#include "tools/vkf/bench_util.h"
#include "tools/vkf/cli.h"
#include "tools/vkf/cli_args.h"
#include "tools/vkf/device_open.h"

typedef struct rel_args {
  vkf_bench_kind_args c;
  int64_t mem;
} rel_args;

/* relative 0: dense causal fused attention over the same keys. The relative graph's position
 * rows r, u and v are inputs, so the random fill gives them values as it gives q, k and v. */
static vkf_status run_one(vkf_device *device, const rel_args *a, int64_t n, int relative,
                          vkf_bench_stats *out) {
  int64_t k_len = n + a->mem;
  float *mask = NULL;
  if (relative) { /* the decoder's mask over [memory; segment]: key j hidden when j > i + M */
    mask = malloc((size_t)(n * k_len) * sizeof *mask);
    if (!mask)
      return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "a %lld x %lld mask", (long long)n,
                             (long long)k_len);
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < k_len; j++) mask[i * k_len + j] = j > i + a->mem ? -1e30f : 0.0f;
  }
  vkf_graph *g = NULL;
  vkf_status st = vkf_graph_create("bench_relative", &g);
  if (st) {
    free(mask);
    return st;
  }
  int64_t qs[4] = {1, a->c.heads, n, a->c.dim}, ks[4] = {1, a->c.heads, k_len, a->c.dim};
  int64_t rs[3] = {a->c.heads, k_len + 1, a->c.dim}, bs[3] = {a->c.heads, 1, a->c.dim}, ms[2] = {n, k_len};
  vkf_value in[6];
  int count = 3;
  in[0] = vkf_graph_input(g, "q", VKF_F32, 4, qs);
  in[1] = vkf_graph_input(g, "k", VKF_F32, 4, ks);
  in[2] = vkf_graph_input(g, "v", VKF_F32, 4, ks);
  vkf_value y;
  if (relative) {
    in[3] = vkf_graph_input(g, "r", VKF_F32, 3, rs);
    in[4] = vkf_graph_input(g, "u", VKF_F32, 3, bs);
    in[5] = vkf_graph_input(g, "v_bias", VKF_F32, 3, bs);
    count = 6;
    vkf_value m = vkf_graph_constant(g, "mask", VKF_F32, 2, ms, mask);
    y = vkf_txl_relative_attention(g, "rel", in[0], in[1], in[2], in[4], in[5], in[3], m);
  } else {
    vkf_attention_options o = {.scale = (float)(1.0 / sqrt((double)a->c.dim)), .causal = 1};
    y = vkf_attention(g, "dense", in[0], in[1], in[2], &o);
  }
  vkf_graph_output(g, y, "out");
  st = vkf_bench_graph_time(device, g, in, count, a->c.warmup, a->c.runs, out);
  vkf_graph_destroy(g);
  free(mask);
  return st;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: vkf bench attention --kind relative [--n N]... [--mem M] [--heads H] [--dim D]\n"
          "                           [--runs N] [--warmup N] [--device N|NAME]\n"
          "Times Transformer-XL's relative attention (the position term a [N, N + M + 1]\n"
          "matmul per head, shifted and added to the fused attention as its bias) beside the\n"
          "dense causal fused attention over the same N + M keys, for a segment of N queries\n"
          "(default 1024 and 4096) on M rows of memory (default N), f32 [1, H, *, D] (default\n"
          "H 8, D 64).\n");
}

int vkf_cli_bench_attention_relative(int argc, char **argv) {
  rel_args a = {.c = {.heads = 8, .dim = 64, .runs = 3, .warmup = 1, .n_max = 1 << 15,
                      .heads_max = 1 << 12, .dim_max = 256},
                .mem = -1};
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    int taken = vkf_bench_kind_arg(&a.c, argc, argv, &i);
    if (taken < 0) return 2;
    if (taken) continue;
    if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(arg, "--mem") && val) {
      if (vkf_bench_int_arg(arg, val, 0, 1 << 15, &a.mem)) return 2;
      i++;
    } else {
      return vkf_cli_bad_arg("vkf bench attention", usage, argc, argv, i);
    }
  }
  if (!a.c.n_count) a.c.ns[a.c.n_count++] = 1024, a.c.ns[a.c.n_count++] = 4096;
  vkf_cli_device dev;
  vkf_status st = vkf_cli_device_open(a.c.device, &dev);
  if (st) return vkf_cli_fail(st);
  printf(
      "Transformer-XL relative attention vs dense causal fused attention, f32 [1, %lld, *, "
      "%lld]\n\n",
      (long long)a.c.heads, (long long)a.c.dim);
  printf(
      "| N | memory M | relative ms | dense causal ms | relative / dense |\n"
      "|---|---|---|---|---|\n");
  for (int i = 0; i < a.c.n_count && !st; i++) {
    rel_args one = a;
    if (one.mem < 0) one.mem = a.c.ns[i];
    vkf_bench_stats rel = {0}, dense = {0};
    st = run_one(dev.device, &one, a.c.ns[i], 1, &rel);
    if (!st) st = run_one(dev.device, &one, a.c.ns[i], 0, &dense);
    if (!st)
      printf("| %lld | %lld | %.3f ± %.3f | %.3f ± %.3f | %.2f× |\n", (long long)a.c.ns[i],
             (long long)one.mem, rel.mean_ms, rel.sd_ms, dense.mean_ms, dense.sd_ms,
             dense.mean_ms > 0 ? rel.mean_ms / dense.mean_ms : 0.0);
    fflush(stdout);
  }
  int validation = vkf_cli_device_close(&dev);
  if (st) return vkf_cli_fail(st);
  return validation ? 1 : 0;
}
