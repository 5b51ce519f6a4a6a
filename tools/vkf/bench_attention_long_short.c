/* vkf bench attention --kind long_short: long-short attention (models/arch/long_short_attention.h:
 * the segments' compressed rows, then the block-sparse op over them and the window) beside the
 * dense fused attention of the same q, k, v, at long sequences: GPU ms (mean ± sd) per N and the
 * ratio. Dense grows as N², long-short as N·(w + 2·floor(w/2) + r·N/l) plus the projections. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ir/builder.h"
#include "models/arch/long_short_attention.h"
#include "tools/vkf/bench_util.h"
#include "tools/vkf/cli.h"
#include "tools/vkf/cli_args.h"
#include "tools/vkf/device_open.h"

typedef struct ls_args {
  vkf_bench_kind_args c;
  int64_t window, rank, segment;
  int causal;
} ls_args;

/* dense 1: the fused attention alone (causal per a->causal); else long-short with DualLN. */
static vkf_status run_one(vkf_device *device, const ls_args *a, int64_t n, int dense,
                          vkf_bench_stats *out) {
  vkf_graph *g = NULL;
  VKF_RETURN_IF_ERROR(vkf_graph_create("bench_long_short", &g));
  int64_t s[4] = {1, a->c.heads, n, a->c.dim}, ps[3] = {a->c.heads, a->c.dim, a->rank}, ds[1] = {a->c.dim};
  vkf_value in[8];
  int count = 0;
  in[count++] = vkf_graph_input(g, "q", VKF_F32, 4, s);
  in[count++] = vkf_graph_input(g, "k", VKF_F32, 4, s);
  in[count++] = vkf_graph_input(g, "v", VKF_F32, 4, s);
  vkf_weight_cache *cache = NULL;
  vkf_value y;
  if (dense) {
    vkf_attention_options o = {.causal = a->causal};
    y = vkf_attention(g, "attention", in[0], in[1], in[2], &o);
  } else {
    vkf_hf_attention at = {.kind = VKF_HF_ATTN_LONG_SHORT, .window = a->window, .rank = a->rank,
                           .segment = a->segment, .dual_ln = true};
    vkf_long_short_weights lw = {.eps = 1e-5f};
    lw.proj = in[count++] = vkf_graph_input(g, "proj", VKF_F32, 3, ps);
    lw.local_gamma = in[count++] = vkf_graph_input(g, "local_gamma", VKF_F32, 1, ds);
    lw.local_beta = in[count++] = vkf_graph_input(g, "local_beta", VKF_F32, 1, ds);
    lw.global_gamma = in[count++] = vkf_graph_input(g, "global_gamma", VKF_F32, 1, ds);
    lw.global_beta = in[count++] = vkf_graph_input(g, "global_beta", VKF_F32, 1, ds);
    vkf_arch_weights aw = {NULL, &cache, "", VKF_F32, 0};
    vkf_long_short_io io = {.causal = a->causal};
    vkf_value k = vkf_long_short_local_norm(g, "k_norm", &at, &lw, in[1]);
    vkf_value v = vkf_long_short_local_norm(g, "v_norm", &at, &lw, in[2]);
    y = vkf_long_short_attention(g, &aw, "attention", &at, &lw, in[0], k, v, &io);
  }
  vkf_graph_output(g, y, "out");
  vkf_status st = vkf_bench_graph_time(device, g, in, count, a->c.warmup, a->c.runs, out);
  vkf_graph_destroy(g);
  vkf_weight_cache_free(&cache);
  return st;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: vkf bench attention --kind long_short [--n N]... [--window W] [--rank R]\n"
          "                           [--segment L] [--causal] [--heads H] [--dim D] [--runs N]\n"
          "                           [--warmup N] [--device N|NAME]\n"
          "Times long-short attention (DualLN, window W default 128, rank R default 32, causal\n"
          "segments of L default W) beside the dense fused attention of the same q, k, v\n"
          "[1, H, N, D] f32 (default H 4, D 64) at N = 4096 and 16384.\n");
}

/* An integer in [lo, hi] from `val`, or -1 with a message. */

int vkf_cli_bench_attention_long_short(int argc, char **argv) {
  ls_args a = {.c = {.heads = 4, .dim = 64, .runs = 3, .warmup = 1, .n_max = 1 << 20,
                     .heads_max = 64, .dim_max = 128},
               .window = 128,
               .rank = 32};
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    int taken = vkf_bench_kind_arg(&a.c, argc, argv, &i);
    if (taken < 0) return 2;
    if (taken) continue;
    if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(arg, "--causal")) {
      a.causal = 1;
    } else if (val && (!strcmp(arg, "--window") || !strcmp(arg, "--rank") ||
                       !strcmp(arg, "--segment"))) {
      int64_t *dst = !strcmp(arg, "--window") ? &a.window : !strcmp(arg, "--rank") ? &a.rank
                                                                                    : &a.segment;
      if (vkf_bench_int_arg(arg, val, 1, 1 << 20, dst)) return 2;
      i++;
    } else {
      return vkf_cli_bad_arg("vkf bench attention", usage, argc, argv, i);
    }
  }
  if (!a.c.n_count) a.c.ns[a.c.n_count++] = 4096, a.c.ns[a.c.n_count++] = 16384;
  if (!a.segment) a.segment = a.window;
  vkf_cli_device dev;
  vkf_status st = vkf_cli_device_open(a.c.device, &dev);
  if (st) return vkf_cli_fail(st);
  printf("long-short vs dense fused attention (%s), q/k/v [1, %lld, N, %lld] f32, window %lld, "
         "rank %lld%s\n\n",
         a.causal ? "causal" : "bidirectional", (long long)a.c.heads, (long long)a.c.dim,
         (long long)a.window, (long long)a.rank, a.causal ? "" : ", one projection");
  if (a.causal) printf("segments of %lld positions\n\n", (long long)a.segment);
  printf("| N | long-short ms | dense ms | long-short / dense |\n|---|---|---|---|\n");
  for (int i = 0; i < a.c.n_count && !st; i++) {
    vkf_bench_stats dense = {0}, ls = {0};
    st = run_one(dev.device, &a, a.c.ns[i], 0, &ls);
    if (!st) st = run_one(dev.device, &a, a.c.ns[i], 1, &dense);
    if (st) break;
    printf("| %lld | %.2f ± %.2f | %.2f ± %.2f | %.3f |\n", (long long)a.c.ns[i], ls.mean_ms, ls.sd_ms,
           dense.mean_ms, dense.sd_ms, dense.mean_ms > 0 ? ls.mean_ms / dense.mean_ms : 0.0);
    fflush(stdout);
  }
  int rc = st ? vkf_cli_fail(st) : 0;
  if (vkf_cli_device_close(&dev) && !rc) rc = 1;
  return rc;
}
