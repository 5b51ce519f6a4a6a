/* Opens and closes the device for a subcommand; reports validation messages on close. */
#include "tools/vkf/device_open.h"

#include <stdio.h>
#include <string.h>

#include "tools/vkf/progress.h"

vkf_status vkf_cli_device_open(const char *selector, vkf_cli_device *out) {
  memset(out, 0, sizeof *out);
  VKF_RETURN_IF_ERROR(vkf_instance_create(NULL, &out->instance));
  uint32_t index = 0;
  vkf_status st = vkf_instance_choose_device(out->instance, selector, &index);
  if (!st) st = vkf_device_create(out->instance, index, &out->device);
  if (!st) vkf_cli_progress_install(out->device);
  if (st) {
    vkf_instance_destroy(out->instance);
    out->instance = NULL;
  }
  return st;
}

int vkf_cli_device_close(vkf_cli_device *d) {
  if (!d->instance) return 0;
  vkf_device_destroy(d->device);
  uint32_t messages = vkf_instance_validation_message_count(d->instance);
  vkf_instance_destroy(d->instance);
  memset(d, 0, sizeof *d);
  if (messages) fprintf(stderr, "vkf: %u validation message(s)\n", messages);
  return messages ? 1 : 0;
}
