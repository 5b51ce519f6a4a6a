/* vkf bench attention: per shape, the fused attention kernel and the unfused path (matmul +
 * masked softmax + matmul through the same lowering, as VKF_NO_FUSE=attention runs it) on the
 * same data in one process: GPU time mean ± sd (session timestamps), GFLOP/s (4·Nq·Nk·D·H·B),
 * GB/s (q, k, v and the output once each: decoding's bound) against the copy bandwidth measured
 * first, peak device memory of each session, and the largest difference between the outputs;
 * beside the time, the body's design intensity: FLOPs per shared-memory byte and per global byte
 * (bench_attention_intensity.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/base/half.h"
#include "graph/ir/builder.h"
#include "graph/lower/lower.h"
#include "graph/lower/lower_attention.h"
#include "graph/passes/memory_plan.h"
#include "host/bandwidth.h"
#include "host/session.h"
#include "tools/vkf/bench_attention_intensity.h"
#include "tools/vkf/bench_linear_attention.h"
#include "tools/vkf/cli_args.h"
#include "tools/vkf/cli.h"
#include "tools/vkf/device_open.h"

enum { MAX_SHAPES = 16 };

typedef struct shape {
  int64_t b, h, nq, nk, d;
} shape;

/* The shapes: ViT-B/16 at 224 and 384, longer sequences, a 16-head D=128 model, and
 * decoding one query against a 4k and a 32k cache. */
static const shape default_shapes[] = {
    {1, 12, 197, 197, 64},   {1, 12, 577, 577, 64},    {1, 12, 1024, 1024, 64},
    {1, 12, 4096, 4096, 64}, {1, 16, 2048, 2048, 128}, {1, 12, 1, 4096, 64},
    {1, 12, 1, 32768, 64},
};

typedef struct bench_args {
  shape shapes[MAX_SHAPES];
  int shape_count;
  int runs, warmup, json, f16, unfused, causal;
  const char *device;
  vkf_attention_force force; /* --variant / --splits: replaces the chooser's rule */
  double copy_gbps;           /* the device's copy bandwidth, measured first (same process) */
} bench_args;

typedef struct timing {
  int ok;
  double mean_ms, sd_ms;
  uint64_t device_bytes;
  char note[160]; /* variant, or why it did not run */
  vkf_attention_intensity design; /* fused: the body's FLOPs per shared and global byte */
} timing;

typedef struct result {
  shape s;
  timing fused, unfused;
  double max_diff; /* max |fused - unfused| */
} result;

/* q, k, v and the output each moved once: the bound of decoding (one query against a long
 * cache), where GB/s against the copy bandwidth is the figure of merit. */
static double gbps(const shape *s, int f16, double ms) {
  double elems = (double)s->b * (double)s->h * (double)s->d * (2.0 * (double)s->nq + 2.0 * (double)s->nk);
  return ms > 0 ? elems * (f16 ? 2 : 4) / (ms * 1e6) : 0;
}

static double gflops(const shape *s, double ms) {
  double flop = 4.0 * (double)s->nq * (double)s->nk * (double)s->d * (double)s->h * (double)s->b;
  return ms > 0 ? flop / (ms * 1e6) : 0;
}

