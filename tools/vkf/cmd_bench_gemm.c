/* vkf bench gemm: times one GEMM per shape with the chosen variant (or a forced one) and, in the
 * same process on the same data, the naive one-output-per-invocation kernel; GPU time comes from
 * the session's timestamps. Prints a markdown table (mean ± sd over the timed runs, GFLOP/s, GB/s
 * of A + B + C and their share of the device's copy bandwidth, measured first in the same process,
 * ratio to naive) or --json. Defaults: the ViT-B/16 shapes (M x K x N), fp32, B both as [K, N]
 * and as [N, K] (HF nn.Linear weights, transpose_b), 3 warm-up + 10 timed runs (naive: 1 + 3, it
 * is only the baseline of the ratio). --decode KxN runs M = 1..8 on one K x N instead: the decode
 * steps of a model, where GB/s is the figure of merit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/base/half.h"
#include "graph/base/quant.h"
#include "graph/lower/lower_matmul.h"
#include "host/bandwidth.h"
#include "host/session.h"
#include "tools/vkf/bench_gemm_intensity.h"
#include "tools/vkf/bench_util.h"
#include "tools/vkf/cli.h"
#include "tools/vkf/cli_args.h"
#include "tools/vkf/device_open.h"

enum { MAX_SHAPES = 16 };

typedef struct bench_args {
  uint64_t shapes[MAX_SHAPES][3]; /* M, K, N */
  int shape_count;
  int runs, warmup, naive_runs, json, f16, naive;
  int layouts; /* bit 0: B [K, N]; bit 1: B [N, K] (transpose_b) */
  vkf_dtype weights; /* B's dtype when quantised (ggml blocks, always [N, K]); else 0 */
  const char *device;
  int force; /* 1: `variant` replaces the chooser */
  vkf_gemm_variant variant;
  double copy_gbps; /* the device's copy bandwidth, measured before the GEMMs (0: not measured) */
} bench_args;

typedef vkf_bench_stats bench_timing;

typedef struct bench_result {
  uint64_t m, k, n;
  int transpose_b;
  char variant[64];
  vkf_gemm_intensity intensity; /* the variant's design figures (0: not a tiled body) */
  bench_timing fast, naive;
  double max_rel_diff; /* chosen vs naive output, relative to the largest |naive| */
} bench_result;

static double gflops(const bench_result *r, double ms) {
  return ms > 0 ? 2.0 * (double)r->m * (double)r->k * (double)r->n / (ms * 1e6) : 0;
}

/* Bytes of B: K x N elements, or their blocks. */
static size_t b_bytes(const bench_args *a, uint64_t k, uint64_t n) {
  if (a->weights) return (size_t)(k * n / vkf_dtype_block(a->weights) * vkf_dtype_size(a->weights));
  return (size_t)(k * n) * (a->f16 ? 2 : 4);
}

/* A, B and C each moved once: what a bandwidth-bound GEMM (few rows) cannot do with less. */
static double gbps(const bench_args *a, const bench_result *r, double ms) {
  int f16 = a->f16;
  double bytes = ((double)r->m * (double)r->k + (double)r->m * (double)r->n) * (f16 ? 2 : 4) +
                 (double)b_bytes(a, r->k, r->n);
  return ms > 0 ? bytes / (ms * 1e6) : 0;
}

static vkf_plan_tensor matrix(uint32_t buffer, vkf_dtype dtype, uint64_t rows, uint64_t cols) {
  vkf_plan_tensor t = {.buffer = buffer, .dtype = dtype, .rank = 2};
  t.shape[0] = (int64_t)rows, t.shape[1] = (int64_t)cols;
  t.strides[0] = (int64_t)cols, t.strides[1] = 1;
  return t;
}

