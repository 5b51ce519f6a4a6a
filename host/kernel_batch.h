/* Builds the kernels a plan needs all at once. A warm start spends most of its set-up in the
 * driver's pipeline compiles (lavapipe: ~0.1 s per large variant, with no pipeline cache), which
 * are independent: worker threads find or compile each variant's SPIR-V and create its pipeline
 * while the caller goes on (uploading weights) until it waits. */
#ifndef VKF_HOST_KERNEL_BATCH_H
#define VKF_HOST_KERNEL_BATCH_H

#include <stdint.h>

#include "graph/base/status.h"
#include "host/device.h"
#include "host/kernel.h"

typedef struct vkf_kernel_batch vkf_kernel_batch;

/* Starts building the variants of `descs` the device has not cached (duplicates built once) on
 * one worker per core (at most 8, at most one per variant); with nothing to build no thread
 * starts. A malformed descriptor fails here; compile and pipeline errors come back from
 * vkf_kernel_batch_wait. Until then the caller may use the device for anything but its kernels. */
vkf_status vkf_kernel_batch_start(vkf_device *device, const vkf_kernel_desc *descs, uint32_t count,
                                  vkf_kernel_batch **out_batch);

/* Waits for the workers (reporting "building kernels" progress), adds what they built to the
 * device's kernel cache and frees the batch; the first failure is returned. NULL is a no-op. */
vkf_status vkf_kernel_batch_wait(vkf_kernel_batch *batch);

#endif
