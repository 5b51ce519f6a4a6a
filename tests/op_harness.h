/* Op test harness: runs a small graph on the device through the whole path (memory plan ->
 * vkf_lower_graph -> session) and through the CPU interpreter, then compares every graph output
 * elementwise: |gpu - ref| <= atol + rtol * |ref|, NaN/Inf from the device always fails.
 * Header-only, for tests/gpu/test_*.c. */
#ifndef VKF_TESTS_OP_HARNESS_H
#define VKF_TESTS_OP_HARNESS_H

#include <math.h>
#include <stdint.h>

#include "graph/base/half.h"
#include "graph/interp/interp.h"
#include "graph/lower/lower.h"
#include "graph/passes/memory_plan.h"
#include "host/session.h"
#include "tests/gpu_util.h"

typedef struct op_tol {
  double atol, rtol;
} op_tol;

/* Deterministic uniform floats in [lo, hi) (xorshift; seed != 0). */
static inline void op_fill_uniform(float *x, size_t n, uint32_t seed, float lo, float hi) {
  uint32_t s = seed ? seed : 1;
  for (size_t i = 0; i < n; i++) {
    s ^= s << 13, s ^= s >> 17, s ^= s << 5;
    x[i] = lo + (hi - lo) * (float)(s >> 8) / 16777216.0f;
  }
}

/* Small integers in [lo, hi]: products and sums stay exact in fp32 (tiling checks). */
static inline void op_fill_ints(float *x, size_t n, uint32_t seed, int lo, int hi) {
  uint32_t s = seed ? seed : 1;
  for (size_t i = 0; i < n; i++) {
    s ^= s << 13, s ^= s >> 17, s ^= s << 5;
    x[i] = (float)(lo + (int)(s % (uint32_t)(hi - lo + 1)));
  }
}

/* Converts n floats to f16 bit patterns (for f16 inputs). */
static inline void op_to_half(const float *x, uint16_t *out, size_t n) {
  for (size_t i = 0; i < n; i++) out[i] = vkf_float_to_half(x[i]);
}

static inline float op_load(const void *data, vkf_dtype dtype, size_t i) {
  switch (dtype) {
    case VKF_F16: return vkf_half_to_float(((const uint16_t *)data)[i]);
    case VKF_I32: return (float)((const int32_t *)data)[i];
    default: return ((const float *)data)[i];
  }
}

/* Runs `g` on the device and returns output `index` converted to fp32 in *out_values (malloc'ed,
 * caller frees) with its element count. Inputs are bound from `inputs`; constants with data are
 * uploaded from their host pointers. The plan is lowered for `caps` (NULL: the device's own), so a
 * test can run here the variants another device class would get (caps may only shrink limits). */
static inline vkf_status op_run_device_with(gpu_test *t, vkf_graph *g,
                                            const vkf_input_binding *inputs, size_t input_count,
                                            const vkf_device_caps *caps, uint32_t index,
                                            float **out_values, size_t *out_count) {
  *out_values = NULL;
  *out_count = 0;
  VKF_RETURN_IF_ERROR(vkf_graph_status(g));
  VKF_RETURN_IF_ERROR(vkf_memory_plan_build(g, NULL));
  vkf_lowered low;
  VKF_RETURN_IF_ERROR(
      vkf_lower_graph(g, caps ? caps : vkf_device_caps_get(t->device), NULL, &low));
  vkf_session *s = NULL;
  vkf_status st = vkf_session_create(t->device, low.plan, NULL, &s);
  for (uint32_t id = 1; id < low.tensor_bound && !st; id++) {
    const vkf_tensor *tensor = vkf_graph_tensor(g, (vkf_value){id});
    if (tensor->removed || tensor->role != VKF_ROLE_CONSTANT || !tensor->data ||
        tensor->base.id != id)
      continue;
    st = vkf_session_write(s, low.tensors[id].buffer, 0, tensor->data, vkf_tensor_size(tensor));
  }
  for (size_t i = 0; i < input_count && !st; i++)
    st = vkf_session_write(s, low.tensors[inputs[i].value.id].buffer, 0, inputs[i].data,
                           inputs[i].size);
  if (!st) st = vkf_session_run(s);
  vkf_value out = vkf_graph_output_at(g, index);
  const vkf_tensor *ot = vkf_graph_tensor(g, out);
  size_t count = (size_t)vkf_tensor_element_count(ot);
  void *raw = malloc(vkf_tensor_size(ot) + 16);
  float *values = malloc(count * sizeof(float) + 16);
  if (!st) st = vkf_session_read(s, low.tensors[out.id].buffer, 0, raw, vkf_tensor_size(ot));
  if (!st) {
    for (size_t i = 0; i < count; i++) values[i] = op_load(raw, ot->dtype, i);
    *out_values = values;
    *out_count = count;
  } else {
    free(values);
  }
  free(raw);
  vkf_session_destroy(s);
  vkf_lowered_free(&low);
  return st;
}

