/* vkf op: runs one op of the op table on the device (or, with --cpu, the reference interpreter)
 * from .npy files, so any kernel can be checked against numpy.
 *   vkf op matmul --in a.npy --in b.npy --out c.npy [--attr transpose_b=1] [--cpu]
 *   vkf op kv_write --in cache.npy --in rows.npy --in start.npy --out cache_after.npy
 * Optional inputs are named: --in bias=b.npy. Attributes: --attr key=value. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/interp/interp.h"
#include "graph/ir/builder.h"
#include "host/runner.h"
#include "models/formats/npy.h"
#include "tools/vkf/cli.h"
#include "tools/vkf/device_open.h"

enum { MAX_INPUTS = 8, MAX_ATTRS = 16 };

typedef struct op_args {
  const char *op;
  const char *in_slot[MAX_INPUTS], *in_path[MAX_INPUTS];
  int in_count;
  const char *attr_key[MAX_ATTRS], *attr_val[MAX_ATTRS];
  int attr_count;
  const char *out_path, *device;
  int cpu;
} op_args;

typedef struct op_inputs {
  vkf_npy_array arrays[MAX_INPUTS];
  vkf_value values[MAX_INPUTS];
  int count;
} op_inputs;

static const char *attr(const op_args *a, const char *key) {
  for (int i = 0; i < a->attr_count; i++)
    if (strcmp(a->attr_key[i], key) == 0) return a->attr_val[i];
  return NULL;
}

static float attr_f(const op_args *a, const char *key, float fallback) {
  const char *v = attr(a, key);
  return v ? strtof(v, NULL) : fallback;
}

static int attr_i(const op_args *a, const char *key, int fallback) {
  const char *v = attr(a, key);
  return v ? atoi(v) : fallback;
}

/* Parses "1,2,3" into up to `max` integers; returns the count. */
static int int_list(const char *s, int64_t *out, int max) {
  int n = 0;
  while (s && *s && n < max) {
    char *end;
    out[n++] = strtoll(s, &end, 10);
    s = *end == ',' ? end + 1 : NULL;
  }
  return n;
}

/* The positional (unnamed) input number `index`, or the named one. */
static vkf_value input(const op_args *a, const op_inputs *in, int index, const char *name) {
  int positional = 0;
  for (int i = 0; i < a->in_count; i++) {
    if (a->in_slot[i] ? (name && strcmp(a->in_slot[i], name) == 0) : positional++ == index)
      return in->values[i];
  }
  return VKF_NO_VALUE;
}

static vkf_activation activation(const char *name) {
  if (!name || !strcmp(name, "none")) return VKF_ACT_NONE;
  if (!strcmp(name, "gelu")) return VKF_ACT_GELU_ERF;
  if (!strcmp(name, "gelu_tanh")) return VKF_ACT_GELU_TANH;
  if (!strcmp(name, "relu")) return VKF_ACT_RELU;
  if (!strcmp(name, "silu")) return VKF_ACT_SILU;
  return VKF_ACT_COUNT;
}

