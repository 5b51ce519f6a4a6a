/* vkf op: runs one op of the op table on the device (or, with --cpu, the reference interpreter)
 * from .npy files, so any kernel can be checked against numpy.
 *   vkf op matmul --in a.npy --in b.npy --out c.npy [--attr transpose_b=1] [--cpu]
 *   vkf op kv_write --in cache.npy --in rows.npy --in start.npy --out cache_after.npy
 *   vkf op linear_features --in x.npy [--in omega.npy] --attr kind=favor --out phi.npy
 *   vkf op linear_attention --in phi_q.npy --in phi_k.npy --in v.npy [--in gate=g.npy]
 *       [--in state=s.npy] --attr causal=1 --out o.npy
 *   vkf op linear_state_write --in state.npy --in phi_k.npy --in v.npy [--in gate=g.npy]
 *       --out state_after.npy
 *   vkf op attention_pooling --in queries.npy --in keys.npy --in values.npy [--attr sigma=S]
 *       [--attr weights=1] --out y.npy  (a composite: tools/vkf/op_pooling.h)
 * Optional inputs are named: --in bias=b.npy. Attributes: --attr key=value, each parsed strictly
 * (tools/vkf/op_attrs.h) and range-checked against the inputs' shapes. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/interp/interp.h"
#include "graph/ir/builder.h"
#include "host/runner.h"
#include "models/formats/npy.h"
#include "tools/vkf/cli.h"
#include "tools/vkf/cli_args.h"
#include "tools/vkf/device_open.h"
#include "tools/vkf/op_attrs.h"
#include "tools/vkf/op_list.h"
#include "tools/vkf/op_pooling.h"
#include "tools/vkf/op_sparse.h"

enum { MAX_INPUTS = 8, MAX_LENS = 64 };

typedef struct op_args {
  vkf_op_attrs attrs; /* attrs.op is the op's name */
  const char *in_slot[MAX_INPUTS], *in_path[MAX_INPUTS];
  int in_count;
  const char *out_path, *device;
  int cpu;
} op_args;

typedef struct op_inputs {
  vkf_npy_array arrays[MAX_INPUTS];
  vkf_value values[MAX_INPUTS];
  int count;
} op_inputs;

/* Index into the inputs of the positional (unnamed) input number `index`, or of the named one;
 * -1 when absent. */
static int input_at(const op_args *a, int index, const char *name) {
  int positional = 0;
  for (int i = 0; i < a->in_count; i++) {
    if (a->in_slot[i] ? (name && strcmp(a->in_slot[i], name) == 0) : positional++ == index)
      return i;
  }
  return -1;
}

static vkf_value input(const op_args *a, const op_inputs *in, int index, const char *name) {
  int i = input_at(a, index, name);
  return i < 0 ? VKF_NO_VALUE : in->values[i];
}

static const vkf_tensor *input_tensor(vkf_graph *g, const op_args *a, const op_inputs *in,
                                      int index, const char *name) {
  vkf_value v = input(a, in, index, name);
  return v.id ? vkf_graph_tensor(g, v) : NULL;
}

/* Every value of the int32 input `i` lies in [lo, hi); what else an input holds (its dtype, its
 * shape) is the builder's to check. `what` names the values in the message. */
static vkf_status check_int_input(const op_args *a, const op_inputs *in, int i, const char *what,
                                  int64_t lo, int64_t hi) {
  if (i < 0 || in->arrays[i].dtype != VKF_NPY_I32) return VKF_OK;
  const int32_t *v = in->arrays[i].data;
  size_t n = in->arrays[i].data_size / sizeof(int32_t);
  for (size_t k = 0; k < n; k++)
    if (v[k] < lo || v[k] >= hi)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "%s: %s %" PRId32 " at flat index %zu is outside [%" PRId64
                             ", %" PRId64 ")",
                             a->in_path[i], what, v[k], k, lo, hi);
  return VKF_OK;
}

#define TRY(expr)                        \
  do {                                   \
    if ((*out_err = (expr)) != VKF_OK) { \
      return VKF_NO_VALUE;               \
    }                                    \
  } while (0)

static const char *const ACTIVATIONS[] = {"none", "gelu", "gelu_tanh", "relu", "silu", NULL};
static const vkf_activation ACTIVATION_OF[] = {VKF_ACT_NONE, VKF_ACT_GELU_ERF, VKF_ACT_GELU_TANH,
                                               VKF_ACT_RELU, VKF_ACT_SILU};
static const char *const DTYPES[] = {"f32", "f16", "i32", NULL};
static const vkf_dtype DTYPE_OF[] = {VKF_F32, VKF_F16, VKF_I32};

