/* Device memory: storage buffers (device-local; host-visible too on UMA devices) and the upload /
 * download helpers that go through a staging buffer where the device needs one. */
#ifndef VKF_HOST_BUFFER_H
#define VKF_HOST_BUFFER_H

#include <stdint.h>

#include "graph/base/status.h"
#include "host/device.h"

typedef struct vkf_buffer vkf_buffer;

/* A device-local storage buffer of `size` bytes (> 0). Sizes above the device's
 * maxMemoryAllocationSize or its largest heap give an OUT_OF_MEMORY status naming both numbers.
 * `label` (may be NULL) names the buffer in error messages. Contents are undefined. */
vkf_status vkf_buffer_create(vkf_device *device, uint64_t size, const char *label,
                             vkf_buffer **out_buffer);
/* A small buffer the host writes before each run (a step's ids, positions, lengths): host-visible
 * memory (device-local where the device has such a type), so writing it is a memcpy and never a
 * staged copy with a submission and a wait of its own. */
vkf_status vkf_buffer_create_input(vkf_device *device, uint64_t size, const char *label,
                                   vkf_buffer **out_buffer);
/* A buffer the host reads after each run (logits, the next ids): host-visible, cached where the
 * device has such a type, so reading it back is a memcpy after the run's own wait. */
vkf_status vkf_buffer_create_readback(vkf_device *device, uint64_t size, const char *label,
                                      vkf_buffer **out_buffer);
/* Binds `size` bytes of host memory at `data` in place, without a copy, where the device reads
 * host memory as its own (UMA devices with VK_EXT_external_memory_host): the pages around the
 * data are imported and the buffer starts at the data. UNSUPPORTED when the device cannot, or the
 * data's offset in its page is not aligned for a descriptor; the caller then copies. The bytes
 * must stay valid and unchanged until the buffer is destroyed, and the buffer is read-only
 * (uploads and fills into it are errors). */
vkf_status vkf_buffer_import_host(vkf_device *device, const void *data, uint64_t size,
                                  const char *label, vkf_buffer **out_buffer);
/* 1 for a buffer from vkf_buffer_import_host. */
int vkf_buffer_is_imported(const vkf_buffer *buffer);
void vkf_buffer_destroy(vkf_buffer *buffer);
uint64_t vkf_buffer_size(const vkf_buffer *buffer);

/* Copies host bytes into [offset, offset + size) of the buffer and waits until done. Direct
 * memcpy on host-visible (UMA) memory; staged copies otherwise. */
vkf_status vkf_buffer_upload(vkf_device *device, vkf_buffer *buffer, uint64_t offset,
                             const void *data, uint64_t size);
/* Copies [offset, offset + size) of the buffer to host memory; waits for the device. */
vkf_status vkf_buffer_download(vkf_device *device, const vkf_buffer *buffer, uint64_t offset,
                               void *out_data, uint64_t size);
/* Sets [offset, offset + size) to zero bytes (size and offset multiples of 4). */
vkf_status vkf_buffer_zero(vkf_device *device, vkf_buffer *buffer, uint64_t offset, uint64_t size);

#endif