/* A plan with one matmul: buffer 0 A [M, K] (input), 1 B [K, N] or [N, K] (weight), 2 C [M, N]. */
static vkf_status build_plan(const vkf_device_caps *caps, const bench_args *a, const uint64_t *mkn,
                             int transpose_b, const vkf_gemm_variant *variant, vkf_plan **out_plan,
                             char *variant_name, size_t name_size, vkf_gemm_intensity *intensity) {
  *out_plan = NULL;
  uint64_t m = mkn[0], k = mkn[1], n = mkn[2];
  vkf_dtype dt = a->f16 ? VKF_F16 : VKF_F32;
  size_t es = vkf_dtype_size(dt);
  vkf_plan *plan = vkf_plan_create();
  if (!plan) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
  uint32_t ba = vkf_plan_add_buffer(plan, VKF_PLAN_BUFFER_INPUT, "a", m * k * es);
  uint32_t bb = vkf_plan_add_buffer(plan, VKF_PLAN_BUFFER_WEIGHT, "b", b_bytes(a, k, n));
  uint32_t bc = vkf_plan_add_buffer(plan, VKF_PLAN_BUFFER_OUTPUT, "c", m * n * es);
  uint32_t align = caps->min_storage_buffer_offset_alignment;
  vkf_lower_ctx ctx = {.plan = plan, .caps = caps, .alignment = align > 16 ? align : 16};
  vkf_node_attrs attrs = {.matmul = {.transpose_b = transpose_b, .activation = VKF_ACT_NONE}};
  vkf_lower_node node = {.name = "gemm", .op = VKF_OP_MATMUL, .attrs = &attrs, .input_count = 2};
  for (int i = 0; i < VKF_MAX_NODE_INPUTS; i++) node.inputs[i].buffer = VKF_PLAN_NO_BUFFER;
  node.inputs[VKF_IN_MATMUL_A] = matrix(ba, dt, m, k);
  vkf_dtype bt = a->weights ? a->weights : dt;
  node.inputs[VKF_IN_MATMUL_B] = transpose_b ? matrix(bb, bt, n, k) : matrix(bb, bt, k, n);
  node.output = matrix(bc, dt, m, n);
  vkf_gemm_shape shape = {.m = m, .n = n, .k = k, .batches = 1, .b_along_k = transpose_b,
                          .b_along_n = !transpose_b, .b_quant = a->weights != 0,
                          .b_dtype = bt};
  shape.coopmat_ok = a->f16; /* f16 A and C, B f16 or blocks */
  shape.b_x16 = transpose_b && vkf_gemm_b_x16_fits(&ctx, &node.inputs[VKF_IN_MATMUL_B], n, k);
  vkf_gemm_variant v = variant ? *variant : vkf_gemm_choose(caps, &shape);
  /* "coopmat" (the tile left 0): the cooperative-matrix tiles the chooser takes for this shape */
  if (v.kind == VKF_GEMM_COOPMAT && !v.coopmat_tile) v = vkf_gemm_coopmat_choose(caps, &shape);
  vkf_gemm_variant_name(&v, variant_name, name_size);
  if (intensity)
    *intensity = vkf_bench_gemm_intensity(&v, m, n, k, (uint32_t)es,
                                          (double)b_bytes(a, k, n) / (double)(k * n));
  vkf_status st = vkf_lower_matmul_variant(&ctx, &node, &v);
  if (st) {
    vkf_plan_destroy(plan);
    return st;
  }
  vkf_plan_finalize(plan);
  *out_plan = plan;
  return VKF_OK;
}

/* Times the plan warmup + runs times on the given A and B; the last run's output into `hc`. */
static vkf_status time_plan(vkf_device *device, const vkf_plan *plan, int warmup, int runs,
                            const void *ha, const void *hb, size_t a_size, size_t b_size, void *hc,
                            size_t c_size, bench_timing *out) {
  vkf_session *s = NULL;
  vkf_session_options opts = {.profile = 1};
  VKF_RETURN_IF_ERROR(vkf_session_create(device, plan, &opts, &s));
  vkf_status st = vkf_session_write(s, 0, 0, ha, a_size);
  if (!st) st = vkf_session_write(s, 1, 0, hb, b_size);
  if (!st) st = vkf_bench_session_time(s, warmup, runs, out);
  if (!st) st = vkf_session_read(s, 2, 0, hc, c_size);
  vkf_session_destroy(s);
  return st;
}

