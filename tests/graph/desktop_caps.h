/* Desktop-GPU-like caps (NVIDIA-class limits) for the no-GPU lowering tests, built from zero so
 * nothing of the machine running the tests leaks in. Header-only. */
#ifndef VKF_TESTS_GRAPH_DESKTOP_CAPS_H
#define VKF_TESTS_GRAPH_DESKTOP_CAPS_H

#include <string.h>

#include "graph/base/caps.h"

static inline vkf_device_caps desktop_caps(void) {
  vkf_device_caps c;
  memset(&c, 0, sizeof c);
  strcpy(c.name, "desktop");
  c.kind = VKF_DEVICE_KIND_DISCRETE_GPU;
  c.max_shared_memory_size = 49152;
  c.subgroup_size = 32;
  /* sizes a pipeline may require (AMD's range): tests set 8 or 32 and the choosers plan on it */
  c.min_subgroup_size = 4;
  c.max_subgroup_size = 64;
  c.subgroup_size_control = 1;
  c.subgroup_ops = 0xff;
  c.max_workgroup_size[0] = c.max_workgroup_size[1] = c.max_workgroup_size[2] = 1024;
  c.max_workgroup_invocations = 1024;
  c.max_workgroup_count[0] = c.max_workgroup_count[1] = c.max_workgroup_count[2] = 65535;
  c.max_push_constants_size = 256;
  c.min_storage_buffer_offset_alignment = 16;
  c.max_storage_buffer_range = 1u << 30;
  c.storage_16bit = c.fp16_arithmetic = 1;
  return c;
}

#endif
