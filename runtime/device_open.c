/* Opens and closes an instance with its chosen device; counts validation messages on close. */
#include "runtime/device_open.h"

#include <string.h>

vkf_status vkf_rt_device_open(const char *selector, int validate, vkf_rt_device *out) {
  memset(out, 0, sizeof *out);
  vkf_instance_options io = {.validate = validate};
  VKF_RETURN_IF_ERROR(vkf_instance_create(&io, &out->instance));
  uint32_t index = 0;
  vkf_status st = vkf_instance_choose_device(out->instance, selector, &index);
  if (!st) st = vkf_device_create(out->instance, index, &out->device);
  if (st) {
    vkf_instance_destroy(out->instance);
    out->instance = NULL;
  }
  return st;
}

uint32_t vkf_rt_device_close(vkf_rt_device *d) {
  if (!d->instance) return 0;
  vkf_device_destroy(d->device);
  uint32_t messages = vkf_instance_validation_message_count(d->instance);
  vkf_instance_destroy(d->instance);
  memset(d, 0, sizeof *d);
  return messages;
}
