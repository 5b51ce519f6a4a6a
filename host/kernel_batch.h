/* Builds the kernels a plan needs all at once. A warm start spends most of its set-up in the
 * driver's pipeline compiles (lavapipe: ~0.1 s per large variant, with no pipeline cache), which
 * are independent: the SPIR-V is found on the caller's thread, then worker threads create the
 * pipelines while the caller goes on (uploading weights) until it waits. */
#ifndef VKF_HOST_KERNEL_BATCH_H
#define VKF_HOST_KERNEL_BATCH_H

#include <stdint.h>

#include "graph/base/status.h"
#include "host/device.h"
#include "host/kernel.h"

typedef struct vkf_kernel_batch vkf_kernel_batch;

/* Starts building the variants of `descs` the device has not cached (duplicates built once).
 * Nothing to build, or one variant, and no thread is started. The SPIR-V lookup (embedded
 * table, disk cache, shaderc) runs here, so a compile error comes back from this call. Until
 * vkf_kernel_batch_wait, the caller may use the device for anything but its kernels. */
vkf_status vkf_kernel_batch_start(vkf_device *device, const vkf_kernel_desc *descs, uint32_t count,
                                  vkf_kernel_batch **out_batch);

/* Waits for the workers (reporting "building kernels" progress), adds what they built to the
 * device's kernel cache and frees the batch; the first failure is returned. NULL is a no-op. */
vkf_status vkf_kernel_batch_wait(vkf_kernel_batch *batch);

#endif
