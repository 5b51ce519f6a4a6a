/* Device internals shared by host/ files (not part of the public API). */
#ifndef VKF_HOST_DEVICE_INTERNAL_H
#define VKF_HOST_DEVICE_INTERNAL_H

#include "host/device.h"
#include "host/instance_internal.h"
#include "host/shader_compiler.h"
#include "host/vk.h"

typedef struct vkf_kernel vkf_kernel;
typedef struct vkf_buffer vkf_buffer;

struct vkf_device {
  vkf_instance *instance;
  vkf_device_caps caps;
  VkPhysicalDevice physical;
  VkDevice handle;
  struct VolkDeviceTable vk; /* device-level function pointers, no loader trampoline */
  uint32_t queue_family;
  VkQueue queue;
  VkCommandPool command_pool;
  VkPhysicalDeviceMemoryProperties memory;
  VkPipelineCache pipeline_cache;
  char pipeline_cache_path[1024];
  vkf_shader_compiler *compiler;
  vkf_kernel *kernels; /* singly linked list; a handful of variants per model */
  vkf_buffer *staging; /* grown on demand for uploads/downloads on non-UMA devices */
  /* VK_EXT_external_memory_host enabled: minImportedHostPointerAlignment (0: not enabled), so
   * constants can be bound in place from host memory (vkf_buffer_import_host). */
  uint64_t host_import_alignment;
  vkf_device_stats stats;
  /* Submissions whose fence wait has not returned (one failed on the way): mapped memory is
   * written or read without waiting for the queue only when this is 0. */
  uint32_t in_flight;
  vkf_progress_fn progress; /* vkf_device_set_progress; NULL: none */
  void *progress_user;
};

/* Records `record` into a one-shot command buffer, submits it and waits. */
vkf_status vkf_device_run_once(vkf_device *device,
                               void (*record)(vkf_device *, VkCommandBuffer, void *), void *user);
void vkf_kernels_destroy_all(vkf_device *device);

#endif
