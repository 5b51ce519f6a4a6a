/* vkf bench attention --pattern P: the block-sparse attention kernel on a layout built from a
 * pattern (window, global, random, ...), beside the dense fused kernel where it is asked for, on
 * the same data in one process: GPU time mean ± sd, GFLOP/s counted on the visited keys
 * (4·D·H·B per visible (query, key) pair), time per token, peak device memory, and for the
 * sparse kernel the fraction of the N² pairs it visits. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/base/half.h"
#include "graph/ir/builder.h"
#include "graph/ir/sparse_layout.h"
#include "graph/lower/lower.h"
#include "graph/passes/memory_plan.h"
#include "host/session.h"
#include "tools/vkf/cli.h"
#include "tools/vkf/cli_args.h"
#include "tools/vkf/device_open.h"

enum { MAX_NS = 8 };

typedef struct sparse_bench {
  const char *pattern, *device;
  uint32_t block, b, h, d;
  uint32_t ns[MAX_NS];
  int n_count, runs, warmup, f16, causal, json;
  uint32_t dense_max; /* dense kernel only up to this N */
} sparse_bench;

typedef struct timing {
  int ok;
  double mean_ms, sd_ms;
  uint64_t device_bytes;
} timing;

typedef struct row {
  uint32_t n;
  double visited; /* visible (query, key) pairs per (batch, head) */
  timing sparse, dense;
} row;

static void fill(void *data, size_t count, int f16, uint32_t seed) {
  uint32_t s = seed;
  for (size_t i = 0; i < count; i++) {
    s ^= s << 13, s ^= s >> 17, s ^= s << 5;
    float v = (float)(s >> 8) / 8388608.0f - 1.0f;
    if (f16)
      ((uint16_t *)data)[i] = vkf_float_to_half(v);
    else
      ((float *)data)[i] = v;
  }
}

/* Visible pairs of the layout for one (batch, head), with the causal rule when asked. */
static double visited_pairs(const vkf_sparse_layout *l, uint32_t n, int causal) {
  uint32_t words = vkf_sparse_mask_words(l->block_k);
  double total = 0;
  for (uint32_t qb = 0; qb < l->q_blocks; qb++)
    for (int32_t e = l->rows[qb]; e < l->rows[qb + 1]; e++) {
      int32_t kb = l->cols[2 * e], m = l->cols[2 * e + 1];
      for (uint32_t r = 0; r < l->block_q; r++) {
        uint64_t i = (uint64_t)qb * l->block_q + r;
        if (i >= n) break;
        for (uint32_t c = 0; c < l->block_k; c++) {
          uint64_t j = (uint64_t)kb * l->block_k + c;
          if (j >= n || (causal && j > i)) break;
          total += m < 0 || ((uint32_t)l->masks[((uint64_t)m * l->block_q + r) * words + c / 32] >>
                                 (c % 32) &
                             1u);
        }
      }
    }
  return total;
}

