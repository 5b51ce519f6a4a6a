/* Owns VkResult naming and the VkResult -> vkf_status mapping. */
#include "host/vk.h"

#include <string.h>

const char *vkf_vk_result_name(VkResult result) {
  switch (result) {
#define NAME(r) \
  case r:       \
    return #r;
    NAME(VK_SUCCESS)
    NAME(VK_NOT_READY)
    NAME(VK_TIMEOUT)
    NAME(VK_INCOMPLETE)
    NAME(VK_ERROR_OUT_OF_HOST_MEMORY)
    NAME(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    NAME(VK_ERROR_INITIALIZATION_FAILED)
    NAME(VK_ERROR_DEVICE_LOST)
    NAME(VK_ERROR_MEMORY_MAP_FAILED)
    NAME(VK_ERROR_LAYER_NOT_PRESENT)
    NAME(VK_ERROR_EXTENSION_NOT_PRESENT)
    NAME(VK_ERROR_FEATURE_NOT_PRESENT)
    NAME(VK_ERROR_INCOMPATIBLE_DRIVER)
    NAME(VK_ERROR_TOO_MANY_OBJECTS)
    NAME(VK_ERROR_FORMAT_NOT_SUPPORTED)
    NAME(VK_ERROR_FRAGMENTED_POOL)
    NAME(VK_ERROR_OUT_OF_POOL_MEMORY)
    NAME(VK_ERROR_INVALID_SHADER_NV)
    NAME(VK_ERROR_UNKNOWN)
#undef NAME
    default:
      return "VK_ERROR_(unknown)";
  }
}

vkf_status vkf_vk_status(VkResult result, const char *call) {
  /* Keep just the function name out of the stringified call expression. */
  char fn[96];
  size_t n = strcspn(call, "(");
  if (n >= sizeof fn) n = sizeof fn - 1;
  memcpy(fn, call, n);
  fn[n] = 0;
  vkf_status_code code = VKF_STATUS_DEVICE;
  if (result == VK_ERROR_OUT_OF_DEVICE_MEMORY || result == VK_ERROR_OUT_OF_HOST_MEMORY)
    code = VKF_STATUS_OUT_OF_MEMORY;
  else if (result == VK_ERROR_INCOMPATIBLE_DRIVER || result == VK_ERROR_INITIALIZATION_FAILED)
    code = VKF_STATUS_NO_DEVICE;
  return vkf_status_make(code, "%s failed: %s", fn, vkf_vk_result_name(result));
}
