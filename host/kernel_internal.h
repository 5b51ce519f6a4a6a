/* Kernel internals shared by host/ files (not part of the public API). */
#ifndef VKF_HOST_KERNEL_INTERNAL_H
#define VKF_HOST_KERNEL_INTERNAL_H

#include <stddef.h>

#include "host/kernel.h"
#include "host/vk.h"

struct vkf_kernel {
  struct vkf_kernel *next;
  uint64_t key;
  char name[64];
  uint32_t binding_count, push_constant_size;
  uint8_t texel[VKF_KERNEL_MAX_BINDINGS]; /* vkf_plan_texel per binding */
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout pipeline_layout;
  VkPipeline pipeline;
  double create_ms; /* vkCreateComputePipelines time for this variant */
  size_t spirv_size;
};

/* The pieces of vkf_kernel_get, shared with the batch builder (kernel_batch.c). */
uint64_t vkf_kernel_variant_key(const vkf_kernel_desc *desc);
vkf_status vkf_kernel_check_desc(const vkf_device *device, const vkf_kernel_desc *desc);
/* A kernel with desc's layout fields and no Vulkan objects yet; NULL when out of memory. */
vkf_kernel *vkf_kernel_new(const vkf_kernel_desc *desc, uint64_t key);
/* Finds or compiles desc's SPIR-V and creates k's layouts and pipeline. Safe on any thread for
 * distinct kernels: it touches only `k`, the thread-safe shader compiler and Vulkan create calls
 * (the pipeline cache is internally synchronized). */
vkf_status vkf_kernel_build(const vkf_device *device, vkf_kernel *k, const vkf_kernel_desc *desc);
/* The device's cached kernel with `key`, or NULL. */
vkf_kernel *vkf_kernel_find(vkf_device *device, uint64_t key);
/* Adds a built kernel to the device's cache and stats (the device's owning thread only). */
void vkf_kernel_insert(vkf_device *device, vkf_kernel *k);
void vkf_kernel_free(vkf_device *device, vkf_kernel *k);

#endif