/* q [B,H,Nq,D], k, v [B,H,Nk,D] -> y, fused or as matmul + softmax + matmul. */
static vkf_status build_graph(const bench_args *a, const shape *s, int fused, vkf_graph **out_graph,
                              vkf_value io[4]) {
  vkf_dtype dt = a->f16 ? VKF_F16 : VKF_F32;
  VKF_RETURN_IF_ERROR(vkf_graph_create(fused ? "attention" : "attention_unfused", out_graph));
  vkf_graph *g = *out_graph;
  int64_t qs[4] = {s->b, s->h, s->nq, s->d}, ks[4] = {s->b, s->h, s->nk, s->d};
  io[0] = vkf_graph_input(g, "q", dt, 4, qs);
  io[1] = vkf_graph_input(g, "k", dt, 4, ks);
  io[2] = vkf_graph_input(g, "v", dt, 4, ks);
  float scale = (float)(1.0 / sqrt((double)s->d));
  vkf_value y;
  if (fused) {
    vkf_attention_options o = {.scale = scale, .causal = a->causal};
    y = vkf_attention(g, "attention", io[0], io[1], io[2], &o);
  } else {
    vkf_matmul_options t = {.transpose_b = 1};
    vkf_value scores = vkf_matmul(g, "scores", io[0], io[1], &t); /* [B, H, Nq, Nk] */
    vkf_softmax_options so = {.scale = scale, .causal = a->causal};
    vkf_value p = vkf_softmax(g, "softmax", scores, &so);
    y = vkf_matmul(g, "pv", p, io[2], NULL); /* [B, H, Nq, D] */
  }
  io[3] = vkf_graph_output(g, y, "y");
  VKF_RETURN_IF_ERROR(vkf_graph_status(g));
  return vkf_memory_plan_build(g, NULL);
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

/* Variant name of the first attention dispatch (fused) for the table, and its design intensity. */
static void describe(const vkf_device_caps *caps, const bench_args *a, const shape *s, char *buf,
                     size_t size, vkf_attention_intensity *design) {
  vkf_attention_shape as = {.batch = (uint32_t)s->b,
                            .heads = (uint32_t)s->h,
                            .nq = (uint32_t)s->nq,
                            .nk = (uint32_t)s->nk,
                            .d = (uint32_t)s->d,
                            .dv = (uint32_t)s->d,
                            .dtype = a->f16 ? VKF_F16 : VKF_F32};
  vkf_attention_config c;
  vkf_attention_choose(caps, &as, &a->force, &c);
  *design = vkf_bench_attention_intensity(&c, &as);
  if (c.layout == VKF_ATTENTION_LAYOUT_COOPMAT) {
    snprintf(buf, size, "coopmat m%u Br%u Bc%u%s", c.coopmat_tile, c.br, c.bc,
             c.kv_stages == 2 ? " kv2" : "");
    return;
  }
  if (c.layout == VKF_ATTENTION_LAYOUT_TILED) {
    snprintf(buf, size, "tiled Br%u Bc%u", c.br, c.bc);
    return;
  }
  snprintf(buf, size, "%s%s Br%u Bc%u%s", c.layout == VKF_ATTENTION_LAYOUT_ROW ? "row" : "lanes",
           c.layout == VKF_ATTENTION_LAYOUT_LANES ? (c.subgroup_reduce ? "/sg" : "/shm") : "", c.br,
           c.bc, c.stage_kv ? "" : " in-place");
  if (c.splits > 1) snprintf(buf + strlen(buf), size - strlen(buf), " split%u", c.splits);
}

/* Runs one graph warmup + runs times; GPU time statistics and its output (fp32) in *out_y. */
static vkf_status time_graph(vkf_device *device, const bench_args *a, const shape *s, int fused,
                             void *const host[3], timing *out, float **out_y) {
  *out_y = NULL;
  vkf_graph *g = NULL;
  vkf_value io[4];
  vkf_lowered low = {0};
  vkf_session *ses = NULL;
  vkf_status st = build_graph(a, s, fused, &g, io);
  if (!st) st = vkf_lower_graph(g, vkf_device_caps_get(device), NULL, &low);
  vkf_session_options opts = {.profile = 1};
  if (!st) st = vkf_session_create(device, low.plan, &opts, &ses);
  size_t es = a->f16 ? 2 : 4;
  size_t sizes[3] = {(size_t)(s->b * s->h * s->nq * s->d) * es,
                     (size_t)(s->b * s->h * s->nk * s->d) * es,
                     (size_t)(s->b * s->h * s->nk * s->d) * es};
  for (int i = 0; i < 3 && !st; i++)
    st = vkf_session_write(ses, low.tensors[io[i].id].buffer, 0, host[i], sizes[i]);
  double sum = 0, sum2 = 0;
  for (int i = 0; i < a->warmup + a->runs && !st; i++) {
    st = vkf_session_run(ses);
    double ms = vkf_session_total_ns(ses) / 1e6;
    if (i >= a->warmup) sum += ms, sum2 += ms * ms;
  }
  size_t count = sizes[0] / es;
  void *raw = st ? NULL : malloc(sizes[0]);
  float *y = st ? NULL : malloc(count * sizeof(float));
  if (!st && (!raw || !y)) st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
  if (!st) st = vkf_session_read(ses, low.tensors[io[3].id].buffer, 0, raw, sizes[0]);
  if (!st) {
    for (size_t i = 0; i < count; i++)
      y[i] = a->f16 ? vkf_half_to_float(((uint16_t *)raw)[i]) : ((float *)raw)[i];
    double mean = sum / a->runs,
           var = a->runs > 1 ? (sum2 - a->runs * mean * mean) / (a->runs - 1) : 0;
    out->ok = 1;
    out->mean_ms = mean;
    out->sd_ms = var > 0 ? sqrt(var) : 0;
    out->device_bytes = vkf_session_device_bytes(ses);
    *out_y = y;
    y = NULL;
  }
  free(raw);
  free(y);
  vkf_session_destroy(ses);
  if (low.plan) vkf_lowered_free(&low);
  vkf_graph_destroy(g);
  return st;
}

static vkf_status bench_shape(vkf_device *device, const bench_args *a, const shape *s, result *r) {
  memset(r, 0, sizeof *r);
  r->s = *s;
  size_t es = a->f16 ? 2 : 4, nq = 0, nk = 0;
  /* The operands must fit one storage-buffer binding: checked before any host memory is taken
   * for them (the limit check of the plan comes later, after the data is made). */
  uint64_t range = vkf_device_caps_get(device)->max_storage_buffer_range;
  int64_t rows[2] = {s->nq, s->nk};
  for (int i = 0; i < 2; i++) {
    int64_t c = s->b;
    if (__builtin_mul_overflow(c, s->h, &c) || __builtin_mul_overflow(c, rows[i], &c) ||
        __builtin_mul_overflow(c, s->d, &c) || (uint64_t)c > range / es)
      return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY,
                             "%s [%lld, %lld, %lld, %lld] takes more than the device's "
                             "maxStorageBufferRange (%llu bytes)",
                             i ? "K (and V)" : "Q", (long long)s->b, (long long)s->h,
                             (long long)rows[i], (long long)s->d, (unsigned long long)range);
    *(i ? &nk : &nq) = (size_t)c;
  }
  void *host[3] = {malloc(nq * es), malloc(nk * es), malloc(nk * es)};
  if (!host[0] || !host[1] || !host[2]) {
    free(host[0]), free(host[1]), free(host[2]);
    return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
  }
  fill(host[0], nq, a->f16, 0x9e3779b9u);
  fill(host[1], nk, a->f16, 0x85ebca6bu);
  fill(host[2], nk, a->f16, 0xc2b2ae35u);
  float *yf = NULL, *yu = NULL;
  describe(vkf_device_caps_get(device), a, s, r->fused.note, sizeof r->fused.note,
           &r->fused.design);
  vkf_status st = time_graph(device, a, s, 1, host, &r->fused, &yf);
  if (!st && a->unfused) {
    /* The unfused path may not fit the device (N² scores past maxStorageBufferRange or the
     * heap): report why in its column instead of failing the whole run. */
    vkf_status su = time_graph(device, a, s, 0, host, &r->unfused, &yu);
    if (su) {
      snprintf(r->unfused.note, sizeof r->unfused.note, "%s", vkf_status_message(su));
      vkf_status_free(su);
    }
  }
  r->max_diff = NAN;
  if (yf && yu) {
    r->max_diff = 0;
    for (size_t i = 0; i < nq; i++)
      if (!(fabs(yf[i] - yu[i]) <= r->max_diff)) r->max_diff = fabs(yf[i] - yu[i]);
  }
  free(yf), free(yu);
  free(host[0]), free(host[1]), free(host[2]);
  return st;
}

