/* A logical device with one compute queue: the object every buffer, kernel and command list is
 * created from. Owns the shader compiler, the kernel (pipeline) cache and the persisted
 * VkPipelineCache. Not thread-safe: use one device per thread. */
#ifndef VKF_HOST_DEVICE_H
#define VKF_HOST_DEVICE_H

#include <stdint.h>

#include "graph/base/caps.h"
#include "graph/base/status.h"
#include "host/instance.h"

typedef struct vkf_device vkf_device;

/* Creates the logical device for physical device `index` of `instance` (see
 * vkf_instance_choose_device). The instance must outlive the device. */
vkf_status vkf_device_create(vkf_instance *instance, uint32_t index, vkf_device **out_device);
/* Waits for idle, saves the pipeline cache, frees everything the device owns. */
void vkf_device_destroy(vkf_device *device);

/* Caps after VKF_DEVICE_PROFILE. */
const vkf_device_caps *vkf_device_caps_get(const vkf_device *device);
vkf_instance *vkf_device_instance(const vkf_device *device);

typedef struct vkf_device_stats {
  uint32_t kernels_created;   /* pipelines built (kernel cache misses) */
  uint32_t kernel_cache_hits; /* vkf_kernel_get served from the in-memory kernel cache */
  uint32_t spirv_embedded;    /* SPIR-V served from the build-time table (variants.txt) */
  uint32_t spirv_disk_hits;   /* SPIR-V served from the disk cache */
  uint32_t spirv_compiles;    /* SPIR-V compiled by shaderc */
  double pipeline_create_ms;  /* total time in vkCreateComputePipelines */
} vkf_device_stats;
vkf_device_stats vkf_device_stats_get(const vkf_device *device);

#endif
