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
  const char *key = tile == 16 ? "A_F16 B_F16 CM=16 CM_TM=4 CM_TN=2 GEMM_COOPMAT"
                  : tile == 8  ? "A_F16 B_F16 CM=8 CM_TM=2 CM_TN=2 GEMM_COOPMAT"
                               : NULL;
  return key && vkf_embedded_spirv_find("gemm.comp", key) != 0;
}