static void fill(void *data, size_t count, int f16, uint32_t seed) {
  uint32_t s = seed;
  for (size_t i = 0; i < count; i++) {
    s ^= s << 13, s ^= s >> 17, s ^= s << 5;
    float v = (float)(s >> 8) / 8388608.0f - 1.0f; /* [-1, 1) */
    if (f16)
      ((uint16_t *)data)[i] = vkf_float_to_half(v);
    else
      ((float *)data)[i] = v;
  }
}

static float value_at(const void *data, size_t i, int f16) {
  return f16 ? vkf_half_to_float(((const uint16_t *)data)[i]) : ((const float *)data)[i];
}

static vkf_status bench_shape(vkf_device *device, const bench_args *a, const uint64_t *mkn,
                              int transpose_b, bench_result *r) {
  const vkf_device_caps *caps = vkf_device_caps_get(device);
  memset(r, 0, sizeof *r);
  r->m = mkn[0], r->k = mkn[1], r->n = mkn[2];
  r->transpose_b = transpose_b;
  size_t es = a->f16 ? 2 : 4;
  size_t a_size = r->m * r->k * es, b_size = b_bytes(a, r->k, r->n), c_size = r->m * r->n * es;
  void *ha = malloc(a_size), *hb = malloc(b_size), *hc = malloc(c_size), *hn = malloc(c_size);
  vkf_status st = VKF_OK;
  if (!ha || !hb || !hc || !hn)
    st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
  vkf_plan *plan = NULL;
  if (!st) {
    fill(ha, r->m * r->k, a->f16, 0x9e3779b9u);
    if (a->weights) { /* random blocks, each scale a finite f16 near 0.01 */
      fill(hb, b_size / 4, 0, 0x85ebca6bu);
      vkf_quant_layout l = vkf_quant_layout_of((vkf_quant_format)(a->weights - VKF_Q8_0));
      uint32_t scale_at = a->weights == VKF_Q6_K ? 208 : 0, scales = a->weights == VKF_Q6_K ? 1 : 2;
      for (size_t blk = 0; blk < b_size / l.bytes; blk++)
        for (uint32_t j = 0; j < scales; j++) {
          uint16_t h = vkf_float_to_half(0.01f + 0.001f * (float)(blk % 7));
          memcpy((uint8_t *)hb + blk * l.bytes + scale_at + 2 * j, &h, 2);
        }
    } else {
      fill(hb, r->k * r->n, a->f16, 0x85ebca6bu);
    }
    st = build_plan(caps, a, mkn, transpose_b, a->force ? &a->variant : NULL, &plan, r->variant,
                    sizeof r->variant, &r->intensity);
  }
  if (!st)
    st = time_plan(device, plan, a->warmup, a->runs, ha, hb, a_size, b_size, hc, c_size, &r->fast);
  vkf_plan_destroy(plan);
  plan = NULL;
  if (!st && a->naive) {
    vkf_gemm_variant naive = {.kind = VKF_GEMM_NAIVE, .workgroup_size = 64};
    char name[64];
    st = build_plan(caps, a, mkn, transpose_b, &naive, &plan, name, sizeof name, NULL);
    if (!st)
      st = time_plan(device, plan, 1, a->naive_runs, ha, hb, a_size, b_size, hn, c_size, &r->naive);
    vkf_plan_destroy(plan);
    double max_ref = 0, max_diff = 0;
    for (size_t i = 0; !st && i < r->m * r->n; i++) {
      double ref = value_at(hn, i, a->f16), got = value_at(hc, i, a->f16);
      if (fabs(ref) > max_ref) max_ref = fabs(ref);
      if (!(fabs(got - ref) <= max_diff)) max_diff = fabs(got - ref);
    }
    r->max_rel_diff = max_ref > 0 ? max_diff / max_ref : max_diff;
  }
  free(ha), free(hb), free(hc), free(hn);
  return st;
}

