/* The CLI's device: runtime/device_open.c with validation following VKF_VALIDATE, and the
 * message count printed on close. */
#include "tools/vkf/device_open.h"

#include <stdio.h>

vkf_status vkf_cli_device_open(const char *selector, vkf_cli_device *out) {
  return vkf_rt_device_open(selector, 0, out);
}

int vkf_cli_device_close(vkf_cli_device *d) {
  uint32_t messages = vkf_rt_device_close(d);
  if (messages) fprintf(stderr, "vkf: %u validation message(s)\n", messages);
  return messages ? 1 : 0;
}
