/* Asks the loader, volk and shaderc for their versions (host/versions.h). */
#include "host/versions.h"

#include <shaderc/shaderc.h>
#include <stdio.h>

#include "host/vk.h"

vkf_host_versions vkf_host_versions_get(void) {
  vkf_host_versions v = {.vulkan_headers = VK_HEADER_VERSION_COMPLETE, .volk = VOLK_HEADER_VERSION};
  /* A 1.0 loader has no vkEnumerateInstanceVersion: its version is 1.0. */
  if (volkInitialize() == VK_SUCCESS) {
    v.loader = VK_API_VERSION_1_0;
    if (vkEnumerateInstanceVersion && vkEnumerateInstanceVersion(&v.loader) != VK_SUCCESS)
      v.loader = VK_API_VERSION_1_0;
  }
  unsigned version = 0, revision = 0;
  shaderc_get_spv_version(&version, &revision);
  v.spirv_version = version;
  v.spirv_revision = revision;
  return v;
}

void vkf_host_version_text(uint32_t version, char *out, unsigned size) {
  snprintf(out, size, "%u.%u.%u", VK_API_VERSION_MAJOR(version), VK_API_VERSION_MINOR(version),
           VK_API_VERSION_PATCH(version));
}
