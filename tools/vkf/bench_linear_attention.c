/* vkf bench attention --kind linear|performer|rfa: per sequence length N, the whole kernelised
 * attention (feature maps of q and k, then LINEAR_ATTENTION; rfa: random Fourier features and the
 * gated causal scan) beside the dense fused attention on the same q, k, v: GPU time mean ± sd
 * (session timestamps) and the session's device memory. Dense runs up to --dense-max. Then a
 * decode: --decode-tokens tokens one by one through one recorded plan whose state [B, H, F, Dv+1]
 * stays on the device (LINEAR_STATE_WRITE), the GPU time of the first and the last 256 tokens and
 * the state's size, which does not depend on the length. */
#include "tools/vkf/bench_linear_attention.h"
#include "tools/vkf/cli_args.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/ir/builder.h"
#include "graph/ir/random_features.h"
#include "graph/lower/lower.h"
#include "graph/passes/memory_plan.h"
#include "host/session.h"
#include "tools/vkf/bench_util.h"
#include "tools/vkf/cli.h"
#include "tools/vkf/device_open.h"

enum { MAX_LENS = 8, WINDOW = 256 };

typedef enum kind { KIND_LINEAR, KIND_PERFORMER, KIND_RFA } kind;
static const char *const KIND_NAMES[] = {"linear", "performer", "rfa"};

typedef struct args {
  kind k;
  int64_t lens[MAX_LENS];
  int len_count;
  int64_t heads, dim, features, dense_max, decode_tokens;
  int runs, warmup, causal;
  const char *device;
} args;

int vkf_bench_linear_kind(const char *k) {
  for (int i = 0; i < 3; i++)
    if (!strcmp(k, KIND_NAMES[i])) return 1;
  return 0;
}

typedef struct io {
  vkf_graph *g;
  vkf_value q, k, v, gate, state, y;
  float *omega; /* constant data, outlives the graph's use */
} io;

/* q, k [1, H, n, D], v [1, H, n, D] -> y: features then linear attention, or dense attention.
 * decode: n = 1 with a state input written in place. */
static vkf_status build(const args *a, int64_t n, int dense, int decode, io *o) {
  memset(o, 0, sizeof *o);
  VKF_RETURN_IF_ERROR(vkf_graph_create("bench", &o->g));
  vkf_graph *g = o->g;
  int64_t s[4] = {1, a->heads, n, a->dim};
  o->q = vkf_graph_input(g, "q", VKF_F32, 4, s);
  o->k = vkf_graph_input(g, "k", VKF_F32, 4, s);
  o->v = vkf_graph_input(g, "v", VKF_F32, 4, s);
  int causal = a->causal || a->k == KIND_RFA || decode;
  if (dense) {
    vkf_attention_options ao = {.causal = causal};
    o->y = vkf_attention(g, "attention", o->q, o->k, o->v, &ao);
  } else {
    vkf_value w = VKF_NO_VALUE, pq, pk;
    vkf_feature_map fm = VKF_FEATURE_ELU1;
    int64_t f = a->dim;
    if (a->k != KIND_LINEAR) { /* one fixed seed: the inference-time redraw rule */
      o->omega = malloc((size_t)(a->features * a->dim) * sizeof(float));
      if (!o->omega) return vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
      VKF_RETURN_IF_ERROR(vkf_random_features(1, (uint32_t)a->features, (uint32_t)a->dim,
                                              a->k == KIND_PERFORMER, o->omega));
      w = vkf_graph_constant(g, "omega", VKF_F32, 2, (const int64_t[]){a->features, a->dim},
                             o->omega);
      fm = a->k == KIND_PERFORMER ? VKF_FEATURE_FAVOR : VKF_FEATURE_RFF;
      f = a->k == KIND_PERFORMER ? a->features : 2 * a->features;
    }
    pq = vkf_linear_features(g, "phi_q", o->q, w, fm, 0);
    pk = vkf_linear_features(g, "phi_k", o->k, w, fm, 0);
    vkf_linear_attention_options lo = {.causal = causal};
    if (a->k == KIND_RFA)
      o->gate = vkf_graph_input(g, "gate", VKF_F32, 3, (const int64_t[]){1, a->heads, n});
    lo.gate = o->gate;
    if (decode) {
      o->state =
          vkf_graph_input(g, "state", VKF_F32, 4, (const int64_t[]){1, a->heads, f, a->dim + 1});
      lo.state = o->state;
    }
    o->y = vkf_linear_attention(g, "linear_attention", pq, pk, o->v, &lo);
    if (decode) vkf_linear_state_write(g, "state_write", o->state, pk, o->v, o->gate);
  }
  o->y = vkf_graph_output(g, o->y, "y");
  VKF_RETURN_IF_ERROR(vkf_graph_status(g));
  return vkf_memory_plan_build(g, NULL);
}

