/* Buffer internals shared by host/ files (not part of the public API). */
#ifndef VKF_HOST_BUFFER_INTERNAL_H
#define VKF_HOST_BUFFER_INTERNAL_H

#include "host/buffer.h"
#include "host/device_internal.h"

struct vkf_buffer {
  vkf_device *device;
  VkBuffer handle;
  VkDeviceMemory memory;
  uint64_t size;
  void *mapped; /* non-NULL when the memory is host-visible (persistently mapped) */
  int coherent;
};

#endif
