/* Device selection for every vkf subcommand that runs kernels: runtime/device_open.h, plus the
 * CLI's report of validation messages on close. */
#ifndef VKF_TOOLS_DEVICE_OPEN_H
#define VKF_TOOLS_DEVICE_OPEN_H

#include "runtime/device_open.h"

typedef vkf_rt_device vkf_cli_device;

/* Opens the device chosen by `selector` (--device; NULL: VKF_DEVICE, then the best device). */
vkf_status vkf_cli_device_open(const char *selector, vkf_cli_device *out);
/* vkf_cli_device_open on a helper thread while `beside(user)` runs on this one: work that needs
 * no device, such as building a model's graph once, which assembles its fused and converted
 * weights (a fused QKV weight is tens of MB per layer) into the model's weight cache while the
 * driver loads. Both always finish; the first error is returned (the device's, when both fail)
 * and on error no device is left open. */
vkf_status vkf_cli_device_open_beside(const char *selector, vkf_cli_device *out,
                                      vkf_status (*beside)(void *user), void *user);
/* Closes it; prints the count and returns non-zero when validation (VKF_VALIDATE=1) reported any
 * message. */
int vkf_cli_device_close(vkf_cli_device *d);

#endif
