/* Device selection shared by every vkf subcommand that runs kernels. */
#ifndef VKF_TOOLS_DEVICE_OPEN_H
#define VKF_TOOLS_DEVICE_OPEN_H

#include "host/device.h"
#include "host/instance.h"

typedef struct vkf_cli_device {
  vkf_instance *instance;
  vkf_device *device;
} vkf_cli_device;

/* Opens the device chosen by `selector` (--device; NULL: VKF_DEVICE, then the best device). */
vkf_status vkf_cli_device_open(const char *selector, vkf_cli_device *out);
/* Closes it; returns non-zero when validation (VKF_VALIDATE=1) reported any message. */
int vkf_cli_device_close(vkf_cli_device *d);

#endif