static void print_markdown(const bench_args *a, const vkf_device_caps *caps, const result *res,
                           int count) {
  printf("Attention on %s (%s%s%s), %s%s, %d warm-up + %d timed runs, GPU timestamps\n\n",
         caps->name, vkf_device_kind_name(caps->kind), caps->profile[0] ? ", profile " : "",
         caps->profile, a->f16 ? "fp16 storage" : "fp32", a->causal ? ", causal" : "", a->warmup,
         a->runs);
  printf("copy bandwidth (read + write, same process): %.1f GB/s\n\n", a->copy_gbps);
  printf(
      "| B,H,Nq,Nk,D | fused variant | fused ms ± sd | fused GFLOP/s | fused GB/s | %% of copy | "
      "FLOP/shared B | FLOP/global B | fused peak MiB | unfused ms ± sd | unfused GFLOP/s | "
      "unfused peak MiB | speed-up | max |diff| |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (int i = 0; i < count; i++) {
    const result *r = &res[i];
    const shape *s = &r->s;
    double bw = gbps(s, a->f16, r->fused.mean_ms);
    char shared_i[32] = "-"; /* "-": no shared memory */
    if (r->fused.design.flop_per_shared_byte > 0)
      snprintf(shared_i, sizeof shared_i, "%.1f", r->fused.design.flop_per_shared_byte);
    printf("| %lld,%lld,%lld,%lld,%lld | %s | %.3f ± %.3f | %.2f | %.1f | %.1f | %s | %.1f | %.1f |",
           (long long)s->b, (long long)s->h, (long long)s->nq, (long long)s->nk, (long long)s->d,
           r->fused.note, r->fused.mean_ms, r->fused.sd_ms, gflops(s, r->fused.mean_ms), bw,
           a->copy_gbps > 0 ? 100.0 * bw / a->copy_gbps : 0, shared_i,
           r->fused.design.flop_per_global_byte, (double)r->fused.device_bytes / 1048576.0);
    if (r->unfused.ok)
      printf(" %.3f ± %.3f | %.2f | %.1f | %.2f× | %.2g |\n", r->unfused.mean_ms, r->unfused.sd_ms,
             gflops(s, r->unfused.mean_ms), (double)r->unfused.device_bytes / 1048576.0,
             r->unfused.mean_ms / r->fused.mean_ms, r->max_diff);
    else
      printf(" - | - | - | - | %s |\n",
             a->unfused ? (r->unfused.note[0] ? r->unfused.note : "-") : "not run");
  }
}