/* The rank of input 0 minus one, the upper bound of an axis attribute (0 when it is missing:
 * the builder then names the missing input). */
static int64_t last_axis(vkf_graph *g, const op_args *a, const op_inputs *in) {
  const vkf_tensor *x = input_tensor(g, a, in, 0, NULL);
  return x ? (int64_t)x->rank - 1 : 0;
}

static const char *const FEATURE_MAPS[] = {"elu1", "favor", "rff", NULL};

/* The linear-attention family (graph/ir/builder.h). */
static vkf_value build_linear(vkf_graph *g, const op_args *a, const op_inputs *in,
                              vkf_status *out_err) {
  const char *op = a->attrs.op;
  const vkf_op_attrs *at = &a->attrs;
  int64_t i64;
  if (!strcmp(op, "linear_features")) {
    int kind;
    float scale;
    TRY(vkf_op_attr_choice(at, "kind", FEATURE_MAPS, 0, &kind));
    /* 0: D^-1/4, Performer's data normaliser. */
    TRY(vkf_op_attr_float(at, "scale", 0.0, 1e30, 0.0f, &scale));
    return vkf_linear_features(g, "op", input(a, in, 0, NULL), input(a, in, 1, NULL),
                               (vkf_feature_map)kind, scale);
  }
  if (!strcmp(op, "linear_attention")) {
    vkf_linear_attention_options o = {.gate = input(a, in, 3, "gate"),
                                      .state = input(a, in, 4, "state")};
    TRY(vkf_op_attr_int(at, "causal", 0, 1, 0, &i64));
    o.causal = (int)i64;
    TRY(vkf_op_attr_float(at, "eps", 0.0, 1e30, 0.0f, &o.eps)); /* 0: 1e-6 */
    TRY(vkf_op_attr_int(at, "chunk", 0, 1024, 0, &i64));        /* 0: 64 */
    o.chunk = (uint32_t)i64;
    return vkf_linear_attention(g, "op", input(a, in, 0, NULL), input(a, in, 1, NULL),
                                input(a, in, 2, NULL), &o);
  }
  if (!strcmp(op, "linear_state_write")) /* the state after the write */
    return vkf_linear_state_write(g, "op", input(a, in, 0, NULL), input(a, in, 1, NULL),
                                  input(a, in, 2, NULL), input(a, in, 3, "gate"));
  *out_err = vkf_status_make(VKF_STATUS_INTERNAL, "op %s is not a linear-attention op", op);
  return VKF_NO_VALUE;
}

