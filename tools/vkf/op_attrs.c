/* Owns the attribute keys of each op in `vkf op` and their strict parsing. */
#include "tools/vkf/op_attrs.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What `vkf op` takes for each op: its inputs, and every attribute with its type, range and
 * default. The key check below, the getters (which refuse a key or a type not listed here, so this
 * table cannot drift from the parsing in cmd_op.c and op_sparse.c) and `vkf op --list` all read
 * this one table; ops of graph/ir/ops.def not listed are graph-internal. */
static const vkf_op_spec OP_SPECS[] = {
    {"matmul",
     "a f32|f16 [..., M, K]; b f32|f16 [..., K, N] ([..., N, K] with transpose_b); "
     "bias= f32|f16 [N] (optional); residual= output shape (optional)",
     {{"transpose_b", VKF_ATTR_INT, 0, 1, NULL, "0", "b is [..., N, K] (nn.Linear's weight)"},
      {"activation", VKF_ATTR_CHOICE, 0, 0, "none|gelu|gelu_tanh|relu|silu", "none",
       "applied after the bias, before the residual"}}},
    {"add", "x f32|f16; y f32|f16 (broadcast)", {{0}}},
    {"rotary", "x f32|f16 [..., D], D even; cos f32|f16 and sin (same dtype) broadcast to x", {{0}}},
    {"sub", "x f32|f16; y f32|f16 (broadcast)", {{0}}},
    {"mul", "x f32|f16; y f32|f16 (broadcast)", {{0}}},
    {"div", "x f32|f16; y f32|f16 (broadcast)", {{0}}},
    {"scale", "x f32|f16", {{"value", VKF_ATTR_FLOAT, -INFINITY, INFINITY, NULL, "1", "factor"}}},
    {"gelu", "x f32|f16", {{0}}},
    {"gelu_tanh", "x f32|f16", {{0}}},
    {"relu", "x f32|f16", {{0}}},
    {"silu", "x f32|f16", {{0}}},
    {"exp", "x f32|f16", {{0}}},
    {"tanh", "x f32|f16", {{0}}},
    {"log", "x f32|f16", {{0}}},
    {"layernorm",
     "x f32|f16 [..., D]; gamma= [D] (optional); beta= [D] (optional)",
     {{"eps", VKF_ATTR_FLOAT, 0, INFINITY, NULL, "0 (the op's default, 1e-5)",
       "variance epsilon"}}},
    {"rmsnorm",
     "x f32|f16 [..., D]; gamma= [D] (optional)",
     {{"eps", VKF_ATTR_FLOAT, 0, INFINITY, NULL, "0 (the op's default, 1e-6)",
       "variance epsilon"}}},
    {"l2_normalize",
     "x f32|f16 [..., D]",
     {{"eps", VKF_ATTR_FLOAT, 0, INFINITY, NULL, "0 (the op's default, 1e-12)", "norm floor"}}},
    {"softmax",
     "x f32|f16 [..., N]; valid_lens= i32 [B] or [B, R] in [0, N] (optional); "
     "bias= broadcastable to x (optional)",
     {{"scale", VKF_ATTR_FLOAT, -INFINITY, INFINITY, NULL, "0 (none)", "applied to x first"},
      {"causal", VKF_ATTR_INT, 0, 1, NULL, "0", "mask columns past the row"}}},
    {"attention",
     "q f32|f16 [B, H, Nq, D]; k f32|f16 [B, Hkv, Nk, D]; v f32|f16 [B, Hkv, Nk, Dv]; "
     "bias= broadcastable to [B, H, Nq, Nk] (optional)",
     {{"scale", VKF_ATTR_FLOAT, -INFINITY, INFINITY, NULL, "0 (1/sqrt(D))", "score scale"},
      {"causal", VKF_ATTR_INT, 0, 1, NULL, "0", "mask keys past the query"},
      {"kv_len", VKF_ATTR_INTS, 0, 0, "0..Nk, one per batch entry (up to 64)", "none",
       "keys at or past kv_len[b] are masked"},
      {"window", VKF_ATTR_INTS, -1, INT32_MAX, "LEFT,RIGHT, each -1..2^31-1 (-1: unbounded)",
       "none", "sliding window around each query"}}},
    {"sparse_attention",
     "q f32|f16 [B, H, Nq, D]; k [B, Hkv, Nk, D]; v [B, Hkv, Nk, Dv]; key_bias= f32 [B, Nk] "
     "(optional); rows= i32 [L, Nqb + 1], cols= i32 [L, E, 2], masks= i32 (a layout instead of "
     "pattern/layout)",
     {{"scale", VKF_ATTR_FLOAT, -INFINITY, INFINITY, NULL, "0 (1/sqrt(D))", "score scale"},
      {"causal", VKF_ATTR_INT, 0, 1, NULL, "0", "mask keys past the query"},
      {"kv_len", VKF_ATTR_INTS, 0, 0, "0..Nk, one per batch entry (up to 64)", "none",
       "keys at or past kv_len[b] are masked"},
      {"block", VKF_ATTR_INTS, 1, 4096, "N or BQ,BK, each 1..4096", "required", "tokens per block"},
      {"pattern", VKF_ATTR_TEXT, 0, 0, "window:W[,global:G][,random:R][,...]", "none",
       "the layout as a pattern"},
      {"layout", VKF_ATTR_TEXT, 0, 0, "FILE.npy, 0/1 [L, Nqb, Nkb]", "none",
       "the layout as a block table"},
      {"per_head", VKF_ATTR_INT, 0, 1, NULL, "0", "one pattern layout per head"},
      {"strict_window", VKF_ATTR_INT, 0, 1, NULL, "0", "refuse a window wider than a block"}}},
    {"permute",
     "x f32|f16|i32",
     {{"axes", VKF_ATTR_INTS, 0, 0, "one entry per dim, each 0..rank-1", "required",
       "output dim i is input dim axes[i]"}}},
    {"slice",
     "x f32|f16|i32",
     {{"axis", VKF_ATTR_INT, 0, 0, "0..rank-1", "0", "the sliced dim"},
      {"start", VKF_ATTR_INT, (double)INT64_MIN, (double)INT64_MAX, "any (negative: from the end)",
       "0", "first index"},
      {"end", VKF_ATTR_INT, (double)INT64_MIN, (double)INT64_MAX, "any (negative: from the end)",
       "0", "one past the last index"}}},
    {"copy", "x f32|f16|i32", {{0}}},
    {"cast",
     "x f32|f16|i32",
     {{"dtype", VKF_ATTR_CHOICE, 0, 0, "f32|f16|i32", "f32", "the output's dtype"}}},
    {"concat",
     "x1 ... x8 f32|f16|i32, equal but for the axis",
     {{"axis", VKF_ATTR_INT, 0, 0, "0..rank-1", "0", "the joined dim"}}},
    {"gather", "table f32|f16 [V, D]; ids i32 [...] in [0, V)", {{0}}},
    {"patch_embed", "image f32|f16 [B, C, H, W]; weight [E, C, P, P]; bias= [E] (optional)", {{0}}},
    {"mean_pool", "x f32|f16 [B, N, D]; mask= i32 [B, N] (optional)", {{0}}},
    {"kv_write", "cache f32|f16 [B, H, C, D]; rows [B, H, T, D]; start i32 [B]", {{0}}},
    {"linear_features",
     "x f32|f16 [B, H, N, D]; omega [M, D] (favor, rff)",
     {{"kind", VKF_ATTR_CHOICE, 0, 0, "elu1|favor|rff", "elu1", "feature map"},
      {"scale", VKF_ATTR_FLOAT, 0, 1e30, NULL, "0 (D^-1/4)", "data normaliser"}}},
    {"linear_attention",
     "phi_q f32 [B, H, N, F]; phi_k [B, H, N, F]; v [B, H, N, Dv]; gate= "
     "[B, H, N] (optional); state= [B, H, F, Dv + 1] (optional)",
     {{"causal", VKF_ATTR_INT, 0, 1, NULL, "0", "prefix sums instead of one sum"},
      {"eps", VKF_ATTR_FLOAT, 0, 1e30, NULL, "0 (1e-6)", "denominator floor"},
      {"chunk", VKF_ATTR_INT, 0, 1024, NULL, "0 (64)", "tokens per chunk of the causal scan"}}},
    {"linear_state_write",
     "state f32 [B, H, F, Dv + 1]; phi_k [B, H, T, F]; v [B, H, T, Dv]; "
     "gate= [B, H, T] (optional)",
     {{0}}},
    {"additive_attention",
     "qp f32|f16 [B, Nq, H] (W_q q); kp [B, Nk, H] (W_k k); w_v [H]; v [B, Nk, Dv]; "
     "valid_lens= i32 [B] or [B, Nq], clamped to [0, Nk] (optional)",
     {{"weights", VKF_ATTR_INT, 0, 1, NULL, "0",
       "1: the attention weights [B, Nq, Nk] instead of the context [B, Nq, Dv]"}}},
    {"gru_scan",
     "gates f32 [B, T, 3H] (x W_ih^T + b_ih, gates r, z, n); w_hh [3H, H]; b_hh [3H]; "
     "h0= [B, H] (optional: zeros)",
     {{0}}},
    /* composite (tools/vkf/op_pooling.c): D2L's Nadaraya-Watson attention pooling */
    {"attention_pooling",
     "queries f32 [Nq] or [Nq, d]; keys [Nk] or [Nk, d]; values [Nk] or [Nk, dv]",
     {{"sigma", VKF_ATTR_FLOAT, 1e-6, 1e6, NULL, "1", "the Gaussian kernel's width"},
      {"weights", VKF_ATTR_INT, 0, 1, NULL, "0",
       "1: the attention weights [Nq, Nk] instead of the pooled values"}}},
};