/* Times the sparse (layout given) or the dense kernel on q, k, v (host data). */
static vkf_status time_kernel(vkf_device *device, const sparse_bench *a, uint32_t n,
                              const vkf_sparse_layout *l, void *const host[3], timing *out) {
  vkf_dtype dt = a->f16 ? VKF_F16 : VKF_F32;
  vkf_graph *g = NULL;
  vkf_lowered low = {0};
  vkf_session *ses = NULL;
  VKF_RETURN_IF_ERROR(vkf_graph_create(l ? "sparse_attention" : "attention", &g));
  int64_t shape[4] = {a->b, a->h, n, a->d};
  vkf_value q = vkf_graph_input(g, "q", dt, 4, shape), k = vkf_graph_input(g, "k", dt, 4, shape),
            v = vkf_graph_input(g, "v", dt, 4, shape), y, tables[3] = {{0}, {0}, {0}};
  const void *table_data[3] = {NULL, NULL, NULL};
  if (l) {
    vkf_sparse_attention_options o = {
        .block_q = l->block_q, .block_k = l->block_k, .causal = a->causal};
    tables[0] = vkf_graph_constant(g, "rows", VKF_I32, 2, (int64_t[]){1, l->q_blocks + 1}, l->rows);
    tables[1] = vkf_graph_constant(g, "cols", VKF_I32, 3, (int64_t[]){1, l->entries, 2}, l->cols);
    if (l->mask_count)
      tables[2] = o.masks = vkf_graph_constant(
          g, "masks", VKF_I32, 3,
          (int64_t[]){l->mask_count, l->block_q, vkf_sparse_mask_words(l->block_k)}, l->masks);
    table_data[0] = l->rows, table_data[1] = l->cols, table_data[2] = l->masks;
    y = vkf_sparse_attention(g, "sparse", q, k, v, tables[0], tables[1], &o);
  } else {
    vkf_attention_options o = {.causal = a->causal};
    y = vkf_attention(g, "attention", q, k, v, &o);
  }
  vkf_graph_output(g, y, "y");
  vkf_status st = vkf_graph_status(g);
  if (!st) st = vkf_memory_plan_build(g, NULL);
  if (!st) st = vkf_lower_graph(g, vkf_device_caps_get(device), NULL, &low);
  vkf_session_options opts = {.profile = 1};
  if (!st) st = vkf_session_create(device, low.plan, &opts, &ses);
  size_t bytes = (size_t)a->b * a->h * n * a->d * (a->f16 ? 2 : 4);
  vkf_value io[3] = {q, k, v};
  for (int i = 0; i < 3 && !st; i++)
    st = vkf_session_write(ses, low.tensors[io[i].id].buffer, low.tensors[io[i].id].offset, host[i],
                           bytes);
  for (int i = 0; i < 3 && !st; i++)
    if (tables[i].id)
      st =
          vkf_session_write(ses, low.tensors[tables[i].id].buffer, low.tensors[tables[i].id].offset,
                            table_data[i], vkf_tensor_size(vkf_graph_tensor(g, tables[i])));
  double sum = 0, sum2 = 0;
  for (int i = 0; i < a->warmup + a->runs && !st; i++) {
    st = vkf_session_run(ses);
    double ms = vkf_session_total_ns(ses) / 1e6;
    if (i >= a->warmup) sum += ms, sum2 += ms * ms;
  }
  if (!st) {
    double mean = sum / a->runs,
           var = a->runs > 1 ? (sum2 - a->runs * mean * mean) / (a->runs - 1) : 0;
    *out = (timing){1, mean, var > 0 ? sqrt(var) : 0, vkf_session_device_bytes(ses)};
  }
  vkf_session_destroy(ses);
  if (low.plan) vkf_lowered_free(&low);
  vkf_graph_destroy(g);
  return st;
}

static vkf_status bench_n(vkf_device *device, const sparse_bench *a, uint32_t n, row *r) {
  memset(r, 0, sizeof *r);
  r->n = n;
  vkf_sparse_pattern p = {.block_q = a->block,
                          .block_k = a->block,
                          .window_left = -1,
                          .window_right = -1,
                          .require_rows = 1};
  VKF_RETURN_IF_ERROR(vkf_sparse_pattern_parse(a->pattern, &p));
  vkf_sparse_layout l;
  VKF_RETURN_IF_ERROR(vkf_sparse_layout_from_pattern(&p, 1, n, n, &l));
  r->visited = visited_pairs(&l, n, a->causal);
  size_t count = (size_t)a->b * a->h * n * a->d, es = a->f16 ? 2 : 4;
  void *host[3] = {malloc(count * es), malloc(count * es), malloc(count * es)};
  vkf_status st = VKF_OK;
  if (!host[0] || !host[1] || !host[2])
    st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
  for (int i = 0; i < 3 && !st; i++) fill(host[i], count, a->f16, 0x9e3779b9u * (i + 1));
  if (!st) st = time_kernel(device, a, n, &l, host, &r->sparse);
  if (!st && n <= a->dense_max) st = time_kernel(device, a, n, NULL, host, &r->dense);
  for (int i = 0; i < 3; i++) free(host[i]);
  vkf_sparse_layout_free(&l);
  return st;
}