/* Emits the op's node; returns its value (VKF_NO_VALUE with *out_err, or a sticky graph error). */
static vkf_value build(vkf_graph *g, const op_args *a, const op_inputs *in, vkf_status *out_err) {
  const char *op = a->attrs.op;
  const vkf_op_attrs *at = &a->attrs;
  vkf_value x = input(a, in, 0, NULL), y = input(a, in, 1, NULL);
  *out_err = vkf_op_attrs_check_keys(at);
  if (*out_err) return VKF_NO_VALUE;
  int64_t i64;
  if (!strcmp(op, "matmul")) {
    int act;
    vkf_matmul_options o = {.bias = input(a, in, 2, "bias"),
                            .residual = input(a, in, 3, "residual")};
    TRY(vkf_op_attr_int(at, "transpose_b", 0, 1, 0, &i64));
    o.transpose_b = (int)i64;
    TRY(vkf_op_attr_choice(at, "activation", ACTIVATIONS, 0, &act));
    o.activation = ACTIVATION_OF[act];
    return vkf_matmul(g, "op", x, y, &o);
  }
  if (!strcmp(op, "add")) return vkf_add(g, "op", x, y);
  if (!strcmp(op, "sub")) return vkf_sub(g, "op", x, y);
  if (!strcmp(op, "mul")) return vkf_mul(g, "op", x, y);
  if (!strcmp(op, "div")) return vkf_div(g, "op", x, y);
  if (!strcmp(op, "scale")) {
    float value;
    TRY(vkf_op_attr_float(at, "value", -INFINITY, INFINITY, 1.0f, &value));
    return vkf_scale(g, "op", x, value);
  }
  if (!strcmp(op, "gelu")) return vkf_gelu(g, "op", x);
  if (!strcmp(op, "gelu_tanh")) return vkf_gelu_tanh(g, "op", x);
  if (!strcmp(op, "relu")) return vkf_relu(g, "op", x);
  if (!strcmp(op, "silu")) return vkf_silu(g, "op", x);
  if (!strcmp(op, "exp")) return vkf_exp(g, "op", x);
  if (!strcmp(op, "tanh")) return vkf_tanh(g, "op", x);
  if (!strcmp(op, "log")) return vkf_ln(g, "op", x);
  if (!strcmp(op, "layernorm") || !strcmp(op, "rmsnorm") || !strcmp(op, "l2_normalize")) {
    /* 0 picks the op's default; a negative eps would take the square root of a negative. */
    float eps;
    TRY(vkf_op_attr_float(at, "eps", 0.0, INFINITY, 0.0f, &eps));
    if (op[0] == 'l' && op[1] == '2') return vkf_l2_normalize(g, "op", x, eps);
    vkf_norm_options o = {
        .eps = eps, .gamma = input(a, in, 1, "gamma"), .beta = input(a, in, 2, "beta")};
    return op[0] == 'l' ? vkf_layernorm(g, "op", x, &o) : vkf_rmsnorm(g, "op", x, &o);
  }
  if (!strcmp(op, "softmax")) {
    vkf_softmax_options o = {.valid_lens = input(a, in, 1, "valid_lens"),
                             .bias = input(a, in, 2, "bias")};
    TRY(vkf_op_attr_float(at, "scale", -INFINITY, INFINITY, 0.0f, &o.scale));
    TRY(vkf_op_attr_int(at, "causal", 0, 1, 0, &i64));
    o.causal = (int)i64;
    /* A valid length counts columns: [0, N]. (The device clamps any other value into that range
     * by design; from the command line it is a mistake worth naming.) */
    const vkf_tensor *tx = x.id ? vkf_graph_tensor(g, x) : NULL;
    if (tx)
      TRY(check_int_input(a, in, input_at(a, 1, "valid_lens"), "valid length", 0,
                          tx->shape[tx->rank - 1] + 1));
    return vkf_softmax(g, "op", x, &o);
  }
  if (!strcmp(op, "attention")) {
    vkf_attention_options o = {.bias = input(a, in, 3, "bias")};
    TRY(vkf_op_attr_float(at, "scale", -INFINITY, INFINITY, 0.0f, &o.scale));
    TRY(vkf_op_attr_int(at, "causal", 0, 1, 0, &i64));
    o.causal = (int)i64;
    /* kv_len counts keys: [0, Nk], 0 included (a fully padded batch entry gives zero rows, as
     * the op defines a fully masked row). */
    const vkf_tensor *tk = input_tensor(g, a, in, 1, NULL);
    int64_t lens[MAX_LENS];
    int n = 0;
    int64_t nk = tk && tk->rank >= 2 ? tk->shape[tk->rank - 2] : INT32_MAX;
    TRY(vkf_op_attr_ints(at, "kv_len", 0, nk, MAX_LENS, lens, &n));
    if (n) {
      int32_t *data = vkf_arena_alloc(vkf_graph_arena(g), (size_t)n * sizeof(int32_t));
      if (!data) TRY(vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "out of host memory"));
      for (int i = 0; i < n; i++) data[i] = (int32_t)lens[i];
      int64_t shape[1] = {n};
      o.kv_len = vkf_graph_constant(g, "kv_len", VKF_I32, 1, shape, data);
    }
    int64_t lr[2];
    TRY(vkf_op_attr_ints(at, "window", -1, INT32_MAX, 2, lr, &n));
    if (n == 1)
      TRY(vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "attribute window=%s needs LEFT,RIGHT",
                          vkf_op_attr(at, "window")));
    if (n == 2) o.windowed = 1, o.window_left = (int32_t)lr[0], o.window_right = (int32_t)lr[1];
    return vkf_attention(g, "op", x, y, input(a, in, 2, NULL), &o);
  }
  if (!strcmp(op, "attention_pooling"))
    return vkf_op_build_pooling(g, at, x, y, input(a, in, 2, NULL), out_err);
  if (!strcmp(op, "sparse_attention")) {
    int r = input_at(a, -1, "rows"), c = input_at(a, -1, "cols"), m = input_at(a, -1, "masks");
    vkf_op_sparse_inputs si = {.q = x,
                               .k = y,
                               .v = input(a, in, 2, NULL),
                               .key_bias = input(a, in, 3, "key_bias"),
                               .rows = r < 0 ? NULL : &in->arrays[r],
                               .cols = c < 0 ? NULL : &in->arrays[c],
                               .masks = m < 0 ? NULL : &in->arrays[m],
                               .rows_path = r < 0 ? NULL : a->in_path[r],
                               .cols_path = c < 0 ? NULL : a->in_path[c],
                               .masks_path = m < 0 ? NULL : a->in_path[m]};
    return vkf_op_build_sparse(g, at, &si, out_err);
  }
  if (!strcmp(op, "permute")) {
    int64_t axes[VKF_MAX_DIMS];
    uint32_t ax[VKF_MAX_DIMS];
    int n = 0;
    TRY(vkf_op_attr_ints(at, "axes", 0, last_axis(g, a, in), VKF_MAX_DIMS, axes, &n));
    const vkf_tensor *tx = x.id ? vkf_graph_tensor(g, x) : NULL;
    if (tx && n != (int)tx->rank)
      TRY(vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                          "attribute axes needs one entry per dim "
                          "of the input (%u)",
                          tx->rank));
    for (int i = 0; i < n; i++) ax[i] = (uint32_t)axes[i];
    return vkf_copy(g, "op", vkf_permute(g, "view", x, ax));
  }
  if (!strcmp(op, "slice")) {
    int64_t axis, start, end;
    TRY(vkf_op_attr_int(at, "axis", 0, last_axis(g, a, in), 0, &axis));
    TRY(vkf_op_attr_int(at, "start", INT64_MIN, INT64_MAX, 0, &start));
    TRY(vkf_op_attr_int(at, "end", INT64_MIN, INT64_MAX, 0, &end));
    return vkf_copy(g, "op", vkf_slice(g, "view", x, (uint32_t)axis, start, end));
  }
  if (!strcmp(op, "copy")) return vkf_copy(g, "op", x);
  if (!strcmp(op, "cast")) {
    int d;
    TRY(vkf_op_attr_choice(at, "dtype", DTYPES, 0, &d));
    return vkf_cast(g, "op", x, DTYPE_OF[d]);
  }
  if (!strcmp(op, "concat")) {
    vkf_value xs[MAX_INPUTS];
    for (int i = 0; i < in->count; i++) xs[i] = in->values[i];
    TRY(vkf_op_attr_int(at, "axis", 0, last_axis(g, a, in), 0, &i64));
    return vkf_concat(g, "op", xs, (uint32_t)in->count, (uint32_t)i64);
  }
  if (!strcmp(op, "gather")) {
    /* The interpreter stops at an id outside the table; the device kernel cannot report one, so
     * ids are checked here, before either runs. */
    const vkf_tensor *table = input_tensor(g, a, in, 0, NULL);
    if (table) TRY(check_int_input(a, in, input_at(a, 1, NULL), "id", 0, table->shape[0]));
    return vkf_gather(g, "op", x, y);
  }
  if (!strcmp(op, "patch_embed")) return vkf_patch_embed(g, "op", x, y, input(a, in, 2, "bias"));
  if (!strcmp(op, "mean_pool")) return vkf_mean_pool(g, "op", x, input(a, in, 1, "mask"));
  if (!strcmp(op, "kv_write")) /* --in cache --in rows --in start: the cache after the write */
    return vkf_kv_write(g, "op", x, y, input(a, in, 2, "start"));
  if (!strcmp(op, "rotary")) /* --in x --in cos --in sin */
    return vkf_rotary(g, "op", x, y, input(a, in, 2, "sin"));
  if (!strcmp(op, "gru_scan")) /* --in gates --in w_hh --in b_hh [--in h0=] */
    return vkf_gru_scan(g, "op", x, y, input(a, in, 2, NULL), input(a, in, 3, "h0"));
  if (!strcmp(op, "additive_attention")) { /* --in qp --in kp --in w_v --in v [valid_lens=] */
    TRY(vkf_op_attr_int(at, "weights", 0, 1, 0, &i64));
    return vkf_additive_attention(g, "op", x, y, input(a, in, 2, NULL), input(a, in, 3, NULL),
                                  input(a, in, 4, "valid_lens"), (int)i64);
  }
  if (!strcmp(op, "linear_features") || !strcmp(op, "linear_attention") ||
      !strcmp(op, "linear_state_write"))
    return build_linear(g, a, in, out_err);
  *out_err = vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "unknown op \"%s\" (matmul, add, sub, mul, div, scale, gelu, "
                             "gelu_tanh, relu, silu, exp, tanh, layernorm, rmsnorm, l2_normalize, "
                             "softmax, attention, sparse_attention, permute, slice, copy, cast, "
                             "concat, gather, patch_embed, mean_pool, kv_write, rotary, "
                             "linear_features, linear_attention, linear_state_write, "
                             "additive_attention, gru_scan, attention_pooling)",
                             op);
  return VKF_NO_VALUE;
}