static void io_free(io *o) {
  vkf_graph_destroy(o->g);
  free(o->omega);
}

static void fill(float *x, size_t n, uint32_t seed) {
  uint32_t s = seed;
  for (size_t i = 0; i < n; i++) {
    s ^= s << 13, s ^= s >> 17, s ^= s << 5;
    x[i] = (float)(s >> 8) / 8388608.0f - 1.0f;
  }
}

typedef struct session_of {
  vkf_lowered low;
  vkf_session *s;
} session_of;

static vkf_status open_session(vkf_device *dev, const io *o, session_of *so) {
  memset(so, 0, sizeof *so);
  VKF_RETURN_IF_ERROR(vkf_lower_graph(o->g, vkf_device_caps_get(dev), NULL, &so->low));
  vkf_session_options opts = {.profile = 1};
  VKF_RETURN_IF_ERROR(vkf_session_create(dev, so->low.plan, &opts, &so->s));
  /* Weights (omega) are uploaded once. */
  for (uint32_t id = 1; id < so->low.tensor_bound; id++) {
    const vkf_tensor *t = vkf_graph_tensor(o->g, (vkf_value){id});
    if (t->role == VKF_ROLE_CONSTANT && t->data && !t->removed && t->base.id == id)
      VKF_RETURN_IF_ERROR(
          vkf_session_write(so->s, so->low.tensors[id].buffer, 0, t->data, vkf_tensor_size(t)));
  }
  return VKF_OK;
}

static void close_session(session_of *so) {
  vkf_session_destroy(so->s);
  if (so->low.plan) vkf_lowered_free(&so->low);
}

static vkf_status write_in(session_of *so, vkf_value v, const float *data, size_t count) {
  if (!v.id) return VKF_OK;
  return vkf_session_write(so->s, so->low.tensors[v.id].buffer, 0, data, count * sizeof(float));
}

typedef struct timing {
  int ok;
  vkf_bench_stats t;
  uint64_t bytes;
  char note[200];
} timing;

static vkf_status time_one(vkf_device *dev, const args *a, int64_t n, int dense, const float *host,
                           timing *out) {
  io o;
  session_of so = {0};
  vkf_status st = build(a, n, dense, 0, &o);
  size_t count = (size_t)(a->heads * n * a->dim);
  if (!st) st = open_session(dev, &o, &so);
  if (!st) st = write_in(&so, o.q, host, count);
  if (!st) st = write_in(&so, o.k, host + count, count);
  if (!st) st = write_in(&so, o.v, host + 2 * count, count);
  if (!st) st = write_in(&so, o.gate, host + 3 * count, (size_t)(a->heads * n));
  if (!st) st = vkf_bench_session_time(so.s, a->warmup, a->runs, &out->t);
  if (!st) out->ok = 1, out->bytes = vkf_session_device_bytes(so.s);
  close_session(&so);
  io_free(&o);
  return st;
}

/* Decode: one plan, T tokens one by one, the state on the device. */
static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

