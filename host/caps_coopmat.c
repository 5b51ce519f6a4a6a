/* Owns what vkformer reads and enables of VK_KHR_cooperative_matrix (and the flexible dimensions
 * of VK_NV_cooperative_matrix2): the shapes a device reports, whether its features let the f16
 * kernels run, and the features device creation turns on. */
#include <stdlib.h>

#include <stdio.h>

#include "graph/base/coopmat_allowlist.h"
#include "graph/base/env.h"
#include "host/instance_internal.h"
#include "host/vk_coopmat.h"
#include "shaders/embedded_spirv.h"

int vkf_coopmat_features(VkPhysicalDevice pd, int *out_memory_model, int *out_flexible) {
  *out_memory_model = 0;
  *out_flexible = 0;
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(pd, &props);
  if (props.apiVersion < VK_API_VERSION_1_2 ||
      !vkf_device_has_extension(pd, VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME))
    return 0;
  int has2 = vkf_device_has_extension(pd, VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME);
  VkPhysicalDeviceCooperativeMatrix2FeaturesNV cm2 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV};
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR cm = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR,
      .pNext = has2 ? &cm2 : NULL};
  VkPhysicalDeviceVulkan12Features v12 = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, .pNext = &cm};
  VkPhysicalDeviceFeatures2 f = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                 .pNext = &v12};
  vkGetPhysicalDeviceFeatures2(pd, &f);
  *out_memory_model = v12.vulkanMemoryModel == VK_TRUE;
  *out_flexible = has2 && cm2.cooperativeMatrixFlexibleDimensions == VK_TRUE;
  return cm.cooperativeMatrix == VK_TRUE;
}

/* The kernels' types: f16 x f16 + f32 -> f32, subgroup scope. */
static int kernel_types(VkComponentTypeKHR a, VkComponentTypeKHR b, VkComponentTypeKHR c,
                        VkComponentTypeKHR r, VkScopeKHR scope) {
  return a == VK_COMPONENT_TYPE_FLOAT16_KHR && b == VK_COMPONENT_TYPE_FLOAT16_KHR &&
         c == VK_COMPONENT_TYPE_FLOAT32_KHR && r == VK_COMPONENT_TYPE_FLOAT32_KHR &&
         scope == VK_SCOPE_SUBGROUP_KHR;
}

/* Tiles (8 and 16 as bits) that flexible dimensions allow: the granularities divide the tile and
 * the shape needs no particular workgroup size. */
static uint32_t flexible_tiles(VkPhysicalDevice pd) {
  PFN_vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV get =
      (PFN_vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV)vkGetInstanceProcAddr(
          volkGetLoadedInstance(), "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV");
  uint32_t n = 0, tiles = 0;
  if (!get || get(pd, &n, NULL) != VK_SUCCESS || n == 0) return 0;
  VkCooperativeMatrixFlexibleDimensionsPropertiesNV *props = calloc(n, sizeof *props);
  if (!props) return 0;
  for (uint32_t i = 0; i < n; i++)
    props[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_FLEXIBLE_DIMENSIONS_PROPERTIES_NV;
  if (get(pd, &n, props) != VK_SUCCESS) n = 0;
  for (uint32_t i = 0; i < n; i++) {
    const VkCooperativeMatrixFlexibleDimensionsPropertiesNV *p = &props[i];
    if (!kernel_types(p->AType, p->BType, p->CType, p->ResultType, p->scope) ||
        p->workgroupInvocations || !p->MGranularity || !p->NGranularity || !p->KGranularity)
      continue;
    for (uint32_t t = 8; t <= 16; t *= 2)
      if (t % p->MGranularity == 0 && t % p->NGranularity == 0 && t % p->KGranularity == 0)
        tiles |= t;
  }
  free(props);
  return tiles;
}

/* RDNA3's mark in ggml's architecture test: accelerated mixed-sign packed 8-bit dot products. */
static int int_dot_mixed_accelerated(VkPhysicalDevice pd) {
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(pd, &props);
  if (props.apiVersion < VK_API_VERSION_1_3 &&
      !vkf_device_has_extension(pd, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME))
    return 0;
  VkPhysicalDeviceShaderIntegerDotProductProperties dot = {
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_PROPERTIES};
  VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                    .pNext = &dot};
  vkGetPhysicalDeviceProperties2(pd, &p2);
  return dot.integerDotProduct4x8BitPackedMixedSignednessAccelerated == VK_TRUE;
}