static int is_layout_table(const op_args *a, int i) {
  const char *s = a->in_slot[i];
  return !strcmp(a->attrs.op, "sparse_attention") && s &&
         (!strcmp(s, "rows") || !strcmp(s, "cols") || !strcmp(s, "masks"));
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
    /* sparse_attention's layout tables are constants the builder checks (op_sparse.c). */
    if (is_layout_table(a, i)) continue;
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
      if (in.values[i].id)
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
      if (in.values[i].id)
        st = vkf_runner_set(r, in.values[i], in.arrays[i].data, in.arrays[i].data_size);
    if (!st) st = vkf_runner_run(r);
    if (!st) st = vkf_runner_get(r, out, result, vkf_tensor_size(ot));
    vkf_runner_destroy(r);
    if (vkf_cli_device_close(&dev) && !st)
      st = vkf_status_make(VKF_STATUS_DEVICE, "validation reported errors");
  }
  if (!st) {
    vkf_npy_dtype nd = ot->dtype == VKF_F16   ? VKF_NPY_F16
                       : ot->dtype == VKF_I32 ? VKF_NPY_I32
                                              : VKF_NPY_F32;
    st = vkf_npy_save(a->out_path, nd, (int)ot->rank, ot->shape, result);
  }
  free(result);
  for (int i = 0; i < in.count; i++) vkf_npy_array_release(&in.arrays[i]);
  vkf_graph_destroy(g);
  return st;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: vkf op OP --in [slot=]x.npy ... --out y.npy [--attr key=value ...] [--cpu]\n"
          "                 [--device N|NAME]\n"
          "       vkf op --list | vkf op OP --help\n"
          "  Runs one op of the op table on .npy inputs, on the device or (--cpu) the reference\n"
          "  interpreter, and writes its output.\n"
          "  --in [slot=]F.npy  an input: positional in order, optional ones by name (bias=b.npy)\n"
          "  --attr key=value   an attribute, parsed strictly (vkf op OP --help lists them)\n"
          "  --out F.npy        the output\n"
          "  --cpu              the CPU reference interpreter instead of the device\n"
          "  --list             every op with its inputs and attributes\n");
}