/* Emits the op's node; returns its value (VKF_NO_VALUE + sticky graph error on failure). */
static vkf_value build(vkf_graph *g, const op_args *a, const op_inputs *in, vkf_status *out_err) {
  const char *op = a->op;
  vkf_value x = input(a, in, 0, NULL), y = input(a, in, 1, NULL);
  *out_err = VKF_OK;
  if (!strcmp(op, "matmul")) {
    vkf_matmul_options o = {.transpose_b = attr_i(a, "transpose_b", 0),
                            .bias = input(a, in, 2, "bias"),
                            .activation = activation(attr(a, "activation")),
                            .residual = input(a, in, 3, "residual")};
    if (o.activation == VKF_ACT_COUNT) {
      *out_err = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                                 "unknown activation \"%s\" (none, gelu, gelu_tanh, relu, silu)",
                                 attr(a, "activation"));
      return VKF_NO_VALUE;
    }
    return vkf_matmul(g, "op", x, y, &o);
  }
  if (!strcmp(op, "add")) return vkf_add(g, "op", x, y);
  if (!strcmp(op, "sub")) return vkf_sub(g, "op", x, y);
  if (!strcmp(op, "mul")) return vkf_mul(g, "op", x, y);
  if (!strcmp(op, "div")) return vkf_div(g, "op", x, y);
  if (!strcmp(op, "scale")) return vkf_scale(g, "op", x, attr_f(a, "value", 1.0f));
  if (!strcmp(op, "gelu")) return vkf_gelu(g, "op", x);
  if (!strcmp(op, "gelu_tanh")) return vkf_gelu_tanh(g, "op", x);
  if (!strcmp(op, "relu")) return vkf_relu(g, "op", x);
  if (!strcmp(op, "silu")) return vkf_silu(g, "op", x);
  if (!strcmp(op, "exp")) return vkf_exp(g, "op", x);
  if (!strcmp(op, "tanh")) return vkf_tanh(g, "op", x);
  if (!strcmp(op, "layernorm") || !strcmp(op, "rmsnorm")) {
    vkf_norm_options o = {.eps = attr_f(a, "eps", 0.0f),
                          .gamma = input(a, in, 1, "gamma"),
                          .beta = input(a, in, 2, "beta")};
    return op[0] == 'l' ? vkf_layernorm(g, "op", x, &o) : vkf_rmsnorm(g, "op", x, &o);
  }
  if (!strcmp(op, "l2_normalize")) return vkf_l2_normalize(g, "op", x, attr_f(a, "eps", 0.0f));
  if (!strcmp(op, "softmax")) {
    vkf_softmax_options o = {.scale = attr_f(a, "scale", 0.0f),
                             .valid_lens = input(a, in, 1, "valid_lens"),
                             .causal = attr_i(a, "causal", 0),
                             .bias = input(a, in, 2, "bias")};
    return vkf_softmax(g, "op", x, &o);
  }
  if (!strcmp(op, "attention")) {
    vkf_attention_options o = {.scale = attr_f(a, "scale", 0.0f),
                               .causal = attr_i(a, "causal", 0),
                               .bias = input(a, in, 3, "bias")};
    int64_t lens[64];
    const char *kv = attr(a, "kv_len");
    if (kv) {
      int n = int_list(kv, lens, 64);
      int32_t *data = vkf_arena_alloc(vkf_graph_arena(g), (size_t)n * sizeof(int32_t));
      for (int i = 0; i < n; i++) data[i] = (int32_t)lens[i];
      int64_t shape[1] = {n};
      o.kv_len = vkf_graph_constant(g, "kv_len", VKF_I32, 1, shape, data);
    }
    const char *w = attr(a, "window");
    if (w) {
      int64_t lr[2] = {-1, -1};
      if (int_list(w, lr, 2) != 2) {
        *out_err = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "window= needs LEFT,RIGHT");
        return VKF_NO_VALUE;
      }
      o.windowed = 1, o.window_left = (int32_t)lr[0], o.window_right = (int32_t)lr[1];
    }
    return vkf_attention(g, "op", x, y, input(a, in, 2, NULL), &o);
  }
  if (!strcmp(op, "permute")) {
    int64_t axes[VKF_MAX_DIMS];
    uint32_t ax[VKF_MAX_DIMS];
    int n = int_list(attr(a, "axes"), axes, VKF_MAX_DIMS);
    for (int i = 0; i < n; i++) ax[i] = (uint32_t)axes[i];
    if (n != (int)vkf_graph_tensor(g, x)->rank) {
      *out_err = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "axes= needs one entry per dim");
      return VKF_NO_VALUE;
    }
    return vkf_copy(g, "op", vkf_permute(g, "view", x, ax));
  }
  if (!strcmp(op, "slice"))
    return vkf_copy(g, "op", vkf_slice(g, "view", x, (uint32_t)attr_i(a, "axis", 0),
                                       attr_i(a, "start", 0), attr_i(a, "end", 0)));
  if (!strcmp(op, "copy")) return vkf_copy(g, "op", x);
  if (!strcmp(op, "cast")) {
    const char *d = attr(a, "dtype");
    vkf_dtype dt = d && !strcmp(d, "f16") ? VKF_F16 : d && !strcmp(d, "i32") ? VKF_I32 : VKF_F32;
    return vkf_cast(g, "op", x, dt);
  }
  if (!strcmp(op, "concat")) {
    vkf_value xs[MAX_INPUTS];
    for (int i = 0; i < in->count; i++) xs[i] = in->values[i];
    return vkf_concat(g, "op", xs, (uint32_t)in->count, (uint32_t)attr_i(a, "axis", 0));
  }
  if (!strcmp(op, "gather")) return vkf_gather(g, "op", x, y);
  if (!strcmp(op, "patch_embed")) return vkf_patch_embed(g, "op", x, y, input(a, in, 2, "bias"));
  if (!strcmp(op, "mean_pool")) return vkf_mean_pool(g, "op", x, input(a, in, 1, "mask"));
  if (!strcmp(op, "kv_write")) /* --in cache --in rows --in start: the cache after the write */
    return vkf_kv_write(g, "op", x, y, input(a, in, 2, "start"));
  *out_err = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "unknown op \"%s\" (matmul, add, sub, mul, div, scale, gelu, "
                             "gelu_tanh, relu, silu, exp, tanh, layernorm, rmsnorm, l2_normalize, "
                             "softmax, attention, permute, slice, copy, cast, concat, gather, "
                             "patch_embed, mean_pool, kv_write)", op);
  return VKF_NO_VALUE;
}

static vkf_dtype dtype_of(vkf_npy_dtype d) {
  return d == VKF_NPY_F16 ? VKF_F16 : d == VKF_NPY_I32 ? VKF_I32 : VKF_F32;
}

