/* Device selection shared by the vkf subcommands and the public API: an instance and the one
 * device chosen on it, opened and closed together. */
#ifndef VKF_RUNTIME_DEVICE_OPEN_H
#define VKF_RUNTIME_DEVICE_OPEN_H

#include "host/device.h"
#include "host/instance.h"

typedef struct vkf_rt_device {
  vkf_instance *instance;
  vkf_device *device;
} vkf_rt_device;

/* Opens the device chosen by `selector` (an index or a name substring; NULL: VKF_DEVICE, then the
 * best device). `validate` as vkf_instance_options.validate (0: follow VKF_VALIDATE). */
vkf_status vkf_rt_device_open(const char *selector, int validate, vkf_rt_device *out);
/* Closes it and returns the number of messages the validation layer reported (0 when off). */
uint32_t vkf_rt_device_close(vkf_rt_device *d);

#endif
