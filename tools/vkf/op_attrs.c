/* Owns the attribute keys of each op in `vkf op` and their strict parsing. */
#include "tools/vkf/op_attrs.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The attributes each op reads; ops not listed take none. */
static const struct {
  const char *op, *keys;
} OP_KEYS[] = {
    {"matmul", "transpose_b, activation"},
    {"scale", "value"},
    {"layernorm", "eps"},
    {"rmsnorm", "eps"},
    {"l2_normalize", "eps"},
    {"softmax", "scale, causal"},
    {"attention", "scale, causal, kv_len, window"},
    {"sparse_attention", "scale, causal, kv_len, block, pattern, layout, per_head, strict_window"},
    {"permute", "axes"},
    {"slice", "axis, start, end"},
    {"cast", "dtype"},
    {"concat", "axis"},
    {"linear_features", "kind, scale"},
    {"linear_attention", "causal, eps, chunk"},
};

static const char *keys_of(const char *op) {
  for (size_t i = 0; i < sizeof OP_KEYS / sizeof OP_KEYS[0]; i++)
    if (!strcmp(OP_KEYS[i].op, op)) return OP_KEYS[i].keys;
  return NULL;
}

/* Whether `key` is one entry of the ", "-separated list. */
static int listed(const char *list, const char *key) {
  size_t n = strlen(key);
  for (const char *p = list; p && *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == n && !strncmp(p, key, n)) return 1;
    p = end ? end + 2 : NULL;
  }
  return 0;
}

vkf_status vkf_op_attrs_check_keys(const vkf_op_attrs *a) {
  const char *keys = keys_of(a->op);
  for (int i = 0; i < a->count; i++) {
    if (!keys)
      return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                             "unknown attribute \"%s\": op %s takes no attributes", a->key[i],
                             a->op);
    if (!listed(keys, a->key[i]))
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
