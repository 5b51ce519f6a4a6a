/* The Vulkan instance: loader (volk), optional Khronos validation with a message counter, and the
 * list of physical devices with their caps. One per process is typical; not thread-safe. */
#ifndef VKF_HOST_INSTANCE_H
#define VKF_HOST_INSTANCE_H

#include <stdint.h>

#include "graph/base/caps.h"
#include "graph/base/status.h"

typedef struct vkf_instance vkf_instance;

typedef struct vkf_instance_options {
  /* 1: enable VK_LAYER_KHRONOS_validation (+ synchronization validation) and count messages;
   * 2: the layer's GPU-assisted mode instead of synchronization validation: every shader is
   * instrumented to report storage-buffer accesses outside their descriptor's range (the bounds
   * lane); 0: follow VKF_VALIDATE. -1: force off. */
  int validate;
  /* Device profile to clamp caps to; NULL: follow VKF_DEVICE_PROFILE. */
  const char *device_profile;
} vkf_instance_options;

/* Fails with VKF_STATUS_NO_DEVICE when no loader, no driver or no physical device exists. */
vkf_status vkf_instance_create(const vkf_instance_options *options, vkf_instance **out_instance);
void vkf_instance_destroy(vkf_instance *instance);

uint32_t vkf_instance_device_count(const vkf_instance *instance);
/* Caps after the device profile was applied. `index` < device count. */
const vkf_device_caps *vkf_instance_device_caps(const vkf_instance *instance, uint32_t index);
/* Picks a device: `selector` is an index ("1") or a case-insensitive name substring ("llvmpipe");
 * NULL falls back to VKF_DEVICE, then to the best device (discrete GPU > integrated > virtual >
 * CPU). An unmatched selector gives NOT_FOUND listing the devices. */
vkf_status vkf_instance_choose_device(const vkf_instance *instance, const char *selector,
                                      uint32_t *out_index);
/* Number of validation warnings + errors seen so far (0 when validation is off). */
uint32_t vkf_instance_validation_message_count(const vkf_instance *instance);
int vkf_instance_validation_enabled(const vkf_instance *instance);

#endif