static double gflops(const sparse_bench *a, double pairs, double ms) {
  return ms > 0 ? 4.0 * pairs * a->d * a->h * a->b / (ms * 1e6) : 0;
}

static void print_rows(const sparse_bench *a, const vkf_device_caps *caps, const row *rows,
                       int count) {
  if (a->json) {
    printf(
        "{\"device\": \"%s\", \"pattern\": \"%s\", \"block\": %u, \"dtype\": \"%s\", "
        "\"causal\": %d, \"results\": [",
        caps->name, a->pattern, a->block, a->f16 ? "f16" : "f32", a->causal);
    for (int i = 0; i < count; i++) {
      const row *r = &rows[i];
      double dense_pairs = a->causal ? (double)r->n * (r->n + 1) / 2 : (double)r->n * r->n;
      printf(
          "%s\n  {\"n\": %u, \"visited_fraction\": %.6f, \"sparse_ms\": %.6f, "
          "\"sparse_sd_ms\": %.6f, \"sparse_gflops\": %.3f, \"sparse_us_per_token\": %.4f, "
          "\"sparse_device_bytes\": %llu",
          i ? "," : "", r->n, r->visited / dense_pairs, r->sparse.mean_ms, r->sparse.sd_ms,
          gflops(a, r->visited, r->sparse.mean_ms), 1e3 * r->sparse.mean_ms / r->n,
          (unsigned long long)r->sparse.device_bytes);
      if (r->dense.ok)
        printf(
            ", \"dense_ms\": %.6f, \"dense_sd_ms\": %.6f, \"dense_gflops\": %.3f, "
            "\"dense_device_bytes\": %llu, \"speedup\": %.3f",
            r->dense.mean_ms, r->dense.sd_ms, gflops(a, dense_pairs, r->dense.mean_ms),
            (unsigned long long)r->dense.device_bytes, r->dense.mean_ms / r->sparse.mean_ms);
      printf("}");
    }
    printf("\n]}\n");
    return;
  }
  printf(
      "Block-sparse attention on %s (%s), pattern %s, blocks of %u, B=%u H=%u D=%u, %s%s, "
      "%d warm-up + %d timed runs, GPU timestamps; GFLOP/s on visited keys\n\n",
      caps->name, vkf_device_kind_name(caps->kind), a->pattern, a->block, a->b, a->h, a->d,
      a->f16 ? "fp16 storage" : "fp32", a->causal ? ", causal" : "", a->warmup, a->runs);
  printf(
      "| N | visited | sparse ms ± sd | sparse GFLOP/s | µs per token | sparse peak MiB | "
      "dense ms ± sd | dense GFLOP/s | dense peak MiB | speed-up |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (int i = 0; i < count; i++) {
    const row *r = &rows[i];
    double dense_pairs = a->causal ? (double)r->n * (r->n + 1) / 2 : (double)r->n * r->n;
    printf("| %u | %.2f%% | %.2f ± %.2f | %.2f | %.3f | %.1f |", r->n,
           100.0 * r->visited / dense_pairs, r->sparse.mean_ms, r->sparse.sd_ms,
           gflops(a, r->visited, r->sparse.mean_ms), 1e3 * r->sparse.mean_ms / r->n,
           (double)r->sparse.device_bytes / 1048576.0);
    if (r->dense.ok)
      printf(" %.2f ± %.2f | %.2f | %.1f | %.2f× |\n", r->dense.mean_ms, r->dense.sd_ms,
             gflops(a, dense_pairs, r->dense.mean_ms), (double)r->dense.device_bytes / 1048576.0,
             r->dense.mean_ms / r->sparse.mean_ms);
    else
      printf(" - | - | - | - (dense not run past N = %u) |\n", a->dense_max);
  }
}