static void print_json(const bench_args *a, const vkf_device_caps *caps, const result *res,
                       int count) {
  printf(
      "{\"device\": \"%s\", \"profile\": \"%s\", \"dtype\": \"%s\", \"causal\": %d, "
      "\"warmup\": %d, \"runs\": %d, \"copy_gb_per_s\": %.3f, \"results\": [",
      caps->name, caps->profile, a->f16 ? "f16" : "f32", a->causal, a->warmup, a->runs,
      a->copy_gbps);
  for (int i = 0; i < count; i++) {
    const result *r = &res[i];
    const shape *s = &r->s;
    printf(
        "%s\n  {\"b\": %lld, \"h\": %lld, \"nq\": %lld, \"nk\": %lld, \"d\": %lld, "
        "\"variant\": \"%s\", \"fused_ms\": %.6f, \"fused_sd_ms\": %.6f, \"fused_gflops\": %.3f, "
        "\"fused_gb_per_s\": %.3f, \"flop_per_shared_byte\": %.3f, "
        "\"flop_per_global_byte\": %.3f, \"fused_device_bytes\": %llu",
        i ? "," : "", (long long)s->b, (long long)s->h, (long long)s->nq, (long long)s->nk,
        (long long)s->d, r->fused.note, r->fused.mean_ms, r->fused.sd_ms,
        gflops(s, r->fused.mean_ms), gbps(s, a->f16, r->fused.mean_ms),
        r->fused.design.flop_per_shared_byte, r->fused.design.flop_per_global_byte,
        (unsigned long long)r->fused.device_bytes);
    if (r->unfused.ok)
      printf(
          ", \"unfused_ms\": %.6f, \"unfused_sd_ms\": %.6f, \"unfused_gflops\": %.3f, "
          "\"unfused_device_bytes\": %llu, \"max_abs_diff\": %.3g",
          r->unfused.mean_ms, r->unfused.sd_ms, gflops(s, r->unfused.mean_ms),
          (unsigned long long)r->unfused.device_bytes, r->max_diff);
    else if (r->unfused.note[0])
      printf(", \"unfused_error\": \"%s\"", r->unfused.note);
    printf("}");
  }
  printf("\n]}\n");
}

