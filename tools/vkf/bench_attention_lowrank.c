/* vkf bench attention --kind nystrom|linformer: the low-rank attentions of
 * models/arch/lowrank_attention.h beside the dense fused attention kernel at long sequences:
 * GPU ms (mean ± sd) and the session's device memory per N. Dense runs only up to --dense-max
 * tokens (its time grows as N²). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ir/builder.h"
#include "graph/lower/lower.h"
#include "graph/passes/memory_plan.h"
#include "host/session.h"
#include "models/arch/lowrank_attention.h"
#include "models/formats/weight_cache.h"
#include "tools/vkf/bench_util.h"
#include "tools/vkf/cli_args.h"
#include "tools/vkf/cli.h"
#include "tools/vkf/device_open.h"

enum { LR_MAX_N = 8, LR_MAX_IN = 5 };

typedef struct lr_args {
  const char *kind; /* "nystrom" or "linformer" */
  int64_t ns[LR_MAX_N];
  int n_count;
  int64_t batch, heads, dim, landmarks, proj, conv, dense_max;
  int runs, warmup;
  const char *device;
} lr_args;

typedef struct lr_result {
  int ok;
  vkf_bench_stats t;
  uint64_t bytes;
  char note[160];
} lr_result;

/* dense: 1 for the fused softmax attention, else the kind's graph. */
static vkf_status build(const lr_args *a, int64_t n, int dense, vkf_weight_cache **cache,
                        vkf_graph **out, vkf_value *in, int *in_count) {
  vkf_graph *g = NULL;
  VKF_RETURN_IF_ERROR(vkf_graph_create("bench_lowrank", &g));
  int64_t s[4] = {a->batch, a->heads, n, a->dim};
  int c = 0;
  vkf_value q = in[c++] = vkf_graph_input(g, "q", VKF_F32, 4, s);
  vkf_value k = in[c++] = vkf_graph_input(g, "k", VKF_F32, 4, s);
  vkf_value v = in[c++] = vkf_graph_input(g, "v", VKF_F32, 4, s);
  vkf_value y;
  if (dense) {
    y = vkf_attention(g, "dense", q, k, v, NULL);
  } else if (!strcmp(a->kind, "linformer")) {
    int64_t se[2] = {a->proj, n};
    vkf_value e = in[c++] = vkf_graph_input(g, "e", VKF_F32, 2, se);
    vkf_value f = in[c++] = vkf_graph_input(g, "f", VKF_F32, 2, se);
    y = vkf_linformer_attention(g, "linformer", q, k, v, e, f, 0);
  } else {
    vkf_arch_weights w = {.cache = cache, .prefix = "", .dtype = VKF_F32};
    vkf_nystrom_options o = {.landmarks = a->landmarks, .segment_len = n};
    if (a->conv) {
      int64_t sw[2] = {a->heads, a->conv};
      o.conv_weight = in[c++] = vkf_graph_input(g, "conv", VKF_F32, 2, sw);
    }
    y = vkf_nystrom_attention(g, &w, "nystrom", q, k, v, &o);
  }
  vkf_graph_output(g, y, "out");
  *in_count = c;
  vkf_status st = vkf_graph_status(g);
  if (!st) st = vkf_memory_plan_build(g, NULL);
  if (st) {
    vkf_graph_destroy(g);
    return st;
  }
  *out = g;
  return VKF_OK;
}

static vkf_status run_one(vkf_device *device, const lr_args *a, int64_t n, int dense,
                          lr_result *r) {
  vkf_weight_cache *cache = NULL;
  vkf_graph *g = NULL;
  vkf_value in[LR_MAX_IN];
  int in_count = 0;
  vkf_lowered low = {0};
  vkf_session *ses = NULL;
  vkf_status st = build(a, n, dense, &cache, &g, in, &in_count);
  if (!st) st = vkf_lower_graph(g, vkf_device_caps_get(device), NULL, &low);
  vkf_session_options opts = {.profile = 1};
  if (!st) st = vkf_session_create(device, low.plan, &opts, &ses);
  uint32_t seed = 0x9e3779b9u;
  for (int i = 0; i < in_count && !st; i++) {
    const vkf_tensor *t = vkf_graph_tensor(g, in[i]);
    size_t count = (size_t)vkf_tensor_element_count(t);
    float *x = malloc(count * sizeof *x + 4);
    if (!x) {
      st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
      break;
    }
    /* Values in [-1, 1); projections scaled as the paper's N(0, 1/k) would be. */
    float scale = i >= 3 ? 1.0f / sqrtf((float)t->shape[0]) : 1.0f;
    for (size_t j = 0; j < count; j++) {
      seed ^= seed << 13, seed ^= seed >> 17, seed ^= seed << 5;
      x[j] = scale * ((float)(seed >> 8) / 8388608.0f - 1.0f);
    }
    st = vkf_session_write(ses, low.tensors[in[i].id].buffer, 0, x, count * sizeof *x);
    free(x);
  }
  if (!st) st = vkf_bench_session_time(ses, a->warmup, a->runs, &r->t);
  if (!st) {
    r->ok = 1;
    r->bytes = vkf_session_device_bytes(ses);
  }
  vkf_session_destroy(ses);
  if (low.plan) vkf_lowered_free(&low);
  vkf_graph_destroy(g);
  vkf_weight_cache_free(&cache);
  return st;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: vkf bench attention --kind nystrom|linformer [--n N]... [--batch B] [--heads H]\n"
          "                           [--dim D] [--landmarks M] [--conv K] [--proj K]\n"
          "                           [--dense-max N] [--runs N] [--warmup N] [--device N|NAME]\n"
          "Times Nystrom attention (M landmarks, default 64, conv skip K default 65, 0: none) or\n"
          "Linformer (projection to K default 256 positions) beside the dense fused attention\n"
          "for q, k, v [B, H, N, D] (default 1, 4, N, 64) at N = 4096, 16384, 65536; dense\n"
          "only up to --dense-max (default 16384). Prints GPU ms and device memory.\n");
}

