/* Strict --attr parsing for `vkf op`: each op's attribute keys, full-string integer and float
 * parses with ranges, so a typo is an error naming the attribute and its value instead of a
 * silent default (`abc` read as 0, an unknown key ignored). */
#ifndef VKF_TOOLS_VKF_OP_ATTRS_H
#define VKF_TOOLS_VKF_OP_ATTRS_H

#include <stdint.h>

#include "graph/base/status.h"

enum { VKF_OP_MAX_ATTRS = 16 };

typedef struct vkf_op_attrs {
  const char *op;
  const char *key[VKF_OP_MAX_ATTRS], *val[VKF_OP_MAX_ATTRS];
  int count;
} vkf_op_attrs;

typedef enum vkf_op_attr_type {
  VKF_ATTR_INT,    /* one integer */
  VKF_ATTR_FLOAT,  /* one finite float */
  VKF_ATTR_INTS,   /* comma-separated integers */
  VKF_ATTR_CHOICE, /* one of the names in `range` */
  VKF_ATTR_TEXT,   /* read as given (a pattern, a file) */
} vkf_op_attr_type;

enum { VKF_OP_MAX_SPEC_ATTRS = 9 };

/* One attribute of an op. A NULL `range` means [lo, hi], the range the parse checks (the getters
 * refuse another); otherwise `range` describes it (bounds that depend on the inputs, choices). */
typedef struct vkf_op_attr_spec {
  const char *key;
  vkf_op_attr_type type;
  double lo, hi;
  const char *range, *fallback, *meaning;
} vkf_op_attr_spec;

/* What `vkf op` takes for one op: its inputs in order ("name= " ones are passed --in name=F.npy)
 * and its attributes (key NULL after the last). */
typedef struct vkf_op_spec {
  const char *op, *inputs;
  vkf_op_attr_spec attrs[VKF_OP_MAX_SPEC_ATTRS];
} vkf_op_spec;

/* The spec of `op`, NULL when `vkf op` does not run it. */
const vkf_op_spec *vkf_op_spec_find(const char *op);
/* The attribute `key` of `spec` (NULL spec or unknown key: NULL). */
const vkf_op_attr_spec *vkf_op_attr_spec_find(const vkf_op_spec *spec, const char *key);

/* Every key is one `op` takes, and is given once; the error lists the op's keys. */
vkf_status vkf_op_attrs_check_keys(const vkf_op_attrs *a);

/* The value of `key`, NULL when not given. */
const char *vkf_op_attr(const vkf_op_attrs *a, const char *key);

/* An integer in [lo, hi] (the whole value, base 10); `fallback` when not given. */
vkf_status vkf_op_attr_int(const vkf_op_attrs *a, const char *key, int64_t lo, int64_t hi,
                           int64_t fallback, int64_t *out);

/* A finite float in [lo, hi]; `fallback` when not given. */
vkf_status vkf_op_attr_float(const vkf_op_attrs *a, const char *key, double lo, double hi,
                             float fallback, float *out);

/* A comma-separated list of 1..max integers, each in [lo, hi]; *out_count 0 when not given. */
vkf_status vkf_op_attr_ints(const vkf_op_attrs *a, const char *key, int64_t lo, int64_t hi, int max,
                            int64_t *out, int *out_count);

/* One of `names` (a NULL-terminated list); its index in *out, `fallback` when not given. */
vkf_status vkf_op_attr_choice(const vkf_op_attrs *a, const char *key, const char *const *names,
                              int fallback, int *out);

#endif
