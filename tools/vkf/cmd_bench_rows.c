/* vkf bench rows: the row kernels (masked softmax, layernorm) on their own, one-node graphs through
 * the normal lowering: GPU time mean ± sd (session timestamps), effective bandwidth (x read once,
 * y written once), the variant the chooser picked, and an axpy over the same element count as the
 * device's plain streaming speed for comparison. */
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

enum { MAX_CASES = 16 };

typedef enum row_op { ROW_SOFTMAX, ROW_LAYERNORM } row_op;

typedef struct row_case {
  row_op op;
  uint32_t rank;
  int64_t shape[4];
} row_case;

/* ViT-B/16 scores and hidden states, a 1k-token model, decoding against a 32k cache, and many
 * long rows. */
static const row_case default_cases[] = {
    {ROW_SOFTMAX, 4, {1, 12, 197, 197}}, {ROW_SOFTMAX, 4, {1, 12, 1024, 1024}},
    {ROW_SOFTMAX, 4, {1, 12, 1, 32768}}, {ROW_SOFTMAX, 2, {64, 32768}},
    {ROW_LAYERNORM, 2, {197, 768}},      {ROW_LAYERNORM, 3, {8, 197, 768}},
    {ROW_LAYERNORM, 2, {1024, 4096}},
};

typedef struct bench_args {
  row_case cases[MAX_CASES];
  int case_count;
  int runs, warmup, f16, causal;
  const char *device;
} bench_args;

typedef vkf_bench_stats timing;

static int64_t element_count(const row_case *c) {
  int64_t n = 1;
  for (uint32_t k = 0; k < c->rank; k++) n *= c->shape[k];
  return n;
}

/* Kernel timings do not depend on the data: buffers keep what allocation gave them. */
static vkf_status time_plan(vkf_device *device, const vkf_plan *plan, const bench_args *a,
                            timing *out) {
  return vkf_bench_plan_time(device, plan, a->warmup, a->runs, out);
}

/* "wg 8, vec4, 4 rows/wg, subgroup-only reduce" from the first dispatch of the node. */
static void describe(const vkf_plan *plan, row_op op, char *buf, size_t size) {
  const vkf_plan_dispatch *d = vkf_plan_dispatch_get(plan, 0);
  int subgroup = 0;
  for (uint32_t i = 0; i < d->define_count; i++)
    subgroup |= !strcmp(d->defines[i], "SUBGROUP_REDUCE");
  /* Spec constant slots: shaders/layernorm.comp and shaders/softmax.comp headers. */
  int vec4 = d->spec[op == ROW_SOFTMAX ? 5 : 4] != 0;
  uint32_t rows = d->spec[op == ROW_SOFTMAX ? 8 : 5];
  int one_subgroup = d->spec[op == ROW_SOFTMAX ? 9 : 6] != 0;
  int n = snprintf(buf, size, "wg %u, %s, %s reduce", d->spec[0], vec4 ? "vec4" : "scalar",
                   one_subgroup ? "subgroup-only"
                   : subgroup   ? "subgroup"
                                : "shared-memory");
  if (n > 0 && (size_t)n < size && d->groups[2] > 1)
    n += snprintf(buf + n, size - (size_t)n, ", split %u/row", d->groups[2]);
  if (n > 0 && (size_t)n < size && rows > 1)
    snprintf(buf + n, size - (size_t)n, ", %u rows/wg", rows);
}

static vkf_status bench_case(vkf_device *device, const bench_args *a, const row_case *c,
                             timing *out, timing *out_axpy, char *variant, size_t variant_size) {
  vkf_graph *g = NULL;
  VKF_RETURN_IF_ERROR(vkf_graph_create("bench_rows", &g));
  vkf_dtype dt = a->f16 ? VKF_F16 : VKF_F32;
  vkf_value x = vkf_graph_input(g, "x", dt, c->rank, c->shape);
  vkf_value y;
  if (c->op == ROW_SOFTMAX) {
    vkf_softmax_options o = {.causal = a->causal};
    y = vkf_softmax(g, "softmax", x, &o);
  } else {
    int64_t d = c->shape[c->rank - 1];
    vkf_norm_options o = {.gamma = vkf_graph_constant(g, "gamma", dt, 1, &d, NULL),
                          .beta = vkf_graph_constant(g, "beta", dt, 1, &d, NULL)};
    y = vkf_layernorm(g, "layernorm", x, &o);
  }
  vkf_graph_output(g, y, "y");
  vkf_lowered low = {0};
  vkf_status st = vkf_graph_status(g);
  if (!st) st = vkf_memory_plan_build(g, NULL);
  if (!st) st = vkf_lower_graph(g, vkf_device_caps_get(device), NULL, &low);
  if (!st) {
    describe(low.plan, c->op, variant, variant_size);
    st = time_plan(device, low.plan, a, out);
  }
  if (low.plan) vkf_lowered_free(&low);
  vkf_graph_destroy(g);
  if (st) return st;

  /* Streaming reference: axpy (the host tests' kernel, fp32) over the same element count. */
  uint64_t n = (uint64_t)element_count(c);
  vkf_plan *p = vkf_plan_create();
  if (!p) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
  uint32_t xb = vkf_plan_add_buffer(p, VKF_PLAN_BUFFER_INPUT, "x", n * 4);
  uint32_t yb = vkf_plan_add_buffer(p, VKF_PLAN_BUFFER_OUTPUT, "y", n * 4);
  uint32_t groups = vkf_div_up(n, 256);
  vkf_plan_dispatch d = {.node = "axpy",
                         .shader = "axpy.comp",
                         .spec = {256},
                         .spec_count = 1,
                         .groups = {groups < 65535 ? groups : 65535, vkf_div_up(groups, 65535), 1}};
  vkf_plan_dispatch_bind(&d, xb, 0, n * 4, VKF_ACCESS_READ);
  vkf_plan_dispatch_bind(&d, yb, 0, n * 4, VKF_ACCESS_READ_WRITE);
  vkf_plan_dispatch_push_u32(&d, (uint32_t)n);
  vkf_plan_dispatch_push_f32(&d, 2.0f);
  st = vkf_plan_add_dispatch(p, &d);
  vkf_plan_finalize(p);
  if (!st) st = time_plan(device, p, a, out_axpy);
  vkf_plan_destroy(p);
  return st;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: vkf bench rows [--softmax SHAPE]... [--layernorm SHAPE]... [--fp16] [--causal]\n"
          "                      [--runs N] [--warmup N] [--device N|NAME]\n"
          "Times the masked softmax and layernorm kernels on their own (SHAPE: D0,D1[,D2[,D3]],\n"
          "normalised over the last axis) next to an fp32 axpy over the same element count.\n"
          "Default: softmax (1,12,197,197) (1,12,1024,1024) (1,12,1,32768) (64,32768);\n"
          "layernorm (197,768) (8,197,768) (1024,4096).\n");
}