static void print_cell(const lr_result *r) {
  if (r->ok)
    printf(" %.1f ± %.1f | %.1f |", r->t.mean_ms, r->t.sd_ms, (double)r->bytes / (1 << 20));
  else
    printf(" %s | |", r->note[0] ? r->note : "—");
}

int vkf_cli_bench_attention_lowrank(int argc, char **argv) {
  lr_args a = {.batch = 1,
               .heads = 4,
               .dim = 64,
               .landmarks = 64,
               .proj = 256,
               .conv = 65,
               .dense_max = 16384,
               .runs = 3,
               .warmup = 1};
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    int64_t *num = !strcmp(arg, "--batch")       ? &a.batch
                   : !strcmp(arg, "--heads")     ? &a.heads
                   : !strcmp(arg, "--dim")       ? &a.dim
                   : !strcmp(arg, "--landmarks") ? &a.landmarks
                   : !strcmp(arg, "--proj")      ? &a.proj
                   : !strcmp(arg, "--conv")      ? &a.conv
                   : !strcmp(arg, "--dense-max") ? &a.dense_max
                                                 : NULL;
    if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(arg, "--kind") && val) {
      a.kind = val, i++;
    } else if (num && val) {
      char *end;
      *num = strtoll(val, &end, 10), i++;
      if (*end || *num < 0 || *num > (1 << 20)) {
        fprintf(stderr, "vkf bench attention: bad %s \"%s\"\n", arg, val);
        return 2;
      }
    } else if (!strcmp(arg, "--n") && val && a.n_count < LR_MAX_N) {
      a.ns[a.n_count++] = atoll(val), i++;
    } else if (!strcmp(arg, "--runs") && val) {
      a.runs = atoi(val), i++;
    } else if (!strcmp(arg, "--warmup") && val) {
      a.warmup = atoi(val), i++;
    } else if (!strcmp(arg, "--device") && val) {
      a.device = val, i++;
    } else {
      return vkf_cli_bad_arg("vkf bench attention", usage, argc, argv, i);
    }
  }
  if (!a.kind || (strcmp(a.kind, "nystrom") && strcmp(a.kind, "linformer"))) {
    fprintf(stderr, "vkf bench attention: --kind must be nystrom or linformer\n");
    return 2;
  }
  if (a.runs < 1 || a.warmup < 0 || !a.batch || !a.heads || !a.dim || !a.landmarks || !a.proj ||
      (a.conv && a.conv % 2 == 0)) {
    fprintf(stderr,
            "vkf bench attention: --runs, --batch, --heads, --dim, --landmarks, --proj "
            "must be >= 1, --warmup >= 0, --conv odd or 0\n");
    return 2;
  }
  if (!a.n_count) {
    static const int64_t def[3] = {4096, 16384, 65536};
    memcpy(a.ns, def, sizeof def);
    a.n_count = 3;
  }
  for (int i = 0; i < a.n_count; i++)
    if (a.ns[i] < 1 || a.ns[i] % a.landmarks != 0 || a.ns[i] > ((int64_t)1 << 24)) {
      fprintf(stderr, "vkf bench attention: --n %lld must be a positive multiple of --landmarks\n",
              (long long)a.ns[i]);
      return 2;
    }
  vkf_cli_device dev;
  vkf_status st = vkf_cli_device_open(a.device, &dev);
  if (st) return vkf_cli_fail(st);
  printf("%s vs dense fused attention, q/k/v [%lld, %lld, N, %lld] f32, %s\n\n", a.kind,
         (long long)a.batch, (long long)a.heads, (long long)a.dim,
         !strcmp(a.kind, "nystrom") ? "landmarks and conv as given" : "projection as given");
  printf("| N | %s ms | %s MiB | dense ms | dense MiB |\n|---|---|---|---|---|\n", a.kind, a.kind);
  for (int i = 0; i < a.n_count && !st; i++) {
    lr_result lr = {0}, dr = {0};
    st = run_one(dev.device, &a, a.ns[i], 0, &lr);
    if (!st && a.ns[i] <= a.dense_max) {
      vkf_status sd = run_one(dev.device, &a, a.ns[i], 1, &dr);
      if (sd) snprintf(dr.note, sizeof dr.note, "%s", vkf_status_message(sd));
      vkf_status_free(sd);
    } else if (!st) {
      snprintf(dr.note, sizeof dr.note, "skipped (N > --dense-max)");
    }
    if (st) break;
    printf("| %lld |", (long long)a.ns[i]);
    print_cell(&lr);
    print_cell(&dr);
    printf("\n");
    fflush(stdout);
  }
  int rc = st ? vkf_cli_fail(st) : 0;
  if (vkf_cli_device_close(&dev) && !rc) rc = 1;
  return rc;
}