static void usage(FILE *f) {
  fprintf(
      f,
      "usage: vkf bench attention [--shape B,H,Nq,Nk,D (or BxHxNqxNkxD)]... [--runs N] [--warmup N] [--fp16]\n"
      "                           [--causal] [--no-unfused] [--json] [--device N|NAME]\n"
      "                           [--variant row|row-inplace|lanes|lanes-inplace|tiled|coopmat]\n"
      "                           [--splits S]\n"
      "Times the fused attention kernel and the unfused matmul + softmax + matmul path on\n"
      "the same data. Default shapes: (1,12,N,N,64) for N = 197, 577, 1024, 4096;\n"
      "(1,16,2048,2048,128); decoding (1,12,1,Nk,64) for Nk = 4096, 32768.\n"
      "vkf bench attention --kind linear|performer|rfa --help: the linear-attention family;\n"
      "--kind nystrom|linformer, --kind adaptive_span, --kind long_short, --kind relative\n"
      "(Transformer-XL), --pattern P: their own tables.\n"
      "--variant coopmat (with --fp16, on a device with cooperative matrices: vkf devices):\n"
      "the tensor-core body; --variant tiled: the register-tiled SIMT body (GPUs' prefill);\n"
      "shapes a forced body cannot take run the chooser's. Without --variant, on a device with\n"
      "cooperative matrices and with --fp16, each shape also gets a row of the other kind:\n"
      "the tensor-core body beside the chooser's SIMT one, or the tiled SIMT body beside\n"
      "the chooser's tensor-core one.\n");
}

