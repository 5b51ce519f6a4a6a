/* Instance internals shared by host/ files (not part of the public API). */
#ifndef VKF_HOST_INSTANCE_INTERNAL_H
#define VKF_HOST_INSTANCE_INTERNAL_H

#include "host/instance.h"
#include "host/vk.h"

struct vkf_instance {
  VkInstance handle;
  VkDebugUtilsMessengerEXT messenger;
  /* This instance's own entry point: volk's global one is reloaded by every instance created
   * later, and one created without validation leaves it NULL. */
  PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger;
  int validate;
  uint32_t validation_messages;
  uint32_t device_count;
  VkPhysicalDevice *physical_devices;
  vkf_device_caps *caps;
};

/* Fills caps for one physical device (before any profile). */
void vkf_caps_query(VkPhysicalDevice physical_device, vkf_device_caps *out_caps);
/* Adds the VK_KHR_cooperative_matrix shapes and the GEMM kernels' tile to caps filled by
 * vkf_caps_query (it reads their features and subgroup size). */
void vkf_caps_query_coopmat(VkPhysicalDevice physical_device, vkf_device_caps *caps);
/* 1 when the device has VK_KHR_cooperative_matrix with its cooperativeMatrix feature;
 * *out_memory_model says whether vulkanMemoryModel (which the kernels' SPIR-V declares) is there,
 * *out_flexible whether VK_NV_cooperative_matrix2's flexible dimensions are. */
int vkf_coopmat_features(VkPhysicalDevice physical_device, int *out_memory_model,
                         int *out_flexible);
/* 1 when the physical device offers the device extension `name`. */
int vkf_device_has_extension(VkPhysicalDevice physical_device, const char *name);

#endif
