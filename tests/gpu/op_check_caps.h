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
  size_t count = 0;
  return op_run_device_with(t, g, inputs, input_count, caps, 0, out_values, &count);
}

/* op_check with the lowering's caps chosen by the test; returns the number of mismatches. */
static inline int op_check_caps(gpu_test *t, vkf_graph *g, const vkf_input_binding *inputs,
                                size_t input_count, const vkf_device_caps *caps, op_tol tol,
                                const char *label) {
  return op_check_with(t, g, inputs, input_count, caps, tol, label);
}

#endif