static void print_markdown(const bench_args *a, const vkf_device_caps *caps,
                           const bench_result *res, int count) {
  printf("GEMM on %s (%s%s%s), %s%s%s, %d warm-up + %d timed runs (naive 1 + %d), GPU "
         "timestamps\n",
         caps->name, vkf_device_kind_name(caps->kind), caps->profile[0] ? ", profile " : "",
         caps->profile, a->f16 ? "fp16 storage" : "fp32", a->weights ? ", weights " : "",
         a->weights ? vkf_dtype_name(a->weights) : "", a->warmup, a->runs, a->naive_runs);
  printf("copy bandwidth (read + write, same process): %.1f GB/s\n\n", a->copy_gbps);
  printf(
      "| shape (M×K×N) | B | variant | mean ms ± sd | GFLOP/s | GB/s | %% of copy | naive "
      "GFLOP/s | ratio | FLOP/shared B | FLOP/global B |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (int i = 0; i < count; i++) {
    const bench_result *r = &res[i];
    double g = gflops(r, r->fast.mean_ms), gn = gflops(r, r->naive.mean_ms);
    double bw = gbps(a, r, r->fast.mean_ms);
    printf("| %llu×%llu×%llu | %s | %s | %.3f ± %.3f | %.1f | %.1f | %.1f |",
           (unsigned long long)r->m, (unsigned long long)r->k, (unsigned long long)r->n,
           r->transpose_b ? "[N,K]" : "[K,N]", r->variant, r->fast.mean_ms, r->fast.sd_ms, g, bw,
           a->copy_gbps > 0 ? 100.0 * bw / a->copy_gbps : 0);
    if (a->naive)
      printf(" %.2f | %.1f× |", gn, gn > 0 ? g / gn : 0);
    else
      printf(" - | - |");
    if (r->intensity.flop_per_shared_byte > 0)
      printf(" %.1f | %.1f |\n", r->intensity.flop_per_shared_byte,
             r->intensity.flop_per_global_byte);
    else
      printf(" - | - |\n");
  }
}

static void print_json(const bench_args *a, const vkf_device_caps *caps, const bench_result *res,
                       int count) {
  printf(
      "{\"device\": \"%s\", \"kind\": \"%s\", \"profile\": \"%s\", \"dtype\": \"%s\", "
      "\"weights\": \"%s\", \"warmup\": %d, \"runs\": %d, \"naive_runs\": %d, "
      "\"copy_gb_per_s\": %.3f, \"results\": [",
      caps->name, vkf_device_kind_name(caps->kind), caps->profile, a->f16 ? "f16" : "f32",
      a->weights ? vkf_dtype_name(a->weights) : a->f16 ? "f16" : "f32", a->warmup, a->runs,
      a->naive_runs, a->copy_gbps);
  for (int i = 0; i < count; i++) {
    const bench_result *r = &res[i];
    printf(
        "%s\n  {\"m\": %llu, \"k\": %llu, \"n\": %llu, \"transpose_b\": %d, \"variant\": \"%s\", "
        "\"mean_ms\": %.6f, \"sd_ms\": %.6f, \"gflops\": %.3f, \"gb_per_s\": %.3f, "
        "\"copy_fraction\": %.4f, \"flop_per_shared_byte\": %.3f, \"flop_per_global_byte\": %.3f",
        i ? "," : "", (unsigned long long)r->m, (unsigned long long)r->k, (unsigned long long)r->n,
        r->transpose_b, r->variant, r->fast.mean_ms, r->fast.sd_ms, gflops(r, r->fast.mean_ms),
        gbps(a, r, r->fast.mean_ms),
        a->copy_gbps > 0 ? gbps(a, r, r->fast.mean_ms) / a->copy_gbps : 0,
        r->intensity.flop_per_shared_byte, r->intensity.flop_per_global_byte);
    if (a->naive)
      printf(
          ", \"naive_mean_ms\": %.6f, \"naive_sd_ms\": %.6f, \"naive_gflops\": %.3f, "
          "\"ratio\": %.3f, \"max_rel_diff\": %.3g",
          r->naive.mean_ms, r->naive.sd_ms, gflops(r, r->naive.mean_ms),
          gflops(r, r->naive.mean_ms) > 0 ? gflops(r, r->fast.mean_ms) / gflops(r, r->naive.mean_ms)
                                          : 0,
          r->max_rel_diff);
    printf("}");
  }
  printf("\n]}\n");
}