static vkf_status run(const op_args *a) {
  op_inputs in = {0};
  vkf_graph *g = NULL;
  vkf_status st = vkf_graph_create("vkf-op", &g);
  for (int i = 0; i < a->in_count && !st; i++) {
    st = vkf_npy_load(a->in_path[i], &in.arrays[i]);
    if (st) break;
    in.count++;
    if (in.arrays[i].dtype == VKF_NPY_I64) {
      st = vkf_status_make(VKF_STATUS_UNSUPPORTED,
                           "%s: int64 arrays are not op inputs (save it as int32)", a->in_path[i]);
      break;
    }
    char name[32];
    snprintf(name, sizeof name, "in%d", i);
    int64_t shape[VKF_MAX_DIMS];
    int rank = in.arrays[i].rank;
    for (int d = 0; d < rank; d++) shape[d] = in.arrays[i].shape[d];
    if (rank == 0) shape[0] = 1, rank = 1; /* scalars as [1] */
    in.values[i] = vkf_graph_input(g, name, dtype_of(in.arrays[i].dtype), (uint32_t)rank, shape);
  }
  vkf_value out = VKF_NO_VALUE;
  if (!st) out = build(g, a, &in, &st);
  if (!st) out = vkf_graph_output(g, out, "out");
  if (!st) st = vkf_graph_status(g);
  const vkf_tensor *ot = st ? NULL : vkf_graph_tensor(g, out);
  void *result = ot ? malloc(vkf_tensor_size(ot) + 4) : NULL;
  if (!st && !result) st = vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory");
  if (!st && a->cpu) {
    vkf_interp *it = NULL;
    st = vkf_interp_create(g, &it);
    for (int i = 0; i < in.count && !st; i++)
      st = vkf_interp_set(it, in.values[i], in.arrays[i].data, in.arrays[i].data_size);
    if (!st) st = vkf_interp_run(it);
    if (!st) st = vkf_interp_get(it, out, result, vkf_tensor_size(ot));
    vkf_interp_destroy(it);
  } else if (!st) {
    vkf_cli_device dev;
    st = vkf_cli_device_open(a->device, &dev);
    vkf_runner *r = NULL;
    if (!st) st = vkf_runner_create(dev.device, g, NULL, &r);
    for (int i = 0; i < in.count && !st; i++)
      st = vkf_runner_set(r, in.values[i], in.arrays[i].data, in.arrays[i].data_size);
    if (!st) st = vkf_runner_run(r);
    if (!st) st = vkf_runner_get(r, out, result, vkf_tensor_size(ot));
    vkf_runner_destroy(r);
    if (vkf_cli_device_close(&dev) && !st)
      st = vkf_status_make(VKF_STATUS_DEVICE, "validation reported errors");
  }
  if (!st) {
    vkf_npy_dtype nd = ot->dtype == VKF_F16 ? VKF_NPY_F16 : ot->dtype == VKF_I32 ? VKF_NPY_I32
                                                                                 : VKF_NPY_F32;
    st = vkf_npy_save(a->out_path, nd, (int)ot->rank, ot->shape, result);
  }
  free(result);
  for (int i = 0; i < in.count; i++) vkf_npy_array_release(&in.arrays[i]);
  vkf_graph_destroy(g);
  return st;
}

int vkf_cli_op(int argc, char **argv) {
  op_args a = {0};
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i];
    if (!strcmp(arg, "--in") && i + 1 < argc && a.in_count < MAX_INPUTS) {
      char *v = argv[++i], *eq = strchr(v, '=');
      if (eq && !strstr(v, ".npy=")) {
        *eq = 0;
        a.in_slot[a.in_count] = v;
        a.in_path[a.in_count++] = eq + 1;
      } else {
        a.in_path[a.in_count++] = v;
      }
    } else if (!strcmp(arg, "--attr") && i + 1 < argc && a.attr_count < MAX_ATTRS) {
      char *v = argv[++i], *eq = strchr(v, '=');
      if (!eq) return vkf_cli_fail(vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                                                   "--attr needs key=value, got \"%s\"", v));
      *eq = 0;
      a.attr_key[a.attr_count] = v;
      a.attr_val[a.attr_count++] = eq + 1;
    } else if (!strcmp(arg, "--out") && i + 1 < argc) {
      a.out_path = argv[++i];
    } else if (!strcmp(arg, "--device") && i + 1 < argc) {
      a.device = argv[++i];
    } else if (!strcmp(arg, "--cpu")) {
      a.cpu = 1;
    } else if (arg[0] != '-' && !a.op) {
      a.op = arg;
    } else {
      fprintf(stderr, "vkf op: unexpected argument \"%s\"\n", arg);
      return 2;
    }
  }
  if (!a.op || !a.out_path || a.in_count == 0) {
    fprintf(stderr, "usage: vkf op OP --in [slot=]x.npy ... --out y.npy [--attr key=value ...] "
                    "[--cpu] [--device N|NAME]\n");
    return 2;
  }
  vkf_status st = run(&a);
  return st ? vkf_cli_fail(st) : 0;
}
