/* vkf bench attention --kind adaptive_span: the fused causal attention with an adaptive span (the
 * per-head ramp of vkf_attention_options.ramp) beside the same kernel without one, at long
 * sequences. Keys past every head's span are never visited, so the time should fall with the
 * span: the table gives GPU ms (mean ± sd) per N and span, and the ratio to dense causal. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ir/builder.h"
#include "tools/vkf/bench_util.h"
#include "tools/vkf/cli.h"
#include "tools/vkf/cli_args.h"
#include "tools/vkf/device_open.h"

enum { SPAN_MAX_Z = 8 };

typedef struct span_args {
  vkf_bench_kind_args c;
  double spans[SPAN_MAX_Z];
  int span_count;
  double ramp;
} span_args;

/* span < 0: dense causal. Each head gets the same span (the kernel's cost follows the largest). */
static vkf_status run_one(vkf_device *device, const span_args *a, int64_t n, double span,
                          vkf_bench_stats *out) {
  vkf_graph *g = NULL;
  VKF_RETURN_IF_ERROR(vkf_graph_create("bench_span", &g));
  int64_t s[4] = {1, a->c.heads, n, a->c.dim}, rs[2] = {a->c.heads, 2};
  vkf_value in[3];
  in[0] = vkf_graph_input(g, "q", VKF_F32, 4, s);
  in[1] = vkf_graph_input(g, "k", VKF_F32, 4, s);
  in[2] = vkf_graph_input(g, "v", VKF_F32, 4, s);
  vkf_attention_options o = {.causal = 1};
  float *ramp = malloc((size_t)a->c.heads * 2 * sizeof *ramp);
  if (!ramp) {
    vkf_graph_destroy(g);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
  }
  for (int64_t h = 0; h < a->c.heads; h++) {
    ramp[2 * h] = (float)(a->ramp + span);
    ramp[2 * h + 1] = (float)(1.0 / a->ramp);
  }
  if (span >= 0) o.ramp = vkf_graph_constant(g, "ramp", VKF_F32, 2, rs, ramp);
  vkf_graph_output(g, vkf_attention(g, "attention", in[0], in[1], in[2], &o), "out");
  vkf_status st = vkf_bench_graph_time(device, g, in, 3, a->c.warmup, a->c.runs, out);
  free(ramp);
  vkf_graph_destroy(g);
  return st;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: vkf bench attention --kind adaptive_span [--n N]... [--span Z]... [--ramp R]\n"
          "                           [--heads H] [--dim D] [--runs N] [--warmup N]\n"
          "                           [--device N|NAME]\n"
          "Times the fused causal attention with an adaptive span z (every head; ramp R, default\n"
          "32) beside the same kernel without one, for q, k, v [1, H, N, D] f32 (default H 4,\n"
          "D 64) at N = 4096, 16384 and spans 64, 256, 1024. Keys past the span are not visited.\n");
}

/* A number in [lo, hi] from `val`, or -1 with a message. */
static int parse_number(const char *opt, const char *val, double lo, double hi, double *out) {
  char *end;
  double v = strtod(val, &end);
  if (end == val || *end || !(v >= lo && v <= hi)) {
    fprintf(stderr, "vkf bench attention: bad %s \"%s\" (a number in [%g, %g])\n", opt, val, lo,
            hi);
    return -1;
  }
  *out = v;
  return 0;
}

int vkf_cli_bench_attention_span(int argc, char **argv) {
  span_args a = {.c = {.heads = 4, .dim = 64, .runs = 3, .warmup = 1, .n_max = 1 << 20,
                       .heads_max = 1 << 12, .dim_max = 128},
                 .ramp = 32};
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    int taken = vkf_bench_kind_arg(&a.c, argc, argv, &i);
    if (taken < 0) return 2;
    if (taken) continue;
    if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(arg, "--span") && val) {
      if (a.span_count == SPAN_MAX_Z) {
        fprintf(stderr, "vkf bench attention: at most %d --span\n", SPAN_MAX_Z);
        return 2;
      }
      if (parse_number(arg, val, 0, 16777216.0, &a.spans[a.span_count])) return 2;
      a.span_count++, i++;
    } else if (!strcmp(arg, "--ramp") && val) {
      if (parse_number(arg, val, 1e-3, 16777216.0, &a.ramp)) return 2;
      i++;
    } else {
      return vkf_cli_bad_arg("vkf bench attention", usage, argc, argv, i);
    }
  }
  if (!a.c.n_count) a.c.ns[a.c.n_count++] = 4096, a.c.ns[a.c.n_count++] = 16384;
  if (!a.span_count) a.spans[0] = 64, a.spans[1] = 256, a.spans[2] = 1024, a.span_count = 3;
  vkf_cli_device dev;
  vkf_status st = vkf_cli_device_open(a.c.device, &dev);
  if (st) return vkf_cli_fail(st);
  printf("adaptive span vs dense causal fused attention, q/k/v [1, %lld, N, %lld] f32, ramp %g\n\n",
         (long long)a.c.heads, (long long)a.c.dim, a.ramp);
  printf("| N | span z | span ms | dense causal ms | span / dense |\n|---|---|---|---|---|\n");
  for (int i = 0; i < a.c.n_count && !st; i++) {
    vkf_bench_stats dense = {0};
    st = run_one(dev.device, &a, a.c.ns[i], -1, &dense);
    for (int j = 0; j < a.span_count && !st; j++) {
      vkf_bench_stats sp = {0};
      st = run_one(dev.device, &a, a.c.ns[i], a.spans[j], &sp);
      if (st) break;
      printf("| %lld | %g | %.2f ± %.2f | %.2f ± %.2f | %.3f |\n", (long long)a.c.ns[i], a.spans[j],
             sp.mean_ms, sp.sd_ms, dense.mean_ms, dense.sd_ms,
             dense.mean_ms > 0 ? sp.mean_ms / dense.mean_ms : 0.0);
      fflush(stdout);
    }
  }
  int rc = st ? vkf_cli_fail(st) : 0;
  if (vkf_cli_device_close(&dev) && !rc) rc = 1;
  return rc;
}
