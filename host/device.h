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
  /* The anatomy of the work on the queue (what a decode step costs around its kernels): */
  uint64_t submits;         /* vkQueueSubmit calls (plan runs, one-shot copies and fills) */
  uint64_t host_waits;      /* times the host blocked on the device (fences, queue idle) */
  uint64_t bytes_written;   /* host bytes written into device buffers (inputs, weights) */
  uint64_t bytes_read_back; /* device bytes read back to the host (outputs) */
} vkf_device_stats;
vkf_device_stats vkf_device_stats_get(const vkf_device *device);

/* Progress of slow set-up work on a device: building the kernels of a plan (shaderc compiles on a
 * cold cache) and uploading a runner's weights. A task reports done = 0 first and done = total
 * last (also when it fails), so a caller that shows it knows when to clear its line. The library
 * never shows progress itself; a caller that wants it (vkf on a terminal) installs a callback. */
typedef struct vkf_progress {
  const char *task; /* "building kernels", "uploading weights" */
  const char *item; /* what is being done now (a kernel's name), NULL if none */
  uint64_t done, total;
  const char *unit; /* "" (a count) or "bytes" */
} vkf_progress;
typedef void (*vkf_progress_fn)(void *user, const vkf_progress *progress);
/* Installs `fn` (NULL: none) for the device's tasks; called on the device's thread. */
void vkf_device_set_progress(vkf_device *device, vkf_progress_fn fn, void *user);
/* Reports to the installed callback, if any. */
void vkf_device_report_progress(vkf_device *device, const vkf_progress *progress);

#endif