static inline vkf_status op_run_device(gpu_test *t, vkf_graph *g, const vkf_input_binding *inputs,
                                       size_t input_count, uint32_t index, float **out_values,
                                       size_t *out_count) {
  return op_run_device_with(t, g, inputs, input_count, NULL, index, out_values, out_count);
}

/* Runs `g` in the CPU interpreter and writes `count` elements of output `index`, as f32, to `out`. */
static inline vkf_status op_run_interp(vkf_graph *g, const vkf_input_binding *inputs,
                                       size_t input_count, uint32_t index, float *out,
                                       size_t count) {
  vkf_interp *in = NULL;
  vkf_status st = vkf_interp_create(g, &in);
  for (size_t i = 0; i < input_count && !st; i++)
    st = vkf_interp_set(in, inputs[i].value, inputs[i].data, inputs[i].size);
  if (!st) st = vkf_interp_run(in);
  if (!st) st = vkf_interp_get_f32(in, vkf_graph_output_at(g, index), out, count);
  vkf_interp_destroy(in);
  return st;
}

/* The /mobile reruns of tests/CMakeLists.txt set VKF_TEST_PROFILE_DELTA=1: run only the cases
 * whose plan the device profile changes. A case lowered for the device's own caps whose plan
 * under the profile is, dispatch for dispatch (shader, defines, specialization constants, grid,
 * bindings, push constants, required subgroup size), the plan it gets without the profile runs the
 * very same work as in the unprofiled run of the same test, and is skipped here. The caps without
 * the profile come from a second instance created with none (and the device's own subgroup probe
 * result, which does not depend on the profile). */
static inline char *op_plan_text(const vkf_graph *g, const vkf_device_caps *caps) {
  vkf_lowered low;
  vkf_status st = vkf_lower_graph(g, caps, NULL, &low);
  if (st) {
    vkf_status_free(st);
    return NULL;
  }
  char *text = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&text, &size);
  if (f) {
    vkf_plan_dump_text(low.plan, f);
    for (uint32_t i = 0; i < vkf_plan_dispatch_count(low.plan); i++)
      fprintf(f, "subgroup %u\n", vkf_plan_dispatch_get(low.plan, i)->subgroup_size);
    fclose(f);
  }
  vkf_lowered_free(&low);
  return text;
}

static int op_delta_skipped;
static void op_delta_report(void) {
  printf("VKF_TEST_PROFILE_DELTA: %d case(s) skipped, their plan the same without the profile\n",
         op_delta_skipped);
}

