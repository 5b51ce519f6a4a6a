/* Kernel internals shared by host/ files (not part of the public API). */
#ifndef VKF_HOST_KERNEL_INTERNAL_H
#define VKF_HOST_KERNEL_INTERNAL_H

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
};

#endif