static void usage_text(FILE *f);
static int usage(FILE *f, int rc) {
  usage_text(f);
  return rc;
}

static void usage_text(FILE *f) {
  fprintf(f,
          "usage: vkf bench attention --pattern window:W[,global:G][,random:R][,...] [--block N]\n"
          "                           [--n N]... [--heads H] [--head-dim D] [--batch B]\n"
          "                           [--dense-max N] [--runs N] [--warmup N] [--fp16] [--causal]\n"
          "                           [--json] [--device N|NAME]\n"
          "Times the block-sparse attention kernel on the pattern's layout (blocks of 64 by\n"
          "default) beside the dense fused kernel (for N <= --dense-max, default 16384).\n"
          "Default: N = 4096, 16384, 65536; B=1, H=12, D=64.\n");
}

static int parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out) {
  char *end;
  unsigned long v = strtoul(s, &end, 10);
  if (!*s || *end || v < lo || v > hi) return 0;
  *out = (uint32_t)v;
  return 1;
}

int vkf_cli_bench_attention_sparse(int argc, char **argv) {
  sparse_bench a = {
      .block = 64, .b = 1, .h = 12, .d = 64, .runs = 3, .warmup = 1, .dense_max = 16384};
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    uint32_t u;
    int ok = 1, at = i; /* the branches below step i past a value before it is checked */
    if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) return usage(stdout, 0);
    if (!strcmp(arg, "--json"))
      a.json = 1;
    else if (!strcmp(arg, "--fp16"))
      a.f16 = 1;
    else if (!strcmp(arg, "--causal"))
      a.causal = 1;
    else if (!val)
      ok = 0;
    else if (!strcmp(arg, "--pattern"))
      a.pattern = val, i++;
    else if (!strcmp(arg, "--device"))
      a.device = val, i++;
    else if (!strcmp(arg, "--block"))
      ok = parse_u32(val, 1, 4096, &a.block), i++;
    else if (!strcmp(arg, "--heads"))
      ok = parse_u32(val, 1, 256, &a.h), i++;
    else if (!strcmp(arg, "--head-dim"))
      ok = parse_u32(val, 1, 256, &a.d), i++;
    else if (!strcmp(arg, "--batch"))
      ok = parse_u32(val, 1, 64, &a.b), i++;
    else if (!strcmp(arg, "--dense-max"))
      ok = parse_u32(val, 0, 1u << 30, &a.dense_max), i++;
    else if (!strcmp(arg, "--runs"))
      ok = parse_u32(val, 1, 1000, &u), a.runs = (int)u, i++;
    else if (!strcmp(arg, "--warmup"))
      ok = parse_u32(val, 0, 1000, &u), a.warmup = (int)u, i++;
    else if (!strcmp(arg, "--n") && a.n_count < MAX_NS)
      ok = parse_u32(val, 1, 1u << 20, &a.ns[a.n_count++]), i++;
    else
      ok = 0;
    if (!ok) return vkf_cli_bad_arg("vkf bench attention", usage_text, argc, argv, at);
  }
  if (!a.pattern) return usage(stderr, 2);
  if (!a.n_count) {
    static const uint32_t def[] = {4096, 16384, 65536};
    memcpy(a.ns, def, sizeof def);
    a.n_count = 3;
  }
  vkf_cli_device dev;
  vkf_status st = vkf_cli_device_open(a.device, &dev);
  if (st) return vkf_cli_fail(st);
  row rows[MAX_NS];
  int done = 0;
  for (; done < a.n_count && !st; done++) {
    st = bench_n(dev.device, &a, a.ns[done], &rows[done]);
    if (st) st = vkf_status_annotate(st, "N = %u", a.ns[done]);
  }
  int rc = st ? vkf_cli_fail(st) : 0;
  if (!st) print_rows(&a, vkf_device_caps_get(dev.device), rows, done);
  if (vkf_cli_device_close(&dev) && !rc) rc = 1;
  return rc;
}
