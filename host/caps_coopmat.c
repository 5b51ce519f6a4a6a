/* Owns what vkformer reads and enables of VK_KHR_cooperative_matrix: the shapes a device reports,
 * whether its features let the f16 GEMM kernels run, and the feature chain device creation adds. */
#include <stdlib.h>

#include "graph/base/env.h"
#include "host/instance_internal.h"
#include "host/vk_coopmat.h"
#include "shaders/embedded_spirv.h"

int vkf_coopmat_features(VkPhysicalDevice pd, int *out_memory_model) {
  *out_memory_model = 0;
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(pd, &props);
  if (props.apiVersion < VK_API_VERSION_1_2 ||
      !vkf_device_has_extension(pd, VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME))
    return 0;
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR cm = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
  VkPhysicalDeviceVulkan12Features v12 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, .pNext = &cm};
  VkPhysicalDeviceFeatures2 f = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                 .pNext = &v12};
  vkGetPhysicalDeviceFeatures2(pd, &f);
  *out_memory_model = v12.vulkanMemoryModel == VK_TRUE;
  return cm.cooperativeMatrix == VK_TRUE;
}

void vkf_caps_query_coopmat(VkPhysicalDevice pd, vkf_device_caps *caps) {
  int memory_model = 0;
  if (!vkf_coopmat_features(pd, &memory_model)) return;
  /* volk was built against headers that may predate the extension: the instance resolves it. */
  PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR get =
      (PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR)vkGetInstanceProcAddr(
          volkGetLoadedInstance(), "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR");
  uint32_t n = 0;
  if (!get || get(pd, &n, NULL) != VK_SUCCESS || n == 0) return;
  VkCooperativeMatrixPropertiesKHR *props = calloc(n, sizeof *props);
  if (!props) return;
  for (uint32_t i = 0; i < n; i++) props[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR;
  if (get(pd, &n, props) != VK_SUCCESS && n == 0) n = 0;
  uint32_t tile = 0;
  for (uint32_t i = 0; i < n; i++) {
    const VkCooperativeMatrixPropertiesKHR *p = &props[i];
    if (caps->coopmat_count < VKF_CAPS_MAX_COOPMAT)
      caps->coopmat[caps->coopmat_count++] = (vkf_coopmat_shape){
          .m = p->MSize, .n = p->NSize, .k = p->KSize, .a_type = (uint32_t)p->AType,
          .b_type = (uint32_t)p->BType, .c_type = (uint32_t)p->CType,
          .result_type = (uint32_t)p->ResultType, .scope = (uint32_t)p->scope};
    /* The kernels' shape: square, subgroup scope, f16 x f16 + f32 -> f32; 16 before 8. */
    int fits = p->MSize == p->NSize && p->NSize == p->KSize && (p->MSize == 16 || p->MSize == 8) &&
               p->AType == VK_COMPONENT_TYPE_FLOAT16_KHR &&
               p->BType == VK_COMPONENT_TYPE_FLOAT16_KHR &&
               p->CType == VK_COMPONENT_TYPE_FLOAT32_KHR &&
               p->ResultType == VK_COMPONENT_TYPE_FLOAT32_KHR && p->scope == VK_SCOPE_SUBGROUP_KHR;
    if (fits && p->MSize > tile && vkf_shaders_have_coopmat(p->MSize)) tile = p->MSize;
  }
  free(props);
  /* The kernels run 4 subgroups of at least 8 (tile 8) or 32 (tile 16) lanes (gemm_coopmat.glsl). */
  if (tile == 16 && caps->subgroup_size < 32) tile = 0;
  if (tile && memory_model && caps->fp16_arithmetic && caps->storage_16bit &&
      vkf_env_get()->coopmat && caps->subgroup_size >= 8 &&
      4 * caps->subgroup_size <= caps->max_workgroup_invocations)
    caps->coopmat_gemm_tile = tile;
}
