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

#endif
