/* The Vulkan include point for host/ (volk, so the loader is resolved at run time) and the one
 * mapping from VkResult to vkf_status that every Vulkan call goes through. */
#ifndef VKF_HOST_VK_H
#define VKF_HOST_VK_H

#include <volk.h>

#include "graph/base/status.h"

/* Builds a status for a failed Vulkan call: "vkCreateBuffer failed: VK_ERROR_OUT_OF_DEVICE_MEMORY". */
vkf_status vkf_vk_status(VkResult result, const char *call);
const char *vkf_vk_result_name(VkResult result);

/* Evaluates a Vulkan call; on failure returns a status naming the call and the result. */
#define VKF_VK_RETURN_IF_ERROR(call)                                                             \
  do {                                                                                           \
    VkResult vkf_vk_result_ = (call);                                                            \
    if (vkf_vk_result_ != VK_SUCCESS) return vkf_vk_status(vkf_vk_result_, #call);               \
  } while (0)

#endif