static inline int op_same_plan_unprofiled(gpu_test *t, vkf_graph *g) {
  static int state; /* 0: not asked, 1: on with base caps, -1: off */
  static vkf_device_caps base;
  if (state == 0) {
    const char *on = getenv("VKF_TEST_PROFILE_DELTA");
    const char *profile = getenv("VKF_DEVICE_PROFILE");
    state = -1;
    vkf_instance *inst = NULL;
    uint32_t index = 0;
    vkf_instance_options o = {.validate = -1, .device_profile = ""};
    vkf_status st = VKF_OK;
    if (on && strcmp(on, "1") == 0 && profile && *profile) {
      st = vkf_instance_create(&o, &inst);
      if (!st) st = vkf_instance_choose_device(inst, NULL, &index);
      CHECK_MSG(st == VKF_OK, "VKF_TEST_PROFILE_DELTA: no caps without the profile: %s",
                vkf_status_message(st));
    }
    if (inst && !st) {
      base = *vkf_instance_device_caps(inst, index);
      const vkf_device_caps *dev = vkf_device_caps_get(t->device);
      base.subgroup_misreported = dev->subgroup_misreported;
      if (dev->subgroup_misreported) {
        base.subgroup_size = dev->subgroup_size;
        base.subgroup_size_control = dev->subgroup_size_control;
      }
      state = 1;
      atexit(op_delta_report);
    }
    vkf_status_free(st);
    vkf_instance_destroy(inst);
  }
  if (state < 0) return 0;
  vkf_status st = vkf_memory_plan_build(g, NULL);
  if (st) { /* the run reports it */
    vkf_status_free(st);
    return 0;
  }
  char *mine = op_plan_text(g, vkf_device_caps_get(t->device)), *theirs = op_plan_text(g, &base);
  int same = mine && theirs && strcmp(mine, theirs) == 0;
  free(mine);
  free(theirs);
  op_delta_skipped += same;
  return same;
}

/* Runs `g` on the device (lowered for `caps`, NULL: the device's) and in the interpreter; checks
 * every output. Returns the number of mismatching elements (0 = pass) and records CHECK results
 * under `label`. */
static inline int op_check_with(gpu_test *t, vkf_graph *g, const vkf_input_binding *inputs,
                                size_t input_count, const vkf_device_caps *caps, op_tol tol,
                                const char *label) {
  int failures = 0;
  if (!caps && op_same_plan_unprofiled(t, g)) return 0;
  for (uint32_t o = 0; o < vkf_graph_output_count(g); o++) {
    float *gpu = NULL;
    size_t count = 0;
    vkf_status st = op_run_device_with(t, g, inputs, input_count, caps, o, &gpu, &count);
    CHECK_MSG(st == VKF_OK, "%s: device run failed: %s", label, vkf_status_message(st));
    if (st) {
      vkf_status_free(st);
      return 1;
    }
    float *ref = malloc(count * sizeof(float) + 16);
    st = op_run_interp(g, inputs, input_count, o, ref, count);
    CHECK_MSG(st == VKF_OK, "%s: interpreter failed: %s", label, vkf_status_message(st));
    if (!st) {
      double max_err = 0;
      size_t worst = 0;
      int bad = 0;
      for (size_t i = 0; i < count; i++) {
        double err = fabs((double)gpu[i] - (double)ref[i]);
        int ok = isfinite(gpu[i]) == isfinite(ref[i]) &&
                 (!isfinite(ref[i]) ? gpu[i] == ref[i] : err <= tol.atol + tol.rtol * fabs(ref[i]));
        if (!ok) bad++;
        if (!(err <= max_err)) max_err = err, worst = i;
      }
      CHECK_MSG(bad == 0, "%s: output %u: %d of %zu elements out of tolerance (max err %.3g at %zu: "
                "gpu %.9g ref %.9g; atol %g rtol %g)", label, o, bad, count, max_err, worst,
                count ? gpu[worst] : 0.0, count ? ref[worst] : 0.0, tol.atol, tol.rtol);
      failures += bad;
    } else {
      failures++;
    }
    vkf_status_free(st);
    free(ref);
    free(gpu);
  }
  return failures;
}

static inline int op_check(gpu_test *t, vkf_graph *g, const vkf_input_binding *inputs,
                           size_t input_count, op_tol tol, const char *label) {
  return op_check_with(t, g, inputs, input_count, NULL, tol, label);
}

#endif
