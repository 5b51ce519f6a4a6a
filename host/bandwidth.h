/* The device's memory bandwidth as one large buffer-to-buffer copy measures it: the yardstick of
 * bandwidth-bound work (decode steps read every weight once), measured in the same process as the
 * work it judges, since these machines are shared and their figures drift. */
#ifndef VKF_HOST_BANDWIDTH_H
#define VKF_HOST_BANDWIDTH_H

#include <stdint.h>

#include "graph/base/status.h"
#include "host/device.h"

/* Copies `bytes` (clamped to a quarter of the largest device-local heap and to one allocation)
 * between two device buffers warm-up + `runs` times and gives the fastest run's rate in GB/s,
 * counting the bytes read and the bytes written (2 * bytes per copy), as bandwidth figures of
 * GPUs are quoted. GPU timestamps where the queue has them, wall time otherwise. */
vkf_status vkf_device_copy_bandwidth(vkf_device *device, uint64_t bytes, int runs,
                                     double *out_gb_per_s);

#endif
