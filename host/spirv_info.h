/* What pipeline creation needs to know of a SPIR-V module (see spirv_info.c). */
#ifndef VKF_HOST_SPIRV_INFO_H
#define VKF_HOST_SPIRV_INFO_H

#include <stddef.h>
#include <stdint.h>

typedef struct vkf_spirv_info {
  int uses_subgroups;    /* declares a GroupNonUniform* capability */
  uint32_t local_size_x; /* with the given specialization constants; 0 when not found */
} vkf_spirv_info;

/* Reads `words` (size bytes) of a valid module; specialization constant i is spec[i] when
 * i < spec_count, else the module's default. */
void vkf_spirv_info_read(const uint32_t *words, size_t size, const uint32_t *spec,
                         uint32_t spec_count, vkf_spirv_info *out_info);

#endif