static double median(double *x, int n) {
  qsort(x, (size_t)n, sizeof *x, cmp_double);
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* Per-token GPU ms of the first and the last WINDOW tokens: sums, medians and minima. On an idle
 * machine they agree; on a shared one (lavapipe runs on the CPU) other processes' load drifts
 * between the two windows, and the minimum, the token that ran undisturbed, is the steadiest
 * measure of what a token costs. */
typedef struct decode_times {
  double first_ms, last_ms, first_median, last_median, first_min, last_min;
  uint64_t state_bytes, session_bytes;
} decode_times;

static vkf_status decode(vkf_device *dev, const args *a, decode_times *dt) {
  io o;
  session_of so = {0};
  vkf_status st = build(a, 1, 0, 1, &o);
  if (!st) st = open_session(dev, &o, &so);
  const vkf_tensor *ts = st ? NULL : vkf_graph_tensor(o.g, o.state);
  size_t sb = ts ? vkf_tensor_size(ts) : 0;
  float *zero = st ? NULL : calloc(1, sb);
  if (!st && !zero) st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
  if (!st) st = write_in(&so, o.state, zero, sb / sizeof(float));
  size_t count = (size_t)(a->heads * a->dim);
  float *tok = malloc((3 * count + (size_t)a->heads) * sizeof(float));
  double first[WINDOW], last[WINDOW];
  memset(dt, 0, sizeof *dt);
  for (int64_t t = 0; t < a->decode_tokens && !st; t++) {
    fill(tok, 3 * count + (size_t)a->heads, (uint32_t)(2654435761u * (uint32_t)(t + 1)) | 1u);
    st = write_in(&so, o.q, tok, count);
    if (!st) st = write_in(&so, o.k, tok + count, count);
    if (!st) st = write_in(&so, o.v, tok + 2 * count, count);
    if (!st) st = write_in(&so, o.gate, tok + 3 * count, (size_t)a->heads);
    if (!st) st = vkf_session_run(so.s);
    double ms = st ? 0 : vkf_session_total_ns(so.s) / 1e6;
    if (t < WINDOW) dt->first_ms += ms, first[t] = ms;
    if (t >= a->decode_tokens - WINDOW)
      dt->last_ms += ms, last[t - (a->decode_tokens - WINDOW)] = ms;
  }
  if (!st) {
    dt->first_median = median(first, WINDOW); /* sorts: [0] is the minimum */
    dt->last_median = median(last, WINDOW);
    dt->first_min = first[0];
    dt->last_min = last[0];
  }
  dt->state_bytes = sb;
  dt->session_bytes = st ? 0 : vkf_session_device_bytes(so.s);
  free(tok);
  free(zero);
  close_session(&so);
  io_free(&o);
  return st;
}

static int parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out) {
  char *end;
  long long v = strtoll(s, &end, 10);
  if (end == s || *end || v < lo || v > hi) return 0;
  *out = v;
  return 1;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: vkf bench attention --kind linear|performer|rfa [--n N[,N...]] [--heads H]\n"
          "         [--dim D] [--features M] [--causal] [--dense-max N] [--decode-tokens T]\n"
          "         [--runs R] [--warmup W] [--device N|NAME]\n"
          "Defaults: N = 4096,16384,65536, H = 4, D = 64, M = 64 (performer: F = M, rfa: F = 2M;\n"
          "rfa is always causal and gated), dense up to N = 16384, decode 4096 tokens.\n");
}

