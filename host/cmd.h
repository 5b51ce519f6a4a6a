/* A recorded list of dispatches: descriptor sets, push constants, buffer barriers and timestamp
 * queries. Record once, submit as often as needed (re-running records nothing new). */
#ifndef VKF_HOST_CMD_H
#define VKF_HOST_CMD_H

#include <stdint.h>

#include "graph/base/status.h"
#include "host/buffer.h"
#include "host/device.h"
#include "host/kernel.h"

typedef struct vkf_cmd vkf_cmd;

typedef struct vkf_binding {
  const vkf_buffer *buffer;
  uint64_t offset; /* bytes; multiple of the device's minStorageBufferOffsetAlignment */
  uint64_t size;   /* bytes; 0 = to the end of the buffer */
} vkf_binding;

/* `timestamp_count` queries are available to vkf_cmd_timestamp (0 = none). */
vkf_status vkf_cmd_create(vkf_device *device, uint32_t timestamp_count, vkf_cmd **out_cmd);
void vkf_cmd_destroy(vkf_cmd *cmd);

/* Starts (re)recording; the previous recording and its descriptor sets are dropped. A full
 * barrier against earlier transfers and submissions is recorded first. */
vkf_status vkf_cmd_begin(vkf_cmd *cmd);
/* Binds kernel, `bindings` (kernel's binding_count entries), push constants (the kernel's
 * push_constant_size bytes, may be NULL when 0) and dispatches groups. A binding wider than the
 * device's maxStorageBufferRange or misaligned gives a status naming the kernel and binding. */
vkf_status vkf_cmd_dispatch(vkf_cmd *cmd, const vkf_kernel *kernel, const vkf_binding *bindings,
                            const void *push_constants, uint32_t groups_x, uint32_t groups_y,
                            uint32_t groups_z);
/* Compute-write -> compute-read/write dependency on the given ranges (buffer memory barriers);
 * count 0 records one global memory barrier instead. */
void vkf_cmd_barrier(vkf_cmd *cmd, const vkf_binding *ranges, uint32_t count);
/* Copies `size` bytes from the start of `src` to the start of `dst` (a transfer, ordered after
 * and before the recorded compute work by full barriers). */
void vkf_cmd_copy(vkf_cmd *cmd, const vkf_buffer *src, const vkf_buffer *dst, uint64_t size);
/* Writes timestamp `index` after all previously recorded work. */
void vkf_cmd_timestamp(vkf_cmd *cmd, uint32_t index);
/* Ends recording (with a barrier that makes results visible to transfers and the host). */
vkf_status vkf_cmd_end(vkf_cmd *cmd);
/* Submits the recorded list and waits for it. May be called any number of times. */
vkf_status vkf_cmd_submit_wait(vkf_cmd *cmd);
/* Nanoseconds between timestamp 0 and each timestamp 0..count-1 of the last submission. */
vkf_status vkf_cmd_timestamps_ns(vkf_cmd *cmd, uint32_t count, double *out_ns);
uint32_t vkf_cmd_dispatch_count(const vkf_cmd *cmd);
uint32_t vkf_cmd_barrier_count(const vkf_cmd *cmd);

#endif
