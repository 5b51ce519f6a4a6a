/* The subgroup probe run at device creation (see subgroup_probe.c). */
#ifndef VKF_HOST_SUBGROUP_PROBE_H
#define VKF_HOST_SUBGROUP_PROBE_H

#include "host/device.h"

/* Measures the subgroup width the device's pipelines run at and corrects device->caps where it
 * differs from the planned size. Fails only when the probe kernel cannot run. */
vkf_status vkf_subgroup_probe(vkf_device *device);

#endif