int vkf_bench_linear_attention(int argc, char **argv) {
  args a = {.heads = 4,
            .dim = 64,
            .features = 64,
            .dense_max = 16384,
            .decode_tokens = 4096,
            .runs = 3,
            .warmup = 1};
  const char *kind_name = NULL;
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    int64_t v = 0;
    int okv = 1;
    if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(arg, "--causal")) {
      a.causal = 1;
      continue;
    } else if (!val) {
      okv = 0;
    } else if (!strcmp(arg, "--kind")) {
      kind_name = val;
    } else if (!strcmp(arg, "--n")) {
      a.len_count = 0;
      for (const char *p = val; okv && *p;) {
        char buf[32];
        size_t len = strcspn(p, ",");
        okv = len < sizeof buf && a.len_count < MAX_LENS;
        if (okv) {
          memcpy(buf, p, len), buf[len] = 0;
          okv = parse_i64(buf, 1, 1 << 22, &a.lens[a.len_count++]);
        }
        p += len + (p[len] == ',');
      }
    } else if (!strcmp(arg, "--heads")) {
      okv = parse_i64(val, 1, 64, &a.heads);
    } else if (!strcmp(arg, "--dim")) {
      okv = parse_i64(val, 1, 512, &a.dim);
    } else if (!strcmp(arg, "--features")) {
      okv = parse_i64(val, 1, 4096, &a.features);
    } else if (!strcmp(arg, "--dense-max")) {
      okv = parse_i64(val, 0, 1 << 22, &a.dense_max);
    } else if (!strcmp(arg, "--decode-tokens")) {
      okv = parse_i64(val, 0, 1 << 20, &a.decode_tokens);
    } else if (!strcmp(arg, "--runs")) {
      okv = parse_i64(val, 1, 1000, &v), a.runs = (int)v;
    } else if (!strcmp(arg, "--warmup")) {
      okv = parse_i64(val, 0, 1000, &v), a.warmup = (int)v;
    } else if (!strcmp(arg, "--device")) {
      a.device = val;
    } else {
      okv = 0;
    }
    if (!okv) {
      return vkf_cli_bad_arg("vkf bench attention", usage, argc, argv, i);
    }
    i++;
  }
  if (!kind_name || !vkf_bench_linear_kind(kind_name)) {
    fprintf(stderr, "vkf: bench attention: --kind must be linear, performer or rfa\n");
    return 2;
  }
  a.k = !strcmp(kind_name, "linear")      ? KIND_LINEAR
        : !strcmp(kind_name, "performer") ? KIND_PERFORMER
                                          : KIND_RFA;
  if (!a.len_count) a.lens[0] = 4096, a.lens[1] = 16384, a.lens[2] = 65536, a.len_count = 3;
  vkf_cli_device dev;
  vkf_status st = vkf_cli_device_open(a.device, &dev);
  if (st) return vkf_cli_fail(st);
  const vkf_device_caps *caps = vkf_device_caps_get(dev.device);
  int64_t f = a.k == KIND_LINEAR ? a.dim : a.k == KIND_PERFORMER ? a.features : 2 * a.features;
  printf(
      "%s attention on %s (%s%s%s), B 1, H %lld, D %lld, F %lld, %s, %d warm-up + %d timed "
      "runs, GPU timestamps\n\n",
      KIND_NAMES[a.k], caps->name, vkf_device_kind_name(caps->kind),
      caps->profile[0] ? ", profile " : "", caps->profile, (long long)a.heads, (long long)a.dim,
      (long long)f, a.causal || a.k == KIND_RFA ? "causal" : "non-causal", a.warmup, a.runs);
  printf("| N | %s ms ± sd | %s MiB | dense fused ms ± sd | dense MiB | dense / %s |\n",
         KIND_NAMES[a.k], KIND_NAMES[a.k], KIND_NAMES[a.k]);
  printf("|---|---|---|---|---|---|\n");
  for (int i = 0; i < a.len_count && !st; i++) {
    int64_t n = a.lens[i];
    size_t count = (size_t)(a.heads * n * a.dim);
    float *host = malloc((3 * count + (size_t)(a.heads * n)) * sizeof(float));
    if (!host) {
      st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
      break;
    }
    fill(host, 3 * count + (size_t)(a.heads * n), 0x9e3779b9u);
    timing lin = {0}, dense = {0};
    st = time_one(dev.device, &a, n, 0, host, &lin);
    if (!st && n <= a.dense_max) {
      vkf_status sd = time_one(dev.device, &a, n, 1, host, &dense);
      if (sd) snprintf(dense.note, sizeof dense.note, "%s", vkf_status_message(sd));
      vkf_status_free(sd);
    } else if (!st) {
      snprintf(dense.note, sizeof dense.note, "not run (N > --dense-max %lld)",
               (long long)a.dense_max);
    }
    free(host);
    if (st) break;
    printf("| %lld | %.2f ± %.2f | %.1f |", (long long)n, lin.t.mean_ms, lin.t.sd_ms,
           (double)lin.bytes / 1048576.0);
    if (dense.ok)
      printf(" %.2f ± %.2f | %.1f | %.2f× |\n", dense.t.mean_ms, dense.t.sd_ms,
             (double)dense.bytes / 1048576.0, dense.t.mean_ms / lin.t.mean_ms);
    else
      printf(" %s | - | - |\n", dense.note);
    fflush(stdout);
  }
  if (!st && a.decode_tokens >= 2 * WINDOW) {
    decode_times dt;
    st = decode(dev.device, &a, &dt);
    if (!st)
      printf(
          "\ndecode %lld tokens one by one (state on the device), GPU ms of the first and the "
          "last %d tokens: sum %.3f and %.3f (last / first %.3f), median per token %.4f and "
          "%.4f (%.3f), minimum %.4f and %.4f (%.3f); state %llu bytes at any length (a KV "
          "cache of %lld tokens: %llu bytes); session device memory %.2f MiB\n",
          (long long)a.decode_tokens, WINDOW, dt.first_ms, dt.last_ms,
          dt.first_ms > 0 ? dt.last_ms / dt.first_ms : 0, dt.first_median, dt.last_median,
          dt.first_median > 0 ? dt.last_median / dt.first_median : 0, dt.first_min, dt.last_min,
          dt.first_min > 0 ? dt.last_min / dt.first_min : 0, (unsigned long long)dt.state_bytes,
          (long long)a.decode_tokens,
          (unsigned long long)(2 * a.heads * a.decode_tokens * a.dim * 4),
          (double)dt.session_bytes / 1048576.0);
  }
  int rc = st ? vkf_cli_fail(st) : 0;
  if (vkf_cli_device_close(&dev) && !rc) rc = 1;
  return rc;
}
