/* The versions of what the runtime is built on, for `vkf --version` and bug reports. */
#ifndef VKF_HOST_VERSIONS_H
#define VKF_HOST_VERSIONS_H

#include <stdint.h>

typedef struct vkf_host_versions {
  uint32_t loader;         /* the Vulkan loader's instance version (VK_MAKE_API_VERSION); 0: none */
  uint32_t vulkan_headers; /* VK_HEADER_VERSION_COMPLETE the runtime was compiled with */
  uint32_t volk;           /* VOLK_HEADER_VERSION */
  uint32_t spirv_version;  /* shaderc's SPIR-V version and revision */
  uint32_t spirv_revision;
} vkf_host_versions;

/* Loads the Vulkan loader (as creating an instance would) to ask its version; creates nothing. */
vkf_host_versions vkf_host_versions_get(void);

/* "1.3.239" for a VK_MAKE_API_VERSION value. */
void vkf_host_version_text(uint32_t version, char *out, unsigned size);

#endif