/* "--variant cpu:RAxTN4xWG" | "tiled:BMxBNxBKxTMxTN" | "gemv:ROWSxCOLSxWG[:sg]" |
 * "gemv-kn:ROWSxWG" | "naive" | "coopmat": bypasses the chooser (tuning). */
static int parse_variant(const char *s, vkf_gemm_variant *v) {
  unsigned x[5] = {0};
  char tail[16] = "";
  memset(v, 0, sizeof *v);
  if (sscanf(s, "gemv-kn:%ux%u%15s", &x[0], &x[1], tail) >= 2 && !tail[0]) {
    v->kind = VKF_GEMM_GEMV, v->gemv_kn = 1, v->gemv_rows = x[0], v->workgroup_size = x[1];
    return 1;
  }
  if (sscanf(s, "qcpu:%ux%ux%u%15s", &x[0], &x[1], &x[2], tail) >= 3 &&
      (!tail[0] || !strcmp(tail, ":texel"))) {
    v->kind = VKF_GEMM_QCPU, v->qcpu_rows = x[0], v->qcpu_cols = x[1], v->workgroup_size = x[2];
    v->texel = tail[0] != 0;
    return 1;
  }
  if (sscanf(s, "gemv:%ux%ux%u%15s", &x[0], &x[1], &x[2], tail) >= 3 &&
      (!tail[0] || !strcmp(tail, ":sg"))) {
    v->kind = VKF_GEMM_GEMV, v->gemv_rows = x[0], v->gemv_cols = x[1], v->workgroup_size = x[2];
    v->gemv_subgroup = tail[0] != 0;
    return 1;
  }
  if (!strcmp(s, "naive")) {
    v->kind = VKF_GEMM_NAIVE, v->workgroup_size = 64;
    return 1;
  }
  if (!strcmp(s, "coopmat")) { /* the device's tile, filled in once it is open */
    v->kind = VKF_GEMM_COOPMAT;
    return 1;
  }
  int got = sscanf(s, "cpu:%ux%ux%ux%u", &x[0], &x[1], &x[2], &x[3]);
  if (got >= 3) {
    v->kind = VKF_GEMM_CPU, v->cpu_row_groups = x[0], v->cpu_col_vec4s = x[1];
    v->workgroup_size = x[2], v->cpu_k_unroll = got == 4 ? x[3] : 1;
    v->texel = strstr(s, ":texel") != NULL;
    return 1;
  }
  if (sscanf(s, "tiled:%ux%ux%ux%ux%u", &x[0], &x[1], &x[2], &x[3], &x[4]) == 5 && x[3] && x[4]) {
    v->kind = VKF_GEMM_TILED, v->bm = x[0], v->bn = x[1], v->bk = x[2], v->tm = x[3], v->tn = x[4];
    v->workgroup_size = (x[0] / x[3]) * (x[1] / x[4]);
    return 1;
  }
  return 0;
}

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: vkf bench gemm [--json] [--runs N] [--warmup N] [--naive-runs N]\n"
      "                      [--shape MxKxN ...] [--fp16] [--layout kn|nk|both] [--no-naive] "
      "[--device N|NAME]\n"
      "                      [--decode KxN] [--weights q8_0|q4_0|q4_1|q5_0|q5_1|q4_k|q5_k|q6_k]\n"
      "                      [--variant cpu:RAxTN4xWG[xKU][:texel] | tiled:BMxBNxBKxTMxTN |\n"
      "                       gemv:ROWSxCOLSxWG[:sg] | gemv-kn:ROWSxWG | qcpu:ROWSxCOLSxWG[:texel] "
      "|\n"
      "                       naive | coopmat]\n"
      "  GFLOP/s (mean and sd over timestamped runs) on the four ViT-B/16 shapes by default,\n"
      "  B as [K,N] and [N,K], beside a naive kernel; GB/s moved (A, B and C once each) and\n"
      "  its share of the device's copy bandwidth, measured first in the same process; for\n"
      "  the shared-memory tile bodies (tiled, coopmat) the design's FLOPs per byte of shared\n"
      "  memory and per byte of global loads and stores, counted from their tiles.\n"
      "  --decode KxN: M = 1..8 rows against one K x N weight (decode steps) instead.\n"
      "  Shapes take 'x' or ',' between their numbers (MxKxN = M,K,N), as bench attention\n"
      "  and bench rows do.\n"
      "  --fp16: f16 operands (--f16 is kept as an alias). --variant bypasses the chooser.\n"
      "  With --fp16 on a device with cooperative matrices (vkf devices), each shape whose\n"
      "  chosen variant is another also gets a row for the cooperative-matrix one (its tiles\n"
      "  for the shape, split-K included; --variant coopmat likewise).\n"
      "  --weights: B as random ggml blocks of that format (B as [N, K] only), as a GGUF's\n"
      "  quantised weights are read (with --fp16 the cooperative-matrix row dequantises\n"
      "  them into its f16 tiles).\n");
}