void vkf_caps_query_coopmat(VkPhysicalDevice pd, vkf_device_caps *caps) {
  int memory_model = 0, flexible = 0;
  if (!vkf_coopmat_features(pd, &memory_model, &flexible)) return;
  /* volk was built against headers that may predate the extension: the instance resolves it. */
  PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR get =
      (PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR)vkGetInstanceProcAddr(
          volkGetLoadedInstance(), "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR");
  uint32_t n = 0;
  if (!get || get(pd, &n, NULL) != VK_SUCCESS || n == 0) return;
  VkCooperativeMatrixPropertiesKHR *props = calloc(n, sizeof *props);
  if (!props) return;
  for (uint32_t i = 0; i < n; i++) props[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR;
  if (get(pd, &n, props) != VK_SUCCESS) n = 0;
  uint32_t tiles = 0, listed = 0;
  for (uint32_t i = 0; i < n; i++) {
    const VkCooperativeMatrixPropertiesKHR *p = &props[i];
    if (caps->coopmat_count < VKF_CAPS_MAX_COOPMAT)
      caps->coopmat[caps->coopmat_count++] = (vkf_coopmat_shape){
          .m = p->MSize, .n = p->NSize, .k = p->KSize, .a_type = (uint32_t)p->AType,
          .b_type = (uint32_t)p->BType, .c_type = (uint32_t)p->CType,
          .result_type = (uint32_t)p->ResultType, .scope = (uint32_t)p->scope};
    if (p->MSize == p->NSize && p->NSize == p->KSize && (p->MSize == 16 || p->MSize == 8) &&
        kernel_types(p->AType, p->BType, p->CType, p->ResultType, p->scope))
      listed |= p->MSize;
  }
  tiles = listed;
  free(props);
  if (flexible) {
    caps->coopmat_flexible = 1;
    tiles |= flexible_tiles(pd);
  }
  /* Only tiles this build has kernels for; the kernels run 4 subgroups of at least 8 lanes. */
  for (uint32_t t = 8; t <= 16; t *= 2)
    if ((tiles & t) && !vkf_shaders_have_coopmat(t)) tiles &= ~t, listed &= ~t;
  const char *missing = !tiles                 ? "no f16 x f16 + f32 subgroup shape this build has kernels for"
                        : !memory_model         ? "no vulkanMemoryModel"
                        : !caps->fp16_arithmetic ? "no shaderFloat16"
                        : !caps->storage_16bit   ? "no 16-bit storage"
                        : caps->subgroup_size < 8 ||
                                  4 * caps->subgroup_size > caps->max_workgroup_invocations
                            ? "subgroups too narrow or workgroups too small for 4 subgroups"
                            : NULL;
  if (missing) {
    snprintf(caps->coopmat_reason, sizeof caps->coopmat_reason, "off: %s", missing);
    return;
  }
  vkf_coopmat_device who = {.vendor_id = caps->vendor_id,
                            .driver_id = caps->driver_id,
                            .min_subgroup_size = caps->min_subgroup_size,
                            .max_subgroup_size = caps->max_subgroup_size,
                            .int_dot_mixed_accelerated = int_dot_mixed_accelerated(pd)};
  if (!vkf_coopmat_allowed(&who, vkf_env_get()->coopmat, caps->coopmat_reason,
                           sizeof caps->coopmat_reason))
    return;
  caps->coopmat_tiles = tiles;
  /* The default is the largest tile the device lists natively (NVIDIA: 16); a tile only the
   * flexible dimensions allow is emulated on some devices (16 on lavapipe's 8-lane subgroups runs
   * ~40x slower than 8), so it is for tests that steer to it. */
  uint32_t pick = listed ? listed : tiles;
  caps->coopmat_gemm_tile = (pick & 16) ? 16 : 8;
}
