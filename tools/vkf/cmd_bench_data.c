/* vkf bench data: the elementwise and data-movement kernels on their own (generated elementwise,
 * copy/cast/concat, gather, patch embedding, mean pooling), one-node graphs through the normal
 * lowering: GPU time mean ± sd from session timestamps, effective bandwidth or GFLOP/s, and the
 * dispatches the choosers picked. Patch embedding is also timed with the GPU-shaped tiled kernel
 * on CPU devices, to show what the chooser's im2col + GEMM rule buys there. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ir/builder.h"
#include "graph/lower/lower.h"
#include "graph/passes/memory_plan.h"
#include "host/session.h"
#include "tools/vkf/bench_util.h"
#include "tools/vkf/cli_args.h"
#include "tools/vkf/cli.h"
#include "tools/vkf/device_open.h"

typedef enum data_case {
  CASE_ADD_BIAS,   /* [R, D] + [D]: the row-wise kernel */
  CASE_ADD_NARROW, /* [R, 37] + [37]: the flat kernel */
  CASE_GELU,
  CASE_FUSED,   /* (x + bias) -> gelu -> + residual: one generated kernel */
  CASE_PERMUTE, /* [B, N, H, Dh] -> [B, H, N, Dh] */
  CASE_CAST,    /* f32 -> f16 */
  CASE_CONCAT,  /* [B, 1, D] ++ [B, 196, D] */
  CASE_GATHER,  /* [30522, 768] table, [B, 128] ids */
  CASE_PATCH,   /* ViT-B/16 at 224 */
  CASE_PATCH16, /* ... in f16 (--fp16): on cooperative matrices where the GEMM has them */
  CASE_POOL,    /* [B, 128, 384] masked */
  CASE_COUNT
} data_case;

typedef struct bench_args {
  int runs, warmup, batch;
  const char *device;
} bench_args;

typedef vkf_bench_stats timing;

/* Kernel timings do not depend on the data: buffers keep what allocation gave them. */
static vkf_status time_plan(vkf_device *device, const vkf_plan *plan, const bench_args *a,
                            timing *out) {
  return vkf_bench_plan_time(device, plan, a->warmup, a->runs, out);
}

