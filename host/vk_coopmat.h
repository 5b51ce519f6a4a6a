/* VK_KHR_cooperative_matrix's types (Vulkan 1.3.255+), declared here when the system's headers
 * are older (Debian 12 ships 1.3.239), so the build queries and enables tensor cores on drivers
 * that have them whatever headers it was built with. The values are the registry's. */
#ifndef VKF_HOST_VK_COOPMAT_H
#define VKF_HOST_VK_COOPMAT_H

#include "host/vk.h"

#ifndef VK_KHR_cooperative_matrix
#define VK_KHR_cooperative_matrix 1
#define VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME "VK_KHR_cooperative_matrix"
#define VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR ((VkStructureType)1000506000)
#define VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR ((VkStructureType)1000506001)
typedef uint32_t VkComponentTypeKHR; /* 0 f16, 1 f32, ... as VkComponentTypeNV */
typedef uint32_t VkScopeKHR;         /* 1 device, 2 workgroup, 3 subgroup, 5 queue family */
#define VK_COMPONENT_TYPE_FLOAT16_KHR 0u
#define VK_COMPONENT_TYPE_FLOAT32_KHR 1u
#define VK_SCOPE_SUBGROUP_KHR 3u
typedef struct VkCooperativeMatrixPropertiesKHR {
  VkStructureType sType;
  void *pNext;
  uint32_t MSize, NSize, KSize;
  VkComponentTypeKHR AType, BType, CType, ResultType;
  VkBool32 saturatingAccumulation;
  VkScopeKHR scope;
} VkCooperativeMatrixPropertiesKHR;
typedef struct VkPhysicalDeviceCooperativeMatrixFeaturesKHR {
  VkStructureType sType;
  void *pNext;
  VkBool32 cooperativeMatrix;
  VkBool32 cooperativeMatrixRobustBufferAccess;
} VkPhysicalDeviceCooperativeMatrixFeaturesKHR;
typedef VkResult(VKAPI_PTR *PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR)(
    VkPhysicalDevice physicalDevice, uint32_t *pPropertyCount,
    VkCooperativeMatrixPropertiesKHR *pProperties);
#endif

/* VK_NV_cooperative_matrix2 (its flexible dimensions: tiles any multiple of a granularity, so a
 * device whose KHR list has 8x8x8 only, lavapipe 26, runs the 16x16x16 kernels NVIDIA gets). */
#ifndef VK_NV_cooperative_matrix2
#define VK_NV_cooperative_matrix2 1
#define VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME "VK_NV_cooperative_matrix2"
#define VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV ((VkStructureType)1000593000)
#define VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_FLEXIBLE_DIMENSIONS_PROPERTIES_NV ((VkStructureType)1000593001)
typedef struct VkPhysicalDeviceCooperativeMatrix2FeaturesNV {
  VkStructureType sType;
  void *pNext;
  VkBool32 cooperativeMatrixWorkgroupScope;
  VkBool32 cooperativeMatrixFlexibleDimensions;
  VkBool32 cooperativeMatrixReductions;
  VkBool32 cooperativeMatrixConversions;
  VkBool32 cooperativeMatrixPerElementOperations;
  VkBool32 cooperativeMatrixTensorAddressing;
  VkBool32 cooperativeMatrixBlockLoads;
} VkPhysicalDeviceCooperativeMatrix2FeaturesNV;
typedef struct VkCooperativeMatrixFlexibleDimensionsPropertiesNV {
  VkStructureType sType;
  void *pNext;
  uint32_t MGranularity, NGranularity, KGranularity;
  VkComponentTypeKHR AType, BType, CType, ResultType;
  VkBool32 saturatingAccumulation;
  VkScopeKHR scope;
  uint32_t workgroupInvocations;
} VkCooperativeMatrixFlexibleDimensionsPropertiesNV;
typedef VkResult(VKAPI_PTR *PFN_vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV)(
    VkPhysicalDevice physicalDevice, uint32_t *pPropertyCount,
    VkCooperativeMatrixFlexibleDimensionsPropertiesNV *pProperties);
#endif

#endif
