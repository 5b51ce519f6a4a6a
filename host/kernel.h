/* A kernel is one compiled variant of a shader template: compute pipeline + layouts. Kernels are
 * owned and cached by the device: asking twice for the same variant returns the same object. */
#ifndef VKF_HOST_KERNEL_H
#define VKF_HOST_KERNEL_H

#include <stdint.h>

#include "graph/base/status.h"
#include "graph/lower/plan.h"
#include "host/device.h"
#include "host/shader_compiler.h"

typedef struct vkf_kernel vkf_kernel;

enum { VKF_KERNEL_MAX_BINDINGS = 16, VKF_KERNEL_MAX_SPEC_CONSTANTS = 16 };

typedef struct vkf_kernel_desc {
  const char *shader;  /* embedded file name ("gemm.comp") or a generated kernel's name */
  const char *source;  /* generated GLSL text; NULL for embedded shaders */
  const vkf_shader_define *defines;
  uint32_t define_count;
  const uint32_t *spec_constants; /* constant_id 0..count-1, as 32-bit values */
  uint32_t spec_constant_count;
  uint32_t binding_count;         /* set 0, bindings 0..count-1: storage buffers unless texel[] */
  uint8_t texel[VKF_KERNEL_MAX_BINDINGS]; /* vkf_plan_texel per binding: a uniform texel buffer
                                           * of that format (samplerBuffer), 0 = storage buffer */
  uint32_t push_constant_size;    /* bytes, multiple of 4 */
  uint32_t subgroup_size; /* the size its body was planned on (vkf_plan_dispatch); 0: any */
} vkf_kernel_desc;

/* Returns the cached kernel for `desc` or builds it (compile with disk cache, then pipeline with
 * the persisted VkPipelineCache). The kernel lives until the device is destroyed. */
vkf_status vkf_kernel_get(vkf_device *device, const vkf_kernel_desc *desc,
                          vkf_kernel **out_kernel);
const char *vkf_kernel_name(const vkf_kernel *kernel);
uint32_t vkf_kernel_binding_count(const vkf_kernel *kernel);
uint32_t vkf_kernel_push_constant_size(const vkf_kernel *kernel);

#endif