int vkf_cli_op(int argc, char **argv) {
  op_args a = {0};
  int help = 0;
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i];
    if (vkf_cli_is_help(arg)) {
      help = 1;
    } else if (!strcmp(arg, "--list")) {
      vkf_op_list_print(stdout);
      return 0;
    } else if (!strcmp(arg, "--in") && i + 1 < argc && a.in_count < MAX_INPUTS) {
      char *v = argv[++i], *eq = strchr(v, '=');
      if (eq && !strstr(v, ".npy=")) {
        *eq = 0;
        a.in_slot[a.in_count] = v;
        a.in_path[a.in_count++] = eq + 1;
      } else {
        a.in_path[a.in_count++] = v;
      }
    } else if (!strcmp(arg, "--attr") && i + 1 < argc) {
      char *v = argv[++i], *eq = strchr(v, '=');
      if (!eq)
        return vkf_cli_fail(
            vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "--attr needs key=value, got \"%s\"", v));
      if (a.attrs.count == VKF_OP_MAX_ATTRS)
        return vkf_cli_fail(
            vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "more than %d --attr", VKF_OP_MAX_ATTRS));
      *eq = 0;
      a.attrs.key[a.attrs.count] = v;
      a.attrs.val[a.attrs.count++] = eq + 1;
    } else if (!strcmp(arg, "--out") && i + 1 < argc) {
      a.out_path = argv[++i];
    } else if (!strcmp(arg, "--device") && i + 1 < argc) {
      a.device = argv[++i];
    } else if (!strcmp(arg, "--cpu")) {
      a.cpu = 1;
    } else if (arg[0] != '-' && !a.attrs.op) {
      a.attrs.op = arg;
    } else {
      return vkf_cli_bad_arg("vkf op", usage, argc, argv, i);
    }
  }
  if (help && a.attrs.op) {
    if (!vkf_op_list_print_one(stdout, a.attrs.op))
      return vkf_cli_usage_error("vkf op", "unknown op '%s' (vkf op --list lists them)",
                                 a.attrs.op);
    printf("usage: vkf op %s --in x.npy ... --out y.npy [--attr key=value ...] [--cpu]\n",
           a.attrs.op);
    return 0;
  }
  if (help) return usage(stdout), 0;
  if (!a.attrs.op || !a.out_path || a.in_count == 0)
    return vkf_cli_usage_error("vkf op", "%s",
                               !a.attrs.op   ? "name an OP (vkf op --list lists them)"
                               : !a.out_path ? "--out y.npy is required"
                                             : "give at least one --in x.npy");
  vkf_status st = run(&a);
  return st ? vkf_cli_fail(st) : 0;
}
