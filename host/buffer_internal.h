/* Buffer internals shared by host/ files (not part of the public API). */
#ifndef VKF_HOST_BUFFER_INTERNAL_H
#define VKF_HOST_BUFFER_INTERNAL_H

#include "host/buffer.h"
#include "host/device_internal.h"

/* Every non-staging buffer's usage (host import checks the driver accepts it). */
#define VKF_BUFFER_USAGE                                                                       \
  (VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT |             \
   VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT)

struct vkf_buffer {
  vkf_device *device;
  VkBuffer handle;
  VkDeviceMemory memory;
  uint64_t size;
  /* Where the buffer's bytes start in `handle` and `mapped`: 0, except for imported host memory,
   * whose VkBuffer starts at the page below the data. Every descriptor, view, barrier and copy
   * offset adds it. */
  uint64_t base;
  void *mapped; /* non-NULL when the memory is host-visible (persistently mapped) */
  int coherent;
  int imported; /* host memory bound in place (vkf_buffer_import_host): read-only here */
};

#endif
