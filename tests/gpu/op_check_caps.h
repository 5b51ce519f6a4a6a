/* op_check (tests/op_harness.h) with the lowering's caps chosen by the test: runs on this device
 * the variants that another device class would get (e.g. a discrete GPU's large workgroups and
 * multi-subgroup reductions on lavapipe, whose own caps pick one subgroup per workgroup).
 * Header-only, for the row-kernel tests. */
#ifndef VKF_TESTS_GPU_OP_CHECK_CAPS_H
#define VKF_TESTS_GPU_OP_CHECK_CAPS_H

#include "tests/op_harness.h"

/* The device's caps as a discrete GPU would report them, with grid x clamped to 1000 workgroups
 * so that moderate cases take 2-D grids; limits only shrink, so every variant chosen still runs
 * here. */
static inline vkf_device_caps op_caps_gpu_like(const gpu_test *t) {
  vkf_device_caps caps = *vkf_device_caps_get(t->device);
  caps.kind = VKF_DEVICE_KIND_DISCRETE_GPU;
  if (caps.max_workgroup_count[0] > 1000) caps.max_workgroup_count[0] = 1000;
  return caps;
}

/* Output 0 of `g` lowered with `caps` and run on the device, as fp32 (malloc'ed). */
static inline vkf_status op_run_device_caps(gpu_test *t, vkf_graph *g,
                                            const vkf_input_binding *inputs, size_t input_count,
                                            const vkf_device_caps *caps, float **out_values) {
  *out_values = NULL;
  VKF_RETURN_IF_ERROR(vkf_graph_status(g));
  VKF_RETURN_IF_ERROR(vkf_memory_plan_build(g, NULL));
  vkf_lowered low;
  VKF_RETURN_IF_ERROR(vkf_lower_graph(g, caps, NULL, &low));
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
  vkf_value out = vkf_graph_output_at(g, 0);
  const vkf_tensor *ot = vkf_graph_tensor(g, out);
  size_t count = (size_t)vkf_tensor_element_count(ot);
  void *raw = malloc(vkf_tensor_size(ot) + 16);
  float *values = malloc(count * sizeof(float) + 16);
  if (!st) st = vkf_session_read(s, low.tensors[out.id].buffer, 0, raw, vkf_tensor_size(ot));
  if (!st) {
    for (size_t i = 0; i < count; i++) values[i] = op_load(raw, ot->dtype, i);
    *out_values = values;
  } else {
    free(values);
  }
  free(raw);
  vkf_session_destroy(s);
  vkf_lowered_free(&low);
  return st;
}

/* Compares output 0 with the interpreter like op_check; returns the number of mismatches. */
static inline int op_check_caps(gpu_test *t, vkf_graph *g, const vkf_input_binding *inputs,
                                size_t input_count, const vkf_device_caps *caps, op_tol tol,
                                const char *label) {
  float *gpu = NULL;
  vkf_status st = op_run_device_caps(t, g, inputs, input_count, caps, &gpu);
  CHECK_MSG(st == VKF_OK, "%s: device run failed: %s", label, vkf_status_message(st));
  if (st) {
    vkf_status_free(st);
    return 1;
  }
  size_t count = (size_t)vkf_tensor_element_count(vkf_graph_tensor(g, vkf_graph_output_at(g, 0)));
  float *ref = malloc(count * sizeof(float) + 16);
  vkf_interp *in = NULL;
  st = vkf_interp_create(g, &in);
  for (size_t i = 0; i < input_count && !st; i++)
    st = vkf_interp_set(in, inputs[i].value, inputs[i].data, inputs[i].size);
  if (!st) st = vkf_interp_run(in);
  if (!st) st = vkf_interp_get_f32(in, vkf_graph_output_at(g, 0), ref, count);
  CHECK_MSG(st == VKF_OK, "%s: interpreter failed: %s", label, vkf_status_message(st));
  int bad = st ? 1 : 0;
  double max_err = 0;
  size_t worst = 0;
  for (size_t i = 0; i < count && !st; i++) {
    double err = fabs((double)gpu[i] - (double)ref[i]);
    int ok = isfinite(gpu[i]) == isfinite(ref[i]) &&
             (!isfinite(ref[i]) ? gpu[i] == ref[i] : err <= tol.atol + tol.rtol * fabs(ref[i]));
    if (!ok) bad++;
    if (!(err <= max_err)) max_err = err, worst = i;
  }
  if (!st)
    CHECK_MSG(bad == 0,
              "%s: %d of %zu elements out of tolerance (max err %.3g at %zu: gpu %.9g ref "
              "%.9g; atol %g rtol %g)",
              label, bad, count, max_err, worst, count ? gpu[worst] : 0.0, count ? ref[worst] : 0.0,
              tol.atol, tol.rtol);
  vkf_status_free(st);
  vkf_interp_destroy(in);
  free(ref);
  free(gpu);
  return bad;
}

#endif