int vkf_cli_bench_attention(int argc, char **argv) {
  /* --kind linear|performer|rfa: the kernelised family beside this dense kernel. */
  for (int i = 0; i + 1 < argc; i++)
    if (!strcmp(argv[i], "--kind") && vkf_bench_linear_kind(argv[i + 1]))
      return vkf_bench_linear_attention(argc, argv);
  /* The low-rank kinds have their own options and table (bench_attention_lowrank.c). */
  for (int i = 0; i + 1 < argc; i++)
    if (!strcmp(argv[i], "--kind") &&
        (!strcmp(argv[i + 1], "nystrom") || !strcmp(argv[i + 1], "linformer")))
      return vkf_cli_bench_attention_lowrank(argc, argv);
  for (int i = 0; i + 1 < argc; i++)
    if (!strcmp(argv[i], "--kind") && !strcmp(argv[i + 1], "adaptive_span"))
      return vkf_cli_bench_attention_span(argc, argv);
  for (int i = 0; i + 1 < argc; i++)
    if (!strcmp(argv[i], "--kind") && !strcmp(argv[i + 1], "long_short"))
      return vkf_cli_bench_attention_long_short(argc, argv);
  for (int i = 0; i + 1 < argc; i++)
    if (!strcmp(argv[i], "--kind") && !strcmp(argv[i + 1], "relative"))
      return vkf_cli_bench_attention_relative(argc, argv);
  /* A sparsity pattern: the block-sparse kernel (bench_attention_sparse.c). */
  for (int i = 0; i < argc; i++)
    if (!strcmp(argv[i], "--pattern")) return vkf_cli_bench_attention_sparse(argc, argv);
  bench_args a = {.runs = 5, .warmup = 1, .unfused = 1};
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(arg, "--json")) {
      a.json = 1;
    } else if (!strcmp(arg, "--fp16")) {
      a.f16 = 1;
    } else if (!strcmp(arg, "--causal")) {
      a.causal = 1;
    } else if (!strcmp(arg, "--no-unfused")) {
      a.unfused = 0;
    } else if (!strcmp(arg, "--runs") && val) {
      a.runs = atoi(val), i++;
    } else if (!strcmp(arg, "--warmup") && val) {
      a.warmup = atoi(val), i++;
    } else if (!strcmp(arg, "--variant") && val) {
      static const struct {
        const char *name;
        vkf_attention_layout layout;
        int stage_kv;
      } names[] = {{"row", VKF_ATTENTION_LAYOUT_ROW, 1},
                   {"row-inplace", VKF_ATTENTION_LAYOUT_ROW, -1},
                   {"lanes", VKF_ATTENTION_LAYOUT_LANES, 1},
                   {"lanes-inplace", VKF_ATTENTION_LAYOUT_LANES, -1},
                   {"tiled", VKF_ATTENTION_LAYOUT_TILED, 0},
                   {"coopmat", VKF_ATTENTION_LAYOUT_COOPMAT, 0}};
      size_t k = 0;
      while (k < sizeof names / sizeof names[0] && strcmp(names[k].name, val)) k++;
      if (k == sizeof names / sizeof names[0]) {
        fprintf(stderr, "vkf bench attention: unknown --variant \"%s\"\n", val);
        return 2;
      }
      a.force.layout = names[k].layout, a.force.stage_kv = names[k].stage_kv, i++;
    } else if (!strcmp(arg, "--splits") && val) {
      a.force.splits = (uint32_t)atoi(val), i++;
    } else if (!strcmp(arg, "--device") && val) {
      a.device = val, i++;
    } else if (!strcmp(arg, "--shape") && val && a.shape_count < MAX_SHAPES) {
      shape *s = &a.shapes[a.shape_count];
      int64_t v[5];
      if (!vkf_cli_parse_dims(val, 5, 1, INT32_MAX, v)) {
        fprintf(stderr,
                "vkf bench attention: bad --shape \"%s\" (want B,H,Nq,Nk,D: five integers in "
                "[1, 2147483647], ',' or 'x' between them)\n",
                val);
        return 2;
      }
      *s = (shape){v[0], v[1], v[2], v[3], v[4]};
      a.shape_count++, i++;
    } else {
      return vkf_cli_bad_arg("vkf bench attention", usage, argc, argv, i);
    }
  }
  if (a.runs < 1 || a.warmup < 0) {
    fprintf(stderr, "vkf bench attention: --runs must be >= 1 and --warmup >= 0\n");
    return 2;
  }
  if (!a.shape_count) {
    a.shape_count = (int)(sizeof default_shapes / sizeof default_shapes[0]);
    memcpy(a.shapes, default_shapes, sizeof default_shapes);
  }
  vkf_lower_attention_set_force(&a.force);
  vkf_cli_device dev;
  vkf_status st = vkf_cli_device_open(a.device, &dev);
  if (!st) st = vkf_device_copy_bandwidth(dev.device, 256ull << 20, 3, &a.copy_gbps);
  if (st) {
    vkf_cli_device_close(&dev);
    return vkf_cli_fail(st);
  }
  /* The other kind beside the chooser's (f16 on a device with cooperative matrices): tensor
   * cores beside SIMT, or the tiled SIMT body beside tensor cores. */
  const vkf_device_caps *caps = vkf_device_caps_get(dev.device);
  int beside = !a.force.layout && !a.force.splits && a.f16 && caps->coopmat_gemm_tile;
  result res[2 * MAX_SHAPES];
  int done = 0;
  for (int i = 0; i < a.shape_count && !st; i++) {
    const shape *sh = &a.shapes[i];
    st = bench_shape(dev.device, &a, sh, &res[done++]);
    if (!st && beside) {
      bench_args other = a;
      other.force.layout = strncmp(res[done - 1].fused.note, "coopmat", 7)
                               ? VKF_ATTENTION_LAYOUT_COOPMAT
                               : VKF_ATTENTION_LAYOUT_TILED;
      char alt[sizeof res[0].fused.note];
      vkf_attention_intensity unused;
      describe(caps, &other, sh, alt, sizeof alt, &unused);
      if (strcmp(alt, res[done - 1].fused.note)) { /* a shape the other body cannot take: none */
        vkf_lower_attention_set_force(&other.force);
        st = bench_shape(dev.device, &other, sh, &res[done++]);
        vkf_lower_attention_set_force(&a.force);
      }
    }
    if (st)
      st = vkf_status_annotate(st, "shape %lld,%lld,%lld,%lld,%lld: ", (long long)sh->b,
                               (long long)sh->h, (long long)sh->nq, (long long)sh->nk,
                               (long long)sh->d);
  }
  int rc = 0;
  if (st) {
    rc = vkf_cli_fail(st);
  } else if (a.json) {
    print_json(&a, caps, res, done);
  } else {
    print_markdown(&a, caps, res, done);
  }
  if (vkf_cli_device_close(&dev) && !rc) rc = 1;
  return rc;
}