/* Builds case `c`; returns its label, the bytes moved (x read + y written) or flops. */
static vkf_value build(vkf_graph *g, data_case c, int64_t b, const char **label, double *bytes,
                       double *flops) {
  int64_t rows = b * 197;
  *flops = 0;
  switch (c) {
    case CASE_ADD_BIAS:
    case CASE_ADD_NARROW: {
      int64_t d = c == CASE_ADD_BIAS ? 3072 : 37, r = c == CASE_ADD_BIAS ? rows : rows * 83;
      int64_t sx[2] = {r, d};
      *label = c == CASE_ADD_BIAS ? "add [B*197,3072] + [3072]" : "add [B*197*83,37] + [37]";
      *bytes = 2.0 * (double)(r * d) * 4;
      return vkf_add(g, "add", vkf_graph_input(g, "x", VKF_F32, 2, sx),
                     vkf_graph_input(g, "bias", VKF_F32, 1, &d));
    }
    case CASE_GELU: {
      int64_t sx[2] = {rows, 3072};
      *label = "gelu [B*197,3072]";
      *bytes = 2.0 * (double)(rows * 3072) * 4;
      return vkf_gelu(g, "gelu", vkf_graph_input(g, "x", VKF_F32, 2, sx));
    }
    case CASE_FUSED: {
      int64_t sx[2] = {rows, 768}, d = 768;
      vkf_value in[3] = {vkf_graph_input(g, "x", VKF_F32, 2, sx),
                         vkf_graph_input(g, "bias", VKF_F32, 1, &d),
                         vkf_graph_input(g, "res", VKF_F32, 2, sx)};
      vkf_ew_instr *prog = vkf_arena_alloc(vkf_graph_arena(g), 3 * sizeof *prog);
      if (!prog) return VKF_NO_VALUE;
      prog[0] = (vkf_ew_instr){VKF_OP_ADD, 0, 1, 0};
      prog[1] = (vkf_ew_instr){VKF_OP_GELU_ERF, 3, 0, 0};
      prog[2] = (vkf_ew_instr){VKF_OP_ADD, 4, 2, 0};
      vkf_node_attrs attrs = {.fused = {.count = 3, .instrs = prog}};
      *label = "fused add-gelu-add [B*197,768]";
      *bytes = 3.0 * (double)(rows * 768) * 4;
      return vkf_graph_add_node(g, VKF_OP_FUSED_ELEMENTWISE, "fused", in, 3, &attrs);
    }
    case CASE_PERMUTE: {
      int64_t sx[4] = {b, 197, 12, 64};
      uint32_t ax[4] = {0, 2, 1, 3};
      *label = "copy of permute [B,197,12,64] (0,2,1,3)";
      *bytes = 2.0 * (double)(rows * 768) * 4;
      return vkf_copy(g, "copy", vkf_permute(g, "p", vkf_graph_input(g, "x", VKF_F32, 4, sx), ax));
    }
    case CASE_CAST: {
      int64_t sx[2] = {rows, 768};
      *label = "cast f32 -> f16 [B*197,768]";
      *bytes = 6.0 * (double)(rows * 768);
      return vkf_cast(g, "cast", vkf_graph_input(g, "x", VKF_F32, 2, sx), VKF_F16);
    }
    case CASE_CONCAT: {
      int64_t s1[3] = {b, 1, 768}, s2[3] = {b, 196, 768};
      vkf_value xs[2] = {vkf_graph_input(g, "cls", VKF_F32, 3, s1),
                         vkf_graph_input(g, "patches", VKF_F32, 3, s2)};
      *label = "concat [B,1,768] ++ [B,196,768]";
      *bytes = 2.0 * (double)(rows * 768) * 4;
      return vkf_concat(g, "concat", xs, 2, 1);
    }
    case CASE_GATHER: {
      int64_t st[2] = {30522, 768}, si[2] = {b, 128};
      *label = "gather [30522,768] by ids [B,128]";
      *bytes = 2.0 * (double)(b * 128 * 768) * 4;
      return vkf_gather(g, "gather", vkf_graph_input(g, "table", VKF_F32, 2, st),
                        vkf_graph_input(g, "ids", VKF_I32, 2, si));
    }
    case CASE_PATCH:
    case CASE_PATCH16: {
      int64_t si[4] = {b, 3, 224, 224}, sw[4] = {768, 3, 16, 16}, sb = 768;
      vkf_dtype dt = c == CASE_PATCH16 ? VKF_F16 : VKF_F32;
      *label = c == CASE_PATCH16 ? "patch_embed f16 [B,3,224,224] x [768,3,16,16]"
                                 : "patch_embed [B,3,224,224] x [768,3,16,16]";
      *bytes = 0;
      *flops = 2.0 * (double)(b * 196) * 768 * 768;
      return vkf_patch_embed(g, "patch", vkf_graph_input(g, "img", dt, 4, si),
                             vkf_graph_input(g, "w", dt, 4, sw),
                             vkf_graph_input(g, "bias", dt, 1, &sb));
    }
    case CASE_POOL: {
      int64_t sx[3] = {b, 128, 384}, sm[2] = {b, 128};
      *label = "mean_pool [B,128,384] masked";
      *bytes = (double)(b * 128 * 384) * 4 + (double)(b * 384) * 4;
      return vkf_mean_pool(g, "pool", vkf_graph_input(g, "x", VKF_F32, 3, sx),
                           vkf_graph_input(g, "mask", VKF_I32, 2, sm));
    }
    default:
      return VKF_NO_VALUE;
  }
}

/* "ew_add_…(rows), copy.comp" from the plan's dispatches. */
static void describe(const vkf_plan *plan, char *buf, size_t size) {
  size_t n = 0;
  buf[0] = 0;
  for (uint32_t i = 0; i < vkf_plan_dispatch_count(plan) && n < size; i++) {
    const vkf_plan_dispatch *d = vkf_plan_dispatch_get(plan, i);
    int w = snprintf(buf + n, size - n, "%s%s", i ? " + " : "", d->shader);
    if (w < 0) break;
    n += (size_t)w;
    for (uint32_t k = 0; k < d->define_count && n < size; k++) {
      w = snprintf(buf + n, size - n, "%s%s", k ? "," : " ", d->defines[k]);
      if (w < 0) break;
      n += (size_t)w;
    }
    if (d->source && strstr(d->source, "gl_NumWorkGroups.y") && n < size) {
      w = snprintf(buf + n, size - n, " (rows)");
      if (w > 0) n += (size_t)w;
    }
  }
}