int vkf_cli_bench_gemm(int argc, char **argv) {
  bench_args a = {.runs = 10, .warmup = 3, .naive_runs = 3, .naive = 1, .layouts = 3};
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i];
    int64_t d[3];
    if (vkf_cli_is_help(arg)) {
      usage(stdout);
      return 0;
    } else if (!strcmp(arg, "--json")) {
      a.json = 1;
    } else if (!strcmp(arg, "--runs") && i + 1 < argc) {
      a.runs = atoi(argv[++i]);
    } else if (!strcmp(arg, "--warmup") && i + 1 < argc) {
      a.warmup = atoi(argv[++i]);
    } else if (!strcmp(arg, "--shape") && i + 1 < argc && a.shape_count < MAX_SHAPES &&
               vkf_cli_parse_dims(argv[i + 1], 3, 1, INT32_MAX, d)) { /* MxKxN or M,K,N */
      i++;
      for (int j = 0; j < 3; j++) a.shapes[a.shape_count][j] = (uint64_t)d[j];
      a.shape_count++;
    } else if (!strcmp(arg, "--decode") && i + 1 < argc && a.shape_count + 8 <= MAX_SHAPES &&
               vkf_cli_parse_dims(argv[i + 1], 2, 1, INT32_MAX, d)) {
      i++;
      for (uint64_t m = 1; m <= 8; m++, a.shape_count++) {
        a.shapes[a.shape_count][0] = m;
        a.shapes[a.shape_count][1] = (uint64_t)d[0];
        a.shapes[a.shape_count][2] = (uint64_t)d[1];
      }
    } else if (!strcmp(arg, "--fp16") || !strcmp(arg, "--f16")) { /* --f16: the old spelling */
      a.f16 = 1;
    } else if (!strcmp(arg, "--naive-runs") && i + 1 < argc) {
      a.naive_runs = atoi(argv[++i]);
    } else if (!strcmp(arg, "--layout") && i + 1 < argc) {
      const char *l = argv[++i];
      a.layouts = !strcmp(l, "kn") ? 1 : !strcmp(l, "nk") ? 2 : !strcmp(l, "both") ? 3 : 0;
      if (!a.layouts) return vkf_cli_bad_arg("vkf bench gemm", usage, argc, argv, i - 1);
    } else if (!strcmp(arg, "--weights") && i + 1 < argc) {
      const char *w = argv[++i];
      a.weights = 0;
      for (int f = VKF_Q8_0; f < VKF_DTYPE_COUNT; f++)
        if (!strcmp(w, vkf_dtype_name((vkf_dtype)f))) a.weights = (vkf_dtype)f;
      if (!a.weights) return vkf_cli_bad_arg("vkf bench gemm", usage, argc, argv, i - 1);
    } else if (!strcmp(arg, "--no-naive")) {
      a.naive = 0;
    } else if (!strcmp(arg, "--device") && i + 1 < argc) {
      a.device = argv[++i];
    } else if (!strcmp(arg, "--variant") && i + 1 < argc &&
               parse_variant(argv[i + 1], &a.variant)) {
      i++;
      a.force = 1;
    } else {
      return vkf_cli_bad_arg("vkf bench gemm", usage, argc, argv, i);
    }
  }
  if (a.runs < 1 || a.warmup < 0 || a.naive_runs < 1)
    return vkf_cli_usage_error("vkf bench gemm",
                               "--runs and --naive-runs need N >= 1, --warmup N >= 0");
  if (a.shape_count == 0) {
    /* ViT-B/16 at 224x224: 197 tokens; QKV-separate / fused QKV / MLP up / MLP down. */
    static const uint64_t vit[4][3] = {
        {197, 768, 768}, {197, 768, 2304}, {197, 768, 3072}, {197, 3072, 768}};
    memcpy(a.shapes, vit, sizeof vit);
    a.shape_count = 4;
  }
  if (a.weights) {
    a.layouts &= 2; /* blocks are [N, K] rows */
    for (int i = 0; i < a.shape_count; i++)
      if (a.shapes[i][1] % vkf_dtype_block(a.weights))
        return vkf_cli_usage_error("vkf bench gemm",
                                   "--weights: K must be a multiple of the format's block (32, "
                                   "or 256 for the K-quants)");
    if (!a.layouts)
      return vkf_cli_usage_error("vkf bench gemm", "--weights reads B as [N, K]: --layout nk");
  }
  vkf_cli_device dev;
  vkf_status st = vkf_cli_device_open(a.device, &dev);
  if (st) return vkf_cli_fail(st);
  const vkf_device_caps *caps = vkf_device_caps_get(dev.device);
  /* 256 MiB each way: long enough on a GPU (~0.1 ms at 4 TB/s is still many timestamp ticks). */
  st = vkf_device_copy_bandwidth(dev.device, 256ull << 20, 3, &a.copy_gbps);
  /* Tensor cores beside the chosen kernel: f16 operands on a device with the kernels, in the
   * tiles the chooser takes for each shape (build_plan). */
  bench_args coop = a;
  coop.force = 1;
  coop.variant = (vkf_gemm_variant){.kind = VKF_GEMM_COOPMAT};
  int beside = !a.force && a.f16 && caps->coopmat_gemm_tile;
  bench_result results[4 * MAX_SHAPES];
  int done = 0;
  for (int layout = 0; layout < 2; layout++)
    for (int i = 0; i < a.shape_count && !st && (a.layouts >> layout & 1); i++) {
      st = bench_shape(dev.device, &a, a.shapes[i], layout, &results[done++]);
      if (!st && beside && strncmp(results[done - 1].variant, "coopmat", 7))
        st = bench_shape(dev.device, &coop, a.shapes[i], layout, &results[done++]);
    }
  if (!st) {
    if (a.json)
      print_json(&a, caps, results, done);
    else
      print_markdown(&a, caps, results, done);
  }
  /* The fast kernel must agree with the naive one: timings of a wrong kernel mean nothing. */
  double limit = a.f16 ? 1e-2 : 1e-4;
  for (int i = 0; i < done && !st && a.naive; i++)
    if (!(results[i].max_rel_diff <= limit))
      st = vkf_status_make(VKF_STATUS_MISMATCH,
                           "gemm %llux%llux%llu: variant %s differs from the naive kernel by %.3g "
                           "(relative to max |C|; limit %g)",
                           (unsigned long long)results[i].m, (unsigned long long)results[i].k,
                           (unsigned long long)results[i].n, results[i].variant,
                           results[i].max_rel_diff, limit);
  if (vkf_cli_device_close(&dev) && !st)
    st = vkf_status_make(VKF_STATUS_DEVICE, "validation reported errors");
  return st ? vkf_cli_fail(st) : 0;
}
