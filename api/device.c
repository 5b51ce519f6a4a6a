/* Devices of vkformer.h: listing (each call its own short-lived instance, so no state is kept
 * between calls) and opening one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handles.h"

vkformer_status vkformer_device_count(uint32_t *out_count) {
  VKF_API_REQUIRE(out_count, "vkformer_device_count: out_count is NULL");
  *out_count = 0;
  vkf_instance *inst = NULL;
  vkf_instance_options io = {.validate = -1};
  vkf_status st = vkf_instance_create(&io, &inst);
  if (st) return vkf_api_status(st);
  *out_count = vkf_instance_device_count(inst);
  vkf_instance_destroy(inst);
  return NULL;
}

vkformer_status vkformer_device_name(uint32_t index, char *buf, size_t size) {
  VKF_API_REQUIRE(buf && size, "vkformer_device_name: buf is NULL or size 0");
  buf[0] = 0;
  vkf_instance *inst = NULL;
  vkf_instance_options io = {.validate = -1};
  vkf_status st = vkf_instance_create(&io, &inst);
  if (st) return vkf_api_status(st);
  uint32_t n = vkf_instance_device_count(inst);
  if (index >= n)
    st = vkf_status_make(VKF_STATUS_NOT_FOUND, "device %u: there are %u devices", index, n);
  else
    snprintf(buf, size, "%s", vkf_instance_device_caps(inst, index)->name);
  vkf_instance_destroy(inst);
  return vkf_api_status(st);
}

vkformer_status vkformer_device_open(const vkformer_device_options *options,
                                     vkformer_device **out_device) {
  VKF_API_REQUIRE(out_device, "vkformer_device_open: out_device is NULL");
  *out_device = NULL;
  vkformer_device_options o = options ? *options : (vkformer_device_options){0};
  if (o.validate < -1 || o.validate > 1)
    return vkf_api_status(vkf_status_make(VKF_STATUS_INVALID_ARGUMENT,
                                          "device options: validate is %d (0, 1 or -1)",
                                          (int)o.validate));
  vkformer_device *d = calloc(1, sizeof *d);
  if (!d) return vkf_api_status(vkf_status_make(VKF_STATUS_OUT_OF_MEMORY, "device"));
  vkf_status st = vkf_rt_device_open(o.selector, o.validate, &d->rt);
  if (st) {
    free(d);
    return vkf_api_status(st);
  }
  snprintf(d->name, sizeof d->name, "%s", vkf_device_caps_get(d->rt.device)->name);
  *out_device = d;
  return NULL;
}

void vkformer_device_close(vkformer_device *device) {
  if (!device) return;
  vkf_rt_device_close(&device->rt);
  free(device);
}

const char *vkformer_device_get_name(const vkformer_device *device) {
  return device ? device->name : "";
}

uint32_t vkformer_device_validation_messages(const vkformer_device *device) {
  return device && device->rt.instance ? vkf_instance_validation_message_count(device->rt.instance)
                                       : 0;
}
