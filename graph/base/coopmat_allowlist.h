/* Which devices' cooperative matrices vkformer trusts (see coopmat_allowlist.c). */
#ifndef VKF_GRAPH_COOPMAT_ALLOWLIST_H
#define VKF_GRAPH_COOPMAT_ALLOWLIST_H

#include <stddef.h>
#include <stdint.h>

/* What the allowlist reads of a device: vendor, driver and what tells architectures apart. */
typedef struct vkf_coopmat_device {
  uint32_t vendor_id;
  uint32_t driver_id;                  /* VkDriverId, 0 unknown */
  uint32_t min_subgroup_size, max_subgroup_size; /* 0 unknown */
  int int_dot_mixed_accelerated;       /* integerDotProduct4x8BitPackedMixedSignednessAccelerated */
} vkf_coopmat_device;

/* 1 when cooperative matrices that the device lists are to be used, 0 when not; `force` is
 * VKF_COOPMAT (1 on, 0 off, -1 the allowlist). Writes the reason (one line, no trailing period)
 * into `reason`. */
int vkf_coopmat_allowed(const vkf_coopmat_device *d, int force, char *reason, size_t size);

#endif
