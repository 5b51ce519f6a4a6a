/* vkf_device_copy_bandwidth: a timed vkCmdCopyBuffer between two device buffers. */
#include "host/bandwidth.h"

#include <time.h>

#include "host/buffer.h"
#include "host/cmd.h"

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

vkf_status vkf_device_copy_bandwidth(vkf_device *device, uint64_t bytes, int runs,
                                     double *out_gb_per_s) {
  *out_gb_per_s = 0;
  const vkf_device_caps *caps = vkf_device_caps_get(device);
  uint64_t heap = 0;
  for (uint32_t i = 0; i < caps->heap_count; i++)
    if (caps->heap_device_local[i] && caps->heap_size[i] > heap) heap = caps->heap_size[i];
  if (heap && bytes > heap / 4) bytes = heap / 4;
  if (caps->max_memory_allocation_size && bytes > caps->max_memory_allocation_size)
    bytes = caps->max_memory_allocation_size;
  bytes &= ~(uint64_t)255;
  if (bytes == 0 || runs < 1)
    return vkf_status_make(VKF_STATUS_INVALID_ARGUMENT, "copy bandwidth: nothing to copy");
  vkf_buffer *src = NULL, *dst = NULL;
  vkf_cmd *cmd = NULL;
  vkf_status st = vkf_buffer_create(device, bytes, "bandwidth source", &src);
  if (!st) st = vkf_buffer_create(device, bytes, "bandwidth destination", &dst);
  if (!st) st = vkf_buffer_zero(device, src, 0, bytes);
  if (!st) st = vkf_cmd_create(device, caps->timestamps ? 2 : 0, &cmd);
  if (!st) st = vkf_cmd_begin(cmd);
  if (!st) {
    if (caps->timestamps) vkf_cmd_timestamp(cmd, 0);
    vkf_cmd_copy(cmd, src, dst, bytes);
    if (caps->timestamps) vkf_cmd_timestamp(cmd, 1);
    st = vkf_cmd_end(cmd);
  }
  double best = 0;
  for (int i = 0; i <= runs && !st; i++) { /* run 0 warms up */
    double t0 = now_ns(), ns[2] = {0, 0};
    st = vkf_cmd_submit_wait(cmd);
    double wall = now_ns() - t0;
    if (!st && caps->timestamps) st = vkf_cmd_timestamps_ns(cmd, 2, ns);
    double t = caps->timestamps ? ns[1] : wall;
    if (!st && i > 0 && t > 0 && (best == 0 || t < best)) best = t;
  }
  vkf_cmd_destroy(cmd);
  vkf_buffer_destroy(dst);
  vkf_buffer_destroy(src);
  if (!st && best > 0) *out_gb_per_s = 2.0 * (double)bytes / best;
  if (!st && best <= 0)
    st = vkf_status_make(VKF_STATUS_DEVICE, "copy bandwidth: the copy took no measurable time");
  return st;
}