static int parse_shape(const char *text, row_op op, row_case *out) {
  int64_t v[4];
  int n = 1;
  while (n <= 4 && !vkf_cli_parse_dims(text, n, 1, INT32_MAX, v)) n++;
  if (n > 4) return 0; /* "4abc", an empty field, a fifth dim */
  out->op = op;
  out->rank = (uint32_t)n;
  for (int k = 0; k < n; k++) out->shape[k] = v[k];
  return 1;
}

int vkf_cli_bench_rows(int argc, char **argv) {
  bench_args a = {.runs = 10, .warmup = 2};
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(arg, "--fp16")) {
      a.f16 = 1;
    } else if (!strcmp(arg, "--causal")) {
      a.causal = 1;
    } else if (!strcmp(arg, "--runs") && val) {
      a.runs = atoi(val), i++;
    } else if (!strcmp(arg, "--warmup") && val) {
      a.warmup = atoi(val), i++;
    } else if (!strcmp(arg, "--device") && val) {
      a.device = val, i++;
    } else if ((!strcmp(arg, "--softmax") || !strcmp(arg, "--layernorm")) && val &&
               a.case_count < MAX_CASES) {
      row_op op = !strcmp(arg, "--softmax") ? ROW_SOFTMAX : ROW_LAYERNORM;
      if (!parse_shape(val, op, &a.cases[a.case_count])) {
        fprintf(stderr,
                "vkf bench rows: bad shape \"%s\" (want D0,D1[,D2[,D3]]: integers in "
                "[1, 2147483647], ',' or 'x' between them)\n",
                val);
        return 2;
      }
      a.case_count++, i++;
    } else {
      return vkf_cli_bad_arg("vkf bench rows", usage, argc, argv, i);
    }
  }
  if (a.runs < 1 || a.warmup < 0) {
    fprintf(stderr, "vkf bench rows: --runs must be >= 1 and --warmup >= 0\n");
    return 2;
  }
  if (!a.case_count) {
    a.case_count = (int)(sizeof default_cases / sizeof default_cases[0]);
    memcpy(a.cases, default_cases, sizeof default_cases);
  }
  vkf_cli_device dev;
  vkf_status st = vkf_cli_device_open(a.device, &dev);
  if (st) return vkf_cli_fail(st);
  const vkf_device_caps *caps = vkf_device_caps_get(dev.device);
  printf("Row kernels on %s (%s%s%s), %s%s, %d warm-up + %d timed runs, GPU timestamps\n\n",
         caps->name, vkf_device_kind_name(caps->kind), caps->profile[0] ? ", profile " : "",
         caps->profile, a.f16 ? "fp16 storage" : "fp32", a.causal ? ", causal softmax" : "",
         a.warmup, a.runs);
  printf("| op | shape | variant | ms ± sd | GB/s (x + y) | axpy ms (same count, fp32) |\n");
  printf("|---|---|---|---|---|---|\n");
  for (int i = 0; i < a.case_count && !st; i++) {
    const row_case *c = &a.cases[i];
    timing t = {0}, ax = {0};
    char variant[128] = "", shape_text[64];
    st = bench_case(dev.device, &a, c, &t, &ax, variant, sizeof variant);
    if (st) break;
    double bytes = 2.0 * (double)element_count(c) * (a.f16 ? 2 : 4);
    printf("| %s | %s | %s | %.3f ± %.3f | %.2f | %.3f |\n",
           c->op == ROW_SOFTMAX ? "softmax" : "layernorm",
           vkf_shape_format(c->rank, c->shape, shape_text, sizeof shape_text), variant, t.mean_ms,
           t.sd_ms, bytes / (t.mean_ms * 1e6), ax.mean_ms);
  }
  int validation = vkf_cli_device_close(&dev);
  if (st) return vkf_cli_fail(st);
  return validation ? 1 : 0;
}
