/* Lookup into the generated table of build-time SPIR-V. */
#include "shaders/embedded_spirv.h"

#include <string.h>

const vkf_embedded_spirv *vkf_embedded_spirv_find(const char *shader, const char *defines) {
  for (unsigned i = 0; i < vkf_embedded_spirv_count; i++)
    if (strcmp(vkf_embedded_spirvs[i].shader, shader) == 0 &&
        strcmp(vkf_embedded_spirvs[i].defines, defines) == 0)
      return &vkf_embedded_spirvs[i];
  return 0;
}

int vkf_shaders_have_coopmat(unsigned tile) {
  const char *tag = tile == 16 ? "CM=16 " : tile == 8 ? "CM=8 " : NULL;
  for (unsigned i = 0; tag && i < vkf_embedded_spirv_count; i++)
    if (strcmp(vkf_embedded_spirvs[i].shader, "gemm.comp") == 0 &&
        strstr(vkf_embedded_spirvs[i].defines, "GEMM_COOPMAT") &&
        strstr(vkf_embedded_spirvs[i].defines, tag))
      return 1;
  return 0;
}