const vkf_op_spec *vkf_op_spec_find(const char *op) {
  for (size_t i = 0; i < sizeof OP_SPECS / sizeof OP_SPECS[0]; i++)
    if (!strcmp(OP_SPECS[i].op, op)) return &OP_SPECS[i];
  return NULL;
}

const vkf_op_attr_spec *vkf_op_attr_spec_find(const vkf_op_spec *spec, const char *key) {
  for (int i = 0; spec && i < VKF_OP_MAX_SPEC_ATTRS && spec->attrs[i].key; i++)
    if (!strcmp(spec->attrs[i].key, key)) return &spec->attrs[i];
  return NULL;
}

/* The listed keys of `op` as "a, b, c" (empty when it takes none). */
static void keys_of(const vkf_op_spec *spec, char *out, size_t size) {
  size_t used = 0;
  out[0] = 0;
  for (int i = 0; spec && i < VKF_OP_MAX_SPEC_ATTRS && spec->attrs[i].key && used < size; i++)
    used += (size_t)snprintf(out + used, size - used, "%s%s", i ? ", " : "", spec->attrs[i].key);
}

/* A getter of `type` reads `key`: the table must list it so (a parse the table does not know
 * would be an attribute --list does not show). */
static vkf_status check_listed(const vkf_op_attrs *a, const char *key, vkf_op_attr_type type,
                               double lo, double hi) {
  const vkf_op_attr_spec *s = vkf_op_attr_spec_find(vkf_op_spec_find(a->op), key);
  if (!s || s->type != type)
    return vkf_status_make(VKF_STATUS_INTERNAL,
                           "op %s reads attribute %s, which op_attrs.c does not list as such",
                           a->op, key);
  /* A range printed from lo/hi is the one the parse uses (others depend on the inputs). */
  if (!s->range && (s->lo != lo || s->hi != hi))
    return vkf_status_make(VKF_STATUS_INTERNAL,
                           "op %s parses attribute %s in [%g, %g] but op_attrs.c lists [%g, %g]",
                           a->op, key, lo, hi, s->lo, s->hi);
  return VKF_OK;
}