static vkf_status bench_case(vkf_device *device, const bench_args *a, data_case c,
                             const vkf_device_caps *caps, const char **label, double *bytes,
                             double *flops, timing *out, char *variant, size_t variant_size) {
  vkf_graph *g = NULL;
  VKF_RETURN_IF_ERROR(vkf_graph_create("bench_data", &g));
  vkf_graph_output(g, build(g, c, a->batch, label, bytes, flops), "y");
  vkf_lowered low = {0};
  vkf_status st = vkf_graph_status(g);
  if (!st) st = vkf_memory_plan_build(g, NULL);
  if (!st) st = vkf_lower_graph(g, caps, NULL, &low);
  if (!st) {
    describe(low.plan, variant, variant_size);
    st = time_plan(device, low.plan, a, out);
  }
  if (low.plan) vkf_lowered_free(&low);
  vkf_graph_destroy(g);
  return st;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: vkf bench data [--batch B] [--runs N] [--warmup N] [--device N|NAME]\n"
          "Times the elementwise (generated), copy/cast/concat, gather, patch_embed and mean_pool\n"
          "kernels on their own at ViT-B/16 / BERT-base sizes for batch B (default 8; patch_embed\n"
          "in f32 and f16, also with the GPU kernels on CPU devices: the tiled one, or in f16 the\n"
          "patch matrix and the cooperative-matrix GEMM where the device has it).\n");
}

int vkf_cli_bench_data(int argc, char **argv) {
  bench_args a = {.runs = 5, .warmup = 1, .batch = 8};
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(arg, "--runs") && val) {
      a.runs = atoi(val), i++;
    } else if (!strcmp(arg, "--warmup") && val) {
      a.warmup = atoi(val), i++;
    } else if (!strcmp(arg, "--batch") && val) {
      a.batch = atoi(val), i++;
    } else if (!strcmp(arg, "--device") && val) {
      a.device = val, i++;
    } else {
      return vkf_cli_bad_arg("vkf bench data", usage, argc, argv, i);
    }
  }
  if (a.runs < 1 || a.warmup < 0 || a.batch < 1 || a.batch > 64) {
    fprintf(stderr, "vkf bench data: --runs >= 1, --warmup >= 0, --batch 1..64\n");
    return 2;
  }
  vkf_cli_device dev;
  vkf_status st = vkf_cli_device_open(a.device, &dev);
  if (st) return vkf_cli_fail(st);
  const vkf_device_caps *caps = vkf_device_caps_get(dev.device);
  printf("Data kernels on %s (%s%s%s), batch %d, %d warm-up + %d timed runs, GPU timestamps\n\n",
         caps->name, vkf_device_kind_name(caps->kind), caps->profile[0] ? ", profile " : "",
         caps->profile, a.batch, a.warmup, a.runs);
  printf("| op | dispatches | ms ± sd | GB/s or GFLOP/s |\n|---|---|---|---|\n");
  vkf_device_caps gpu_caps = *caps;
  gpu_caps.kind = VKF_DEVICE_KIND_DISCRETE_GPU;
  for (int c = 0; c < CASE_COUNT && !st; c++) {
    for (int pass = 0; pass < 2 && !st; pass++) {
      /* Second pass only for patch_embed on CPU devices: the kernels a GPU would get. */
      if (pass == 1 &&
          ((c != CASE_PATCH && c != CASE_PATCH16) || caps->kind != VKF_DEVICE_KIND_CPU))
        continue;
      const char *label = "";
      double bytes = 0, flops = 0;
      timing t = {0};
      char variant[256];
      st = bench_case(dev.device, &a, (data_case)c, pass ? &gpu_caps : caps, &label, &bytes, &flops,
                      &t, variant, sizeof variant);
      if (st) break;
      printf("| %s%s | %s | %.3f ± %.3f | %.2f %s |\n", label, pass ? " (GPU tiles)" : "", variant,
             t.mean_ms, t.sd_ms, (flops ? flops : bytes) / (t.mean_ms * 1e6),
             flops ? "GFLOP/s" : "GB/s");
    }
  }
  int validation = vkf_cli_device_close(&dev);
  if (st) return vkf_cli_fail(st);
  return validation ? 1 : 0;
}
