/* A graph under test plus the host data of its inputs, for op tests built on tests/op_harness.h:
 * declare inputs filled with deterministic values in any dtype, build nodes, then run and compare
 * with the interpreter in one call. Header-only. */
#ifndef VKF_TESTS_OP_CASE_H
#define VKF_TESTS_OP_CASE_H

#include "graph/ir/builder.h"
#include "tests/op_harness.h"

enum { OP_CASE_MAX_INPUTS = 12 };

typedef struct op_case {
  vkf_graph *g;
  vkf_input_binding in[OP_CASE_MAX_INPUTS];
  void *data[OP_CASE_MAX_INPUTS];
  size_t n;
  uint32_t seed;
} op_case;

static inline op_case op_case_begin(const char *name) {
  op_case c = {0};
  c.seed = 12345;
  vkf_status s = vkf_graph_create(name, &c.g);
  if (s) {
    fprintf(stderr, "graph create: %s\n", vkf_status_message(s));
    exit(1);
  }
  return c;
}

/* Allocates an input's host data (freed by op_case_end) and binds it. */
static inline void *op_case_bind(op_case *c, vkf_value v) {
  VKF_ASSERT(c->n < OP_CASE_MAX_INPUTS);
  const vkf_tensor *t = vkf_graph_tensor(c->g, v);
  size_t size = t ? vkf_tensor_size(t) : 0;
  void *data = calloc(1, size + 16);
  c->data[c->n] = data;
  c->in[c->n++] = (vkf_input_binding){.value = v, .data = data, .size = size};
  return data;
}

/* A float input (f32 or f16) of uniform values in [lo, hi); or small integers in [lo, hi] when
 * `ints` (exact in every dtype, so tiled kernels can be checked bit for bit). */
static inline vkf_value op_case_input_ex(op_case *c, const char *name, vkf_dtype dtype,
                                         uint32_t rank, const int64_t *shape, float lo, float hi,
                                         int ints) {
  vkf_value v = vkf_graph_input(c->g, name, dtype, rank, shape);
  if (!v.id) return v;
  void *data = op_case_bind(c, v);
  size_t count = (size_t)vkf_tensor_element_count(vkf_graph_tensor(c->g, v));
  float *f = malloc(count * sizeof(float) + 16);
  c->seed = c->seed * 1103515245u + 12345u;
  if (ints)
    op_fill_ints(f, count, c->seed | 1u, (int)lo, (int)hi);
  else
    op_fill_uniform(f, count, c->seed | 1u, lo, hi);
  if (dtype == VKF_F16)
    op_to_half(f, data, count);
  else
    memcpy(data, f, count * sizeof(float));
  free(f);
  return v;
}

static inline vkf_value op_case_input(op_case *c, const char *name, vkf_dtype dtype, uint32_t rank,
                                      const int64_t *shape, float lo, float hi) {
  return op_case_input_ex(c, name, dtype, rank, shape, lo, hi, 0);
}

/* An i32 input whose element i is values[i % value_count]. */
static inline vkf_value op_case_input_i32(op_case *c, const char *name, uint32_t rank,
                                          const int64_t *shape, const int32_t *values,
                                          size_t value_count) {
  vkf_value v = vkf_graph_input(c->g, name, VKF_I32, rank, shape);
  if (!v.id) return v;
  int32_t *data = op_case_bind(c, v);
  size_t count = (size_t)vkf_tensor_element_count(vkf_graph_tensor(c->g, v));
  for (size_t i = 0; i < count; i++) data[i] = values[i % value_count];
  return v;
}

static inline int op_case_uses_f16(const vkf_graph *g) {
  for (uint32_t id = 1; id < vkf_graph_tensor_bound(g); id++)
    if (vkf_graph_tensor(g, (vkf_value){id})->dtype == VKF_F16) return 1;
  return 0;
}

/* Marks `v` as the output, runs device vs interpreter, frees the case. Returns mismatches. On a
 * device without 16-bit storage an f16 case must instead fail cleanly with UNSUPPORTED. */
static inline int op_case_run(gpu_test *t, op_case *c, vkf_value v, op_tol tol, const char *label) {
  vkf_graph_output(c->g, v, NULL);
  vkf_status s = vkf_graph_status(c->g);
  int bad = 0;
  if (s) {
    CHECK_MSG(0, "%s: building the graph failed: %s", label, vkf_status_message(s));
    vkf_status_free(s);
    bad = 1;
  } else if (op_case_uses_f16(c->g) && !vkf_device_caps_get(t->device)->storage_16bit) {
    float *out = NULL;
    size_t count = 0;
    s = op_run_device(t, c->g, c->in, c->n, 0, &out, &count);
    CHECK_MSG(vkf_status_code_of(s) == VKF_STATUS_UNSUPPORTED, "%s: f16 without 16-bit storage: %s",
              label, s ? vkf_status_message(s) : "ran");
    vkf_status_free(s);
    free(out);
  } else {
    bad = op_check(t, c->g, c->in, c->n, tol, label);
  }
  for (size_t i = 0; i < c->n; i++) free(c->data[i]);
  vkf_graph_destroy(c->g);
  memset(c, 0, sizeof *c);
  return bad;
}

#endif