vkf_status vkf_op_attrs_check_keys(const vkf_op_attrs *a) {
  const vkf_op_spec *spec = vkf_op_spec_find(a->op);
  char keys[256];
  keys_of(spec, keys, sizeof keys);
  for (int i = 0; i < a->count; i++) {
    if (!keys[0])
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "unknown attribute \"%s\": op %s takes no attributes", a->key[i],
                             a->op);
    if (!vkf_op_attr_spec_find(spec, a->key[i]))
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "unknown attribute \"%s\" for op %s (valid: %s)", a->key[i], a->op,
                             keys);
    for (int j = 0; j < i; j++)
      if (!strcmp(a->key[i], a->key[j]))
        return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "attribute %s is given twice",
                               a->key[i]);
  }
  return VKF_OK;
}

const char *vkf_op_attr(const vkf_op_attrs *a, const char *key) {
  for (int i = 0; i < a->count; i++)
    if (!strcmp(a->key[i], key)) return a->val[i];
  return NULL;
}

/* Parses the integer at *s up to a ',' or the end; 0 on success, *s past it. */
static int parse_int(const char **s, int64_t *out) {
  const char *p = *s;
  /* strtoll skips leading spaces and takes "+"; neither is an integer as written here. */
  if (!(*p == '-' || (*p >= '0' && *p <= '9'))) return -1;
  char *end;
  errno = 0;
  long long v = strtoll(p, &end, 10);
  if (end == p || errno == ERANGE || (*end && *end != ',')) return -1;
  *out = v;
  *s = end;
  return 0;
}

static vkf_status range_error(const char *key, const char *value, int64_t lo, int64_t hi) {
  return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                         "attribute %s=%s is out of range [%" PRId64 ", %" PRId64 "]", key, value,
                         lo, hi);
}

vkf_status vkf_op_attr_int(const vkf_op_attrs *a, const char *key, int64_t lo, int64_t hi,
                           int64_t fallback, int64_t *out) {
  const char *v = vkf_op_attr(a, key);
  *out = fallback;
  VKF_RETURN_IF_ERROR(check_listed(a, key, VKF_ATTR_INT, (double)lo, (double)hi));
  if (!v) return VKF_OK;
  const char *p = v;
  int64_t x;
  if (parse_int(&p, &x) != 0 || *p)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "attribute %s=%s is not an integer", key,
                           v);
  if (x < lo || x > hi) return range_error(key, v, lo, hi);
  *out = x;
  return VKF_OK;
}

vkf_status vkf_op_attr_float(const vkf_op_attrs *a, const char *key, double lo, double hi,
                             float fallback, float *out) {
  const char *v = vkf_op_attr(a, key);
  *out = fallback;
  VKF_RETURN_IF_ERROR(check_listed(a, key, VKF_ATTR_FLOAT, lo, hi));
  if (!v) return VKF_OK;
  char *end;
  errno = 0;
  float x = strtof(v, &end);
  if (end == v || *end || v[0] == ' ' || v[0] == '\t')
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "attribute %s=%s is not a number", key, v);
  if (!isfinite(x))
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "attribute %s=%s is not finite", key, v);
  if (x < lo || x > hi)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "attribute %s=%s is out of range [%g, %g]",
                           key, v, lo, hi);
  *out = x;
  return VKF_OK;
}

vkf_status vkf_op_attr_ints(const vkf_op_attrs *a, const char *key, int64_t lo, int64_t hi, int max,
                            int64_t *out, int *out_count) {
  const char *v = vkf_op_attr(a, key);
  *out_count = 0;
  VKF_RETURN_IF_ERROR(check_listed(a, key, VKF_ATTR_INTS, (double)lo, (double)hi));
  if (!v) return VKF_OK;
  int n = 0;
  for (const char *p = v;;) {
    int64_t x;
    if (parse_int(&p, &x) != 0)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "attribute %s=%s: entry %d is not an integer", key, v, n);
    if (x < lo || x > hi)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "attribute %s=%s: entry %d (%" PRId64 ") is out of range [%" PRId64
                             ", %" PRId64 "]",
                             key, v, n, x, lo, hi);
    if (n == max)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "attribute %s=%s has more than %d entries", key, v, max);
    out[n++] = x;
    if (!*p) break;
    p++; /* the ',' */
  }
  *out_count = n;
  return VKF_OK;
}

vkf_status vkf_op_attr_choice(const vkf_op_attrs *a, const char *key, const char *const *names,
                              int fallback, int *out) {
  const char *v = vkf_op_attr(a, key);
  *out = fallback;
  VKF_RETURN_IF_ERROR(check_listed(a, key, VKF_ATTR_CHOICE, 0, 0));
  if (!v) return VKF_OK;
  char list[256] = "";
  size_t used = 0;
  for (int i = 0; names[i]; i++) {
    if (!strcmp(v, names[i])) {
      *out = i;
      return VKF_OK;
    }
    if (used < sizeof list)
      used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", names[i]);
  }
  return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "attribute %s=%s is not one of: %s", key, v,
                         list);
}
